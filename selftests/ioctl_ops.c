// SPDX-License-Identifier: GPL-2.0
/*
 * IORING_OP_IOCTL: a short allowlist of ioctls through the ring.
 *
 * SQE layout:
 *   sqe->fd          target file (a registered index with IOSQE_FIXED_FILE)
 *   sqe->ioctl_cmd   the command (aliases len, offset 24)
 *   sqe->ioctl_arg   the argument, a user pointer (aliases off, offset 8)
 *   every other op-specific field must be zero, else -EINVAL
 *
 * Allowed: FIONREAD on pipes, FIFOs and AF_UNIX/AF_INET/AF_INET6 sockets,
 * SIOCOUTQ on those sockets, SIOCOUTQNSD on TCP and MPTCP sockets (the
 * only protocols that have it; all inline), and
 * DMA_BUF_IOCTL_SYNC on dma-bufs (on io-wq).  Any other command, or a
 * listed one on another kind of file, completes with -EOPNOTSUPP.
 *
 * An allowed command must answer exactly as ioctl(2) does on the same
 * file at the same moment, errors included: most checks run both and
 * compare the return value and every byte of the argument.  The "ioctl"
 * fixture runs each test with and without IOSQE_ASYNC; "ioctl_ring" holds
 * the tests about the ring itself (restrictions, IOPOLL, io-wq use, many
 * requests).
 */

#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/types.h>
#include <sys/un.h>
#include <unistd.h>
#include <linux/dma-buf.h>
#include <linux/dma-heap.h>
#include <linux/fs.h>
#include <linux/netlink.h>
#include <linux/sockios.h>
#include <linux/udmabuf.h>

#include "iou_helpers.h"
#include "../kselftest_harness.h"
#include "splice_helpers.h"
#include "ioctl_helpers.h"

#define RING_ENTRIES	64
#define CQE_TIMEOUT_MS	10000
/* 64 bytes: more than any argument here (struct ifreq is 40) */
#define ARG_WORDS	16
#define SENTINEL	0x5a5a5a5a

/* data to queue; its content does not matter */
static const char zeros[4096];

/* An argument buffer; unwritten words keep their sentinel. */
struct ioc_arg {
	int v[ARG_WORDS];
};

static void arg_fill(struct ioc_arg *a)
{
	int i;

	for (i = 0; i < ARG_WORDS; i++)
		a->v[i] = SENTINEL + i;
}

static bool arg_untouched(const struct ioc_arg *a)
{
	struct ioc_arg fresh;

	arg_fill(&fresh);
	return !memcmp(a, &fresh, sizeof(fresh));
}

static const char *err_name(int res)
{
	static char buf[64];

	if (res >= 0) {
		snprintf(buf, sizeof(buf), "%d", res);
		return buf;
	}
	snprintf(buf, sizeof(buf), "%d (%s)", res, strerror(-res));
	return buf;
}

/*
 * A ring of @entries with IORING_SETUP_* @flags that supports the opcode;
 * false after SKIP() when io_uring or IORING_OP_IOCTL is unavailable.
 */
static bool setup_ioctl_ring(struct __test_metadata *_metadata,
			     struct iou_ring *ring, unsigned int entries,
			     unsigned int flags)
{
	int ret = iou_setup(ring, entries, flags);

	if (ret == -ENOSYS)
		SKIP(return false, "io_uring not supported (CONFIG_IO_URING=n?)");
	if (ret == -EPERM)
		SKIP(return false, "io_uring disabled (kernel.io_uring_disabled?)");
	ASSERT_EQ(0, ret);
	ret = iou_probe_op(ring, IOU_OP_IOCTL);
	ASSERT_LE(0, ret);
	if (!ret)
		SKIP(return false,
		     "IORING_OP_IOCTL (%d) not reported by IORING_REGISTER_PROBE",
		     IOU_OP_IOCTL);
	return true;
}

/* One IORING_OP_IOCTL with extra IOSQE_* @sqe_flags; returns cqe->res. */
static int ring_ioctl(struct __test_metadata *_metadata, struct iou_ring *ring,
		      int fd, unsigned int cmd, __u64 arg, __u8 sqe_flags)
{
	struct io_uring_sqe *sqe = next_sqe(_metadata, ring, 1);
	int res;

	iou_prep_ioctl(sqe, fd, cmd, arg);
	sqe->flags = sqe_flags;
	ASSERT_EQ(1, iou_submit_and_wait(ring, 0));
	reap_cqes(_metadata, ring, 1, &res, CQE_TIMEOUT_MS);
	return res;
}

/*
 * @cmd through the ring on @ring_fd (@sqe_flags: IOSQE_FIXED_FILE makes it
 * a slot) and through ioctl(2) on @fd, with an ioctl(2) before and after
 * the ring's one; repeated until those two agree, i.e. nothing changed
 * meanwhile.  The ring must then match them exactly: the return value
 * and all ARG_WORDS of the argument.  Returns the ring's result, and the
 * int it wrote in *@val.
 */
static int same_as_ioctl_at(struct __test_metadata *_metadata,
			    struct iou_ring *ring, int fd, int ring_fd,
			    __u8 sqe_flags, unsigned int cmd, int *val,
			    const char *what)
{
	struct ioc_arg before, ring_arg, after;
	int r_before, r_ring, r_after, tries;

	for (tries = 0; tries < 50; tries++) {
		arg_fill(&before);
		arg_fill(&ring_arg);
		arg_fill(&after);
		r_before = sys_ioctl(fd, cmd, IOCTL_PTR(&before));
		r_ring = ring_ioctl(_metadata, ring, ring_fd, cmd,
				    IOCTL_PTR(&ring_arg), sqe_flags);
		r_after = sys_ioctl(fd, cmd, IOCTL_PTR(&after));
		if (r_before == r_after && !memcmp(&before, &after, sizeof(after)))
			break;
		usleep(10000);
	}
	ASSERT_GT(50, tries) {
		TH_LOG("%s: cmd %#x: ioctl(2) never gave the same answer twice",
		       what, cmd);
	}
	EXPECT_EQ(r_before, r_ring) {
		TH_LOG("%s: cmd %#x: ioctl(2) returned %s", what, cmd,
		       err_name(r_before));
		TH_LOG("%s: cmd %#x: the ring returned %s", what, cmd,
		       err_name(r_ring));
	}
	EXPECT_EQ(0, memcmp(&before, &ring_arg, sizeof(ring_arg))) {
		TH_LOG("%s: cmd %#x: ioctl(2) wrote %d, the ring %d (sentinel %d)",
		       what, cmd, before.v[0], ring_arg.v[0], SENTINEL);
	}
	if (val)
		*val = ring_arg.v[0];
	return r_ring;
}

static int same_as_ioctl(struct __test_metadata *_metadata,
			 struct iou_ring *ring, __u8 sqe_flags, int fd,
			 unsigned int cmd, int *val, const char *what)
{
	return same_as_ioctl_at(_metadata, ring, fd, fd, sqe_flags, cmd, val,
				what);
}

/* @cmd through the ring must be refused and must not touch its argument. */
static void expect_refused(struct __test_metadata *_metadata,
			   struct iou_ring *ring, __u8 sqe_flags, int fd,
			   unsigned int cmd, int want, const char *what)
{
	struct ioc_arg arg;
	int res;

	arg_fill(&arg);
	res = ring_ioctl(_metadata, ring, fd, cmd, IOCTL_PTR(&arg), sqe_flags);
	EXPECT_EQ(want, res) {
		TH_LOG("%s: cmd %#x: want %s, got %s", what, cmd,
		       err_name(want), err_name(res));
	}
	EXPECT_TRUE(arg_untouched(&arg)) {
		TH_LOG("%s: cmd %#x: refused, yet the argument was written",
		       what, cmd);
	}
}

/* A descriptor number that is not open right now. */
static int closed_fd(struct __test_metadata *_metadata)
{
	int fd = open("/", O_RDONLY | O_DIRECTORY);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, close(fd));
	return fd;
}

/*
 * Make the non-blocking pipe behind @p hold exactly @want bytes; @have is
 * updated.  Growing refills it from empty: partly used pages could leave
 * less room than @want.
 */
static void pipe_set_bytes(struct __test_metadata *_metadata, int p[2],
			   int *have, int want)
{
	static char buf[65536];
	int n;

	if (want > *have) {
		while (*have > 0) {
			n = read(p[0], buf, *have);
			ASSERT_LT(0, n);
			*have -= n;
		}
	}
	while (*have < want) {
		n = write(p[1], buf, want - *have);
		ASSERT_LT(0, n) {
			TH_LOG("write into a pipe of %d bytes: %s", *have,
			       strerror(errno));
		}
		*have += n;
	}
	while (*have > want) {
		n = read(p[0], buf, *have - want);
		ASSERT_LT(0, n);
		*have -= n;
	}
	ASSERT_EQ(want, pipe_bytes(p[0]));
}

/*
 * Write whole pages until the pipe is full; returns how many bytes it
 * holds (its size if it was empty).
 */
static int pipe_fill(struct __test_metadata *_metadata, int wfd, int have)
{
	static char buf[4096];
	int fl = fcntl(wfd, F_GETFL);
	ssize_t n;

	ASSERT_LE(0, fl);
	ASSERT_EQ(0, fcntl(wfd, F_SETFL, fl | O_NONBLOCK));
	for (;;) {
		n = write(wfd, buf, sizeof(buf));
		if (n < 0)
			break;
		have += n;
	}
	ASSERT_EQ(EAGAIN, errno);
	ASSERT_EQ(0, fcntl(wfd, F_SETFL, fl));
	return have;
}

/* FIONREAD as ioctl(2) sees it reaches @want within 5 s. */
static void wait_inq(struct __test_metadata *_metadata, int fd, int want)
{
	long long deadline = iou_now_ms() + 5000;
	int n = -1;

	while (iou_now_ms() < deadline) {
		ASSERT_EQ(0, ioctl(fd, FIONREAD, &n));
		if (n == want)
			return;
		usleep(1000);
	}
	ASSERT_EQ(want, n) {
		TH_LOG("queued data did not arrive");
	}
}

/*
 * A connected TCP pair over loopback plus its listener; @rcvbuf, if not
 * 0, is the accepted socket's SO_RCVBUF.  -EAFNOSUPPORT if the family is
 * not built in.
 */
static int stream_pair(struct __test_metadata *_metadata, int family,
		       int protocol, int rcvbuf, int *cli, int *srv, int *lst)
{
	struct sockaddr_storage ss;
	struct sockaddr_in *in4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
	socklen_t len;

	*lst = socket(family, SOCK_STREAM | SOCK_CLOEXEC, protocol);
	if (*lst < 0 && (errno == EAFNOSUPPORT || errno == EPROTONOSUPPORT))
		return -EAFNOSUPPORT;
	ASSERT_LE(0, *lst);

	memset(&ss, 0, sizeof(ss));
	if (family == AF_INET) {
		in4->sin_family = AF_INET;
		in4->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		len = sizeof(*in4);
	} else {
		in6->sin6_family = AF_INET6;
		in6->sin6_addr = in6addr_loopback;
		len = sizeof(*in6);
	}
	if (rcvbuf) {
		ASSERT_EQ(0, setsockopt(*lst, SOL_SOCKET, SO_RCVBUF, &rcvbuf,
					sizeof(rcvbuf)));
	}
	ASSERT_EQ(0, bind(*lst, (struct sockaddr *)&ss, len)) {
		TH_LOG("bind to loopback: %s (is lo up?)", strerror(errno));
	}
	ASSERT_EQ(0, listen(*lst, 1));
	ASSERT_EQ(0, getsockname(*lst, (struct sockaddr *)&ss, &len));

	*cli = socket(family, SOCK_STREAM | SOCK_CLOEXEC, protocol);
	ASSERT_LE(0, *cli);
	ASSERT_EQ(0, connect(*cli, (struct sockaddr *)&ss, len));
	*srv = accept4(*lst, NULL, NULL, SOCK_CLOEXEC);
	ASSERT_LE(0, *srv);
	return 0;
}

