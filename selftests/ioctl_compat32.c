// SPDX-License-Identifier: GPL-2.0
/*
 * IORING_OP_IOCTL from a 32-bit task: a program built with -m32 that runs
 * on a 64-bit kernel with CONFIG_IA32_EMULATION.
 *
 * A ring set up by a 32-bit task is a compat ring.  The series serves it
 * with the native handlers, since every allowed command's argument has the
 * same layout for 32- and 64-bit callers (an int, or struct dma_buf_sync
 * with its one __u64), and asks the LSM with security_file_ioctl_compat()
 * as the compat ioctl(2) does.  So every listed command, on every kind of
 * file it is listed for, must answer through the ring exactly as the
 * compat ioctl(2) answers on the same file in the same state: the return
 * value, the value written and nothing written past the int.  Unlisted
 * commands are refused with -EOPNOTSUPP, as for a 64-bit task, and an
 * argument that is not good user memory gives -EFAULT, a 64-bit
 * ioctl_arg whose low half is a valid pointer included: it is not cut to
 * 32 bits.
 *
 * The "compat" fixture runs each test with and without IOSQE_ASYNC (the
 * io-wq worker of a 32-bit task).  Without the series the program skips.
 */

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <linux/dma-buf.h>
#include <linux/dma-heap.h>
#include <linux/fs.h>
#include <linux/sockios.h>
#include <linux/udmabuf.h>

#include "iou_helpers.h"
#include "../kselftest_harness.h"
#include "ioctl_helpers.h"

/* what the compat ring and the compat ioctl(2) take from us */
static_assert(sizeof(void *) == 4 && sizeof(long) == 4,
	      "ioctl_compat32 tests a 32-bit submitter: build it with -m32");
static_assert(sizeof(struct iovec) == 8, "a 32-bit struct iovec");
static_assert(sizeof(struct dma_buf_sync) == 8,
	      "struct dma_buf_sync is the same for 32 and 64 bits");

#define RING_ENTRIES	16
#define CQE_TIMEOUT_MS	10000
/* 64 bytes: the int argument and what lies behind it */
#define ARG_WORDS	16
#define SENTINEL	0x5a5a5a5a

/* data to queue; its content does not matter */
static const char zeros[4096];

/* An argument buffer; words nobody wrote keep their sentinel. */
struct ioc_arg {
	int v[ARG_WORDS];
};

static void arg_fill(struct ioc_arg *a)
{
	int i;

	for (i = 0; i < ARG_WORDS; i++)
		a->v[i] = SENTINEL + i;
}

/* Whether words @from .. ARG_WORDS - 1 still hold their sentinel. */
static bool arg_untouched_from(const struct ioc_arg *a, int from)
{
	int i;

	for (i = from; i < ARG_WORDS; i++)
		if (a->v[i] != SENTINEL + i)
			return false;
	return true;
}

static const char *err_name(int res)
{
	static char buf[2][64];
	static int n;
	char *b = buf[n++ & 1];

	if (res >= 0)
		snprintf(b, sizeof(buf[0]), "%d", res);
	else
		snprintf(b, sizeof(buf[0]), "%d (%s)", res, strerror(-res));
	return b;
}

/* The next free SQE, zeroed: one at a time, the SQ ring is never full. */
static struct io_uring_sqe *get_sqe(struct __test_metadata *_metadata,
				    struct iou_ring *ring)
{
	struct io_uring_sqe *sqe = iou_get_sqe(ring);

	if (!sqe) {
		TH_LOG("the SQ ring is full");
		ASSERT_TRUE(false);
	}
	return sqe;
}

/* One IORING_OP_IOCTL with extra IOSQE_* @sqe_flags: its cqe->res. */
static int ring_ioctl(struct __test_metadata *_metadata, struct iou_ring *ring,
		      int fd, unsigned int cmd, __u64 arg, __u8 sqe_flags)
{
	struct io_uring_sqe *sqe = get_sqe(_metadata, ring);
	static __u64 user_data;
	struct iou_cqe cqe;

	iou_prep_ioctl(sqe, fd, cmd, arg);
	sqe->flags = sqe_flags;
	sqe->user_data = ++user_data;
	ASSERT_EQ(1, iou_submit_and_wait(ring, 0));
	ASSERT_EQ(0, iou_wait_cqe_timeout(ring, &cqe, CQE_TIMEOUT_MS)) {
		TH_LOG("cmd %#x on fd %d: no completion", cmd, fd);
	}
	ASSERT_EQ(user_data, cqe.user_data);
	ASSERT_EQ(-EAGAIN, iou_peek_cqe(ring, &cqe));
	return cqe.res;
}

/*
 * @cmd through the ring and through the compat ioctl(2) on @fd, with an
 * ioctl(2) before and after the ring's one, repeated until those two
 * agree (nothing changed meanwhile).  The ring must then match them: the
 * return value and all ARG_WORDS of the argument, of which a handler may
 * write the first int only.  Returns the ring's result, and the int it
 * wrote in *@val.
 */
