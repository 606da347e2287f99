/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Minimal io_uring access for selftests: raw io_uring_setup(2),
 * io_uring_enter(2) and io_uring_register(2) plus the ring mmaps.
 * No liburing; only the uAPI header from KHDR_INCLUDES is used.
 *
 * Every function returns 0 (or a count) on success and -errno on
 * failure, so that callers can tell "io_uring unavailable" (-ENOSYS,
 * or -EPERM from the kernel.io_uring_disabled sysctl) from real bugs.
 */
#ifndef __IOU_HELPERS_H
#define __IOU_HELPERS_H

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <fcntl.h>
#include <dirent.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <linux/io_uring.h>

#ifndef __NR_io_uring_setup
#define __NR_io_uring_setup	425
#endif
#ifndef __NR_io_uring_enter
#define __NR_io_uring_enter	426
#endif
#ifndef __NR_io_uring_register
#define __NR_io_uring_register	427
#endif

struct iou_ring {
	int fd;
	unsigned int features;

	/* submission side */
	void *sq_map;
	size_t sq_map_len;
	unsigned int *sq_head;
	unsigned int *sq_tail;
	unsigned int sq_mask;
	unsigned int sq_entries;
	unsigned int *sq_array;
	struct io_uring_sqe *sqes;
	size_t sqes_len;
	unsigned int sqe_next;	/* handed out by iou_get_sqe(), not yet published */

	/* completion side */
	void *cq_map;		/* == sq_map with IORING_FEAT_SINGLE_MMAP */
	size_t cq_map_len;
	unsigned int *cq_head;
	unsigned int *cq_tail;
	unsigned int cq_mask;
	struct io_uring_cqe *cqes;
};

/* What a test needs from a completion. */
struct iou_cqe {
	__u64 user_data;
	__s32 res;
	__u32 flags;
};

static inline int iou_sys_setup(unsigned int entries, struct io_uring_params *p)
{
	long ret = syscall(__NR_io_uring_setup, entries, p);

	return ret < 0 ? -errno : (int)ret;
}

static inline int iou_sys_enter(int fd, unsigned int to_submit,
				unsigned int min_complete, unsigned int flags)
{
	long ret = syscall(__NR_io_uring_enter, fd, to_submit, min_complete,
			   flags, NULL, 0);

	return ret < 0 ? -errno : (int)ret;
}

static inline int iou_sys_register(int fd, unsigned int opcode,
				   const void *arg, unsigned int nr_args)
{
	long ret = syscall(__NR_io_uring_register, fd, opcode, arg, nr_args);

	return ret < 0 ? -errno : (int)ret;
}

#define IOU_PTR(base, off)	((void *)((char *)(base) + (off)))

static inline void iou_exit(struct iou_ring *ring)
{
	if (ring->sqes && ring->sqes != MAP_FAILED)
		munmap(ring->sqes, ring->sqes_len);
	if (ring->cq_map && ring->cq_map != MAP_FAILED &&
	    ring->cq_map != ring->sq_map)
		munmap(ring->cq_map, ring->cq_map_len);
	if (ring->sq_map && ring->sq_map != MAP_FAILED)
		munmap(ring->sq_map, ring->sq_map_len);
	if (ring->fd >= 0)
		close(ring->fd);
	memset(ring, 0, sizeof(*ring));
	ring->fd = -1;
}