static int tcp_pair(struct __test_metadata *_metadata, int family,
		    int rcvbuf, int *cli, int *srv, int *lst)
{
	return stream_pair(_metadata, family, 0, rcvbuf, cli, srv, lst);
}

static const char *family_name(int family)
{
	return family == AF_INET ? "AF_INET" : "AF_INET6";
}

/* A UDP pair over IPv4 loopback, each connected to the other. */
static void udp_pair(struct __test_metadata *_metadata, int fd[2])
{
	struct sockaddr_in a[2];
	socklen_t len = sizeof(a[0]);
	int i;

	for (i = 0; i < 2; i++) {
		fd[i] = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		ASSERT_LE(0, fd[i]);
		memset(&a[i], 0, sizeof(a[i]));
		a[i].sin_family = AF_INET;
		a[i].sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		ASSERT_EQ(0, bind(fd[i], (struct sockaddr *)&a[i], len));
		ASSERT_EQ(0, getsockname(fd[i], (struct sockaddr *)&a[i], &len));
	}
	ASSERT_EQ(0, connect(fd[0], (struct sockaddr *)&a[1], len));
	ASSERT_EQ(0, connect(fd[1], (struct sockaddr *)&a[0], len));
}

/*
 * A dma-buf over a sealed memfd of @pages pages, made by /dev/udmabuf;
 * -errno if that device cannot be opened.
 */
static int make_udmabuf(struct __test_metadata *_metadata, unsigned int pages)
{
	struct udmabuf_create create;
	long psz = sysconf(_SC_PAGESIZE);
	int dev, memfd, buf;

	dev = open("/dev/udmabuf", O_RDWR | O_CLOEXEC);
	if (dev < 0)
		return -errno;
	memfd = memfd_create("iou-ioctl", MFD_ALLOW_SEALING | MFD_CLOEXEC);
	ASSERT_LE(0, memfd);
	ASSERT_EQ(0, ftruncate(memfd, pages * psz));
	ASSERT_EQ(0, fcntl(memfd, F_ADD_SEALS, F_SEAL_SHRINK));

	memset(&create, 0, sizeof(create));
	create.memfd = memfd;
	create.flags = UDMABUF_FLAGS_CLOEXEC;
	create.offset = 0;
	create.size = pages * psz;
	buf = ioctl(dev, UDMABUF_CREATE, &create);
	ASSERT_LE(0, buf) {
		TH_LOG("UDMABUF_CREATE: %s", strerror(errno));
	}
	/* the dma-buf holds its own references to the pages */
	close(memfd);
	close(dev);
	return buf;
}

/* As make_udmabuf(), but SKIP()s (returning -1) without /dev/udmabuf. */
static int need_udmabuf(struct __test_metadata *_metadata, unsigned int pages)
{
	int buf = make_udmabuf(_metadata, pages);

	if (buf == -ENOENT || buf == -ENODEV || buf == -ENXIO)
		SKIP(return -1, "no /dev/udmabuf (CONFIG_UDMABUF=n?)");
	ASSERT_LE(0, buf) {
		TH_LOG("open /dev/udmabuf: %s", strerror(-buf));
	}
	return buf;
}

static int fd_flags(struct __test_metadata *_metadata, int fd)
{
	int fl = fcntl(fd, F_GETFD);

	ASSERT_LE(0, fl);
	return fl;
}

static int fl_flags(struct __test_metadata *_metadata, int fd)
{
	int fl = fcntl(fd, F_GETFL);

	ASSERT_LE(0, fl);
	return fl;
}

/* ------------------------------------------------------------------ */

FIXTURE(ioctl) {
	struct iou_ring ring;
	__u8 flags;	/* IOSQE_* added to every sqe */
};

FIXTURE_VARIANT(ioctl) {
	__u8 flags;
};

FIXTURE_VARIANT_ADD(ioctl, sync) {
	.flags = 0,
};

FIXTURE_VARIANT_ADD(ioctl, async) {
	.flags = IOSQE_ASYNC,
};

FIXTURE_SETUP(ioctl)
{
	self->ring.fd = -1;
	self->flags = variant->flags;
	setup_ioctl_ring(_metadata, &self->ring, RING_ENTRIES, 0);
}

FIXTURE_TEARDOWN(ioctl)
{
	iou_exit(&self->ring);
}

/* FIONREAD on either end of a pipe holding 0 .. 64 KiB, and when full. */
TEST_F(ioctl, pipe_fionread)
{
	static const int sizes[] = {
		0, 1, 100, 4095, 4096, 4097, 10000, 65535, 65536, 17, 0,
	};
	char what[64], buf[1234];
	int p[2], have = 0, v, i, full;

	/* non-blocking: a write that does not fit fails instead of hanging */
	ASSERT_EQ(0, pipe2(p, O_CLOEXEC | O_NONBLOCK));
	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		pipe_set_bytes(_metadata, p, &have, sizes[i]);
		snprintf(what, sizeof(what), "pipe read end, %d bytes", have);
		EXPECT_EQ(0, same_as_ioctl(_metadata, &self->ring, self->flags,
					   p[0], FIONREAD, &v, what));
		EXPECT_EQ(sizes[i], v);
		snprintf(what, sizeof(what), "pipe write end, %d bytes", have);
		EXPECT_EQ(0, same_as_ioctl(_metadata, &self->ring, self->flags,
					   p[1], FIONREAD, &v, what));
		EXPECT_EQ(sizes[i], v);
	}

	/* full, then with the head in the middle of a page */
	full = pipe_fill(_metadata, p[1], have);
	EXPECT_EQ(fcntl(p[0], F_GETPIPE_SZ), full);
	EXPECT_EQ(0, same_as_ioctl(_metadata, &self->ring, self->flags, p[0],
				   FIONREAD, &v, "full pipe"));
	EXPECT_EQ(full, v);
	ASSERT_EQ(sizeof(buf), read(p[0], buf, sizeof(buf)));
	EXPECT_EQ(0, same_as_ioctl(_metadata, &self->ring, self->flags, p[0],
				   FIONREAD, &v, "full pipe, partly read"));
	EXPECT_EQ(full - (int)sizeof(buf), v);
	close(p[0]);
	close(p[1]);

	/* a one-page pipe, full */
	ASSERT_EQ(0, pipe2(p, O_CLOEXEC));
	ASSERT_LE(4096, fcntl(p[1], F_SETPIPE_SZ, 4096));
	full = pipe_fill(_metadata, p[1], 0);
	EXPECT_EQ(0, same_as_ioctl(_metadata, &self->ring, self->flags, p[0],
				   FIONREAD, &v, "small full pipe"));
	EXPECT_EQ(full, v);

	/* no reader or no writer left: still answered as ioctl(2) does */
	close(p[1]);
	EXPECT_EQ(0, same_as_ioctl(_metadata, &self->ring, self->flags, p[0],
				   FIONREAD, &v, "pipe without writer"));
	EXPECT_EQ(full, v);
	close(p[0]);
}

/* FIONREAD on FIFOs, opened O_RDWR and as separate ends. */
TEST_F(ioctl, fifo_fionread)
{
	char path[PATH_MAX], buf[3000];
	int rw, r, w, v, tmp;

	/* a fresh unique name: create a file, replace it by a FIFO */
	snprintf(path, sizeof(path), "/tmp/iou_ioctl_fifo.XXXXXX");
	tmp = mkstemp(path);
	if (tmp < 0) {
		snprintf(path, sizeof(path), "./iou_ioctl_fifo.XXXXXX");
		tmp = mkstemp(path);
	}
	ASSERT_LE(0, tmp);
	close(tmp);
	ASSERT_EQ(0, unlink(path));
	ASSERT_EQ(0, mkfifo(path, 0600));

	rw = open(path, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, rw);
	r = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	ASSERT_LE(0, r);
	w = open(path, O_WRONLY | O_CLOEXEC);
	ASSERT_LE(0, w);
	unlink(path);

	EXPECT_EQ(0, same_as_ioctl(_metadata, &self->ring, self->flags, r,
				   FIONREAD, &v, "empty FIFO"));
	EXPECT_EQ(0, v);

	memset(buf, 'f', sizeof(buf));
	ASSERT_EQ(sizeof(buf), write(w, buf, sizeof(buf)));
	EXPECT_EQ(0, same_as_ioctl(_metadata, &self->ring, self->flags, r,
				   FIONREAD, &v, "FIFO read end"));
	EXPECT_EQ(sizeof(buf), v);
	EXPECT_EQ(0, same_as_ioctl(_metadata, &self->ring, self->flags, w,
				   FIONREAD, &v, "FIFO write end"));
	EXPECT_EQ(sizeof(buf), v);
	EXPECT_EQ(0, same_as_ioctl(_metadata, &self->ring, self->flags, rw,
				   FIONREAD, &v, "FIFO opened O_RDWR"));
	EXPECT_EQ(sizeof(buf), v);

	ASSERT_EQ(1000, read(rw, buf, 1000));
	EXPECT_EQ(0, same_as_ioctl(_metadata, &self->ring, self->flags, r,
				   FIONREAD, &v, "FIFO partly read"));
	EXPECT_EQ(2000, v);

	v = pipe_fill(_metadata, w, 2000);
	EXPECT_EQ(0, same_as_ioctl(_metadata, &self->ring, self->flags, rw,
				   FIONREAD, &tmp, "full FIFO"));
	EXPECT_EQ(v, tmp);
	close(rw);
	close(r);
	close(w);
}

/* AF_UNIX stream, datagram and seqpacket pairs with queued data. */
TEST_F(ioctl, unix_queued)
{
	static const struct {
		int type;
		const char *name;
		int inq;	/* FIONREAD after 100 + 200 + 300 bytes */
	} types[] = {
		{ SOCK_STREAM, "stream", 600 },
		{ SOCK_DGRAM, "dgram", 100 },	/* the next datagram */
		{ SOCK_SEQPACKET, "seqpacket", -1 },
	};
	static const unsigned int cmds[] = { FIONREAD, SIOCOUTQ };
	struct sockaddr_un autobind = { .sun_family = AF_UNIX };
	char buf[300], what[80];
	int sv[2], i, c, s, v, outq;

	memset(buf, 'u', sizeof(buf));
	for (i = 0; i < ARRAY_SIZE(types); i++) {
		ASSERT_EQ(0, socketpair(AF_UNIX, types[i].type | SOCK_CLOEXEC,
					0, sv));

		/* empty */
		for (s = 0; s < 2; s++) {
			for (c = 0; c < ARRAY_SIZE(cmds); c++) {
				snprintf(what, sizeof(what), "unix %s[%d] empty",
					 types[i].name, s);
				same_as_ioctl(_metadata, &self->ring, self->flags,
					      sv[s], cmds[c], &v, what);
			}
			/* TCP's and MPTCP's alone (ioctl(2) reads an ifreq here) */
			expect_refused(_metadata, &self->ring, self->flags,
				       sv[s], SIOCOUTQNSD, -EOPNOTSUPP,
				       "SIOCOUTQNSD on AF_UNIX");
		}
		EXPECT_EQ(0, same_as_ioctl(_metadata, &self->ring, self->flags,
					   sv[1], FIONREAD, &v, "empty"));
		EXPECT_EQ(0, v);

		ASSERT_EQ(100, send(sv[0], buf, 100, 0));
		ASSERT_EQ(200, send(sv[0], buf, 200, 0));
		ASSERT_EQ(300, send(sv[0], buf, 300, 0));
		for (s = 0; s < 2; s++) {
			for (c = 0; c < ARRAY_SIZE(cmds); c++) {
				snprintf(what, sizeof(what), "unix %s[%d] queued",
					 types[i].name, s);
				same_as_ioctl(_metadata, &self->ring, self->flags,
					      sv[s], cmds[c], &v, what);
			}
		}
		EXPECT_EQ(0, same_as_ioctl(_metadata, &self->ring, self->flags,
					   sv[1], FIONREAD, &v, types[i].name));
		if (types[i].inq >= 0)
			EXPECT_EQ(types[i].inq, v);
		/* the sender's queue holds the unread data */
		EXPECT_EQ(0, same_as_ioctl(_metadata, &self->ring, self->flags,
					   sv[0], SIOCOUTQ, &outq, types[i].name));
		EXPECT_LT(0, outq);

		/* partly read */
		ASSERT_EQ(100, recv(sv[1], buf, 100, 0));
		EXPECT_EQ(0, same_as_ioctl(_metadata, &self->ring, self->flags,
					   sv[1], FIONREAD, &v, types[i].name));
		if (types[i].type == SOCK_STREAM)
			EXPECT_EQ(500, v);
		if (types[i].type == SOCK_DGRAM)
			EXPECT_EQ(200, v);
		close(sv[0]);
		close(sv[1]);
	}

	/* a listening socket: an error, the same one as ioctl(2)'s */
	s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ASSERT_LE(0, s);
	/* an address of just the family: autobind */
	ASSERT_EQ(0, bind(s, (struct sockaddr *)&autobind,
			  sizeof(sa_family_t)));
	ASSERT_EQ(0, listen(s, 1));
	for (c = 0; c < ARRAY_SIZE(cmds); c++)
		same_as_ioctl(_metadata, &self->ring, self->flags, s, cmds[c],
			      &v, "unix listener");
	close(s);
}