static int same_as_ioctl(struct __test_metadata *_metadata,
			 struct iou_ring *ring, __u8 sqe_flags, int fd,
			 unsigned int cmd, int *val, const char *what)
{
	struct ioc_arg before, ring_arg, after;
	int r_before, r_ring, r_after, tries;

	for (tries = 0; tries < 50; tries++) {
		arg_fill(&before);
		arg_fill(&ring_arg);
		arg_fill(&after);
		r_before = sys_ioctl(fd, cmd, IOCTL_PTR(&before));
		r_ring = ring_ioctl(_metadata, ring, fd, cmd,
				    IOCTL_PTR(&ring_arg), sqe_flags);
		r_after = sys_ioctl(fd, cmd, IOCTL_PTR(&after));
		if (r_before == r_after &&
		    !memcmp(&before, &after, sizeof(after)))
			break;
		usleep(10000);
	}
	ASSERT_GT(50, tries) {
		TH_LOG("%s: cmd %#x: ioctl(2) never gave the same answer twice",
		       what, cmd);
	}
	EXPECT_EQ(r_before, r_ring) {
		TH_LOG("%s: cmd %#x: compat ioctl(2) %s, the ring %s", what,
		       cmd, err_name(r_before), err_name(r_ring));
	}
	EXPECT_EQ(0, memcmp(&before, &ring_arg, sizeof(ring_arg))) {
		TH_LOG("%s: cmd %#x: compat ioctl(2) wrote %d, the ring %d (sentinel %d)",
		       what, cmd, before.v[0], ring_arg.v[0], SENTINEL);
	}
	EXPECT_TRUE(arg_untouched_from(&ring_arg, 1)) {
		TH_LOG("%s: cmd %#x: the ring wrote past the int", what, cmd);
	}
	if (val)
		*val = ring_arg.v[0];
	return r_ring;
}

/* @cmd through the ring is refused with @want and does not touch its argument. */
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
	EXPECT_TRUE(arg_untouched_from(&arg, 0)) {
		TH_LOG("%s: cmd %#x: refused, yet the argument was written",
		       what, cmd);
	}
}

/* Write into the non-blocking pipe behind @wfd until it holds @want bytes. */
static void pipe_grow(struct __test_metadata *_metadata, int wfd, int *have,
		      int want)
{
	static char buf[65536];
	ssize_t n;

	while (*have < want) {
		n = write(wfd, buf, want - *have);
		ASSERT_LT(0, n) {
			TH_LOG("write into a pipe of %d bytes: %s", *have,
			       strerror(errno));
		}
		*have += n;
	}
}

/* The compat FIONREAD of @fd reaches @want within 5 s. */
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

static const char *family_name(int family)
{
	return family == AF_INET ? "AF_INET" : "AF_INET6";
}

/* Loopback of @family with port 0 in @ss; its length. */
static socklen_t loopback(struct sockaddr_storage *ss, int family)
{
	struct sockaddr_in *in4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	if (family == AF_INET) {
		in4->sin_family = AF_INET;
		in4->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		return sizeof(*in4);
	}
	in6->sin6_family = AF_INET6;
	in6->sin6_addr = in6addr_loopback;
	return sizeof(*in6);
}

/*
 * A connected TCP pair over loopback plus its listener; @rcvbuf, if not
 * 0, is the accepted socket's SO_RCVBUF.  -EAFNOSUPPORT if the family is
 * not built in.
 */
static int tcp_pair(struct __test_metadata *_metadata, int family,
		    int rcvbuf, int *cli, int *srv, int *lst)
{
	struct sockaddr_storage ss;
	socklen_t len = loopback(&ss, family);

	*lst = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (*lst < 0 && (errno == EAFNOSUPPORT || errno == EPROTONOSUPPORT))
		return -EAFNOSUPPORT;
	ASSERT_LE(0, *lst);
	if (rcvbuf) {
		ASSERT_EQ(0, setsockopt(*lst, SOL_SOCKET, SO_RCVBUF, &rcvbuf,
					sizeof(rcvbuf)));
	}
	ASSERT_EQ(0, bind(*lst, (struct sockaddr *)&ss, len)) {
		TH_LOG("bind to loopback: %s (is lo up?)", strerror(errno));
	}
	ASSERT_EQ(0, listen(*lst, 1));
	ASSERT_EQ(0, getsockname(*lst, (struct sockaddr *)&ss, &len));
	*cli = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ASSERT_LE(0, *cli);
	ASSERT_EQ(0, connect(*cli, (struct sockaddr *)&ss, len));
	*srv = accept4(*lst, NULL, NULL, SOCK_CLOEXEC);
	ASSERT_LE(0, *srv);
	return 0;
}