/* Create a ring with @entries SQEs and IORING_SETUP_* @flags. */
static inline int iou_setup(struct iou_ring *ring, unsigned int entries,
			    unsigned int flags)
{
	struct io_uring_params p;
	int ret;

	memset(ring, 0, sizeof(*ring));
	memset(&p, 0, sizeof(p));
	p.flags = flags;

	ring->fd = iou_sys_setup(entries, &p);
	if (ring->fd < 0) {
		ret = ring->fd;
		ring->fd = -1;
		return ret;
	}
	ring->features = p.features;

	ring->sq_map_len = p.sq_off.array + p.sq_entries * sizeof(__u32);
	ring->cq_map_len = p.cq_off.cqes +
			   p.cq_entries * sizeof(struct io_uring_cqe);
	if (p.features & IORING_FEAT_SINGLE_MMAP) {
		if (ring->cq_map_len > ring->sq_map_len)
			ring->sq_map_len = ring->cq_map_len;
		ring->cq_map_len = ring->sq_map_len;
	}

	ring->sq_map = mmap(NULL, ring->sq_map_len, PROT_READ | PROT_WRITE,
			    MAP_SHARED | MAP_POPULATE, ring->fd,
			    IORING_OFF_SQ_RING);
	if (ring->sq_map == MAP_FAILED)
		goto fail;

	if (p.features & IORING_FEAT_SINGLE_MMAP) {
		ring->cq_map = ring->sq_map;
	} else {
		ring->cq_map = mmap(NULL, ring->cq_map_len,
				    PROT_READ | PROT_WRITE,
				    MAP_SHARED | MAP_POPULATE, ring->fd,
				    IORING_OFF_CQ_RING);
		if (ring->cq_map == MAP_FAILED)
			goto fail;
	}

	ring->sqes_len = p.sq_entries * sizeof(struct io_uring_sqe);
	ring->sqes = mmap(NULL, ring->sqes_len, PROT_READ | PROT_WRITE,
			  MAP_SHARED | MAP_POPULATE, ring->fd, IORING_OFF_SQES);
	if (ring->sqes == MAP_FAILED)
		goto fail;

	ring->sq_head = IOU_PTR(ring->sq_map, p.sq_off.head);
	ring->sq_tail = IOU_PTR(ring->sq_map, p.sq_off.tail);
	ring->sq_mask = *(unsigned int *)IOU_PTR(ring->sq_map,
						 p.sq_off.ring_mask);
	ring->sq_entries = p.sq_entries;
	ring->sq_array = IOU_PTR(ring->sq_map, p.sq_off.array);
	ring->sqe_next = *ring->sq_tail;

	ring->cq_head = IOU_PTR(ring->cq_map, p.cq_off.head);
	ring->cq_tail = IOU_PTR(ring->cq_map, p.cq_off.tail);
	ring->cq_mask = *(unsigned int *)IOU_PTR(ring->cq_map,
						 p.cq_off.ring_mask);
	ring->cqes = IOU_PTR(ring->cq_map, p.cq_off.cqes);
	return 0;

fail:
	ret = -errno;
	iou_exit(ring);
	return ret;
}

/* Next free SQE, zeroed; NULL when the SQ ring is full. */
static inline struct io_uring_sqe *iou_get_sqe(struct iou_ring *ring)
{
	unsigned int head = __atomic_load_n(ring->sq_head, __ATOMIC_ACQUIRE);
	unsigned int idx;

	if (ring->sqe_next - head >= ring->sq_entries)
		return NULL;

	idx = ring->sqe_next & ring->sq_mask;
	ring->sq_array[idx] = idx;
	ring->sqe_next++;
	memset(&ring->sqes[idx], 0, sizeof(ring->sqes[idx]));
	return &ring->sqes[idx];
}

/*
 * Publish all SQEs obtained so far and wait until at least @wait_nr
 * completions are available. Returns the number of SQEs consumed.
 */
static inline int iou_submit_and_wait(struct iou_ring *ring,
				      unsigned int wait_nr)
{
	unsigned int pending = ring->sqe_next - *ring->sq_tail;

	__atomic_store_n(ring->sq_tail, ring->sqe_next, __ATOMIC_RELEASE);
	return iou_sys_enter(ring->fd, pending, wait_nr,
			     wait_nr ? IORING_ENTER_GETEVENTS : 0);
}

/* Pop one CQE if there is one: 0 on success, -EAGAIN if the CQ is empty. */
static inline int iou_peek_cqe(struct iou_ring *ring, struct iou_cqe *out)
{
	unsigned int head = *ring->cq_head;
	struct io_uring_cqe *cqe;

	if (head == __atomic_load_n(ring->cq_tail, __ATOMIC_ACQUIRE))
		return -EAGAIN;

	cqe = &ring->cqes[head & ring->cq_mask];
	out->user_data = cqe->user_data;
	out->res = cqe->res;
	out->flags = cqe->flags;
	__atomic_store_n(ring->cq_head, head + 1, __ATOMIC_RELEASE);
	return 0;
}