/* TCP, or MPTCP (@protocol IPPROTO_MPTCP), whose ioctls are TCP's */
static void tcp_queued(struct __test_metadata *_metadata,
		       FIXTURE_DATA(ioctl) *self, int family, int protocol)
{
	static const unsigned int cmds[] = { FIONREAD, SIOCOUTQ, SIOCOUTQNSD };
	int cli, srv, lst, c, v;
	char buf[3000], what[64];

	if (stream_pair(_metadata, family, protocol, 0, &cli, &srv, &lst))
		SKIP(return, "no %s %s sockets in this kernel",
		     family_name(family),
		     protocol == IPPROTO_MPTCP ? "MPTCP (CONFIG_MPTCP)" : "TCP");

	for (c = 0; c < ARRAY_SIZE(cmds); c++) {
		same_as_ioctl(_metadata, &self->ring, self->flags, cli,
			      cmds[c], &v, "tcp client, idle");
		same_as_ioctl(_metadata, &self->ring, self->flags, srv,
			      cmds[c], &v, "tcp server, idle");
		/* tcp_ioctl() refuses a listener with -EINVAL */
		same_as_ioctl(_metadata, &self->ring, self->flags, lst,
			      cmds[c], &v, "tcp listener");
	}

	memset(buf, 't', sizeof(buf));
	ASSERT_EQ(sizeof(buf), send(cli, buf, sizeof(buf), 0));
	wait_inq(_metadata, srv, sizeof(buf));
	EXPECT_EQ(0, same_as_ioctl(_metadata, &self->ring, self->flags, srv,
				   FIONREAD, &v, "tcp queued"));
	EXPECT_EQ(sizeof(buf), v);
	for (c = 0; c < ARRAY_SIZE(cmds); c++) {
		snprintf(what, sizeof(what), "tcp client, %zu sent", sizeof(buf));
		same_as_ioctl(_metadata, &self->ring, self->flags, cli,
			      cmds[c], &v, what);
	}

	ASSERT_EQ(1000, recv(srv, buf, 1000, 0));
	EXPECT_EQ(0, same_as_ioctl(_metadata, &self->ring, self->flags, srv,
				   FIONREAD, &v, "tcp partly read"));
	EXPECT_EQ(2000, v);
	close(cli);
	close(srv);
	close(lst);
}

TEST_F(ioctl, tcp4_queued)
{
	tcp_queued(_metadata, self, AF_INET, 0);
}

TEST_F(ioctl, tcp6_queued)
{
	tcp_queued(_metadata, self, AF_INET6, 0);
}

/* mptcp_ioctl() answers the three as tcp_ioctl() does, SIOCOUTQNSD too */
TEST_F(ioctl, mptcp4_queued)
{
	tcp_queued(_metadata, self, AF_INET, IPPROTO_MPTCP);
}

TEST_F(ioctl, mptcp6_queued)
{
	tcp_queued(_metadata, self, AF_INET6, IPPROTO_MPTCP);
}

/*
 * Unsent data: the receiver's buffer is tiny and unread, so the sender's
 * queue holds data it may not send yet (SIOCOUTQNSD > 0).
 */
static void tcp_unsent(struct __test_metadata *_metadata,
		       FIXTURE_DATA(ioctl) *self, int family)
{
	int cli, srv, lst, sndbuf = 65536, v, outq, nsd, prev = -1, same = 0;
	long long deadline;
	char buf[4096];
	ssize_t n;
	size_t sent = 0;

	if (tcp_pair(_metadata, family, 2048, &cli, &srv, &lst))
		SKIP(return, "no %s sockets in this kernel",
		     family_name(family));
	ASSERT_EQ(0, setsockopt(cli, SOL_SOCKET, SO_SNDBUF, &sndbuf,
				sizeof(sndbuf)));
	memset(buf, 'q', sizeof(buf));
	while (sent < (8u << 20)) {
		n = send(cli, buf, sizeof(buf), MSG_DONTWAIT);
		if (n < 0)
			break;
		sent += n;
	}
	ASSERT_EQ(EAGAIN, errno) {
		TH_LOG("sent %zu bytes and the peer did not push back", sent);
	}

	/* let the window settle: three equal samples in a row */
	deadline = iou_now_ms() + 5000;
	while (same < 3 && iou_now_ms() < deadline) {
		usleep(20000);
		ASSERT_EQ(0, ioctl(cli, SIOCOUTQ, &v));
		same = v == prev ? same + 1 : 0;
		prev = v;
	}

	EXPECT_EQ(0, same_as_ioctl(_metadata, &self->ring, self->flags, cli,
				   SIOCOUTQ, &outq, "tcp sender SIOCOUTQ"));
	EXPECT_EQ(0, same_as_ioctl(_metadata, &self->ring, self->flags, cli,
				   SIOCOUTQNSD, &nsd, "tcp sender SIOCOUTQNSD"));
	EXPECT_EQ(0, same_as_ioctl(_metadata, &self->ring, self->flags, srv,
				   FIONREAD, &v, "tcp receiver FIONREAD"));
	TH_LOG("sent %zu: SIOCOUTQ %d, SIOCOUTQNSD %d, peer FIONREAD %d",
	       sent, outq, nsd, v);
	EXPECT_LT(0, nsd);
	EXPECT_LE(nsd, outq);
	EXPECT_LT(0, v);
	/* more if the peer has not acked all it holds (delayed ACK) */
	EXPECT_LE((int)sent, outq + v);
	close(cli);
	close(srv);
	close(lst);
}

TEST_F(ioctl, tcp4_unsent)
{
	tcp_unsent(_metadata, self, AF_INET);
}

TEST_F(ioctl, tcp6_unsent)
{
	tcp_unsent(_metadata, self, AF_INET6);
}

/* UDP: FIONREAD is the size of the next datagram. */
TEST_F(ioctl, udp_queued)
{
	static const unsigned int cmds[] = { FIONREAD, SIOCOUTQ };
	char buf[250];
	int u[2], c, v;

	udp_pair(_metadata, u);
	for (c = 0; c < ARRAY_SIZE(cmds); c++)
		same_as_ioctl(_metadata, &self->ring, self->flags, u[1],
			      cmds[c], &v, "udp idle");
	/* TCP's and MPTCP's alone (ioctl(2) reads an ifreq here) */
	expect_refused(_metadata, &self->ring, self->flags, u[0], SIOCOUTQNSD,
		       -EOPNOTSUPP, "SIOCOUTQNSD on UDP");

	memset(buf, 'd', sizeof(buf));
	ASSERT_EQ(100, send(u[0], buf, 100, 0));
	ASSERT_EQ(250, send(u[0], buf, 250, 0));
	wait_inq(_metadata, u[1], 100);
	for (c = 0; c < ARRAY_SIZE(cmds); c++) {
		same_as_ioctl(_metadata, &self->ring, self->flags, u[0],
			      cmds[c], &v, "udp sender");
		same_as_ioctl(_metadata, &self->ring, self->flags, u[1],
			      cmds[c], &v, "udp receiver");
	}
	EXPECT_EQ(0, same_as_ioctl(_metadata, &self->ring, self->flags, u[1],
				   FIONREAD, &v, "udp"));
	EXPECT_EQ(100, v);
	ASSERT_EQ(100, recv(u[1], buf, sizeof(buf), 0));
	EXPECT_EQ(0, same_as_ioctl(_metadata, &self->ring, self->flags, u[1],
				   FIONREAD, &v, "udp second datagram"));
	EXPECT_EQ(250, v);
	close(u[0]);
	close(u[1]);
}

/*
 * Commands not in the table, including ones that differ from a listed
 * one only in their direction or size bits: -EOPNOTSUPP, argument and
 * descriptor flags untouched, on every kind of file that has a listed
 * command.
 */
TEST_F(ioctl, unlisted_commands)
{
	static const struct {
		unsigned int cmd;
		const char *name;
	} cmds[] = {
		{ FIOCLEX, "FIOCLEX" },
		{ FIONCLEX, "FIONCLEX" },
		{ FIONBIO, "FIONBIO" },
		{ FIOASYNC, "FIOASYNC" },
		{ FIOQSIZE, "FIOQSIZE" },
		{ FICLONE, "FICLONE" },
		{ FICLONERANGE, "FICLONERANGE" },
		{ FIGETBSZ, "FIGETBSZ" },
		{ FIBMAP, "FIBMAP" },
		{ FS_IOC_GETFLAGS, "FS_IOC_GETFLAGS" },
		{ TCGETS, "TCGETS" },
		{ TIOCGPGRP, "TIOCGPGRP" },
		{ FIOGETOWN, "FIOGETOWN" },
		{ FIOSETOWN, "FIOSETOWN" },
		{ SIOCSPGRP, "SIOCSPGRP" },
		{ SIOCATMARK, "SIOCATMARK" },
		{ SIOCGSTAMP_OLD, "SIOCGSTAMP_OLD" },
		{ SIOCGIFNAME, "SIOCGIFNAME" },
		{ SIOCGIFFLAGS, "SIOCGIFFLAGS" },
		{ SIOCGIFCONF, "SIOCGIFCONF" },
		{ DMA_BUF_SET_NAME, "DMA_BUF_SET_NAME" },
		{ DMA_BUF_IOCTL_EXPORT_SYNC_FILE, "DMA_BUF_IOCTL_EXPORT_SYNC_FILE" },
		{ 0, "0" },
		{ 0xffffffff, "0xffffffff" },
		/* near misses of the listed ones */
		{ _IOR('T', 0x1B, int), "FIONREAD as _IOR" },
		{ _IOW('T', 0x1B, int), "FIONREAD as _IOW" },
		{ _IOWR('T', 0x1B, int), "FIONREAD as _IOWR" },
		{ _IOC(_IOC_NONE, 'T', 0x1B, 8), "FIONREAD with size 8" },
		{ FIONREAD + 1, "FIONREAD + 1" },
		{ FIONREAD | 0x10000, "FIONREAD | 0x10000" },
		{ _IOR('T', 0x11, int), "SIOCOUTQ as _IOR" },
		{ _IOR(0x89, 0x4B, int), "SIOCOUTQNSD as _IOR" },
		{ SIOCOUTQNSD + 1, "SIOCOUTQNSD + 1" },
		{ _IOWR('b', 0, struct dma_buf_sync), "DMA_BUF_IOCTL_SYNC as _IOWR" },
		{ _IOW('b', 0, __u32), "DMA_BUF_IOCTL_SYNC size 4" },
		{ _IOR('b', 0, struct dma_buf_sync), "DMA_BUF_IOCTL_SYNC as _IOR" },
	};
	int p[2], sv[2], u[2], dmabuf, i, f, nfiles, fd_before, fl_before;
	int files[6];
	const char *fnames[6] = {
		"pipe read end", "pipe write end", "unix socket", "udp socket",
		"tmp file", "dma-buf",
	};
	char what[96];

	ASSERT_EQ(0, pipe2(p, O_CLOEXEC));
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	udp_pair(_metadata, u);
	files[0] = p[0];
	files[1] = p[1];
	files[2] = sv[0];
	files[3] = u[0];
	files[4] = tmp_file(_metadata);
	nfiles = 5;
	dmabuf = make_udmabuf(_metadata, 1);
	if (dmabuf >= 0)
		files[nfiles++] = dmabuf;
	else
		TH_LOG("no dma-buf (%s): not covered here", strerror(-dmabuf));

	ASSERT_EQ(3, write(p[1], "abc", 3));
	ASSERT_EQ(3, send(sv[1], "abc", 3, 0));

	for (f = 0; f < nfiles; f++) {
		for (i = 0; i < ARRAY_SIZE(cmds); i++) {
			fd_before = fd_flags(_metadata, files[f]);
			fl_before = fl_flags(_metadata, files[f]);
			snprintf(what, sizeof(what), "%s, %s", fnames[f],
				 cmds[i].name);
			expect_refused(_metadata, &self->ring, self->flags,
				       files[f], cmds[i].cmd, -EOPNOTSUPP, what);
			EXPECT_EQ(fd_before, fd_flags(_metadata, files[f])) {
				TH_LOG("%s changed the descriptor flags", what);
			}
			EXPECT_EQ(fl_before, fl_flags(_metadata, files[f])) {
				TH_LOG("%s changed the file status flags", what);
			}
		}
	}
	/* and the data is all still there */
	EXPECT_EQ(3, pipe_bytes(p[0]));
	EXPECT_EQ(3, pipe_bytes(sv[0]));
}