/* A UDP pair over loopback, each connected to the other; -EAFNOSUPPORT. */
static int udp_pair(struct __test_metadata *_metadata, int family, int fd[2])
{
	struct sockaddr_storage a[2];
	socklen_t len;
	int i;

	for (i = 0; i < 2; i++) {
		fd[i] = socket(family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		if (fd[i] < 0 && errno == EAFNOSUPPORT) {
			if (i)
				close(fd[0]);
			return -EAFNOSUPPORT;
		}
		ASSERT_LE(0, fd[i]);
		len = loopback(&a[i], family);
		ASSERT_EQ(0, bind(fd[i], (struct sockaddr *)&a[i], len));
		ASSERT_EQ(0, getsockname(fd[i], (struct sockaddr *)&a[i], &len));
	}
	ASSERT_EQ(0, connect(fd[0], (struct sockaddr *)&a[1], len));
	ASSERT_EQ(0, connect(fd[1], (struct sockaddr *)&a[0], len));
	return 0;
}

/*
 * A dma-buf over a sealed memfd of @pages pages, made by /dev/udmabuf
 * (its ioctl has the same layout for 32 and 64 bits); -errno if that
 * device cannot be opened.
 */
static int make_udmabuf(struct __test_metadata *_metadata, unsigned int pages)
{
	struct udmabuf_create create;
	long psz = sysconf(_SC_PAGESIZE);
	int dev, memfd, buf;

	dev = open("/dev/udmabuf", O_RDWR | O_CLOEXEC);
	if (dev < 0)
		return -errno;
	memfd = memfd_create("iou-compat", MFD_ALLOW_SEALING | MFD_CLOEXEC);
	ASSERT_LE(0, memfd);
	ASSERT_EQ(0, ftruncate(memfd, pages * psz));
	ASSERT_EQ(0, fcntl(memfd, F_ADD_SEALS, F_SEAL_SHRINK));
	memset(&create, 0, sizeof(create));
	create.memfd = memfd;
	create.flags = UDMABUF_FLAGS_CLOEXEC;
	create.size = pages * psz;
	buf = ioctl(dev, UDMABUF_CREATE, &create);
	ASSERT_LE(0, buf) {
		TH_LOG("UDMABUF_CREATE: %s", strerror(errno));
	}
	close(memfd);
	close(dev);
	return buf;
}

/* An unlinked regular file holding @len bytes, at offset 0. */
static int tmp_file(struct __test_metadata *_metadata, size_t len)
{
	const char * const dirs[] = { getenv("TMPDIR"), "/tmp", "/dev/shm", "." };
	char path[PATH_MAX];
	int i, fd = -1;

	for (i = 0; fd < 0 && i < ARRAY_SIZE(dirs); i++) {
		if (!dirs[i])
			continue;
		snprintf(path, sizeof(path), "%s/iou_compat.XXXXXX", dirs[i]);
		fd = mkstemp(path);
		if (fd >= 0)
			unlink(path);
	}
	ASSERT_LE(0, fd) {
		TH_LOG("cannot create a temporary file: %s", strerror(errno));
	}
	ASSERT_EQ((ssize_t)len, write(fd, zeros, len));
	ASSERT_EQ(0, lseek(fd, 0, SEEK_SET));
	return fd;
}

static int fd_flags(struct __test_metadata *_metadata, int fd, int getcmd)
{
	int fl = fcntl(fd, getcmd);

	ASSERT_LE(0, fl);
	return fl;
}

/* ------------------------------------------------------------------ */

FIXTURE(compat) {
	struct iou_ring ring;
	__u8 flags;	/* IOSQE_* added to every sqe */
};

FIXTURE_VARIANT(compat) {
	__u8 flags;
};

FIXTURE_VARIANT_ADD(compat, sync) {
	.flags = 0,
};

FIXTURE_VARIANT_ADD(compat, async) {
	.flags = IOSQE_ASYNC,
};

FIXTURE_SETUP(compat)
{
	int ret;

	self->flags = variant->flags;
	/* main() saw io_uring work, or IOU_SERIES_FORCE=1 said to go on */
	ret = iou_setup(&self->ring, RING_ENTRIES, 0);
	ASSERT_EQ(0, ret) {
		TH_LOG("io_uring_setup: %s", strerror(-ret));
	}
	ret = iou_probe_op(&self->ring, IOU_OP_IOCTL);
	ASSERT_LE(0, ret);
	if (!ret)
		SKIP(return, "IORING_OP_IOCTL (%d) not reported by IORING_REGISTER_PROBE",
		     IOU_OP_IOCTL);
}

FIXTURE_TEARDOWN(compat)
{
	iou_exit(&self->ring);
}

/*
 * The ring is a compat one: IORING_OP_READV reads our 8-byte struct
 * iovec, which only a ring set up by a 32-bit task takes.  Otherwise the
 * other tests would not be about 32-bit submitters.
 */
TEST_F(compat, ring_is_compat)
{
	static const char data[] = "0123456789abcdef";
	char a[6], b[10];
	struct iovec iov[2] = {
		{ .iov_base = a, .iov_len = sizeof(a) },
		{ .iov_base = b, .iov_len = sizeof(b) },
	};
	struct io_uring_sqe *sqe;
	struct iou_cqe cqe;
	int p[2];

	ASSERT_EQ(0, pipe2(p, O_CLOEXEC));
	ASSERT_EQ(16, write(p[1], data, 16));
	memset(a, 0, sizeof(a));
	memset(b, 0, sizeof(b));
	sqe = get_sqe(_metadata, &self->ring);
	sqe->opcode = IORING_OP_READV;
	sqe->fd = p[0];
	sqe->addr = (__u64)(uintptr_t)iov;
	sqe->len = 2;
	sqe->off = (__u64)-1;
	sqe->flags = self->flags;
	sqe->user_data = 7;
	ASSERT_EQ(1, iou_submit_and_wait(&self->ring, 0));
	ASSERT_EQ(0, iou_wait_cqe_timeout(&self->ring, &cqe, CQE_TIMEOUT_MS));
	EXPECT_EQ(7, cqe.user_data);
	EXPECT_EQ(16, cqe.res) {
		TH_LOG("READV of two 32-bit iovecs: %s (not a compat ring?)",
		       err_name(cqe.res));
	}
	EXPECT_EQ(0, memcmp(a, data, 6));
	EXPECT_EQ(0, memcmp(b, data + 6, 10));
	close(p[0]);
	close(p[1]);
}

/* FIONREAD on either end of a pipe holding 0 .. 64 KiB, and on FIFOs. */
TEST_F(compat, pipe_fionread)
{
	/*
	 * growing only: the writes top up part-filled pages, so 64 KiB
	 * fills the default 16 pages exactly
	 */
	static const int sizes[] = { 0, 1, 100, 4096, 10000, 65536 };
	char what[64], path[PATH_MAX], buf[1234];
	int p[2], have = 0, v, i, rw, r, w;

	ASSERT_EQ(0, pipe2(p, O_CLOEXEC | O_NONBLOCK));
	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		pipe_grow(_metadata, p[1], &have, sizes[i]);
		snprintf(what, sizeof(what), "pipe read end, %d bytes", have);
		EXPECT_EQ(0, same_as_ioctl(_metadata, &self->ring, self->flags,
					   p[0], FIONREAD, &v, what));
		EXPECT_EQ(sizes[i], v);
		snprintf(what, sizeof(what), "pipe write end, %d bytes", have);
		EXPECT_EQ(0, same_as_ioctl(_metadata, &self->ring, self->flags,
					   p[1], FIONREAD, &v, what));
		EXPECT_EQ(sizes[i], v);
	}
	ASSERT_EQ(sizeof(buf), read(p[0], buf, sizeof(buf)));
	EXPECT_EQ(0, same_as_ioctl(_metadata, &self->ring, self->flags, p[0],
				   FIONREAD, &v, "pipe partly read"));
	EXPECT_EQ(65536 - (int)sizeof(buf), v);
	close(p[1]);
	EXPECT_EQ(0, same_as_ioctl(_metadata, &self->ring, self->flags, p[0],
				   FIONREAD, &v, "pipe without writer"));
	EXPECT_EQ(65536 - (int)sizeof(buf), v);
	close(p[0]);

	/* a FIFO: a fresh unique name, a file replaced by the FIFO */
	snprintf(path, sizeof(path), "/tmp/iou_compat_fifo.XXXXXX");
	rw = mkstemp(path);
	ASSERT_LE(0, rw) {
		TH_LOG("mkstemp in /tmp: %s", strerror(errno));
	}
	close(rw);
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
	ASSERT_EQ(3000, write(w, zeros, 3000));
	EXPECT_EQ(0, same_as_ioctl(_metadata, &self->ring, self->flags, r,
				   FIONREAD, &v, "FIFO read end"));
	EXPECT_EQ(3000, v);
	EXPECT_EQ(0, same_as_ioctl(_metadata, &self->ring, self->flags, w,
				   FIONREAD, &v, "FIFO write end"));
	EXPECT_EQ(3000, v);
	EXPECT_EQ(0, same_as_ioctl(_metadata, &self->ring, self->flags, rw,
				   FIONREAD, &v, "FIFO opened O_RDWR"));
	EXPECT_EQ(3000, v);
	close(rw);
	close(r);
	close(w);
}

