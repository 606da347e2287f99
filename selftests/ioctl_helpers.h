/* SPDX-License-Identifier: GPL-2.0 */
/*
 * IORING_OP_IOCTL helpers shared by ioctl_ops and ioctl_bench: opcode
 * probe, SQE preparation, ioctl(2) returning -errno and a count of this
 * process's io-wq workers.  They return -errno and never use the
 * kselftest harness, so the benchmark can use them too.
 */
#ifndef __IOCTL_HELPERS_H
#define __IOCTL_HELPERS_H

#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "iou_helpers.h"

#ifdef IOU_HAVE_IOCTL_UAPI	/* the Makefile found it in the headers */
/* The documented uAPI: ioctl_arg aliases off, ioctl_cmd aliases len. */
static_assert(__builtin_offsetof(struct io_uring_sqe, ioctl_arg) == 8,
	      "sqe->ioctl_arg must be at offset 8");
static_assert(__builtin_offsetof(struct io_uring_sqe, ioctl_cmd) == 24,
	      "sqe->ioctl_cmd must be at offset 24");
static_assert(IORING_OP_IOCTL == IOU_OP_IOCTL_NR, "IORING_OP_IOCTL is not IOU_OP_IOCTL_NR");
#define IOU_OP_IOCTL		IORING_OP_IOCTL
#define IOU_SQE_IOCTL_CMD(sqe)	((sqe)->ioctl_cmd)
#define IOU_SQE_IOCTL_ARG(sqe)	((sqe)->ioctl_arg)
#else
/*
 * Headers of a kernel without the series (the --pristine run): the same
 * places by their old names, so that the programs build and then skip.
 */
#define IOU_OP_IOCTL		IOU_OP_IOCTL_NR
#define IOU_SQE_IOCTL_CMD(sqe)	((sqe)->len)
#define IOU_SQE_IOCTL_ARG(sqe)	((sqe)->off)
#endif

/* Pointer as carried in sqe->ioctl_arg. */
#define IOCTL_PTR(p)	((__u64)(uintptr_t)(p))

static inline void iou_prep_ioctl(struct io_uring_sqe *sqe, int fd,
				  unsigned int cmd, __u64 arg)
{
	sqe->opcode = IOU_OP_IOCTL;
	sqe->fd = fd;
	IOU_SQE_IOCTL_CMD(sqe) = cmd;
	IOU_SQE_IOCTL_ARG(sqe) = arg;
}

/* ioctl(2): its return value, or -errno. */
static inline int sys_ioctl(int fd, unsigned int cmd, __u64 arg)
{
	int ret = ioctl(fd, cmd, (void *)(uintptr_t)arg);

	return ret < 0 ? -errno : ret;
}


#endif /* __IOCTL_HELPERS_H */