/*
 * The generic fd-table and file-flag ioctls never run: the flags read by
 * fcntl() stay as they were.  ioctl(2) then shows the checks would notice.
 */
TEST_F(ioctl, fd_flags_unchanged)
{
	int one = 1, zero = 0, p[2], fd;

	ASSERT_EQ(0, pipe2(p, 0));
	fd = p[0];

	ASSERT_EQ(0, fd_flags(_metadata, fd) & FD_CLOEXEC);
	EXPECT_EQ(-EOPNOTSUPP, ring_ioctl(_metadata, &self->ring, fd, FIOCLEX,
					  0, self->flags));
	EXPECT_EQ(0, fd_flags(_metadata, fd) & FD_CLOEXEC);

	EXPECT_EQ(-EOPNOTSUPP, ring_ioctl(_metadata, &self->ring, fd, FIONBIO,
					  IOCTL_PTR(&one), self->flags));
	EXPECT_EQ(0, fl_flags(_metadata, fd) & O_NONBLOCK);

	EXPECT_EQ(-EOPNOTSUPP, ring_ioctl(_metadata, &self->ring, fd, FIOASYNC,
					  IOCTL_PTR(&one), self->flags));
	EXPECT_EQ(0, fl_flags(_metadata, fd) & O_ASYNC);

	/* now the other way round */
	ASSERT_EQ(0, ioctl(fd, FIOCLEX));
	ASSERT_EQ(0, ioctl(fd, FIONBIO, &one));
	ASSERT_EQ(FD_CLOEXEC, fd_flags(_metadata, fd) & FD_CLOEXEC);
	ASSERT_EQ(O_NONBLOCK, fl_flags(_metadata, fd) & O_NONBLOCK);

	EXPECT_EQ(-EOPNOTSUPP, ring_ioctl(_metadata, &self->ring, fd, FIONCLEX,
					  0, self->flags));
	EXPECT_EQ(FD_CLOEXEC, fd_flags(_metadata, fd) & FD_CLOEXEC);
	EXPECT_EQ(-EOPNOTSUPP, ring_ioctl(_metadata, &self->ring, fd, FIONBIO,
					  IOCTL_PTR(&zero), self->flags));
	EXPECT_EQ(O_NONBLOCK, fl_flags(_metadata, fd) & O_NONBLOCK);

	/* the socket versions of the same */
	close(p[0]);
	close(p[1]);
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM, 0, p));
	EXPECT_EQ(-EOPNOTSUPP, ring_ioctl(_metadata, &self->ring, p[0], FIOCLEX,
					  0, self->flags));
	EXPECT_EQ(0, fd_flags(_metadata, p[0]) & FD_CLOEXEC);
	EXPECT_EQ(-EOPNOTSUPP, ring_ioctl(_metadata, &self->ring, p[0], FIONBIO,
					  IOCTL_PTR(&one), self->flags));
	EXPECT_EQ(0, fl_flags(_metadata, p[0]) & O_NONBLOCK);
	EXPECT_EQ(-EOPNOTSUPP, ring_ioctl(_metadata, &self->ring, p[0],
					  FIOASYNC, IOCTL_PTR(&one),
					  self->flags));
	EXPECT_EQ(0, fl_flags(_metadata, p[0]) & O_ASYNC);
	close(p[0]);
	close(p[1]);
}

/*
 * Each listed command on a file of the wrong kind: -EOPNOTSUPP, even
 * where ioctl(2) would answer (FIONREAD on a regular file or a tty).
 */
TEST_F(ioctl, wrong_kind_of_file)
{
	/* a valid argument for the dma-buf command: only the file is wrong */
	struct dma_buf_sync sync = { .flags = DMA_BUF_SYNC_START |
						DMA_BUF_SYNC_READ };
	static const struct {
		unsigned int cmd;
		const char *name;
	} cmds[] = {
		{ FIONREAD, "FIONREAD" },
		{ SIOCOUTQ, "SIOCOUTQ" },
		{ SIOCOUTQNSD, "SIOCOUTQNSD" },
		{ DMA_BUF_IOCTL_SYNC, "DMA_BUF_IOCTL_SYNC" },
	};
	/* bits of cmds[] that are listed for a kind of file */
	enum { L_FIONREAD = 1, L_OUTQ = 6, L_DMABUF = 8 };
	struct {
		int fd;
		const char *name;
		unsigned int listed;
	} files[20];
	struct ioc_arg arg;
	int nf = 0, f, i, fd, res, p[2], sv[2], u[2];
	char what[96];

#define ADD_FILE(_fd, _name, _listed) do {		\
		files[nf].fd = (_fd);			\
		files[nf].name = (_name);		\
		files[nf].listed = (_listed);		\
		nf++;					\
	} while (0)

	fd = tmp_file(_metadata);
	memset(what, 'x', sizeof(what));
	ASSERT_EQ(96, write(fd, what, 96));
	ASSERT_EQ(0, lseek(fd, 0, SEEK_SET));
	ADD_FILE(fd, "regular file", 0);
	ADD_FILE(open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC), "directory", 0);
	ADD_FILE(memfd_create("iou-ioctl", MFD_CLOEXEC), "memfd", 0);
	ADD_FILE(open("/dev/null", O_RDWR | O_CLOEXEC), "/dev/null", 0);
	ADD_FILE(eventfd(5, EFD_CLOEXEC), "eventfd", 0);
	ADD_FILE(epoll_create1(EPOLL_CLOEXEC), "epoll", 0);
	ADD_FILE(timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC), "timerfd", 0);
	ADD_FILE(dup(self->ring.fd), "io_uring", 0);
	ADD_FILE(socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE),
		 "netlink socket", 0);
	for (f = 0; f < nf; f++) {
		ASSERT_LE(0, files[f].fd) {
			TH_LOG("%s: %s", files[f].name, strerror(errno));
		}
	}

	/* kinds this kernel may lack */
	fd = socket(AF_PACKET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd >= 0)
		ADD_FILE(fd, "packet socket", 0);
	else
		TH_LOG("no AF_PACKET socket (%s): not covered", strerror(errno));
	fd = open("/dev/udmabuf", O_RDWR | O_CLOEXEC);
	if (fd >= 0)
		ADD_FILE(fd, "/dev/udmabuf", 0);
	fd = make_udmabuf(_metadata, 1);
	if (fd >= 0)
		ADD_FILE(fd, "dma-buf", L_DMABUF);
	else
		TH_LOG("no dma-buf (%s): not covered", strerror(-fd));

	/* the right kinds, with the commands meant for the others */
	ASSERT_EQ(0, pipe2(p, O_CLOEXEC));
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
	udp_pair(_metadata, u);
	ADD_FILE(p[0], "pipe", L_FIONREAD);
	ADD_FILE(p[1], "pipe write end", L_FIONREAD);
	ADD_FILE(sv[0], "unix socket", L_FIONREAD | L_OUTQ);
	ADD_FILE(u[0], "udp socket", L_FIONREAD | L_OUTQ);

	for (f = 0; f < nf; f++) {
		for (i = 0; i < ARRAY_SIZE(cmds); i++) {
			if (files[f].listed & (1 << i))
				continue;
			snprintf(what, sizeof(what), "%s on %s", cmds[i].name,
				 files[f].name);
			if (cmds[i].cmd != DMA_BUF_IOCTL_SYNC) {
				expect_refused(_metadata, &self->ring,
					       self->flags, files[f].fd,
					       cmds[i].cmd, -EOPNOTSUPP, what);
				continue;
			}
			res = ring_ioctl(_metadata, &self->ring, files[f].fd,
					 cmds[i].cmd, IOCTL_PTR(&sync),
					 self->flags);
			EXPECT_EQ(-EOPNOTSUPP, res) {
				TH_LOG("%s: got %s", what, err_name(res));
			}
		}
	}

	/* ioctl(2) does answer FIONREAD on a regular file */
	arg_fill(&arg);
	EXPECT_EQ(0, sys_ioctl(files[0].fd, FIONREAD, IOCTL_PTR(&arg)));
	EXPECT_EQ(96, arg.v[0]);

	for (f = 0; f < nf; f++)
		close(files[f].fd);
	close(sv[1]);
	close(u[1]);
#undef ADD_FILE
}

/* A tty, if there is one: FIONREAD (TIOCINQ) and TIOCOUTQ are refused. */
TEST_F(ioctl, tty)
{
	int fd, v, i;

	fd = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		fd = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
	for (i = 0; fd < 0 && i < 3; i++) {
		if (isatty(i))
			fd = fcntl(i, F_DUPFD_CLOEXEC, 3);
	}
	if (fd < 0)
		SKIP(return, "no tty (no /dev/ptmx, /dev/tty or tty on stdio)");

	/* ioctl(2) answers both */
	ASSERT_EQ(0, ioctl(fd, TIOCOUTQ, &v));
	ASSERT_EQ(0, ioctl(fd, FIONREAD, &v));

	expect_refused(_metadata, &self->ring, self->flags, fd, TIOCOUTQ,
		       -EOPNOTSUPP, "TIOCOUTQ on a tty");
	expect_refused(_metadata, &self->ring, self->flags, fd, FIONREAD,
		       -EOPNOTSUPP, "FIONREAD on a tty");
	expect_refused(_metadata, &self->ring, self->flags, fd, SIOCOUTQNSD,
		       -EOPNOTSUPP, "SIOCOUTQNSD on a tty");
	expect_refused(_metadata, &self->ring, self->flags, fd, TCGETS,
		       -EOPNOTSUPP, "TCGETS on a tty");
	close(fd);
}