/* AF_UNIX stream, datagram and seqpacket pairs: FIONREAD and SIOCOUTQ. */
TEST_F(compat, unix_sockets)
{
	static const struct {
		int type;
		const char *name;
		int inq;	/* FIONREAD after 100 + 200 + 300 bytes */
		int inq_read;	/* and after reading 100 */
	} types[] = {
		{ SOCK_STREAM, "stream", 600, 500 },
		{ SOCK_DGRAM, "dgram", 100, 200 },	/* the next datagram */
		{ SOCK_SEQPACKET, "seqpacket", 600, 500 },	/* all packets */
	};
	static const unsigned int cmds[] = { FIONREAD, SIOCOUTQ };
	struct sockaddr_un autobind = { .sun_family = AF_UNIX };
	char buf[300], what[80];
	int sv[2], i, c, s, v;

	for (i = 0; i < ARRAY_SIZE(types); i++) {
		ASSERT_EQ(0, socketpair(AF_UNIX, types[i].type | SOCK_CLOEXEC,
					0, sv));
		for (s = 0; s < 2; s++) {
			for (c = 0; c < ARRAY_SIZE(cmds); c++) {
				snprintf(what, sizeof(what), "unix %s[%d] empty",
					 types[i].name, s);
				EXPECT_EQ(0, same_as_ioctl(_metadata, &self->ring,
							   self->flags, sv[s],
							   cmds[c], &v, what));
				EXPECT_EQ(0, v);
			}
		}

		ASSERT_EQ(100, send(sv[0], zeros, 100, 0));
		ASSERT_EQ(200, send(sv[0], zeros, 200, 0));
		ASSERT_EQ(300, send(sv[0], zeros, 300, 0));
		snprintf(what, sizeof(what), "unix %s queued", types[i].name);
		EXPECT_EQ(0, same_as_ioctl(_metadata, &self->ring, self->flags,
					   sv[1], FIONREAD, &v, what));
		EXPECT_EQ(types[i].inq, v);
		/* the sender's queue holds the unread data */
		EXPECT_EQ(0, same_as_ioctl(_metadata, &self->ring, self->flags,
					   sv[0], SIOCOUTQ, &v, what));
		EXPECT_LT(0, v);
		same_as_ioctl(_metadata, &self->ring, self->flags, sv[0],
			      FIONREAD, NULL, what);
		same_as_ioctl(_metadata, &self->ring, self->flags, sv[1],
			      SIOCOUTQ, NULL, what);

		ASSERT_EQ(100, recv(sv[1], buf, 100, 0));
		snprintf(what, sizeof(what), "unix %s partly read",
			 types[i].name);
		EXPECT_EQ(0, same_as_ioctl(_metadata, &self->ring, self->flags,
					   sv[1], FIONREAD, &v, what));
		EXPECT_EQ(types[i].inq_read, v);
		close(sv[0]);
		close(sv[1]);
	}

	/* a listener: an error, the same one as the compat ioctl(2)'s */
	s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ASSERT_LE(0, s);
	ASSERT_EQ(0, bind(s, (struct sockaddr *)&autobind,
			  sizeof(sa_family_t)));
	ASSERT_EQ(0, listen(s, 1));
	EXPECT_EQ(-EINVAL, same_as_ioctl(_metadata, &self->ring, self->flags,
					 s, FIONREAD, NULL, "unix listener"));
	same_as_ioctl(_metadata, &self->ring, self->flags, s, SIOCOUTQ, NULL,
		      "unix listener");
	close(s);
}

/* TCP: FIONREAD, SIOCOUTQ and SIOCOUTQNSD, idle, queued and unsent. */
static void tcp_compat(struct __test_metadata *_metadata,
		       struct iou_ring *ring, __u8 flags, int family)
{
	static const unsigned int cmds[] = { FIONREAD, SIOCOUTQ, SIOCOUTQNSD };
	int cli, srv, lst, c, v, outq, nsd, prev = -1, same = 0;
	int sndbuf = 65536;
	long long deadline;
	size_t sent = 0;
	char buf[4096];
	ssize_t n;

	if (tcp_pair(_metadata, family, 0, &cli, &srv, &lst))
		SKIP(return, "no %s sockets in this kernel",
		     family_name(family));

