/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the io_uring splice/tee selftests.  They report
 * failures through the kselftest harness (ASSERT_*, TH_LOG), so include
 * this after ../kselftest_harness.h.
 */
#ifndef __SPLICE_HELPERS_H
#define __SPLICE_HELPERS_H

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/types.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "iou_helpers.h"

/* Most bytes check_pipe() can compare in one call. */
#define SPLICE_CHECK_MAX	(3 * 4096)

/* Unlinked temporary file; tries a few tmpfs-ish places. */
static inline int tmp_file(struct __test_metadata *_metadata)
{
	const char * const dirs[] = {
		getenv("TMPDIR"), "/tmp", "/dev/shm", ".",
	};
	char path[PATH_MAX];
	unsigned int i;
	int fd;

	for (i = 0; i < ARRAY_SIZE(dirs); i++) {
		if (!dirs[i])
			continue;
		snprintf(path, sizeof(path), "%s/iou_splice.XXXXXX", dirs[i]);
		fd = mkstemp(path);
		if (fd >= 0) {
			unlink(path);
			return fd;
		}
	}
	TH_LOG("cannot create a temporary file: %s", strerror(errno));
	ASSERT_TRUE(0);
	return -1;
}

/* xorshift: no short period, so every offset has distinct data */
static inline void fill_pattern(unsigned char *buf, size_t len,
				unsigned int seed)
{
	unsigned int x = seed;
	size_t i;

	for (i = 0; i < len; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		buf[i] = x >> 24;
	}
}

/* Bytes waiting in the pipe behind @fd, or -errno. */
static inline int pipe_bytes(int fd)
{
	int n = -1;

	if (ioctl(fd, FIONREAD, &n))
		return -errno;
	return n;
}

static inline void fill_pipe(struct __test_metadata *_metadata, int wfd,
			     const void *src, size_t len)
{
	ASSERT_EQ((ssize_t)len, write(wfd, src, len));
}

/*
 * The pipe must hold exactly @len bytes equal to @want; drains it.
 * @what names the check in failure messages.
 */
static inline void check_pipe(struct __test_metadata *_metadata, int rfd,
			      const void *want, size_t len, const char *what)
{
	unsigned char buf[SPLICE_CHECK_MAX];

	ASSERT_GE(sizeof(buf), len);
	ASSERT_EQ((int)len, pipe_bytes(rfd)) {
		TH_LOG("%s: wrong number of bytes in the pipe", what);
	}
	if (!len)
		return;
	ASSERT_EQ((ssize_t)len, read(rfd, buf, len)) {
		TH_LOG("%s: read", what);
	}
	ASSERT_EQ(0, memcmp(buf, want, len)) {
		TH_LOG("%s: wrong data in the pipe", what);
	}
}

/* Next free SQE of @ring, zeroed, with @user_data set. */
static inline struct io_uring_sqe *
next_sqe(struct __test_metadata *_metadata, struct iou_ring *ring,
	 __u64 user_data)
{
	struct io_uring_sqe *sqe = iou_get_sqe(ring);

	ASSERT_NE(NULL, sqe);
	sqe->user_data = user_data;
	return sqe;
}

/*
 * Collect exactly @nr completions for user_data 1..@nr: res[i] receives
 * the result for user_data i + 1, and no other completion may be left.
 * Each one is waited for at most @timeout_ms, or without a limit for 0.
 */
static inline void reap_cqes(struct __test_metadata *_metadata,
			     struct iou_ring *ring, int nr, int *res,
			     unsigned int timeout_ms)
{
	struct iou_cqe cqe;
	int i;

	for (i = 0; i < nr; i++)
		res[i] = INT_MIN;
	for (i = 0; i < nr; i++) {
		ASSERT_EQ(0, timeout_ms ?
			     iou_wait_cqe_timeout(ring, &cqe, timeout_ms) :
			     iou_wait_cqe(ring, &cqe)) {
			TH_LOG("completion %d of %d did not arrive", i + 1, nr);
		}
		ASSERT_LE(1ULL, cqe.user_data);
		ASSERT_GE((__u64)nr, cqe.user_data);
		ASSERT_EQ(INT_MIN, res[cqe.user_data - 1]);
		res[cqe.user_data - 1] = cqe.res;
	}
	ASSERT_EQ(-EAGAIN, iou_peek_cqe(ring, &cqe));
}

#endif /* __SPLICE_HELPERS_H */