/* Descriptors that are not open, or open with O_PATH: -EBADF. */
TEST_F(ioctl, bad_fd)
{
	int bad = closed_fd(_metadata);
	int fds[] = { bad, -1, -2, INT_MAX, 1 << 20 };
	struct ioc_arg arg;
	char what[64];
	int opath, i, res;

	for (i = 0; i < ARRAY_SIZE(fds); i++) {
		snprintf(what, sizeof(what), "fd %d", fds[i]);
		expect_refused(_metadata, &self->ring, self->flags, fds[i],
			       FIONREAD, -EBADF, what);
		expect_refused(_metadata, &self->ring, self->flags, fds[i],
			       SIOCOUTQ, -EBADF, what);
		/*
		 * An unlisted command with a bad fd: either error is fine
		 * (the uAPI does not order the two checks), but nothing runs.
		 */
		arg_fill(&arg);
		res = ring_ioctl(_metadata, &self->ring, fds[i], FIOCLEX,
				 IOCTL_PTR(&arg), self->flags);
		EXPECT_TRUE(res == -EBADF || res == -EOPNOTSUPP) {
			TH_LOG("%s, FIOCLEX: got %s", what, err_name(res));
		}
		EXPECT_TRUE(arg_untouched(&arg));
	}

	/* an O_PATH descriptor is not good for ioctl(2) either */
	opath = open("/dev/null", O_PATH | O_CLOEXEC);
	ASSERT_LE(0, opath);
	EXPECT_EQ(-EBADF, sys_ioctl(opath, FIONREAD, 0));
	same_as_ioctl(_metadata, &self->ring, self->flags, opath, FIONREAD,
		      NULL, "O_PATH");
	close(opath);
}

/* IOSQE_FIXED_FILE: slots that hold a file work; empty or absent ones do not. */
TEST_F(ioctl, registered_file)
{
	int p[2], sv[2], tmp, v, i, dmabuf;
	int table[5];
	struct dma_buf_sync sync;
	__u8 fixed = self->flags | IOSQE_FIXED_FILE;

	ASSERT_EQ(0, pipe2(p, O_CLOEXEC));
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
	tmp = tmp_file(_metadata);
	dmabuf = make_udmabuf(_metadata, 1);
	table[0] = p[0];
	table[1] = sv[0];
	table[2] = tmp;
	table[3] = -1;
	table[4] = dmabuf >= 0 ? dmabuf : -1;
	ASSERT_EQ(0, iou_register_files(&self->ring, table, 5));

	ASSERT_EQ(777, write(p[1], zeros, 777));
	ASSERT_EQ(55, send(sv[0], zeros, 55, 0));
	/* slot 0 is p[0], slot 1 sv[0] */
	EXPECT_EQ(0, same_as_ioctl_at(_metadata, &self->ring, p[0], 0, fixed,
				      FIONREAD, &v, "fixed pipe"));
	EXPECT_EQ(777, v);
	EXPECT_EQ(0, same_as_ioctl_at(_metadata, &self->ring, sv[0], 1, fixed,
				      SIOCOUTQ, &v, "fixed unix SIOCOUTQ"));
	EXPECT_LT(0, v);
	same_as_ioctl_at(_metadata, &self->ring, sv[0], 1, fixed, FIONREAD, &v,
			 "fixed unix FIONREAD");
	EXPECT_EQ(0, v);

	/* a listed command on a registered file of the wrong kind */
	expect_refused(_metadata, &self->ring, fixed, 2, FIONREAD, -EOPNOTSUPP,
		       "fixed regular file");
	/* an unlisted command on a registered pipe */
	expect_refused(_metadata, &self->ring, fixed, 0, FIOCLEX, -EOPNOTSUPP,
		       "fixed pipe, FIOCLEX");

	/* empty slot, out of range */
	expect_refused(_metadata, &self->ring, fixed, 3, FIONREAD, -EBADF,
		       "empty slot");
	expect_refused(_metadata, &self->ring, fixed, 5, FIONREAD, -EBADF,
		       "slot 5 of 5");
	expect_refused(_metadata, &self->ring, fixed, 1000, FIONREAD, -EBADF,
		       "slot 1000");
	expect_refused(_metadata, &self->ring, fixed, -1, FIONREAD, -EBADF,
		       "slot -1");

	if (dmabuf >= 0) {
		sync.flags = DMA_BUF_SYNC_START | DMA_BUF_SYNC_RW;
		EXPECT_EQ(0, ring_ioctl(_metadata, &self->ring, 4,
					DMA_BUF_IOCTL_SYNC, IOCTL_PTR(&sync),
					fixed));
		sync.flags = DMA_BUF_SYNC_END | DMA_BUF_SYNC_RW;
		EXPECT_EQ(0, ring_ioctl(_metadata, &self->ring, 4,
					DMA_BUF_IOCTL_SYNC, IOCTL_PTR(&sync),
					fixed));
	}

	/* fill the empty slot, empty a full one */
	ASSERT_EQ(1, iou_update_files(&self->ring, 3, &p[1], 1));
	EXPECT_EQ(0, same_as_ioctl_at(_metadata, &self->ring, p[1], 3, fixed,
				      FIONREAD, &v, "updated slot"));
	EXPECT_EQ(777, v);
	i = -1;
	ASSERT_EQ(1, iou_update_files(&self->ring, 0, &i, 1));
	expect_refused(_metadata, &self->ring, fixed, 0, FIONREAD, -EBADF,
		       "emptied slot");

	/* the registered file stays usable after its descriptor is closed */
	close(p[1]);
	EXPECT_EQ(0, same_as_ioctl_at(_metadata, &self->ring, p[0], 3, fixed,
				      FIONREAD, &v, "slot of a closed fd"));
	EXPECT_EQ(777, v);

	ASSERT_EQ(0, iou_unregister_files(&self->ring));
	expect_refused(_metadata, &self->ring, fixed, 1, FIONREAD, -EBADF,
		       "no table");
	close(p[0]);
	close(sv[0]);
	close(sv[1]);
	close(tmp);
	if (dmabuf >= 0)
		close(dmabuf);
}

/*
 * Linked requests: a failed ioctl cancels the next one (-ECANCELED),
 * whatever the failure; a successful one lets it run.
 */
TEST_F(ioctl, links)
{
	struct io_uring_sqe *sqe;
	struct ioc_arg a1, a2;
	int p[2], sv[2], lst, res[3], bad, v;
	struct sockaddr_in sin = { .sin_family = AF_INET };
	char data[40];

	ASSERT_EQ(0, pipe2(p, O_CLOEXEC));
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
	ASSERT_EQ(123, write(p[1], zeros, 123));
	bad = closed_fd(_metadata);

	/* refused commands: unlisted, wrong kind, bad fd, reserved field */
	{
		static const char * const why[] = {
			"unlisted", "wrong kind", "bad fd", "reserved field",
			"bad pointer",
		};
		int i;

		for (i = 0; i < ARRAY_SIZE(why); i++) {
			arg_fill(&a1);
			arg_fill(&a2);
			sqe = next_sqe(_metadata, &self->ring, 1);
			iou_prep_ioctl(sqe, p[0], FIONREAD, IOCTL_PTR(&a1));
			if (i == 0)
				IOU_SQE_IOCTL_CMD(sqe) = FIOCLEX;
			if (i == 1)
				sqe->fd = self->ring.fd;
			if (i == 2)
				sqe->fd = bad;
			if (i == 3)
				sqe->addr = 1;
			if (i == 4)
				IOU_SQE_IOCTL_ARG(sqe) = 0;
			sqe->flags = self->flags | IOSQE_IO_LINK;
			sqe = next_sqe(_metadata, &self->ring, 2);
			iou_prep_ioctl(sqe, p[0], FIONREAD, IOCTL_PTR(&a2));
			sqe->flags = self->flags | IOSQE_IO_LINK;
			sqe = next_sqe(_metadata, &self->ring, 3);
			iou_prep_nop(sqe);
			sqe->flags = self->flags;
			ASSERT_EQ(3, iou_submit_and_wait(&self->ring, 0));
			reap_cqes(_metadata, &self->ring, 3, res,
				  CQE_TIMEOUT_MS);
			EXPECT_GT(0, res[0]) {
				TH_LOG("%s: the head got %s", why[i],
				       err_name(res[0]));
			}
			EXPECT_EQ(-ECANCELED, res[1]) {
				TH_LOG("%s: second got %s", why[i],
				       err_name(res[1]));
			}
			EXPECT_EQ(-ECANCELED, res[2]) {
				TH_LOG("%s: third got %s", why[i],
				       err_name(res[2]));
			}
			EXPECT_TRUE(arg_untouched(&a1));
			EXPECT_TRUE(arg_untouched(&a2));
		}
	}

	/* an error from the handler itself: FIONREAD on a TCP listener */
	lst = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ASSERT_LE(0, lst);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ASSERT_EQ(0, bind(lst, (struct sockaddr *)&sin, sizeof(sin)));
	ASSERT_EQ(0, listen(lst, 1));
	ASSERT_EQ(-EINVAL, sys_ioctl(lst, FIONREAD, IOCTL_PTR(&v)));
	sqe = next_sqe(_metadata, &self->ring, 1);
	iou_prep_ioctl(sqe, lst, FIONREAD, IOCTL_PTR(&a1));
	sqe->flags = self->flags | IOSQE_IO_LINK;
	sqe = next_sqe(_metadata, &self->ring, 2);
	iou_prep_nop(sqe);
	sqe->flags = self->flags;
	ASSERT_EQ(2, iou_submit_and_wait(&self->ring, 0));
	reap_cqes(_metadata, &self->ring, 2, res, CQE_TIMEOUT_MS);
	EXPECT_EQ(-EINVAL, res[0]);
	EXPECT_EQ(-ECANCELED, res[1]);
	close(lst);

	/* success: FIONREAD -> SIOCOUTQ -> NOP all run */
	ASSERT_EQ(9, send(sv[0], data, 9, 0));
	arg_fill(&a1);
	arg_fill(&a2);
	sqe = next_sqe(_metadata, &self->ring, 1);
	iou_prep_ioctl(sqe, p[0], FIONREAD, IOCTL_PTR(&a1));
	sqe->flags = self->flags | IOSQE_IO_LINK;
	sqe = next_sqe(_metadata, &self->ring, 2);
	iou_prep_ioctl(sqe, sv[1], FIONREAD, IOCTL_PTR(&a2));
	sqe->flags = self->flags | IOSQE_IO_LINK;
	sqe = next_sqe(_metadata, &self->ring, 3);
	iou_prep_nop(sqe);
	sqe->flags = self->flags;
	ASSERT_EQ(3, iou_submit_and_wait(&self->ring, 0));
	reap_cqes(_metadata, &self->ring, 3, res, CQE_TIMEOUT_MS);
	EXPECT_EQ(0, res[0]);
	EXPECT_EQ(0, res[1]);
	EXPECT_EQ(0, res[2]);
	EXPECT_EQ(123, a1.v[0]);
	EXPECT_EQ(9, a2.v[0]);

	/* order: a linked write is done before the FIONREAD that follows */
	memset(data, 'w', sizeof(data));
	arg_fill(&a1);
	sqe = next_sqe(_metadata, &self->ring, 1);
	sqe->opcode = IORING_OP_WRITE;
	sqe->fd = p[1];
	sqe->addr = IOCTL_PTR(data);
	sqe->len = sizeof(data);
	sqe->off = (__u64)-1;
	sqe->flags = self->flags | IOSQE_IO_LINK;
	sqe = next_sqe(_metadata, &self->ring, 2);
	iou_prep_ioctl(sqe, p[0], FIONREAD, IOCTL_PTR(&a1));
	sqe->flags = self->flags;
	ASSERT_EQ(2, iou_submit_and_wait(&self->ring, 0));
	reap_cqes(_metadata, &self->ring, 2, res, CQE_TIMEOUT_MS);
	EXPECT_EQ(sizeof(data), res[0]);
	EXPECT_EQ(0, res[1]);
	EXPECT_EQ(123 + sizeof(data), a1.v[0]);
	close(p[0]);
	close(p[1]);
	close(sv[0]);
	close(sv[1]);
}