	for (c = 0; c < ARRAY_SIZE(cmds); c++) {
		EXPECT_EQ(0, same_as_ioctl(_metadata, ring, flags, cli,
					   cmds[c], &v, "tcp client, idle"));
		EXPECT_EQ(0, v);
		EXPECT_EQ(0, same_as_ioctl(_metadata, ring, flags, srv,
					   cmds[c], &v, "tcp server, idle"));
		EXPECT_EQ(0, v);
		/* tcp_ioctl() refuses a listener */
		EXPECT_EQ(-EINVAL, same_as_ioctl(_metadata, ring, flags, lst,
						 cmds[c], NULL,
						 "tcp listener"));
	}

	ASSERT_EQ(3000, send(cli, zeros, 3000, 0));
	wait_inq(_metadata, srv, 3000);
	EXPECT_EQ(0, same_as_ioctl(_metadata, ring, flags, srv, FIONREAD, &v,
				   "tcp queued"));
	EXPECT_EQ(3000, v);
	for (c = 1; c < ARRAY_SIZE(cmds); c++)
		same_as_ioctl(_metadata, ring, flags, cli, cmds[c], NULL,
			      "tcp client, 3000 sent");
	ASSERT_EQ(1000, recv(srv, buf, 1000, 0));
	EXPECT_EQ(0, same_as_ioctl(_metadata, ring, flags, srv, FIONREAD, &v,
				   "tcp partly read"));
	EXPECT_EQ(2000, v);
	close(cli);
	close(srv);
	close(lst);

	/* unsent: a tiny unread receive buffer holds the sender back */
	ASSERT_EQ(0, tcp_pair(_metadata, family, 2048, &cli, &srv, &lst));
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
	EXPECT_EQ(0, same_as_ioctl(_metadata, ring, flags, cli, SIOCOUTQ,
				   &outq, "tcp sender SIOCOUTQ"));
	EXPECT_EQ(0, same_as_ioctl(_metadata, ring, flags, cli, SIOCOUTQNSD,
				   &nsd, "tcp sender SIOCOUTQNSD"));
	EXPECT_EQ(0, same_as_ioctl(_metadata, ring, flags, srv, FIONREAD, &v,
				   "tcp receiver FIONREAD"));
	TH_LOG("%s: sent %zu: SIOCOUTQ %d, SIOCOUTQNSD %d, peer FIONREAD %d",
	       family_name(family), sent, outq, nsd, v);
	EXPECT_LT(0, nsd);
	EXPECT_LE(nsd, outq);
	EXPECT_LT(0, v);
	close(cli);
	close(srv);
	close(lst);
}

TEST_F(compat, tcp4)
{
	tcp_compat(_metadata, &self->ring, self->flags, AF_INET);
}

TEST_F(compat, tcp6)
{
	tcp_compat(_metadata, &self->ring, self->flags, AF_INET6);
}

/* UDP: FIONREAD is the size of the next datagram; SIOCOUTQ. */
static void udp_compat(struct __test_metadata *_metadata,
		       struct iou_ring *ring, __u8 flags, int family)
{
	static const unsigned int cmds[] = { FIONREAD, SIOCOUTQ };
	char buf[250];
	int u[2], c, s, v;

	if (udp_pair(_metadata, family, u))
		SKIP(return, "no %s sockets in this kernel",
		     family_name(family));
	for (s = 0; s < 2; s++) {
		for (c = 0; c < ARRAY_SIZE(cmds); c++) {
			EXPECT_EQ(0, same_as_ioctl(_metadata, ring, flags,
						   u[s], cmds[c], &v,
						   "udp idle"));
			EXPECT_EQ(0, v);
		}
	}
	ASSERT_EQ(100, send(u[0], zeros, 100, 0));
	ASSERT_EQ(250, send(u[0], zeros, 250, 0));
	wait_inq(_metadata, u[1], 100);
	for (s = 0; s < 2; s++)
		for (c = 0; c < ARRAY_SIZE(cmds); c++)
			same_as_ioctl(_metadata, ring, flags, u[s], cmds[c],
				      NULL, "udp queued");
	EXPECT_EQ(0, same_as_ioctl(_metadata, ring, flags, u[1], FIONREAD, &v,
				   "udp"));
	EXPECT_EQ(100, v);
	ASSERT_EQ(100, recv(u[1], buf, sizeof(buf), 0));
	EXPECT_EQ(0, same_as_ioctl(_metadata, ring, flags, u[1], FIONREAD, &v,
				   "udp second datagram"));
	EXPECT_EQ(250, v);
	close(u[0]);
	close(u[1]);
}

TEST_F(compat, udp4)
{
	udp_compat(_metadata, &self->ring, self->flags, AF_INET);
}

TEST_F(compat, udp6)
{
	udp_compat(_metadata, &self->ring, self->flags, AF_INET6);
}

/*
 * DMA_BUF_IOCTL_SYNC (on io-wq, a worker of a 32-bit task): the same flags
 * through the ring and through the compat ioctl(2) give the same answer,
 * and neither writes the struct.  Returns the ring's result.
 */
static int sync_same(struct __test_metadata *_metadata,
		     struct iou_ring *ring, __u8 sqe_flags, int ring_buf,
		     int sys_buf, __u64 flags, const char *what)
{
	struct dma_buf_sync s_ring = { .flags = flags };
	struct dma_buf_sync s_sys = { .flags = flags };
	int r_ring, r_sys;

	r_ring = ring_ioctl(_metadata, ring, ring_buf, DMA_BUF_IOCTL_SYNC,
			    IOCTL_PTR(&s_ring), sqe_flags);
	r_sys = sys_ioctl(sys_buf, DMA_BUF_IOCTL_SYNC, IOCTL_PTR(&s_sys));
	EXPECT_EQ(r_sys, r_ring) {
		TH_LOG("%s, flags %#llx: compat ioctl(2) %s, the ring %s",
		       what, (unsigned long long)flags, err_name(r_sys),
		       err_name(r_ring));
	}
	EXPECT_EQ(flags, s_ring.flags);
	EXPECT_EQ(flags, s_sys.flags);
	return r_ring;
}