/* Pop one CQE, sleeping in io_uring_enter(2) until one is posted. */
static inline int iou_wait_cqe(struct iou_ring *ring, struct iou_cqe *out)
{
	int ret;

	while (iou_peek_cqe(ring, out) == -EAGAIN) {
		ret = iou_sys_enter(ring->fd, 0, 1, IORING_ENTER_GETEVENTS);
		if (ret < 0 && ret != -EINTR)
			return ret;
	}
	return 0;
}

/*
 * io_uring_enter(2) with IORING_ENTER_EXT_ARG: submit @to_submit SQEs and
 * wait for @min_complete completions, but for no longer than @ts
 * (NULL: no limit).  -ETIME when the time ran out first.
 */
static inline int iou_sys_enter_timeout(int fd, unsigned int to_submit,
					unsigned int min_complete,
					const struct __kernel_timespec *ts)
{
	struct io_uring_getevents_arg arg;
	long ret;

	memset(&arg, 0, sizeof(arg));
	arg.ts = (__u64)(uintptr_t)ts;
	ret = syscall(__NR_io_uring_enter, fd, to_submit, min_complete,
		      IORING_ENTER_GETEVENTS | IORING_ENTER_EXT_ARG,
		      &arg, sizeof(arg));
	return ret < 0 ? -errno : (int)ret;
}

static inline long long iou_now_ms(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return now.tv_sec * 1000LL + now.tv_nsec / 1000000;
}

/*
 * Pop one CQE, sleeping at most @timeout_ms for it: 0 on success, -ETIME
 * if none was posted in time.  Needs IORING_FEAT_EXT_ARG (5.11), else
 * -EOPNOTSUPP.
 */
static inline int iou_wait_cqe_timeout(struct iou_ring *ring,
				       struct iou_cqe *out,
				       unsigned int timeout_ms)
{
	long long deadline = iou_now_ms() + timeout_ms;
	struct __kernel_timespec ts;
	long long left;
	int ret;

	if (!(ring->features & IORING_FEAT_EXT_ARG))
		return -EOPNOTSUPP;

	while (iou_peek_cqe(ring, out) == -EAGAIN) {
		left = deadline - iou_now_ms();
		if (left <= 0)
			return -ETIME;
		ts.tv_sec = left / 1000;
		ts.tv_nsec = (left % 1000) * 1000000;
		ret = iou_sys_enter_timeout(ring->fd, 0, 1, &ts);
		if (ret < 0 && ret != -EINTR && ret != -ETIME)
			return ret;
	}
	return 0;
}

/* 1 if the kernel reports @op as supported, 0 if not, or -errno. */
static inline int iou_probe_op(struct iou_ring *ring, unsigned int op)
{
	const unsigned int nr = 256;
	struct io_uring_probe *p;
	int ret;

	/* the kernel wants the whole buffer zeroed */
	p = calloc(1, sizeof(*p) + nr * sizeof(p->ops[0]));
	if (!p)
		return -ENOMEM;
	ret = iou_sys_register(ring->fd, IORING_REGISTER_PROBE, p, nr);
	if (!ret)
		ret = op <= p->last_op && op < p->ops_len &&
		      (p->ops[op].flags & IO_URING_OP_SUPPORTED);
	free(p);
	return ret;
}

/*
 * IORING_OP_IOCTL's number, added by the series: the one place the tests
 * write it (58 is IORING_OP_RECV_ZC upstream since 6.15; a forward port
 * that renumbers changes this line and the kernel's enum).
 */
#define IOU_OP_IOCTL_NR	58