/*
 * DMA_BUF_IOCTL_SYNC on a udmabuf: the same sequence through the ring on
 * one buffer and through ioctl(2) on a twin gives the same answers.
 */
TEST_F(ioctl, dmabuf_sync)
{
	static const __u64 seq[] = {
		/* udmabuf refuses END before the first START */
		DMA_BUF_SYNC_END | DMA_BUF_SYNC_READ,
		DMA_BUF_SYNC_START | DMA_BUF_SYNC_READ,
		DMA_BUF_SYNC_END | DMA_BUF_SYNC_READ,
		DMA_BUF_SYNC_START | DMA_BUF_SYNC_WRITE,
		DMA_BUF_SYNC_END | DMA_BUF_SYNC_WRITE,
		DMA_BUF_SYNC_START | DMA_BUF_SYNC_RW,
		DMA_BUF_SYNC_END | DMA_BUF_SYNC_RW,
		DMA_BUF_SYNC_START | DMA_BUF_SYNC_RW,
		DMA_BUF_SYNC_START | DMA_BUF_SYNC_READ,
		DMA_BUF_SYNC_END | DMA_BUF_SYNC_READ,
		DMA_BUF_SYNC_END | DMA_BUF_SYNC_RW,
	};
	static const __u64 bad_flags[] = {
		0,				/* no direction */
		DMA_BUF_SYNC_END,		/* no direction */
		8,				/* unknown bit */
		DMA_BUF_SYNC_RW | 8,
		DMA_BUF_SYNC_READ | (1ULL << 32),
		~0ULL,
	};
	struct dma_heap_allocation_data alloc;
	struct dma_buf_sync s_ring, s_sys;
	int a, b, i, r_ring, r_sys, heap;
	char *map;

	a = need_udmabuf(_metadata, 4);
	if (a < 0)
		return;
	b = make_udmabuf(_metadata, 4);
	ASSERT_LE(0, b);

	for (i = 0; i < ARRAY_SIZE(seq); i++) {
		s_ring.flags = seq[i];
		s_sys.flags = seq[i];
		r_ring = ring_ioctl(_metadata, &self->ring, a,
				    DMA_BUF_IOCTL_SYNC, IOCTL_PTR(&s_ring),
				    self->flags);
		r_sys = sys_ioctl(b, DMA_BUF_IOCTL_SYNC, IOCTL_PTR(&s_sys));
		EXPECT_EQ(r_sys, r_ring) {
			TH_LOG("step %d, flags %#llx: ioctl(2) %s", i,
			       (unsigned long long)seq[i], err_name(r_sys));
			TH_LOG("step %d, flags %#llx: ring %s", i,
			       (unsigned long long)seq[i], err_name(r_ring));
		}
		if (i > 0)
			EXPECT_EQ(0, r_ring);
	}

	for (i = 0; i < ARRAY_SIZE(bad_flags); i++) {
		s_ring.flags = bad_flags[i];
		s_sys.flags = bad_flags[i];
		r_ring = ring_ioctl(_metadata, &self->ring, a,
				    DMA_BUF_IOCTL_SYNC, IOCTL_PTR(&s_ring),
				    self->flags);
		r_sys = sys_ioctl(b, DMA_BUF_IOCTL_SYNC, IOCTL_PTR(&s_sys));
		EXPECT_EQ(-EINVAL, r_sys);
		EXPECT_EQ(r_sys, r_ring) {
			TH_LOG("flags %#llx: ioctl(2) %s, ring %s",
			       (unsigned long long)bad_flags[i],
			       err_name(r_sys), err_name(r_ring));
		}
	}

	/* bracketing a CPU write through the dma-buf's own mapping */
	map = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, a, 0);
	ASSERT_NE(MAP_FAILED, map);
	s_ring.flags = DMA_BUF_SYNC_START | DMA_BUF_SYNC_WRITE;
	EXPECT_EQ(0, ring_ioctl(_metadata, &self->ring, a, DMA_BUF_IOCTL_SYNC,
				IOCTL_PTR(&s_ring), self->flags));
	memset(map, 0xa5, 4096);
	s_ring.flags = DMA_BUF_SYNC_END | DMA_BUF_SYNC_WRITE;
	EXPECT_EQ(0, ring_ioctl(_metadata, &self->ring, a, DMA_BUF_IOCTL_SYNC,
				IOCTL_PTR(&s_ring), self->flags));
	munmap(map, 4096);
	close(a);
	close(b);

	/* a dma-buf from the system heap, if there is one */
	heap = open("/dev/dma_heap/system", O_RDONLY | O_CLOEXEC);
	if (heap < 0) {
		TH_LOG("no /dev/dma_heap/system: only udmabuf covered");
		return;
	}
	memset(&alloc, 0, sizeof(alloc));
	alloc.len = 4096;
	alloc.fd_flags = O_RDWR | O_CLOEXEC;
	ASSERT_EQ(0, ioctl(heap, DMA_HEAP_IOCTL_ALLOC, &alloc));
	a = alloc.fd;
	for (i = 1; i < ARRAY_SIZE(seq); i++) {
		s_ring.flags = seq[i];
		s_sys.flags = seq[i];
		EXPECT_EQ(sys_ioctl(a, DMA_BUF_IOCTL_SYNC, IOCTL_PTR(&s_sys)),
			  ring_ioctl(_metadata, &self->ring, a,
				     DMA_BUF_IOCTL_SYNC, IOCTL_PTR(&s_ring),
				     self->flags));
	}
	close(a);
	close(heap);
}

/*
 * Bad argument pointers: the ring answers as ioctl(2) does (-EFAULT when
 * the ioctl has to touch them).
 */