TEST_F(compat, dmabuf_sync)
{
	static const __u64 seq[] = {
		DMA_BUF_SYNC_START | DMA_BUF_SYNC_READ,
		DMA_BUF_SYNC_END | DMA_BUF_SYNC_READ,
		DMA_BUF_SYNC_START | DMA_BUF_SYNC_WRITE,
		DMA_BUF_SYNC_END | DMA_BUF_SYNC_WRITE,
		DMA_BUF_SYNC_START | DMA_BUF_SYNC_RW,
		DMA_BUF_SYNC_END | DMA_BUF_SYNC_RW,
	};
	static const __u64 bad_flags[] = {
		0,				/* no direction */
		DMA_BUF_SYNC_END,		/* no direction */
		8,				/* unknown bit */
		DMA_BUF_SYNC_READ | (1ULL << 32),	/* in the high half */
		~0ULL,
	};
	struct dma_heap_allocation_data alloc;
	int a, b, i, heap;

	a = make_udmabuf(_metadata, 4);
	if (a == -ENOENT || a == -ENODEV || a == -ENXIO)
		SKIP(return, "no /dev/udmabuf (CONFIG_UDMABUF=n?)");
	ASSERT_LE(0, a) {
		TH_LOG("open /dev/udmabuf: %s", strerror(-a));
	}
	b = make_udmabuf(_metadata, 4);
	ASSERT_LE(0, b);

	/* twins: udmabuf refuses END before the first START */
	EXPECT_EQ(-EINVAL, sync_same(_metadata, &self->ring, self->flags, a,
				     b, DMA_BUF_SYNC_END | DMA_BUF_SYNC_READ,
				     "END on a fresh udmabuf"));
	/* then one buffer, whose state no longer changes */
	for (i = 0; i < ARRAY_SIZE(seq); i++)
		EXPECT_EQ(0, sync_same(_metadata, &self->ring, self->flags, a,
				       a, seq[i], "udmabuf"));
	for (i = 0; i < ARRAY_SIZE(bad_flags); i++)
		EXPECT_EQ(-EINVAL, sync_same(_metadata, &self->ring,
					     self->flags, a, a, bad_flags[i],
					     "udmabuf, bad flags"));
	close(a);
	close(b);

	/* a dma-buf of the system heap, if there is one */
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
	for (i = 0; i < ARRAY_SIZE(seq); i++)
		EXPECT_EQ(0, sync_same(_metadata, &self->ring, self->flags, a,
				       a, seq[i], "system heap"));
	EXPECT_EQ(-EINVAL, sync_same(_metadata, &self->ring, self->flags, a,
				     a, 8, "system heap, bad flags"));
	close(a);
	close(heap);
}

/*
 * Commands no entry lists, 32-bit numbers of compat-translated ones
 * included, on every kind of file that has a listed command: refused with
 * -EOPNOTSUPP as for a 64-bit task (ioctl_ops' unlisted_commands), the
 * argument and the descriptor's flags untouched.  Then listed commands on
 * files of the wrong kind.
 */