/*
 * Why the assertions that need the series (no io-wq worker for an inline
 * splice, the drain fix, ...) cannot apply, or NULL if it is there.
 *
 * run_selftests.sh knows whether it applied the series and says so in
 * IOU_SERIES ("applied" or "absent"); that decides, and a probe that
 * disagrees (a 6.12 kernel with opcode 58 is one with the series) ends
 * the program with a failure: a runner and a kernel that do not match
 * must not turn the series' checks into skips or expected failures.
 * Without IOU_SERIES (a program run by hand) the probe decides.
 * IOU_SERIES_FORCE=1 applies them on any kernel (to see them fail).
 */
static inline const char *iou_series_absent(void)
{
	const char *said = getenv("IOU_SERIES");
	const char *force = getenv("IOU_SERIES_FORCE");
	const char *probed = NULL;
	struct iou_ring ring;
	struct utsname uts;
	int ret;

	if (force && !strcmp(force, "1"))
		return NULL;
	if (uname(&uts) || strncmp(uts.release, "6.12.", 5))
		probed = "not a 6.12 kernel: no inline splice series";
	else if (iou_setup(&ring, 1, 0))
		probed = "io_uring unavailable";
	else {
		ret = iou_probe_op(&ring, IOU_OP_IOCTL_NR);
		iou_exit(&ring);
		if (ret <= 0)
			probed = "opcode 58 (IORING_OP_IOCTL) not supported: no inline splice series";
	}
	if (!said || !*said)
		return probed;
	if (!strcmp(said, "applied") && !probed)
		return NULL;
	if (!strcmp(said, "absent") && probed)
		return "the runner built this kernel without the series (IOU_SERIES=absent)";
	fprintf(stderr, "IOU_SERIES=%s, but the kernel says %s\n", said,
		probed ?: "the series is there");
	exit(1);
}

/* Registered (fixed) file table; -1 entries are empty slots. */
static inline int iou_register_files(struct iou_ring *ring, const int *fds,
				     unsigned int nr)
{
	return iou_sys_register(ring->fd, IORING_REGISTER_FILES, fds, nr);
}

/* Replace slots [@off, @off + @nr); returns the number of slots updated. */
static inline int iou_update_files(struct iou_ring *ring, unsigned int off,
				   const int *fds, unsigned int nr)
{
	struct io_uring_files_update up;

	memset(&up, 0, sizeof(up));
	up.offset = off;
	up.fds = (__u64)(uintptr_t)fds;
	return iou_sys_register(ring->fd, IORING_REGISTER_FILES_UPDATE,
				&up, nr);
}

static inline int iou_unregister_files(struct iou_ring *ring)
{
	return iou_sys_register(ring->fd, IORING_UNREGISTER_FILES, NULL, 0);
}

/* SQE preparation. */
static inline void iou_prep_nop(struct io_uring_sqe *sqe)
{
	sqe->opcode = IORING_OP_NOP;
}

/*
 * IORING_OP_SPLICE: sqe->fd is the output, splice_fd_in the input.
 * An offset of (__u64)-1 means "no offset": use and advance f_pos.
 */
static inline void iou_prep_splice(struct io_uring_sqe *sqe,
				   int fd_out, __u64 off_out,
				   int fd_in, __u64 off_in,
				   unsigned int len, unsigned int splice_flags)
{
	sqe->opcode = IORING_OP_SPLICE;
	sqe->fd = fd_out;
	sqe->off = off_out;
	sqe->splice_fd_in = fd_in;
	sqe->splice_off_in = off_in;
	sqe->len = len;
	sqe->splice_flags = splice_flags;
}

/* IORING_OP_TEE: both offsets must stay 0. */
static inline void iou_prep_tee(struct io_uring_sqe *sqe, int fd_out,
				int fd_in, unsigned int len,
				unsigned int splice_flags)
{
	sqe->opcode = IORING_OP_TEE;
	sqe->fd = fd_out;
	sqe->splice_fd_in = fd_in;
	sqe->len = len;
	sqe->splice_flags = splice_flags;
}

/*
 * Read /proc/self/task/<tid>/<name> into @buf as a string: its length, or
 * -1 if the thread has gone or the file cannot be read.
 */