TEST_F(ioctl, bad_arg_pointer)
{
	long psz = sysconf(_SC_PAGESIZE);
	char *ro, *none, *buf;
	__u64 ptrs[7];
	const char *pnames[7] = {
		"NULL", "1", "read-only page", "PROT_NONE page",
		"kernel address", "non-canonical", "unaligned",
	};
	struct {
		int fd;
		unsigned int cmd;
		const char *name;
	} t[8];
	int nt = 0, p[2], sv[2], cli, srv, lst, dmabuf, i, j, r_sys, r_ring;
	char what[96];

	ro = mmap(NULL, psz, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	none = mmap(NULL, psz, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	buf = mmap(NULL, 2 * psz, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, ro);
	ASSERT_NE(MAP_FAILED, none);
	ASSERT_NE(MAP_FAILED, buf);
	ptrs[0] = 0;
	ptrs[1] = 1;
	ptrs[2] = IOCTL_PTR(ro);
	ptrs[3] = IOCTL_PTR(none);
	ptrs[4] = 0xffffffff81000000ULL;
	ptrs[5] = 0x8000000000000000ULL;
	ptrs[6] = IOCTL_PTR(buf + 1);

	ASSERT_EQ(0, pipe2(p, O_CLOEXEC));
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
	ASSERT_EQ(10, write(p[1], what, 10));
	ASSERT_EQ(10, send(sv[0], what, 10, 0));
#define ADD_CASE(_fd, _cmd, _name) do {	\
		t[nt].fd = (_fd);		\
		t[nt].cmd = (_cmd);		\
		t[nt].name = (_name);		\
		nt++;				\
	} while (0)
	ADD_CASE(p[0], FIONREAD, "pipe FIONREAD");
	ADD_CASE(sv[1], FIONREAD, "unix FIONREAD");
	ADD_CASE(sv[0], SIOCOUTQ, "unix SIOCOUTQ");
	if (!tcp_pair(_metadata, AF_INET, 0, &cli, &srv, &lst)) {
		ADD_CASE(cli, SIOCOUTQNSD, "tcp SIOCOUTQNSD");
		ADD_CASE(srv, FIONREAD, "tcp FIONREAD");
	} else {
		TH_LOG("no AF_INET sockets: TCP not covered");
	}
	dmabuf = make_udmabuf(_metadata, 1);
	if (dmabuf >= 0)
		ADD_CASE(dmabuf, DMA_BUF_IOCTL_SYNC, "DMA_BUF_IOCTL_SYNC");
#undef ADD_CASE

	for (i = 0; i < nt; i++) {
		for (j = 0; j < ARRAY_SIZE(ptrs); j++) {
			snprintf(what, sizeof(what), "%s, %s", t[i].name,
				 pnames[j]);
			memset(buf, 0, 2 * psz);
			r_sys = sys_ioctl(t[i].fd, t[i].cmd, ptrs[j]);
			r_ring = ring_ioctl(_metadata, &self->ring, t[i].fd,
					    t[i].cmd, ptrs[j], self->flags);
			EXPECT_EQ(r_sys, r_ring) {
				TH_LOG("%s: ioctl(2) %s, ring %s", what,
				       err_name(r_sys), err_name(r_ring));
			}
			if (j < 6 && t[i].cmd != DMA_BUF_IOCTL_SYNC) {
				EXPECT_EQ(-EFAULT, r_ring) {
					TH_LOG("%s", what);
				}
			}
		}
	}
	/* the unaligned one was written where it was asked to */
	memset(buf, 0, 16);
	EXPECT_EQ(0, ring_ioctl(_metadata, &self->ring, p[0], FIONREAD,
				IOCTL_PTR(buf + 1), self->flags));
	EXPECT_EQ(10, buf[1]);
	EXPECT_EQ(0, buf[0]);
	EXPECT_EQ(0, buf[5]);
}

/* ------------------------------------------------------------------ */

FIXTURE(ioctl_ring) {
	struct iou_ring ring;
};

FIXTURE_SETUP(ioctl_ring)
{
	self->ring.fd = -1;
	setup_ioctl_ring(_metadata, &self->ring, RING_ENTRIES, 0);
}

FIXTURE_TEARDOWN(ioctl_ring)
{
	iou_exit(&self->ring);
}

/*
 * Every op-specific field other than fd, ioctl_cmd and ioctl_arg must be
 * zero: -EINVAL, and the ioctl did not run.  Generic fields (user_data,
 * IOSQE_* flags, personality) are fine.
 */
TEST_F(ioctl_ring, reserved_fields)
{
	static const struct {
		const char *name;
		size_t off, size;
	} fields[] = {
		{ "ioprio", offsetof(struct io_uring_sqe, ioprio), 2 },
		{ "addr", offsetof(struct io_uring_sqe, addr), 8 },
		{ "rw_flags", offsetof(struct io_uring_sqe, rw_flags), 4 },
		{ "buf_index", offsetof(struct io_uring_sqe, buf_index), 2 },
		{ "splice_fd_in", offsetof(struct io_uring_sqe, splice_fd_in), 4 },
		{ "addr3", offsetof(struct io_uring_sqe, addr3), 8 },
		{ "__pad2[0]", offsetof(struct io_uring_sqe, __pad2), 8 },
	};
	struct io_uring_sqe *sqe;
	struct ioc_arg arg;
	int p[2], i, bit, res, pers;
	__u64 val;

	ASSERT_EQ(0, pipe2(p, O_CLOEXEC));
	ASSERT_EQ(77, write(p[1], fields, 77));

	for (i = 0; i < ARRAY_SIZE(fields); i++) {
		/* lowest bit, highest bit, and the top half's lowest */
		for (bit = 0; bit < 3; bit++) {
			if (bit == 0)
				val = 1;
			else if (bit == 1)
				val = 1ULL << (fields[i].size * 8 - 1);
			else
				val = 1ULL << (fields[i].size * 4);
			arg_fill(&arg);
			sqe = next_sqe(_metadata, &self->ring, 1);
			iou_prep_ioctl(sqe, p[0], FIONREAD, IOCTL_PTR(&arg));
			memcpy((char *)sqe + fields[i].off, &val,
			       fields[i].size);
			ASSERT_EQ(1, iou_submit_and_wait(&self->ring, 0));
			reap_cqes(_metadata, &self->ring, 1, &res,
				  CQE_TIMEOUT_MS);
			EXPECT_EQ(-EINVAL, res) {
				TH_LOG("%s = %#llx: got %s", fields[i].name,
				       (unsigned long long)val, err_name(res));
			}
			EXPECT_TRUE(arg_untouched(&arg)) {
				TH_LOG("%s = %#llx: the ioctl ran",
				       fields[i].name, (unsigned long long)val);
			}
		}
	}

	/* all zero: fine */
	arg_fill(&arg);
	EXPECT_EQ(0, ring_ioctl(_metadata, &self->ring, p[0], FIONREAD,
				IOCTL_PTR(&arg), 0));
	EXPECT_EQ(77, arg.v[0]);

	/* a registered personality is a generic field: allowed */
	pers = iou_sys_register(self->ring.fd, IORING_REGISTER_PERSONALITY,
				NULL, 0);
	ASSERT_LT(0, pers);
	arg_fill(&arg);
	sqe = next_sqe(_metadata, &self->ring, 1);
	iou_prep_ioctl(sqe, p[0], FIONREAD, IOCTL_PTR(&arg));
	sqe->personality = pers;
	ASSERT_EQ(1, iou_submit_and_wait(&self->ring, 0));
	reap_cqes(_metadata, &self->ring, 1, &res, CQE_TIMEOUT_MS);
	EXPECT_EQ(0, res);
	EXPECT_EQ(77, arg.v[0]);
	close(p[0]);
	close(p[1]);
}

/* IORING_REGISTER_ZCRX_IFQ upstream (6.15); past this kernel's last. */
#define UPSTREAM_REGISTER_ZCRX_IFQ	32

/*
 * Opcode 58 is IORING_OP_RECV_ZC upstream (6.15), so IORING_REGISTER_PROBE
 * tells a program built for such kernels that 58 is supported. Such a
 * program registers a zero-copy receive queue first, which this kernel
 * refuses; and an sqe shaped as RECV_ZC (IORING_RECV_MULTISHOT in ioprio,
 * which RECV_ZC requires; len 0 or a length; an ifq index in the
 * splice_fd_in union) gets -EINVAL without an ioctl run or a byte of the
 * socket's data taken: io_init_req() refuses ioprio for this opcode.
 */
TEST_F(ioctl_ring, recv_zc_shaped_refused)
{
	static const __u16 ioprios[] = {
		IORING_RECV_MULTISHOT,
		IORING_RECV_MULTISHOT | IORING_RECVSEND_POLL_FIRST,
	};
	static const __u32 lens[] = { 0, 4096 };
	static const __u32 ifq_idx[] = { 0, 1 };
	struct io_uring_sqe *sqe;
	char data[100] = "zcrx", got[sizeof(data)];
	int cli, srv, lst, i, j, k, res, inq = -1;

	ASSERT_EQ(0, tcp_pair(_metadata, AF_INET, 0, &cli, &srv, &lst));
	ASSERT_EQ(sizeof(data), write(cli, data, sizeof(data)));
	wait_inq(_metadata, srv, sizeof(data));

	/* what liburing's io_uring_register_ifq() asks first */
	EXPECT_EQ(-EINVAL, iou_sys_register(self->ring.fd, UPSTREAM_REGISTER_ZCRX_IFQ,
					    (void *)zeros, 1));

	for (i = 0; i < ARRAY_SIZE(ioprios); i++) {
		for (j = 0; j < ARRAY_SIZE(lens); j++) {
			for (k = 0; k < ARRAY_SIZE(ifq_idx); k++) {
				sqe = next_sqe(_metadata, &self->ring, 1);
				sqe->opcode = IOU_OP_IOCTL;
				sqe->fd = srv;
				sqe->ioprio = ioprios[i];
				sqe->len = lens[j];
				sqe->splice_fd_in = ifq_idx[k];
				ASSERT_EQ(1, iou_submit_and_wait(&self->ring, 0));
				reap_cqes(_metadata, &self->ring, 1, &res,
					  CQE_TIMEOUT_MS);
				EXPECT_EQ(-EINVAL, res) {
					TH_LOG("ioprio %#x, len %u, ifq %u: got %s",
					       ioprios[i], lens[j], ifq_idx[k],
					       err_name(res));
				}
			}
		}
	}
	ASSERT_EQ(0, ioctl(srv, FIONREAD, &inq));
	EXPECT_EQ(sizeof(data), inq);
	ASSERT_EQ(sizeof(data), read(srv, got, sizeof(got)));
	EXPECT_EQ(0, memcmp(data, got, sizeof(data)));
	close(cli);
	close(srv);
	close(lst);
}

/* An IOPOLL ring refuses the opcode. */
TEST_F(ioctl_ring, iopoll)
{
	struct iou_ring ring;
	struct ioc_arg arg;
	int p[2], res;

	ASSERT_EQ(0, iou_setup(&ring, 4, IORING_SETUP_IOPOLL));
	ASSERT_EQ(0, pipe2(p, O_CLOEXEC));
	ASSERT_EQ(5, write(p[1], "iopol", 5));
	arg_fill(&arg);
	res = ring_ioctl(_metadata, &ring, p[0], FIONREAD, IOCTL_PTR(&arg), 0);
	EXPECT_EQ(-EINVAL, res) {
		TH_LOG("got %s", err_name(res));
	}
	EXPECT_TRUE(arg_untouched(&arg));
	iou_exit(&ring);
	close(p[0]);
	close(p[1]);
}

/* A restricted ring without the opcode: -EACCES; with it: works. */
TEST_F(ioctl_ring, restrictions)
{
	struct io_uring_restriction res_nop = {
		.opcode = IORING_RESTRICTION_SQE_OP,
		.sqe_op = IORING_OP_NOP,
	};
	struct io_uring_restriction res_ioctl = {
		.opcode = IORING_RESTRICTION_SQE_OP,
		.sqe_op = IOU_OP_IOCTL,
	};
	struct io_uring_sqe *sqe;
	struct iou_ring ring;
	struct ioc_arg arg;
	int p[2], res[2];

	ASSERT_EQ(0, pipe2(p, O_CLOEXEC));
	ASSERT_EQ(6, write(p[1], "restri", 6));

	/* only NOP allowed */
	ASSERT_EQ(0, iou_setup(&ring, 4, IORING_SETUP_R_DISABLED));
	ASSERT_EQ(0, iou_sys_register(ring.fd, IORING_REGISTER_RESTRICTIONS,
				      &res_nop, 1));
	ASSERT_EQ(0, iou_sys_register(ring.fd, IORING_REGISTER_ENABLE_RINGS,
				      NULL, 0));
	/* a refused sqe ends the submission: it goes last */
	arg_fill(&arg);
	sqe = next_sqe(_metadata, &ring, 1);
	iou_prep_nop(sqe);
	sqe = next_sqe(_metadata, &ring, 2);
	iou_prep_ioctl(sqe, p[0], FIONREAD, IOCTL_PTR(&arg));
	ASSERT_EQ(2, iou_submit_and_wait(&ring, 0));
	reap_cqes(_metadata, &ring, 2, res, CQE_TIMEOUT_MS);
	EXPECT_EQ(0, res[0]);
	EXPECT_EQ(-EACCES, res[1]) {
		TH_LOG("got %s", err_name(res[1]));
	}
	EXPECT_TRUE(arg_untouched(&arg));
	iou_exit(&ring);

	/* only IOCTL allowed */
	ASSERT_EQ(0, iou_setup(&ring, 4, IORING_SETUP_R_DISABLED));
	ASSERT_EQ(0, iou_sys_register(ring.fd, IORING_REGISTER_RESTRICTIONS,
				      &res_ioctl, 1));
	ASSERT_EQ(0, iou_sys_register(ring.fd, IORING_REGISTER_ENABLE_RINGS,
				      NULL, 0));
	arg_fill(&arg);
	sqe = next_sqe(_metadata, &ring, 1);
	iou_prep_ioctl(sqe, p[0], FIONREAD, IOCTL_PTR(&arg));
	sqe = next_sqe(_metadata, &ring, 2);
	iou_prep_nop(sqe);
	ASSERT_EQ(2, iou_submit_and_wait(&ring, 0));
	reap_cqes(_metadata, &ring, 2, res, CQE_TIMEOUT_MS);
	EXPECT_EQ(0, res[0]);
	EXPECT_EQ(6, arg.v[0]);
	EXPECT_EQ(-EACCES, res[1]);
	iou_exit(&ring);
	close(p[0]);
	close(p[1]);
}

/*
 * FIONREAD, SIOCOUTQ and SIOCOUTQNSD run inline: many of them start no
 * io-wq worker.  One IOSQE_ASYNC NOP afterwards shows the count works.
 */
TEST_F(ioctl_ring, inline_no_worker)
{
	int p[2], sv[2], cli, srv, lst, i, have_tcp, v, res;
	__u64 arg = IOCTL_PTR(&v);
	struct io_uring_sqe *sqe;

	ASSERT_EQ(0, pipe2(p, O_CLOEXEC));
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
	ASSERT_EQ(100, write(p[1], zeros, 100));
	ASSERT_EQ(100, send(sv[0], zeros, 100, 0));
	have_tcp = !tcp_pair(_metadata, AF_INET, 0, &cli, &srv, &lst);
	if (have_tcp)
		ASSERT_EQ(100, send(cli, zeros, 100, 0));
	ASSERT_EQ(0, iou_count_io_workers());

	for (i = 0; i < 200; i++) {
		EXPECT_EQ(0, ring_ioctl(_metadata, &self->ring, p[0], FIONREAD,
					arg, 0));
		EXPECT_EQ(0, ring_ioctl(_metadata, &self->ring, sv[1],
					FIONREAD, arg, 0));
		EXPECT_EQ(0, ring_ioctl(_metadata, &self->ring, sv[0],
					SIOCOUTQ, arg, 0));
		if (!have_tcp)
			continue;
		EXPECT_EQ(0, ring_ioctl(_metadata, &self->ring, srv, FIONREAD,
					arg, 0));
		EXPECT_EQ(0, ring_ioctl(_metadata, &self->ring, cli, SIOCOUTQ,
					arg, 0));
		EXPECT_EQ(0, ring_ioctl(_metadata, &self->ring, cli,
					SIOCOUTQNSD, arg, 0));
	}
	EXPECT_EQ(0, iou_count_io_workers()) {
		TH_LOG("an inline ioctl went to io-wq");
	}

	/* the count sees a worker when there is one */
	sqe = next_sqe(_metadata, &self->ring, 1);
	iou_prep_nop(sqe);
	sqe->flags = IOSQE_ASYNC;
	ASSERT_EQ(1, iou_submit_and_wait(&self->ring, 0));
	reap_cqes(_metadata, &self->ring, 1, &res, CQE_TIMEOUT_MS);
	EXPECT_EQ(0, res);
	EXPECT_LE(1, iou_count_io_workers());
}

/*
 * An SQPOLL ring: the ioctls run in the SQ thread, not in the task that
 * owns the argument; the answers must not change.
 */
TEST_F(ioctl_ring, sqpoll)
{
	struct dma_buf_sync sync;
	struct io_uring_sqe *sqe;
	struct iou_ring ring;
	struct ioc_arg a[3], want;
	int p[2], sv[2], buf, res[3], ret, i;

	ret = iou_setup(&ring, 8, IORING_SETUP_SQPOLL);
	if (ret == -EPERM)
		SKIP(return, "SQPOLL not permitted");
	ASSERT_EQ(0, ret);
	ASSERT_EQ(0, pipe2(p, O_CLOEXEC));
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
	ASSERT_EQ(321, write(p[1], zeros, 321));
	ASSERT_EQ(45, send(sv[0], zeros, 45, 0));
	buf = make_udmabuf(_metadata, 1);

	for (i = 0; i < 3; i++)
		arg_fill(&a[i]);
	sqe = next_sqe(_metadata, &ring, 1);
	iou_prep_ioctl(sqe, p[0], FIONREAD, IOCTL_PTR(&a[0]));
	sqe = next_sqe(_metadata, &ring, 2);
	iou_prep_ioctl(sqe, sv[1], FIONREAD, IOCTL_PTR(&a[1]));
	sqe = next_sqe(_metadata, &ring, 3);
	iou_prep_ioctl(sqe, sv[0], SIOCOUTQ, IOCTL_PTR(&a[2]));
	/* the SQ thread may be asleep: wake it */
	__atomic_store_n(ring.sq_tail, ring.sqe_next, __ATOMIC_RELEASE);
	ASSERT_LE(0, iou_sys_enter(ring.fd, 3, 0, IORING_ENTER_SQ_WAKEUP));
	reap_cqes(_metadata, &ring, 3, res, CQE_TIMEOUT_MS);
	EXPECT_EQ(0, res[0]);
	EXPECT_EQ(321, a[0].v[0]);
	EXPECT_EQ(0, res[1]);
	EXPECT_EQ(45, a[1].v[0]);
	EXPECT_EQ(0, res[2]);
	arg_fill(&want);
	ASSERT_EQ(0, sys_ioctl(sv[0], SIOCOUTQ, IOCTL_PTR(&want)));
	EXPECT_EQ(0, memcmp(&want, &a[2], sizeof(want)));

	if (buf >= 0) {
		sync.flags = DMA_BUF_SYNC_START | DMA_BUF_SYNC_READ;
		sqe = next_sqe(_metadata, &ring, 1);
		iou_prep_ioctl(sqe, buf, DMA_BUF_IOCTL_SYNC, IOCTL_PTR(&sync));
		__atomic_store_n(ring.sq_tail, ring.sqe_next, __ATOMIC_RELEASE);
		ASSERT_LE(0, iou_sys_enter(ring.fd, 1, 0,
					   IORING_ENTER_SQ_WAKEUP));
		reap_cqes(_metadata, &ring, 1, res, CQE_TIMEOUT_MS);
		EXPECT_EQ(0, res[0]);
		close(buf);
	}
	iou_exit(&ring);
	close(p[0]);
	close(p[1]);
	close(sv[0]);
	close(sv[1]);
}

/* DMA_BUF_IOCTL_SYNC runs on io-wq: a worker appears. */
TEST_F(ioctl_ring, dmabuf_on_iowq)
{
	struct dma_buf_sync sync = {
		.flags = DMA_BUF_SYNC_START | DMA_BUF_SYNC_RW,
	};
	int buf = need_udmabuf(_metadata, 1);

	if (buf < 0)
		return;
	ASSERT_EQ(0, iou_count_io_workers());
	EXPECT_EQ(0, ring_ioctl(_metadata, &self->ring, buf, DMA_BUF_IOCTL_SYNC,
				IOCTL_PTR(&sync), 0));
	EXPECT_LE(1, iou_count_io_workers()) {
		TH_LOG("DMA_BUF_IOCTL_SYNC did not use io-wq");
	}
	sync.flags = DMA_BUF_SYNC_END | DMA_BUF_SYNC_RW;
	EXPECT_EQ(0, ring_ioctl(_metadata, &self->ring, buf, DMA_BUF_IOCTL_SYNC,
				IOCTL_PTR(&sync), 0));
	close(buf);
}

struct splice_blocker {
	int sock;	/* splice from here ... */
	int pipe_w;	/* ... into this pipe, whose mutex it holds meanwhile */
	pid_t tid;
	ssize_t ret;
	int err;
};

static void *splice_blocker_fn(void *arg)
{
	struct splice_blocker *b = arg;

	__atomic_store_n(&b->tid, gettid(), __ATOMIC_RELEASE);
	b->ret = splice(b->sock, NULL, b->pipe_w, NULL, 100, 0);
	b->err = errno;
	return NULL;
}

struct releaser {
	int ctl;	/* readable: release now */
	int sock;	/* write here to end the splice */
	int timeout_ms;
};

static void *releaser_fn(void *arg)
{
	struct releaser *r = arg;
	struct pollfd pfd = { .fd = r->ctl, .events = POLLIN };
	char data[20];

	poll(&pfd, 1, r->timeout_ms);
	memset(data, 'r', sizeof(data));
	if (write(r->sock, data, sizeof(data)) != sizeof(data))
		perror("releaser write");
	return NULL;
}

/* Is thread @tid asleep inside splice(2)? */
static bool in_splice(pid_t tid)
{
	char path[64], buf[256];
	long nr = -1;
	ssize_t n;
	int fd;
	char *st;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", tid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = 0;
	st = strrchr(buf, ')');
	if (!st || st[1] != ' ' || st[2] != 'S')
		return false;

	snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", tid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return true;	/* no /proc/.../syscall: the state will do */
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = 0;
	nr = strtol(buf, NULL, 10);
	return nr == SYS_splice;
}

/*
 * A FIONREAD on a pipe whose mutex is held by a splice(2) that waits for
 * socket data must not sleep in io_uring_enter(): it is punted, then
 * completes once the splice lets go, seeing the spliced bytes.
 */
TEST_F(ioctl_ring, locked_pipe_punted)
{
	struct splice_blocker b = { 0 };
	struct releaser r;
	pthread_t bt, rt;
	int p[2], sv[2], ctl[2], v = -1, res;
	long long t0, elapsed;
	struct iou_cqe cqe = { 0 };

	ASSERT_EQ(0, pipe2(p, O_CLOEXEC));
	ASSERT_EQ(0, pipe2(ctl, O_CLOEXEC));
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
	ASSERT_EQ(10, write(p[1], "0123456789", 10));

	b.sock = sv[1];
	b.pipe_w = p[1];
	ASSERT_EQ(0, pthread_create(&bt, NULL, splice_blocker_fn, &b));
	t0 = iou_now_ms();
	while (!__atomic_load_n(&b.tid, __ATOMIC_ACQUIRE) ||
	       !in_splice(b.tid)) {
		ASSERT_GT(5000, iou_now_ms() - t0) {
			TH_LOG("the splice thread never blocked");
		}
		usleep(1000);
	}
	usleep(50000);
	ASSERT_TRUE(in_splice(b.tid));

	/* if the FIONREAD sleeps on the mutex, this ends it after 3 s */
	r.ctl = ctl[0];
	r.sock = sv[0];
	r.timeout_ms = 3000;
	ASSERT_EQ(0, pthread_create(&rt, NULL, releaser_fn, &r));

	iou_prep_ioctl(next_sqe(_metadata, &self->ring, 1), p[0], FIONREAD,
		       IOCTL_PTR(&v));
	t0 = iou_now_ms();
	ASSERT_EQ(1, iou_submit_and_wait(&self->ring, 0));
	elapsed = iou_now_ms() - t0;
	EXPECT_GT(1500, elapsed) {
		TH_LOG("io_uring_enter() slept %lld ms on the pipe mutex",
		       elapsed);
	}
	EXPECT_EQ(-EAGAIN, iou_peek_cqe(&self->ring, &cqe)) {
		TH_LOG("completed while the pipe was locked: res %s, value %d",
		       err_name(cqe.res), v);
	}
	EXPECT_TRUE(in_splice(b.tid));
	EXPECT_EQ(-1, v);

	/* let the splice finish: the FIONREAD sees its 20 bytes */
	ASSERT_EQ(1, write(ctl[1], "x", 1));
	ASSERT_EQ(0, pthread_join(rt, NULL));
	ASSERT_EQ(0, pthread_join(bt, NULL));
	EXPECT_EQ(20, b.ret) {
		TH_LOG("splice: %s", strerror(b.err));
	}
	if (elapsed < 1500) {
		reap_cqes(_metadata, &self->ring, 1, &res, CQE_TIMEOUT_MS);
		EXPECT_EQ(0, res);
		EXPECT_EQ(30, v);
	}
	EXPECT_EQ(30, pipe_bytes(p[0]));
	EXPECT_LE(1, iou_count_io_workers()) {
		TH_LOG("completed, but not by an io-wq worker");
	}
	close(p[0]);
	close(p[1]);
	close(sv[0]);
	close(sv[1]);
	close(ctl[0]);
	close(ctl[1]);
}

#define MANY_TOTAL	100000
#define MANY_BATCH	32
#define MANY_PIPES	32

/*
 * 100000 FIONREADs, 32 per io_uring_enter(), on 32 pipes whose byte
 * counts change between batches: every answer is checked.
 */
TEST_F(ioctl_ring, many_fionread)
{
	static char junk[16384];
	int pipes[MANY_PIPES][2], want[MANY_PIPES], val[MANY_BATCH];
	int slot_pipe[MANY_BATCH], res[MANY_BATCH];
	unsigned int x = 0x9e3779b9, done = 0, bad = 0, batch = 0;
	int i, k, n, amount;
	struct io_uring_sqe *sqe;

	for (k = 0; k < MANY_PIPES; k++) {
		ASSERT_EQ(0, pipe2(pipes[k], O_NONBLOCK | O_CLOEXEC));
		want[k] = 0;
	}
	/* pipe 0 stays empty, pipe 1 full */
	want[1] = pipe_fill(_metadata, pipes[1][1], 0);

	while (done < MANY_TOTAL) {
		/* change four pipes other than 0 and 1 */
		for (i = 0; i < 4; i++) {
			x ^= x << 13;
			x ^= x >> 17;
			x ^= x << 5;
			k = 2 + x % (MANY_PIPES - 2);
			amount = (x >> 8) % sizeof(junk);
			if (x & 0x80000000) {
				n = write(pipes[k][1], junk, amount);
				ASSERT_TRUE(n >= 0 || errno == EAGAIN);
				if (n > 0)
					want[k] += n;
			} else {
				n = read(pipes[k][0], junk, amount);
				ASSERT_TRUE(n >= 0 || errno == EAGAIN);
				if (n > 0)
					want[k] -= n;
			}
		}

		n = MANY_TOTAL - done < MANY_BATCH ? MANY_TOTAL - done :
						     MANY_BATCH;
		for (i = 0; i < n; i++) {
			slot_pipe[i] = (i * 7 + batch) % MANY_PIPES;
			val[i] = -1;
			sqe = next_sqe(_metadata, &self->ring, i + 1);
			iou_prep_ioctl(sqe, pipes[slot_pipe[i]][i & 1],
				       FIONREAD, IOCTL_PTR(&val[i]));
		}
		ASSERT_EQ(n, iou_submit_and_wait(&self->ring, n));
		reap_cqes(_metadata, &self->ring, n, res, CQE_TIMEOUT_MS);
		for (i = 0; i < n; i++) {
			if (res[i] == 0 && val[i] == want[slot_pipe[i]])
				continue;
			if (bad++ < 10)
				TH_LOG("batch %u sqe %d pipe %d: res %s, value %d, want %d",
				       batch, i, slot_pipe[i], err_name(res[i]),
				       val[i], want[slot_pipe[i]]);
		}
		done += n;
		batch++;
	}
	EXPECT_EQ(0, bad) {
		TH_LOG("%u of %u answers wrong", bad, done);
	}
	for (k = 0; k < MANY_PIPES; k++) {
		EXPECT_EQ(want[k], pipe_bytes(pipes[k][0]));
		close(pipes[k][0]);
		close(pipes[k][1]);
	}
	TH_LOG("%u FIONREADs in %u batches", done, batch);
}

TEST_HARNESS_MAIN