TEST_F(compat, refused)
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
		{ FS_IOC32_GETFLAGS, "FS_IOC32_GETFLAGS" },
		{ _IOR('f', 1, __u64), "FS_IOC_GETFLAGS of 64 bits" },
		{ FIOGETOWN, "FIOGETOWN" },
		{ SIOCATMARK, "SIOCATMARK" },
		{ SIOCGSTAMP_OLD, "SIOCGSTAMP_OLD" },
		{ SIOCGSTAMP_NEW, "SIOCGSTAMP_NEW" },
		{ SIOCGIFCONF, "SIOCGIFCONF" },
		{ SIOCGIFNAME, "SIOCGIFNAME" },
		{ TCGETS, "TCGETS" },
		{ DMA_BUF_SET_NAME_A, "DMA_BUF_SET_NAME_A" },
		{ DMA_BUF_SET_NAME_B, "DMA_BUF_SET_NAME_B" },
		{ 0, "0" },
		{ 0xffffffff, "0xffffffff" },
		/* near misses of the listed ones */
		{ _IOR('T', 0x1B, int), "FIONREAD as _IOR" },
		{ _IOR('T', 0x1B, long long), "FIONREAD as _IOR of 8" },
		{ _IOR(0x89, 0x4B, int), "SIOCOUTQNSD as _IOR" },
		{ _IOW('b', 0, __u32), "DMA_BUF_IOCTL_SYNC of 4" },
		{ _IOWR('b', 0, struct dma_buf_sync), "DMA_BUF_IOCTL_SYNC as _IOWR" },
	};
	static const char * const names[] = {
		"pipe", "unix socket", "udp socket", "tcp socket", "dma-buf",
	};
	struct dma_buf_sync sync = {
		.flags = DMA_BUF_SYNC_START | DMA_BUF_SYNC_READ,
	};
	int files[5], p[2], sv[2], u[2], cli, srv, lst, nf, f, i;
	int fdfl, fl, reg, efd, v;
	char what[96];

	ASSERT_EQ(0, pipe2(p, O_CLOEXEC));
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
	ASSERT_EQ(0, udp_pair(_metadata, AF_INET, u));
	ASSERT_EQ(0, tcp_pair(_metadata, AF_INET, 0, &cli, &srv, &lst));
	files[0] = p[0];
	files[1] = sv[0];
	files[2] = u[0];
	files[3] = cli;
	nf = 4;
	files[4] = make_udmabuf(_metadata, 1);
	if (files[4] >= 0)
		nf++;
	else
		TH_LOG("no dma-buf (%s): not covered here",
		       strerror(-files[4]));
	ASSERT_EQ(3, write(p[1], "abc", 3));

	for (f = 0; f < nf; f++) {
		for (i = 0; i < ARRAY_SIZE(cmds); i++) {
			fdfl = fd_flags(_metadata, files[f], F_GETFD);
			fl = fd_flags(_metadata, files[f], F_GETFL);
			snprintf(what, sizeof(what), "%s, %s", names[f],
				 cmds[i].name);
			expect_refused(_metadata, &self->ring, self->flags,
				       files[f], cmds[i].cmd, -EOPNOTSUPP,
				       what);
			EXPECT_EQ(fdfl, fd_flags(_metadata, files[f], F_GETFD)) {
				TH_LOG("%s changed the descriptor flags", what);
			}
			EXPECT_EQ(fl, fd_flags(_metadata, files[f], F_GETFL)) {
				TH_LOG("%s changed the file status flags", what);
			}
		}
	}
	/* the pipe still holds its data */
	ASSERT_EQ(0, ioctl(p[0], FIONREAD, &v));
	EXPECT_EQ(3, v);

	/* listed commands on the wrong kind of file */
	reg = tmp_file(_metadata, 96);
	efd = eventfd(5, EFD_CLOEXEC);
	ASSERT_LE(0, efd);
	expect_refused(_metadata, &self->ring, self->flags, reg, FIONREAD,
		       -EOPNOTSUPP, "FIONREAD on a regular file");
	expect_refused(_metadata, &self->ring, self->flags, efd, FIONREAD,
		       -EOPNOTSUPP, "FIONREAD on an eventfd");
	expect_refused(_metadata, &self->ring, self->flags, self->ring.fd,
		       FIONREAD, -EOPNOTSUPP, "FIONREAD on the ring");
	expect_refused(_metadata, &self->ring, self->flags, p[0], SIOCOUTQ,
		       -EOPNOTSUPP, "SIOCOUTQ on a pipe");
	expect_refused(_metadata, &self->ring, self->flags, sv[0],
		       SIOCOUTQNSD, -EOPNOTSUPP, "SIOCOUTQNSD on AF_UNIX");
	expect_refused(_metadata, &self->ring, self->flags, u[0], SIOCOUTQNSD,
		       -EOPNOTSUPP, "SIOCOUTQNSD on UDP");
	EXPECT_EQ(-EOPNOTSUPP, ring_ioctl(_metadata, &self->ring, p[0],
					  DMA_BUF_IOCTL_SYNC, IOCTL_PTR(&sync),
					  self->flags));
	EXPECT_EQ(-EOPNOTSUPP, ring_ioctl(_metadata, &self->ring, cli,
					  DMA_BUF_IOCTL_SYNC, IOCTL_PTR(&sync),
					  self->flags));
	/* where the compat ioctl(2) answers: the refusal is the ring's */
	v = -1;
	EXPECT_EQ(0, ioctl(reg, FIONREAD, &v));
	EXPECT_EQ(96, v);

	close(reg);
	close(efd);
	for (f = 0; f < nf; f++)
		close(files[f]);
	close(p[1]);
	close(sv[1]);
	close(u[1]);
	close(srv);
	close(lst);
}

/*
 * Bad argument pointers.  Those a 32-bit task can pass to ioctl(2) get the
 * compat ioctl(2)'s answer through the ring, -EFAULT where the handler has
 * to touch them.  The 64-bit ones only the ring can carry get -EFAULT,
 * and one whose low half is a valid pointer must not reach that memory.
 */