static inline ssize_t iou_read_task_file(const char *tid, const char *name,
					 char *buf, size_t size)
{
	char path[300];
	ssize_t len;
	int fd;

	snprintf(path, sizeof(path), "/proc/self/task/%s/%s", tid, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	len = read(fd, buf, size - 1);
	close(fd);
	buf[len > 0 ? len : 0] = '\0';
	return len;
}

/*
 * io-wq workers of this process: they are its threads, named
 * "iou-wrk-<pid>".  Returns the count or -errno.
 */
static inline int iou_count_io_workers(void)
{
	struct dirent *de;
	char comm[32];
	int n = 0;
	DIR *dir;

	dir = opendir("/proc/self/task");
	if (!dir)
		return -errno;
	while ((de = readdir(dir))) {
		if (de->d_name[0] == '.')
			continue;
		/* a thread that just exited has no comm any more */
		if (iou_read_task_file(de->d_name, "comm", comm, sizeof(comm)) > 0 &&
		    !strncmp(comm, "iou-wrk-", 8))
			n++;
	}
	closedir(dir);
	return n;
}

/*
 * For a test that finds a request stuck: print each thread of this process
 * (io-wq workers included) with its state and where it sleeps.
 */
static inline void iou_dump_threads(void)
{
	char stat[512], comm[32], wchan[64], state;
	struct dirent *de;
	DIR *dir;

	dir = opendir("/proc/self/task");
	if (!dir)
		return;
	while ((de = readdir(dir))) {
		char *open_paren, *close_paren;

		if (de->d_name[0] == '.')
			continue;
		if (iou_read_task_file(de->d_name, "stat", stat, sizeof(stat)) <= 0)
			continue;
		/* "tid (comm) S ...": comm may hold spaces, the state follows ')' */
		open_paren = strchr(stat, '(');
		close_paren = strrchr(stat, ')');
		state = '?';
		comm[0] = '\0';
		if (open_paren && close_paren > open_paren) {
			if (close_paren[1])
				state = close_paren[2];
			*close_paren = '\0';
			snprintf(comm, sizeof(comm), "%s", open_paren + 1);
		}
		if (iou_read_task_file(de->d_name, "wchan", wchan, sizeof(wchan)) <= 0)
			snprintf(wchan, sizeof(wchan), "-");
		fprintf(stderr, "#   thread %s %s state %c wchan %s\n", de->d_name,
			comm, state, wchan);
	}
	closedir(dir);
}

/*
 * A connected TCP pair over IPv4 loopback, TCP_NODELAY on both ends. With
 * @bufsize, the client's SO_SNDBUF and the server's SO_RCVBUF are set to it
 * before the connection is made (so that the window is small too).
 * Returns 0 or -errno (no IPv4 loopback, for one).
 */
static inline int iou_tcp_pair(int *client, int *server, int bufsize)
{
	struct sockaddr_in sa = {
		.sin_family = AF_INET,
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
	};
	socklen_t sl = sizeof(sa);
	int l, c = -1, s = -1, one = 1, ret = 0;

	l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (l < 0)
		return -errno;
	c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (c < 0)
		goto fail;
	if (bufsize &&
	    (setsockopt(l, SOL_SOCKET, SO_RCVBUF, &bufsize, sizeof(bufsize)) ||
	     setsockopt(c, SOL_SOCKET, SO_SNDBUF, &bufsize, sizeof(bufsize))))
		goto fail;
	if (bind(l, (struct sockaddr *)&sa, sizeof(sa)) || listen(l, 1) ||
	    getsockname(l, (struct sockaddr *)&sa, &sl) ||
	    connect(c, (struct sockaddr *)&sa, sizeof(sa)))
		goto fail;
	s = accept(l, NULL, NULL);
	if (s < 0)
		goto fail;
	close(l);
	setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	*client = c;
	*server = s;
	return 0;
fail:
	ret = -errno;
	close(l);
	if (c >= 0)
		close(c);
	return ret;
}

#endif /* __IOU_HELPERS_H */