TEST_F(compat, bad_arg_pointer)
{
	/* which pointers must give -EFAULT */
	enum { ANY, ALWAYS, IF_WRITTEN };
	struct {
		int fd;
		unsigned int cmd;
		const char *name;
	} t[8];
	struct {
		__u64 ptr;	/* 0 with unaligned: buf + 1 */
		const char *name;
		int fault;
		bool unaligned;
	} ptrs[] = {
		{ 0, "NULL", ALWAYS, false },
		{ 1, "1", ALWAYS, false },
		{ 0, "PROT_NONE page", ALWAYS, false },
		/* above a 32-bit task's TASK_SIZE: never mapped */
		{ 0xfffff000, "0xfffff000", ALWAYS, false },
		{ 0, "read-only page", IF_WRITTEN, false },
		{ 0, "unaligned", ANY, true },
	};
	static const __u64 wide[] = {
		1ULL << 32,		/* | a valid pointer: 4 GiB above it */
		0xffffffff00000000ULL,	/* | a valid pointer: sign-extended */
		0xffffffff81000000ULL,	/* kernel text */
		0x8000000000000000ULL,	/* not canonical */
	};
	long psz = sysconf(_SC_PAGESIZE);
	int nt = 0, p[2], sv[2], u[2], cli, srv, lst, dmabuf;
	int i, j, r_sys, r_ring, written;
	char *ro, *none, *buf_sys, *buf_ring;
	struct ioc_arg valid;
	char what[96];
	bool writes;
	__u64 arg;

	ro = mmap(NULL, psz, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	none = mmap(NULL, psz, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	buf_sys = mmap(NULL, psz, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	buf_ring = mmap(NULL, psz, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_TRUE(ro != MAP_FAILED && none != MAP_FAILED &&
		    buf_sys != MAP_FAILED && buf_ring != MAP_FAILED);
	ptrs[2].ptr = IOCTL_PTR(none);
	ptrs[4].ptr = IOCTL_PTR(ro);

	ASSERT_EQ(0, pipe2(p, O_CLOEXEC));
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
	ASSERT_EQ(0, udp_pair(_metadata, AF_INET, u));
	ASSERT_EQ(0, tcp_pair(_metadata, AF_INET, 0, &cli, &srv, &lst));
	ASSERT_EQ(10, write(p[1], zeros, 10));
	ASSERT_EQ(10, send(sv[0], zeros, 10, 0));
	ASSERT_EQ(10, send(u[0], zeros, 10, 0));
	wait_inq(_metadata, u[1], 10);
#define ADD_CASE(_fd, _cmd, _name) do {	\
		t[nt].fd = (_fd);		\
		t[nt].cmd = (_cmd);		\
		t[nt].name = (_name);		\
		nt++;				\
	} while (0)
	ADD_CASE(p[0], FIONREAD, "pipe FIONREAD");
	ADD_CASE(sv[1], FIONREAD, "unix FIONREAD");
	ADD_CASE(sv[0], SIOCOUTQ, "unix SIOCOUTQ");
	ADD_CASE(u[1], FIONREAD, "udp FIONREAD");
	ADD_CASE(srv, FIONREAD, "tcp FIONREAD");
	ADD_CASE(cli, SIOCOUTQ, "tcp SIOCOUTQ");
	ADD_CASE(cli, SIOCOUTQNSD, "tcp SIOCOUTQNSD");
	dmabuf = make_udmabuf(_metadata, 1);
	if (dmabuf >= 0)
		ADD_CASE(dmabuf, DMA_BUF_IOCTL_SYNC, "DMA_BUF_IOCTL_SYNC");
	else
		TH_LOG("no dma-buf (%s): not covered here", strerror(-dmabuf));
#undef ADD_CASE

	/* pointers a 32-bit task can pass to ioctl(2) too */
	for (i = 0; i < nt; i++) {
		writes = t[i].cmd != DMA_BUF_IOCTL_SYNC;
		for (j = 0; j < ARRAY_SIZE(ptrs); j++) {
			snprintf(what, sizeof(what), "%s, %s", t[i].name,
				 ptrs[j].name);
			memset(buf_sys, 0, psz);
			memset(buf_ring, 0, psz);
			arg = ptrs[j].unaligned ? IOCTL_PTR(buf_sys + 1) :
						  ptrs[j].ptr;
			r_sys = sys_ioctl(t[i].fd, t[i].cmd, arg);
			arg = ptrs[j].unaligned ? IOCTL_PTR(buf_ring + 1) :
						  ptrs[j].ptr;
			r_ring = ring_ioctl(_metadata, &self->ring, t[i].fd,
					    t[i].cmd, arg, self->flags);
			EXPECT_EQ(r_sys, r_ring) {
				TH_LOG("%s: compat ioctl(2) %s, the ring %s",
				       what, err_name(r_sys), err_name(r_ring));
			}
			if (ptrs[j].fault == ALWAYS ||
			    (ptrs[j].fault == IF_WRITTEN && writes)) {
				EXPECT_EQ(-EFAULT, r_ring) {
					TH_LOG("%s: got %s", what,
					       err_name(r_ring));
				}
			}
			/* the unaligned int went where it was asked */
			EXPECT_EQ(0, memcmp(buf_sys, buf_ring, 16)) {
				TH_LOG("%s: compat ioctl(2) and the ring wrote differently",
				       what);
			}
		}
	}
	/* and something was written there: the pipe's 10 bytes */
	memset(buf_ring, 0, 16);
	EXPECT_EQ(0, ring_ioctl(_metadata, &self->ring, p[0], FIONREAD,
				IOCTL_PTR(buf_ring + 1), self->flags));
	memcpy(&written, buf_ring + 1, sizeof(written));
	EXPECT_EQ(10, written);
	EXPECT_EQ(0, buf_ring[0]);
	EXPECT_EQ(0, buf_ring[5]);

	/* 64-bit ioctl_arg values, which the compat ioctl(2) cannot take */
	for (i = 0; i < nt; i++) {
		for (j = 0; j < ARRAY_SIZE(wide); j++) {
			arg_fill(&valid);
			if (t[i].cmd == DMA_BUF_IOCTL_SYNC) {
				/* flags that would do, were it cut to 32 bits */
				valid.v[0] = DMA_BUF_SYNC_START |
					     DMA_BUF_SYNC_READ;
				valid.v[1] = 0;
			}
			arg = wide[j];
			if (j < 2)
				arg |= IOCTL_PTR(&valid);
			r_ring = ring_ioctl(_metadata, &self->ring, t[i].fd,
					    t[i].cmd, arg, self->flags);
			EXPECT_EQ(-EFAULT, r_ring) {
				TH_LOG("%s, ioctl_arg %#llx: got %s", t[i].name,
				       (unsigned long long)arg,
				       err_name(r_ring));
			}
			EXPECT_TRUE(arg_untouched_from(&valid, 2)) {
				TH_LOG("%s, ioctl_arg %#llx: reached the low half",
				       t[i].name, (unsigned long long)arg);
			}
			if (t[i].cmd != DMA_BUF_IOCTL_SYNC) {
				EXPECT_TRUE(arg_untouched_from(&valid, 0)) {
					TH_LOG("%s, ioctl_arg %#llx: written through the low half",
					       t[i].name,
					       (unsigned long long)arg);
				}
			}
		}
	}

	if (dmabuf >= 0)
		close(dmabuf);
	close(p[0]);
	close(p[1]);
	close(sv[0]);
	close(sv[1]);
	close(u[0]);
	close(u[1]);
	close(cli);
	close(srv);
	close(lst);
	munmap(ro, psz);
	munmap(none, psz);
	munmap(buf_sys, psz);
	munmap(buf_ring, psz);
}

int main(int argc, char **argv)
{
	const char *absent = iou_series_absent();

	/* the kselftest way: exit 4, with the reason */
	if (absent) {
		ksft_print_header();
		ksft_exit_skip("%s\n", absent);
	}
	return test_harness_run(argc, argv);
}
