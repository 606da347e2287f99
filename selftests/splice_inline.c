// SPDX-License-Identifier: GPL-2.0
/*
 * IORING_OP_SPLICE and IORING_OP_TEE issued inline.
 *
 * With the inline splice series, a splice or tee whose two files allow it
 * (pipe to pipe, tee, pipe to an AF_UNIX or TCP socket, such a socket to a
 * pipe, a tmpfs file to a pipe) is first tried in the submitting task in a
 * kernel-internal nowait mode, and goes to an io-wq worker only on -EAGAIN
 * (no data, no room, a pipe mutex held by someone else) or when
 * io_splice_punt() rules the pair out (e.g. a pipe to a regular file).
 * IOSQE_ASYNC still forces io-wq.
 *
 * What is checked here:
 *   - inline_path.*: an eligible splice/tee with data ready completes with
 *     no io-wq worker ever created (each case in a fresh process with a
 *     fresh ring, the iou-wrk-* threads counted after the CQE), and with
 *     IOSQE_ASYNC a worker is created and the data is the same;
 *   - ops.*: the -EAGAIN cases (empty input, full output, a pipe mutex
 *     held by a thread blocked in splice(2)) complete correctly once data
 *     or room arrives, and do not block io_uring_enter(2); a splice into a
 *     pipe or socket without a reader completes -EPIPE and raises no
 *     SIGPIPE in the submitter; the ineligible pairs still work; a blocked
 *     pipe to file splice does not hold up hashed writes to that file;
 *     splice flags outside the uAPI are still rejected;
 *   - chain.*: nothing is lost, duplicated or reordered across 100000
 *     random-sized splices per hop (or as many as 60 s allow, at least
 *     10000) through pipe -> pipe -> pipe and through
 *     pipe -> AF_UNIX socket -> pipe, with IOSQE_ASYNC on a random quarter
 *     of the SQEs and registered files on a random half of the ends.
 *
 * Whether the series is there is iou_series_absent()'s answer: the
 * runner's IOU_SERIES, or, run by hand, a probe (a 6.12 kernel with
 * opcode 58, IORING_OP_IOCTL).  Without it every splice goes to io-wq: the
 * assertions about workers that only hold with the series SKIP, everything
 * about the data still runs.  IOU_SERIES_FORCE=1 in the environment
 * makes them run anyway (to see them fail on an older kernel).
 * SPLICE_INLINE_SEED sets the stress seed (printed in any case).
 */

#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/types.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "iou_helpers.h"
#include "../kselftest_harness.h"
#include "splice_helpers.h"

#define NO_OFF		((__u64)-1)
/* Bytes moved by one checked operation: one pipe buffer, one skb. */
#define LEN		3000
#define RING_ENTRIES	8
/* Longest wait for something that must happen. */
#define WAIT_MS		5000
/* How long something that must not happen yet is given to happen. */
#define QUIET_MS	200
/* io_uring_enter(2) must return within this while a pipe is locked. */
#define PROMPT_MS	1000
#define TMPFS_MAGIC_	0x01021994

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

static int set_nonblock(int fd, bool on)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0)
		return -errno;
	fl = on ? fl | O_NONBLOCK : fl & ~O_NONBLOCK;
	return fcntl(fd, F_SETFL, fl) ? -errno : 0;
}

/* Bytes readable on a pipe or socket, or -errno. */
static int readable_bytes(int fd)
{
	return pipe_bytes(fd);	/* FIONREAD == SIOCINQ */
}

/* Wait up to @ms until @fd has at least @len bytes to read. */
static bool wait_readable(int fd, int len, int ms)
{
	long long end = iou_now_ms() + ms;

	while (readable_bytes(fd) < len) {
		if (iou_now_ms() > end)
			return false;
		usleep(1000);
	}
	return true;
}

/* Write all of @buf to a blocking @fd. */
static ssize_t write_all(int fd, const void *buf, size_t len)
{
	size_t done = 0;
	ssize_t n;

	while (done < len) {
		n = write(fd, (const char *)buf + done, len - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return done ? (ssize_t)done : -1;
		done += n;
	}
	return done;
}

/* Read exactly @len bytes from @fd (blocking or not) within @ms. */
static ssize_t read_exact(int fd, void *buf, size_t len, int ms)
{
	long long end = iou_now_ms() + ms;
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	size_t done = 0;
	ssize_t n;
	long long left;

	while (done < len) {
		left = end - iou_now_ms();
		if (left <= 0 || poll(&pfd, 1, left) <= 0)
			break;
		n = read(fd, (char *)buf + done, len - done);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0)
			break;
		done += n;
	}
	return done;
}

/*
 * An unlinked file, on tmpfs if there is one (/dev/shm, /tmp), else
 * wherever tmp_file() manages.
 */
static int tmpfs_file(struct __test_metadata *_metadata)
{
	const char * const dirs[] = { "/dev/shm", "/tmp" };
	char path[PATH_MAX];
	struct statfs sfs;
	unsigned int i;
	int fd;

	for (i = 0; i < ARRAY_SIZE(dirs); i++) {
		if (statfs(dirs[i], &sfs) || sfs.f_type != TMPFS_MAGIC_)
			continue;
		snprintf(path, sizeof(path), "%s/iou_inline.XXXXXX", dirs[i]);
		fd = mkstemp(path);
		if (fd >= 0) {
			unlink(path);
			return fd;
		}
	}
	TH_LOG("no tmpfs found, using another file system");
	return tmp_file(_metadata);
}

/*
 * Run @fn in a fresh child process: a task with no io_uring context and no
 * io-wq of its own.  Its EXPECT/ASSERT results land in the shared
 * _metadata.
 */
static void in_child(struct __test_metadata *_metadata,
		     void (*fn)(struct __test_metadata *, const void *),
		     const void *arg, const char *what)
{
	int status = 0;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		fn(_metadata, arg);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status)) {
		TH_LOG("%s: child ended with status 0x%x", what, status);
	}
}

/* Queue one SPLICE (@tee false) or TEE with everything spelled out. */
static void prep_op(struct io_uring_sqe *sqe, bool tee, int out, bool fixed_out,
		    int in, bool fixed_in, unsigned int len,
		    unsigned int splice_flags, __u8 sqe_flags)
{
	if (fixed_in)
		splice_flags |= SPLICE_F_FD_IN_FIXED;
	if (tee)
		iou_prep_tee(sqe, out, in, len, splice_flags);
	else
		iou_prep_splice(sqe, out, NO_OFF, in, NO_OFF, len,
				splice_flags);
	sqe->flags = sqe_flags | (fixed_out ? IOSQE_FIXED_FILE : 0);
}

/* Submit what is queued and return the one CQE's result. */
static int run_one(struct __test_metadata *_metadata, struct iou_ring *ring)
{
	struct iou_cqe cqe;

	ASSERT_EQ(1, iou_submit_and_wait(ring, 0));
	ASSERT_EQ(0, iou_wait_cqe_timeout(ring, &cqe, WAIT_MS)) {
		TH_LOG("no completion in %d ms", WAIT_MS);
	}
	return cqe.res;
}

/*
 * inline_path: one splice or tee of LEN bytes that are already waiting in
 * the input, for each kind of eligible pair.
 */

enum end { END_PIPE, END_UNIX, END_TCP, END_TMPFS };

static const char * const end_name[] = {
	[END_PIPE] = "pipe", [END_UNIX] = "unix", [END_TCP] = "tcp",
	[END_TMPFS] = "tmpfs file",
};

FIXTURE(inline_path) {
	const char *absent;
};

FIXTURE_VARIANT(inline_path) {
	enum end in, out;
	bool tee;
	bool nonblock_fds;
};

FIXTURE_VARIANT_ADD(inline_path, pipe_pipe) {
	.in = END_PIPE, .out = END_PIPE, .tee = false,
};

FIXTURE_VARIANT_ADD(inline_path, pipe_pipe_nonblock) {
	.in = END_PIPE, .out = END_PIPE, .tee = false,
	.nonblock_fds = true,
};

FIXTURE_VARIANT_ADD(inline_path, tee) {
	.in = END_PIPE, .out = END_PIPE, .tee = true,
};

FIXTURE_VARIANT_ADD(inline_path, tee_nonblock) {
	.in = END_PIPE, .out = END_PIPE, .tee = true,
	.nonblock_fds = true,
};

FIXTURE_VARIANT_ADD(inline_path, pipe_unix) {
	.in = END_PIPE, .out = END_UNIX, .tee = false,
};

FIXTURE_VARIANT_ADD(inline_path, pipe_unix_nonblock) {
	.in = END_PIPE, .out = END_UNIX, .tee = false,
	.nonblock_fds = true,
};

FIXTURE_VARIANT_ADD(inline_path, unix_pipe) {
	.in = END_UNIX, .out = END_PIPE, .tee = false,
};

FIXTURE_VARIANT_ADD(inline_path, unix_pipe_nonblock) {
	.in = END_UNIX, .out = END_PIPE, .tee = false,
	.nonblock_fds = true,
};

FIXTURE_VARIANT_ADD(inline_path, pipe_tcp) {
	.in = END_PIPE, .out = END_TCP, .tee = false,
};

FIXTURE_VARIANT_ADD(inline_path, pipe_tcp_nonblock) {
	.in = END_PIPE, .out = END_TCP, .tee = false,
	.nonblock_fds = true,
};

FIXTURE_VARIANT_ADD(inline_path, tcp_pipe) {
	.in = END_TCP, .out = END_PIPE, .tee = false,
};

FIXTURE_VARIANT_ADD(inline_path, tcp_pipe_nonblock) {
	.in = END_TCP, .out = END_PIPE, .tee = false,
	.nonblock_fds = true,
};

/* the sendfile pattern's first half: page cache (here tmpfs) to a pipe */
FIXTURE_VARIANT_ADD(inline_path, tmpfs_pipe) {
	.in = END_TMPFS, .out = END_PIPE, .tee = false,
};

FIXTURE_VARIANT_ADD(inline_path, tmpfs_pipe_nonblock) {
	.in = END_TMPFS, .out = END_PIPE, .tee = false,
	.nonblock_fds = true,
};

FIXTURE_SETUP(inline_path)
{
	struct iou_ring ring;
	int ret, c, s;

	ret = iou_setup(&ring, 1, 0);
	if (ret == -ENOSYS)
		SKIP(return, "io_uring not supported (CONFIG_IO_URING=n?)");
	if (ret == -EPERM)
		SKIP(return, "io_uring disabled (kernel.io_uring_disabled?)");
	ASSERT_EQ(0, ret);
	if (!(ring.features & IORING_FEAT_EXT_ARG))
		SKIP(return, "no IORING_FEAT_EXT_ARG: cannot wait with a timeout");
	iou_exit(&ring);

	if (variant->in == END_TCP || variant->out == END_TCP) {
		ret = iou_tcp_pair(&c, &s, 0);
		if (ret)
			SKIP(return, "no TCP over loopback: %s", strerror(-ret));
		close(c);
		close(s);
	}
	self->absent = iou_series_absent();
}

FIXTURE_TEARDOWN(inline_path)
{
}

struct path_case {
	const FIXTURE_VARIANT(inline_path) *v;
	bool fixed;		/* both files registered */
	bool splice_nb;		/* SPLICE_F_NONBLOCK */
	__u8 sqe_flags;
	int want_workers;	/* -1: any, 0: none, 1: at least one */
	char what[96];
};

/*
 * Open one end: *near is what the ring uses, *far what the test feeds or
 * reads.  An input pipe gives its read end to the ring, an output pipe
 * its write end.  A file (input only) is fed through a second descriptor
 * of the same open file, so the ring reads from where the feed started.
 */
static void open_end(struct __test_metadata *_metadata, enum end kind,
		     bool input, int *near, int *far)
{
	int fds[2];

	switch (kind) {
	case END_PIPE:
		ASSERT_EQ(0, pipe(fds));
		*near = fds[input ? 0 : 1];
		*far = fds[input ? 1 : 0];
		break;
	case END_UNIX:
		ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM, 0, fds));
		*near = fds[0];
		*far = fds[1];
		break;
	case END_TCP:
		ASSERT_EQ(0, iou_tcp_pair(far, near, 0));
		break;
	case END_TMPFS:
		ASSERT_TRUE(input);
		*near = tmpfs_file(_metadata);
		*far = dup(*near);
		ASSERT_LE(0, *far);
		break;
	}
}

static void path_case_child(struct __test_metadata *_metadata,
			    const void *arg)
{
	const struct path_case *pc = arg;
	const FIXTURE_VARIANT(inline_path) *v = pc->v;
	unsigned char data[LEN], got[LEN + 1];
	int in, feed, out, sink, workers, res;
	struct iou_ring ring;

	fill_pattern(data, LEN, 0xc0ffee ^ (v->in << 4) ^ v->out);
	ASSERT_EQ(0, iou_setup(&ring, RING_ENTRIES, 0));
	open_end(_metadata, v->in, true, &in, &feed);
	open_end(_metadata, v->out, false, &out, &sink);
	if (v->nonblock_fds) {
		ASSERT_EQ(0, set_nonblock(in, true));
		ASSERT_EQ(0, set_nonblock(out, true));
	}

	ASSERT_EQ(LEN, write_all(feed, data, LEN));
	/* FIONREAD of a regular file: the bytes from f_pos to the end */
	if (v->in == END_TMPFS)
		ASSERT_EQ(0, lseek(in, 0, SEEK_SET));
	ASSERT_TRUE(wait_readable(in, LEN, WAIT_MS));
	if (pc->fixed) {
		int fds[] = { in, out };

		ASSERT_EQ(0, iou_register_files(&ring, fds, 2));
	}

	prep_op(iou_get_sqe(&ring), v->tee, pc->fixed ? 1 : out, pc->fixed,
		pc->fixed ? 0 : in, pc->fixed, LEN,
		pc->splice_nb ? SPLICE_F_NONBLOCK : 0, pc->sqe_flags);
	res = run_one(_metadata, &ring);
	workers = iou_count_io_workers();

	EXPECT_EQ(LEN, res) TH_LOG("%s: result", pc->what);
	EXPECT_EQ(LEN, read_exact(sink, got, LEN, WAIT_MS)) {
		TH_LOG("%s: output short", pc->what);
	}
	EXPECT_EQ(0, memcmp(got, data, LEN)) {
		TH_LOG("%s: wrong data in the output", pc->what);
	}
	EXPECT_EQ(0, readable_bytes(sink)) {
		TH_LOG("%s: more output than expected", pc->what);
	}
	if (v->tee) {
		/* tee leaves the input alone */
		EXPECT_EQ(LEN, read_exact(in, got, LEN, WAIT_MS));
		EXPECT_EQ(0, memcmp(got, data, LEN)) {
			TH_LOG("%s: tee changed its input", pc->what);
		}
	}
	EXPECT_EQ(0, readable_bytes(in)) {
		TH_LOG("%s: input not consumed", pc->what);
	}

	ASSERT_LE(0, workers);
	if (pc->want_workers == 0) {
		EXPECT_EQ(0, workers) {
			TH_LOG("%s: %d io-wq worker(s), data was ready",
			       pc->what, workers);
		}
	} else if (pc->want_workers > 0) {
		EXPECT_LE(1, workers) {
			TH_LOG("%s: no io-wq worker for an IOSQE_ASYNC request",
			       pc->what);
		}
	}
	TH_LOG("%s: %d io-wq worker(s)", pc->what, workers);
	iou_exit(&ring);
}

/* Every normal/registered x with/without SPLICE_F_NONBLOCK combination. */
static void run_path_cases(struct __test_metadata *_metadata,
			   const FIXTURE_VARIANT(inline_path) *variant,
			   __u8 sqe_flags, int want_workers)
{
	struct path_case pc = {
		.v = variant, .sqe_flags = sqe_flags,
		.want_workers = want_workers,
	};
	int i;

	for (i = 0; i < 4; i++) {
		pc.fixed = i & 1;
		pc.splice_nb = i & 2;
		snprintf(pc.what, sizeof(pc.what), "%s %s->%s, %s fds, %s, %s%s",
			 variant->tee ? "tee" : "splice", end_name[variant->in],
			 end_name[variant->out],
			 variant->nonblock_fds ? "O_NONBLOCK" : "blocking",
			 pc.fixed ? "registered" : "normal",
			 pc.splice_nb ? "SPLICE_F_NONBLOCK" : "no flags",
			 sqe_flags & IOSQE_ASYNC ? ", IOSQE_ASYNC" : "");
		in_child(_metadata, path_case_child, &pc, pc.what);
	}
}

/* Data ready, eligible pair: completes in the submitter, no io-wq worker. */
TEST_F(inline_path, no_worker)
{
	run_path_cases(_metadata, variant, 0, self->absent ? -1 : 0);
	if (self->absent && _metadata->exit_code == KSFT_PASS)
		SKIP(return, "data checked, worker count not: %s", self->absent);
}

/* IOSQE_ASYNC still goes through io-wq, with the same result. */
TEST_F(inline_path, async_worker)
{
	run_path_cases(_metadata, variant, IOSQE_ASYNC, 1);
}

/*
 * ops: the cases where the inline attempt gets -EAGAIN or is not made,
 * each with and without IOSQE_ASYNC.
 */

FIXTURE(ops) {
	struct iou_ring ring;
	__u8 sqe_flags;
	int a[2];
	int b[2];
	unsigned char data[LEN];
};

FIXTURE_VARIANT(ops) {
	__u8 sqe_flags;
};

FIXTURE_VARIANT_ADD(ops, inline) {
	.sqe_flags = 0,
};

FIXTURE_VARIANT_ADD(ops, async) {
	.sqe_flags = IOSQE_ASYNC,
};

FIXTURE_SETUP(ops)
{
	int ret;

	self->a[0] = -1;
	self->a[1] = -1;
	self->b[0] = -1;
	self->b[1] = -1;
	ret = iou_setup(&self->ring, RING_ENTRIES, 0);
	if (ret == -ENOSYS)
		SKIP(return, "io_uring not supported (CONFIG_IO_URING=n?)");
	if (ret == -EPERM)
		SKIP(return, "io_uring disabled (kernel.io_uring_disabled?)");
	ASSERT_EQ(0, ret);
	if (!(self->ring.features & IORING_FEAT_EXT_ARG))
		SKIP(return, "no IORING_FEAT_EXT_ARG: cannot wait with a timeout");
	self->sqe_flags = variant->sqe_flags;
	fill_pattern(self->data, LEN, 0x51ced00d);
	ASSERT_EQ(0, pipe(self->a));
	ASSERT_EQ(0, pipe(self->b));
}

FIXTURE_TEARDOWN(ops)
{
	close_fd(&self->a[0]);
	close_fd(&self->a[1]);
	close_fd(&self->b[0]);
	close_fd(&self->b[1]);
	iou_exit(&self->ring);
}

/* Submit a SPLICE or TEE from @in to @out (normal fds) without waiting. */
static void submit_op(struct __test_metadata *_metadata,
		      FIXTURE_DATA(ops) *self, bool tee, int out, int in,
		      unsigned int len, unsigned int splice_flags)
{
	struct io_uring_sqe *sqe = next_sqe(_metadata, &self->ring, 1);

	prep_op(sqe, tee, out, false, in, false, len, splice_flags,
		self->sqe_flags);
	ASSERT_EQ(1, iou_submit_and_wait(&self->ring, 0));
}

static int wait_res(struct __test_metadata *_metadata,
		    FIXTURE_DATA(ops) *self)
{
	struct iou_cqe cqe;

	ASSERT_EQ(0, iou_wait_cqe_timeout(&self->ring, &cqe, WAIT_MS)) {
		TH_LOG("no completion in %d ms", WAIT_MS);
	}
	ASSERT_EQ(1, cqe.user_data);
	return cqe.res;
}

/* Nothing may complete for QUIET_MS. */
static void expect_no_cqe(struct __test_metadata *_metadata,
			  FIXTURE_DATA(ops) *self, const char *what)
{
	struct iou_cqe cqe = { 0 };

	ASSERT_EQ(-ETIME, iou_wait_cqe_timeout(&self->ring, &cqe, QUIET_MS)) {
		TH_LOG("%s: early completion, res %d", what, cqe.res);
	}
}

/*
 * A thread that does one read(2) or write(2) when told to, so that the
 * test can order it after a check that nothing has completed yet.
 */
struct helper {
	pthread_t thr;
	int go[2];
	int fd;
	void *buf;
	size_t len;
	bool do_write;
	ssize_t ret;
};

static void *helper_fn(void *arg)
{
	struct helper *h = arg;
	char c;

	if (read(h->go[0], &c, 1) != 1) {
		h->ret = -1;
		return NULL;
	}
	if (h->do_write)
		h->ret = write_all(h->fd, h->buf, h->len);
	else
		h->ret = read(h->fd, h->buf, h->len);
	return NULL;
}

static void helper_start(struct __test_metadata *_metadata, struct helper *h,
			 bool do_write, int fd, void *buf, size_t len)
{
	memset(h, 0, sizeof(*h));
	h->do_write = do_write;
	h->fd = fd;
	h->buf = buf;
	h->len = len;
	h->ret = -2;
	ASSERT_EQ(0, pipe(h->go));
	ASSERT_EQ(0, pthread_create(&h->thr, NULL, helper_fn, h));
}

static void helper_go(struct helper *h)
{
	(void)!write(h->go[1], "g", 1);
}

static ssize_t helper_join(struct helper *h)
{
	pthread_join(h->thr, NULL);
	close(h->go[0]);
	close(h->go[1]);
	return h->ret;
}

static const char * const op_name[] = { "splice", "tee" };

/*
 * Empty input pipe, writer still there: no completion until another
 * thread writes, then the CQE carries those bytes.
 */
TEST_F(ops, empty_input)
{
	struct helper h;
	int tee;

	for (tee = 0; tee <= 1; tee++) {
		helper_start(_metadata, &h, true, self->a[1], self->data, LEN);
		submit_op(_metadata, self, tee, self->b[1], self->a[0], LEN, 0);
		expect_no_cqe(_metadata, self, op_name[tee]);
		helper_go(&h);
		EXPECT_EQ(LEN, wait_res(_metadata, self)) TH_LOG("%s", op_name[tee]);
		EXPECT_EQ(LEN, helper_join(&h));
		check_pipe(_metadata, self->b[0], self->data, LEN, "output");
		check_pipe(_metadata, self->a[0], self->data, tee ? LEN : 0,
			   "input");
	}
}

/* SPLICE_F_NONBLOCK or O_NONBLOCK on an empty pipe: -EAGAIN, as today. */
TEST_F(ops, empty_input_nonblock)
{
	int tee;

	for (tee = 0; tee <= 1; tee++) {
		submit_op(_metadata, self, tee, self->b[1], self->a[0], LEN,
			  SPLICE_F_NONBLOCK);
		EXPECT_EQ(-EAGAIN, wait_res(_metadata, self)) {
			TH_LOG("%s, SPLICE_F_NONBLOCK", op_name[tee]);
		}
		ASSERT_EQ(0, set_nonblock(self->a[0], true));
		submit_op(_metadata, self, tee, self->b[1], self->a[0], LEN, 0);
		EXPECT_EQ(-EAGAIN, wait_res(_metadata, self)) {
			TH_LOG("%s, O_NONBLOCK", op_name[tee]);
		}
		ASSERT_EQ(0, set_nonblock(self->a[0], false));
		EXPECT_EQ(0, pipe_bytes(self->b[0]));
	}
}

/* Fill pipe @p (write end @wfd) with whole pages; returns the bytes. */
static int fill_full(struct __test_metadata *_metadata, int wfd,
		     unsigned char *pat, int max)
{
	int total = 0;
	ssize_t n;

	ASSERT_EQ(0, set_nonblock(wfd, true));
	while (total + 4096 <= max) {
		n = write(wfd, pat + total, 4096);
		if (n < 0 && errno == EAGAIN)
			break;
		ASSERT_EQ(4096, n);
		total += n;
	}
	ASSERT_EQ(0, set_nonblock(wfd, false));
	ASSERT_GT(total, 0);
	ASSERT_GT(max, total);
	return total;
}

#define FILL_MAX	(1 << 20)

/*
 * Full output pipe: no completion until a reader frees a slot, then all
 * LEN bytes land behind what was there.
 */
TEST_F(ops, full_output)
{
	unsigned char *pat = malloc(FILL_MAX), *got = malloc(FILL_MAX);
	struct helper h;
	int tee, filled;

	ASSERT_NE(NULL, pat);
	ASSERT_NE(NULL, got);
	fill_pattern(pat, FILL_MAX, 0xf111);
	for (tee = 0; tee <= 1; tee++) {
		filled = fill_full(_metadata, self->b[1], pat, FILL_MAX);
		fill_pipe(_metadata, self->a[1], self->data, LEN);
		helper_start(_metadata, &h, false, self->b[0], got, 4096);

		submit_op(_metadata, self, tee, self->b[1], self->a[0], LEN, 0);
		expect_no_cqe(_metadata, self, op_name[tee]);
		helper_go(&h);
		EXPECT_EQ(LEN, wait_res(_metadata, self)) TH_LOG("%s", op_name[tee]);
		EXPECT_EQ(4096, helper_join(&h));

		EXPECT_EQ(0, memcmp(got, pat, 4096));
		ASSERT_EQ(filled - 4096 + LEN, pipe_bytes(self->b[0]));
		ASSERT_EQ(filled - 4096 + LEN,
			  read_exact(self->b[0], got, filled - 4096 + LEN,
				     WAIT_MS));
		EXPECT_EQ(0, memcmp(got, pat + 4096, filled - 4096)) {
			TH_LOG("%s: old contents of the output damaged",
			       op_name[tee]);
		}
		EXPECT_EQ(0, memcmp(got + filled - 4096, self->data, LEN)) {
			TH_LOG("%s: wrong data appended", op_name[tee]);
		}
		check_pipe(_metadata, self->a[0], self->data, tee ? LEN : 0,
			   "input");
	}
	free(pat);
	free(got);
}

/* A full output pipe with SPLICE_F_NONBLOCK: -EAGAIN, nothing moves. */
TEST_F(ops, full_output_nonblock)
{
	unsigned char *pat = malloc(FILL_MAX);
	int tee, filled;

	ASSERT_NE(NULL, pat);
	fill_pattern(pat, FILL_MAX, 0xf112);
	filled = fill_full(_metadata, self->b[1], pat, FILL_MAX);
	fill_pipe(_metadata, self->a[1], self->data, LEN);
	for (tee = 0; tee <= 1; tee++) {
		submit_op(_metadata, self, tee, self->b[1], self->a[0], LEN,
			  SPLICE_F_NONBLOCK);
		EXPECT_EQ(-EAGAIN, wait_res(_metadata, self)) {
			TH_LOG("%s", op_name[tee]);
		}
	}
	EXPECT_EQ(filled, pipe_bytes(self->b[0]));
	check_pipe(_metadata, self->a[0], self->data, LEN, "input");
	free(pat);
}

/*
 * locked_pipe: a thread blocked in splice(2) from pipe P to an AF_UNIX
 * socket whose buffer is full holds P's mutex for as long as it sleeps
 * (splice_to_socket() keeps it across sendmsg).  A ring op on P must not
 * make io_uring_enter(2) wait for it: the inline attempt must give up and
 * leave the wait to io-wq.  Once the socket is drained, the op completes.
 */

struct blocker {
	pthread_t thr;
	int p_r;		/* P's read end */
	int s0, s1;		/* s0 full, s1 its unread peer */
	int sent;		/* bytes queued in s0 before the splice */
	pid_t tid;
	ssize_t ret;
	int err;
	/* watchdog: releases the blocker if the test itself gets stuck */
	pthread_t wd;
	int wd_cancel[2];
	int released;		/* atomic: 1 once someone drained s1 */
	unsigned char *drained;	/* what came out of s1 */
};

static void *blocker_fn(void *arg)
{
	struct blocker *b = arg;

	__atomic_store_n(&b->tid, gettid(), __ATOMIC_RELEASE);
	b->ret = splice(b->p_r, NULL, b->s0, NULL, 4096, 0);
	b->err = errno;
	return NULL;
}

/* Read everything the blocker and the filler put into s1. */
static void blocker_release(struct blocker *b)
{
	if (__atomic_exchange_n(&b->released, 1, __ATOMIC_ACQ_REL))
		return;
	read_exact(b->s1, b->drained, b->sent + 4096, WAIT_MS);
}

static void *watchdog_fn(void *arg)
{
	struct blocker *b = arg;
	struct pollfd pfd = { .fd = b->wd_cancel[0], .events = POLLIN };

	if (poll(&pfd, 1, 3 * WAIT_MS) == 0)
		blocker_release(b);
	return NULL;
}

/* 'S' and in splice(2): /proc/self/task/TID/{stat,syscall}. */
static bool thread_sleeps_in_splice(pid_t tid)
{
	char path[64], buf[256], *p;
	int fd, nr = -1;
	ssize_t n;
	char state = 0;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", tid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	p = strrchr(buf, ')');
	if (p && p[1] == ' ')
		state = p[2];

	snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", tid);
	fd = open(path, O_RDONLY);
	if (fd >= 0) {
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n > 0) {
			buf[n] = '\0';
			nr = atoi(buf);
		}
	} else {
		nr = SYS_splice;	/* no /proc/.../syscall: trust stat */
	}
	return state == 'S' && nr == SYS_splice;
}

static void blocker_start(struct __test_metadata *_metadata,
			  struct blocker *b, int p_r)
{
	int fds[2], sndbuf = 4096;
	char chunk[512];
	ssize_t n;
	int i;

	memset(b, 0, sizeof(*b));
	b->p_r = p_r;
	b->drained = malloc(1 << 20);
	ASSERT_NE(NULL, b->drained);
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM, 0, fds));
	b->s0 = fds[0];
	b->s1 = fds[1];
	ASSERT_EQ(0, setsockopt(b->s0, SOL_SOCKET, SO_SNDBUF, &sndbuf,
				sizeof(sndbuf)));
	memset(chunk, 'f', sizeof(chunk));
	for (;;) {
		n = send(b->s0, chunk, sizeof(chunk), MSG_DONTWAIT);
		if (n < 0 && errno == EAGAIN)
			break;
		ASSERT_LT(0, n);
		b->sent += n;
		ASSERT_GT(1 << 19, b->sent);
	}
	ASSERT_EQ(0, pipe(b->wd_cancel));
	ASSERT_EQ(0, pthread_create(&b->thr, NULL, blocker_fn, b));
	for (i = 0; i < WAIT_MS; i++) {
		pid_t tid = __atomic_load_n(&b->tid, __ATOMIC_ACQUIRE);

		if (tid && thread_sleeps_in_splice(tid))
			break;
		usleep(1000);
	}
	ASSERT_GT(WAIT_MS, i) TH_LOG("the blocker did not go to sleep in splice(2)");
	/* let it settle in sendmsg's wait */
	usleep(20000);
	ASSERT_TRUE(thread_sleeps_in_splice(b->tid));
	ASSERT_EQ(0, pthread_create(&b->wd, NULL, watchdog_fn, b));
}

/* Stop the watchdog, release the blocker and check what it sent. */
static void blocker_finish(struct __test_metadata *_metadata,
			   struct blocker *b, const void *first4k)
{
	int i;

	(void)!write(b->wd_cancel[1], "c", 1);
	pthread_join(b->wd, NULL);
	blocker_release(b);
	pthread_join(b->thr, NULL);
	EXPECT_EQ(4096, b->ret) TH_LOG("blocker: %s", strerror(b->err));
	for (i = 0; i < b->sent; i++)
		if (b->drained[i] != 'f')
			break;
	EXPECT_EQ(b->sent, i);
	EXPECT_EQ(0, memcmp(b->drained + b->sent, first4k, 4096));
	close(b->s0);
	close(b->s1);
	close(b->wd_cancel[0]);
	close(b->wd_cancel[1]);
	free(b->drained);
}

TEST_F(ops, locked_pipe)
{
	unsigned char d[3][4096];
	struct blocker b;
	long long t0, took;
	int i, tee, p_is_out, res;

	for (i = 0; i < 3; i++)
		fill_pattern(d[i], 4096, 0x10c0 + i);

	/* P = a, the other pipe Q = b */
	for (i = 0; i < 4; i++) {
		char what[64];

		tee = i & 1;
		p_is_out = i & 2;
		snprintf(what, sizeof(what), "%s with the locked pipe as %s",
			 op_name[tee], p_is_out ? "output" : "input");

		/* P: d0 for the blocker, d1 after it */
		fill_pipe(_metadata, self->a[1], d[0], 4096);
		fill_pipe(_metadata, self->a[1], d[1], 4096);
		if (p_is_out)
			fill_pipe(_metadata, self->b[1], d[2], 4096);
		blocker_start(_metadata, &b, self->a[0]);

		t0 = iou_now_ms();
		if (p_is_out)
			submit_op(_metadata, self, tee, self->a[1], self->b[0],
				  4096, 0);
		else
			submit_op(_metadata, self, tee, self->b[1], self->a[0],
				  4096, 0);
		took = iou_now_ms() - t0;
		EXPECT_GT(PROMPT_MS, took) {
			TH_LOG("%s: io_uring_enter took %lld ms while another thread held the pipe",
			       what, took);
		}
		expect_no_cqe(_metadata, self, what);
		EXPECT_EQ(0, __atomic_load_n(&b.released, __ATOMIC_ACQUIRE));

		blocker_finish(_metadata, &b, d[0]);
		res = wait_res(_metadata, self);
		EXPECT_EQ(4096, res) TH_LOG("%s", what);

		if (p_is_out) {
			/* P: d1 then d2; Q keeps d2 for tee */
			unsigned char got[8192];

			ASSERT_EQ(8192, pipe_bytes(self->a[0]));
			ASSERT_EQ(8192, read(self->a[0], got, 8192));
			EXPECT_EQ(0, memcmp(got, d[1], 4096)) TH_LOG("%s", what);
			EXPECT_EQ(0, memcmp(got + 4096, d[2], 4096)) {
				TH_LOG("%s: wrong data", what);
			}
			check_pipe(_metadata, self->b[0], d[2], tee ? 4096 : 0,
				   what);
		} else {
			check_pipe(_metadata, self->b[0], d[1], 4096, what);
			check_pipe(_metadata, self->a[0], d[1], tee ? 4096 : 0,
				   what);
		}
	}
}

/*
 * A splice or tee into a pipe without readers, or into a socket whose peer
 * is gone: -EPIPE, and no SIGPIPE for the submitter (6.12 raises it in
 * the io-wq worker, where it is blocked), so with the default disposition
 * the process lives on.
 */
TEST_F(ops, no_reader)
{
	int file = tmpfs_file(_metadata);
	int sp[2];
	sigset_t pending;

	ASSERT_NE(SIG_ERR, signal(SIGPIPE, SIG_DFL));
	ASSERT_EQ(LEN, write(file, self->data, LEN));
	fill_pipe(_metadata, self->a[1], self->data, LEN);
	close_fd(&self->b[0]);

	submit_op(_metadata, self, false, self->b[1], self->a[0], LEN, 0);
	EXPECT_EQ(-EPIPE, wait_res(_metadata, self)) TH_LOG("pipe to pipe");
	submit_op(_metadata, self, true, self->b[1], self->a[0], LEN, 0);
	EXPECT_EQ(-EPIPE, wait_res(_metadata, self)) TH_LOG("tee");

	{
		struct io_uring_sqe *sqe = next_sqe(_metadata, &self->ring, 1);

		iou_prep_splice(sqe, self->b[1], NO_OFF, file, 0, LEN, 0);
		sqe->flags = self->sqe_flags;
		ASSERT_EQ(1, iou_submit_and_wait(&self->ring, 0));
		EXPECT_EQ(-EPIPE, wait_res(_metadata, self)) {
			TH_LOG("file to pipe");
		}
	}

	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM, 0, sp));
	close(sp[1]);
	submit_op(_metadata, self, false, sp[0], self->a[0], LEN, 0);
	EXPECT_EQ(-EPIPE, wait_res(_metadata, self)) TH_LOG("pipe to socket");
	close(sp[0]);

	/* still alive; nothing pending that would kill us later */
	usleep(10000);
	ASSERT_EQ(0, sigpending(&pending));
	EXPECT_FALSE(sigismember(&pending, SIGPIPE));
	check_pipe(_metadata, self->a[0], self->data, LEN, "input");
	close(file);
}

/*
 * Pairs io_splice_punt() sends to io-wq without trying: a pipe to a file
 * on tmpfs, and an O_DIRECT tmpfs file to a pipe (do_splice() reads it
 * through ->read_iter(), which may block).  The data must be right; the
 * worker count is only reported.
 */
TEST_F(ops, ineligible)
{
	unsigned char got[LEN];
	int file = tmpfs_file(_metadata);
	struct io_uring_sqe *sqe;
	int fl;

	fill_pipe(_metadata, self->a[1], self->data, LEN);
	sqe = next_sqe(_metadata, &self->ring, 1);
	iou_prep_splice(sqe, file, 100, self->a[0], NO_OFF, LEN, 0);
	sqe->flags = self->sqe_flags;
	ASSERT_EQ(1, iou_submit_and_wait(&self->ring, 0));
	EXPECT_EQ(LEN, wait_res(_metadata, self)) TH_LOG("pipe to file");
	TH_LOG("pipe to tmpfs file: %d io-wq worker(s)", iou_count_io_workers());
	ASSERT_EQ(LEN, pread(file, got, LEN, 100));
	EXPECT_EQ(0, memcmp(got, self->data, LEN));
	EXPECT_EQ(0, pipe_bytes(self->a[0]));

	fl = fcntl(file, F_GETFL);
	ASSERT_LE(0, fl);
	if (fcntl(file, F_SETFL, fl | O_DIRECT)) {
		TH_LOG("no O_DIRECT here (%s): file to pipe not checked",
		       strerror(errno));
		close(file);
		return;
	}
	sqe = next_sqe(_metadata, &self->ring, 1);
	iou_prep_splice(sqe, self->b[1], NO_OFF, file, 100, LEN, 0);
	sqe->flags = self->sqe_flags;
	ASSERT_EQ(1, iou_submit_and_wait(&self->ring, 0));
	EXPECT_EQ(LEN, wait_res(_metadata, self)) TH_LOG("O_DIRECT file to pipe");
	TH_LOG("O_DIRECT tmpfs file to pipe: %d io-wq worker(s)",
	       iou_count_io_workers());
	check_pipe(_metadata, self->b[0], self->data, LEN, "file to pipe");
	close(file);
}

/*
 * A pipe to file splice waiting for its input must stay unbound, unhashed
 * io-wq work: a write to the same file, hashed on its inode, has to get
 * through meanwhile.  With the inline attempt the output file is assigned
 * before the punt, which must not change that.
 */
TEST_F(ops, blocked_splice_does_not_stall_file_writes)
{
	unsigned char got[LEN];
	struct io_uring_sqe *sqe;
	struct iou_cqe cqe;
	int file = tmpfs_file(_metadata);

	sqe = next_sqe(_metadata, &self->ring, 1);
	iou_prep_splice(sqe, file, 0, self->a[0], NO_OFF, LEN, 0);
	sqe->flags = self->sqe_flags;
	sqe = next_sqe(_metadata, &self->ring, 2);
	sqe->opcode = IORING_OP_WRITE;
	sqe->fd = file;
	sqe->addr = (__u64)(uintptr_t)self->data;
	sqe->len = 100;
	sqe->off = 8192;
	sqe->flags = IOSQE_ASYNC;
	ASSERT_EQ(2, iou_submit_and_wait(&self->ring, 0));

	ASSERT_EQ(0, iou_wait_cqe_timeout(&self->ring, &cqe, WAIT_MS)) {
		TH_LOG("the write is stuck behind the splice waiting for input");
		fill_pipe(_metadata, self->a[1], self->data, LEN);
	}
	EXPECT_EQ(2, cqe.user_data);
	EXPECT_EQ(100, cqe.res);

	fill_pipe(_metadata, self->a[1], self->data, LEN);
	EXPECT_EQ(LEN, wait_res(_metadata, self));
	ASSERT_EQ(LEN, pread(file, got, LEN, 0));
	EXPECT_EQ(0, memcmp(got, self->data, LEN));
	close(file);
}

/*
 * Only SPLICE_F_{MOVE,NONBLOCK,MORE,GIFT} (and SPLICE_F_FD_IN_FIXED for
 * the ring) are accepted: whatever bit the kernel uses internally for its
 * nowait mode must stay invisible to splice(2), tee(2), vmsplice(2) and
 * the SQE.
 */
TEST_F(ops, internal_flags_rejected)
{
	struct iovec iov = { .iov_base = self->data, .iov_len = 16 };
	unsigned int bit, flag;

	fill_pipe(_metadata, self->a[1], self->data, LEN);
	for (bit = 4; bit < 31; bit++) {
		flag = 1U << bit;
		errno = 0;
		EXPECT_EQ(-1, splice(self->a[0], NULL, self->b[1], NULL, 16,
				     flag));
		EXPECT_EQ(EINVAL, errno) TH_LOG("splice(2) flag 0x%x", flag);
		errno = 0;
		EXPECT_EQ(-1, tee(self->a[0], self->b[1], 16, flag));
		EXPECT_EQ(EINVAL, errno) TH_LOG("tee(2) flag 0x%x", flag);
		errno = 0;
		EXPECT_EQ(-1, vmsplice(self->b[1], &iov, 1, flag));
		EXPECT_EQ(EINVAL, errno) TH_LOG("vmsplice(2) flag 0x%x", flag);

		submit_op(_metadata, self, false, self->b[1], self->a[0], 16,
			  flag);
		EXPECT_EQ(-EINVAL, wait_res(_metadata, self)) {
			TH_LOG("IORING_OP_SPLICE flag 0x%x", flag);
		}
		submit_op(_metadata, self, true, self->b[1], self->a[0], 16,
			  flag);
		EXPECT_EQ(-EINVAL, wait_res(_metadata, self)) {
			TH_LOG("IORING_OP_TEE flag 0x%x", flag);
		}
	}
	EXPECT_EQ(0, pipe_bytes(self->b[0]));
	check_pipe(_metadata, self->a[0], self->data, LEN, "input");
}

/*
 * chain: a writer thread feeds pipe A, the ring moves the bytes A -> M ->
 * C with random-sized splices (M a pipe or an AF_UNIX socket pair), a
 * reader thread drains C and compares every byte with what was written.
 *
 * Every splice moves what is there up to its length, so none may ever be
 * left waiting for bytes that will not come: hop 1 (A -> M) can ask for
 * anything while the writer runs, as the writer, once told to stop,
 * writes at least what hop 1 ever asked for ("promised"); hop 2 asks only
 * for bytes promised but not yet moved on.  So splices do wait for input
 * now and then, in io-wq or after an inline -EAGAIN, and all complete.
 */

#define CHAIN_SPLICES	100000	/* per hop: each one moves >= 1 byte */
/*
 * ... or as many as CHAIN_SECONDS allow, at least CHAIN_MIN_SPLICES: the
 * plain kernel makes 100000 in about 5 s under TCG, a debug kernel with
 * two vCPUs on a busy host took 274 s, past the program's timeout.
 */
#define CHAIN_SECONDS	60
#define CHAIN_MIN_SPLICES	10000
#define CHAIN_DEPTH	8	/* SQEs in flight per hop */
#define CHAIN_MAX_LEN	16384
#define CHAIN_STALL_S	10	/* no completion this long: print the state */
/*
 * Completions flow all the time, so no wait for one comes near io-wq's
 * WORKER_IDLE_TIMEOUT (5 s), which is what work left queued behind a
 * busy worker used to wait for (patch "io_uring/io-wq: don't leave queued
 * work to an idle worker's timeout").
 */
#define CHAIN_MAX_WAIT_MS	4000
#define CHAIN_TIMEOUT_S	300
#define CHAIN_REPORT_S	30	/* progress line this often */
#define PAT_LEN		((1 << 20) + 4099)	/* not a page multiple */
#define PAT_PAD		65536

struct rng {
	uint64_t s;
};

static uint64_t rng_next(struct rng *r)
{
	r->s ^= r->s << 13;
	r->s ^= r->s >> 7;
	r->s ^= r->s << 17;
	return r->s;
}

/* 1..@max (a power of two), log-uniform: as many tiny as large ones. */
static unsigned int rng_len(struct rng *r, unsigned int max)
{
	uint64_t x = rng_next(r);
	unsigned int bits = 1 + x % (31 - __builtin_clz(max));

	return 1 + ((x >> 8) & ((1U << bits) - 1));
}

static uint64_t fnv1a(uint64_t h, const unsigned char *p, size_t n)
{
	while (n--) {
		h ^= *p++;
		h *= 0x100000001b3ULL;
	}
	return h;
}

#define FNV_INIT	0xcbf29ce484222325ULL

struct chain {
	bool socket;		/* M is an AF_UNIX socket pair */
	uint64_t seed;
	unsigned char *pat;	/* byte i of the stream: pat[i % PAT_LEN] */
	int a[2], m[2], c[2];	/* m[1]/m[0]: hop 1 output / hop 2 input */

	/* writer */
	pthread_t wthr;
	uint64_t written;	/* atomic */
	uint64_t promised;	/* set before stop */
	int stop;		/* atomic */
	uint64_t total;		/* atomic: final length once wdone */
	int wdone;		/* atomic */
	uint64_t wsum;
	int werr;

	/* reader */
	pthread_t rthr;
	uint64_t rtotal;
	uint64_t rsum;
	int rdone;		/* atomic */
	int rerr;
	int64_t bad_at;		/* first differing stream offset, or -1 */
};

/*
 * The writer's end of A is O_NONBLOCK, so every byte it has put into A is
 * in "written" as soon as write(2) returns: it never sits inside a write
 * that has moved part of its buffer. The submitter can then bound hop 1 by
 * what is written, without FIONREAD on A, which takes A's mutex and would
 * wait behind a hop-1 worker that holds it while it waits for room in the
 * socket (splice_to_socket() does): room that only the submitter's next
 * hop-2 splices make.
 */
static void *chain_writer(void *arg)
{
	struct chain *ch = arg;
	struct pollfd pfd = { .fd = ch->a[1], .events = POLLOUT };
	struct rng r = { .s = ch->seed ^ 0x77777777ULL };
	uint64_t pos = 0, target;
	unsigned int n = 0;
	ssize_t ret;

	for (;;) {
		if (!n)
			n = rng_len(&r, 65536);
		if (__atomic_load_n(&ch->stop, __ATOMIC_ACQUIRE)) {
			target = ch->promised;
			if (pos >= target)
				break;
			if (n > target - pos)
				n = target - pos;
		}
		ret = write(ch->a[1], ch->pat + pos % PAT_LEN, n);
		if (ret < 0 && (errno == EAGAIN || errno == EINTR)) {
			/* a timeout, to look at stop again */
			poll(&pfd, 1, 100);
			continue;
		}
		if (ret <= 0) {
			ch->werr = ret ? errno : EIO;
			break;
		}
		ch->wsum = fnv1a(ch->wsum, ch->pat + pos % PAT_LEN, ret);
		pos += ret;
		n -= ret;
		__atomic_store_n(&ch->written, pos, __ATOMIC_RELEASE);
	}
	__atomic_store_n(&ch->total, pos, __ATOMIC_RELEASE);
	__atomic_store_n(&ch->wdone, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void *chain_reader(void *arg)
{
	struct chain *ch = arg;
	struct pollfd pfd = { .fd = ch->c[0], .events = POLLIN };
	unsigned char *buf = malloc(PAT_PAD);
	const unsigned char *want;
	ssize_t n, i;

	if (!buf) {
		ch->rerr = ENOMEM;
		goto out;
	}
	for (;;) {
		if (__atomic_load_n(&ch->wdone, __ATOMIC_ACQUIRE) &&
		    ch->rtotal >= __atomic_load_n(&ch->total, __ATOMIC_ACQUIRE))
			break;
		if (poll(&pfd, 1, 100) <= 0)
			continue;
		n = read(ch->c[0], buf, PAT_PAD);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			ch->rerr = n ? errno : EPIPE;
			break;
		}
		want = ch->pat + ch->rtotal % PAT_LEN;
		if (ch->bad_at < 0 && memcmp(buf, want, n)) {
			for (i = 0; i < n && buf[i] == want[i]; i++)
				;
			ch->bad_at = ch->rtotal + i;
		}
		ch->rsum = fnv1a(ch->rsum, buf, n);
		ch->rtotal += n;
	}
	free(buf);
out:
	__atomic_store_n(&ch->rdone, 1, __ATOMIC_RELEASE);
	return NULL;
}

/*
 * No completion for CHAIN_STALL_S: say where everything is (each hop's
 * requests in flight, what the pipes hold, every thread's wait channel),
 * then go on waiting; the harness's timeout ends a real hang.
 */
static void chain_stalled(struct chain *ch, const unsigned int *inflight,
			  const uint64_t *moved, const uint64_t *count)
{
	fprintf(stderr, "# chain: no completion for %d s: in flight %u + %u, moved %llu + %llu in %llu + %llu splices, written %llu, read %llu\n",
		CHAIN_STALL_S, inflight[0], inflight[1],
		(unsigned long long)moved[0], (unsigned long long)moved[1],
		(unsigned long long)count[0], (unsigned long long)count[1],
		(unsigned long long)__atomic_load_n(&ch->written, __ATOMIC_ACQUIRE),
		(unsigned long long)ch->rtotal);
	iou_dump_threads();
	/* last: FIONREAD waits for a pipe's mutex, which a worker may hold */
	fprintf(stderr, "# chain: A %d, M %d, C %d bytes readable\n",
		readable_bytes(ch->a[0]), readable_bytes(ch->m[0]),
		readable_bytes(ch->c[0]));
}

/* user_data: hop (bit 32) and requested length (low 32 bits) */
#define UD_HOP2		(1ULL << 32)

static uint64_t chain_seed(void)
{
	const char *s = getenv("SPLICE_INLINE_SEED");

	return s ? strtoull(s, NULL, 0) : 0x5eed5b11ce;
}

/* One chain SPLICE; either end registered or not, IOSQE_ASYNC or not. */
static void queue_chain_sqe(struct __test_metadata *_metadata,
			    struct iou_ring *ring, struct rng *r,
			    unsigned int hop, unsigned int len,
			    int out, int out_slot, int in, int in_slot,
			    uint64_t *nasync, uint64_t *nfixed)
{
	struct io_uring_sqe *sqe = iou_get_sqe(ring);
	bool fin = rng_next(r) & 1;
	bool fout = rng_next(r) & 1;
	bool async = !(rng_next(r) & 3);

	ASSERT_NE(NULL, sqe);
	prep_op(sqe, false, fout ? out_slot : out, fout, fin ? in_slot : in,
		fin, len, 0, async ? IOSQE_ASYNC : 0);
	sqe->user_data = len | (hop ? UD_HOP2 : 0);
	*nasync += async;
	*nfixed += fin + fout;
}

static void run_chain(struct __test_metadata *_metadata, bool socket)
{
	struct chain *ch = calloc(1, sizeof(*ch));
	struct iou_ring ring;
	struct rng r;
	struct iou_cqe cqe;
	uint64_t moved[2] = { 0, 0 }, asked[2] = { 0, 0 }, count[2] = { 0, 0 };
	uint64_t nasync = 0, nfixed = 0, avail, promised = 0;
	unsigned int inflight[2] = { 0, 0 }, len, hop, i;
	unsigned int max_workers[2] = { 0, 4 * CHAIN_DEPTH };	/* bound, unbound */
	bool stopped = false, known;
	int ret, fds[4], slot_in[2], slot_out[2], near_in[2], near_out[2];
	long long t0 = iou_now_ms(), tw, longest = 0, nslow = 0;
	long long last_report = t0;

	ASSERT_NE(NULL, ch);
	ch->socket = socket;
	ch->seed = chain_seed();
	ch->bad_at = -1;
	ch->wsum = FNV_INIT;
	ch->rsum = FNV_INIT;
	r.s = ch->seed;
	TH_LOG("seed 0x%llx (SPLICE_INLINE_SEED)", (unsigned long long)ch->seed);

	ch->pat = malloc(PAT_LEN + PAT_PAD);
	ASSERT_NE(NULL, ch->pat);
	fill_pattern(ch->pat, PAT_LEN, ch->seed);
	memcpy(ch->pat + PAT_LEN, ch->pat, PAT_PAD);

	ret = iou_setup(&ring, 4 * CHAIN_DEPTH, 0);
	if (ret == -ENOSYS || ret == -EPERM)
		SKIP(return, "io_uring unavailable: %s", strerror(-ret));
	ASSERT_EQ(0, ret);
	/*
	 * At most 2 * CHAIN_DEPTH requests wait in io-wq at once; cap the
	 * unbound workers at twice that. Idle workers linger for seconds, so
	 * the chain runs at the cap most of the time: where io-wq must wake
	 * an idle worker, as it cannot add one.
	 */
	ASSERT_EQ(0, iou_sys_register(ring.fd, IORING_REGISTER_IOWQ_MAX_WORKERS,
				      max_workers, 2));
	ASSERT_EQ(0, pipe(ch->a));
	ASSERT_EQ(0, set_nonblock(ch->a[1], true));	/* see chain_writer() */
	ASSERT_EQ(0, pipe(ch->c));
	if (socket) {
		/* m[1] is what hop 1 writes to, m[0] what hop 2 reads */
		ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM, 0, ch->m));
	} else {
		ASSERT_EQ(0, pipe(ch->m));
	}

	fds[0] = ch->a[0];
	fds[1] = ch->m[1];
	fds[2] = ch->m[0];
	fds[3] = ch->c[1];
	ASSERT_EQ(0, iou_register_files(&ring, fds, 4));
	near_in[0] = ch->a[0];
	near_out[0] = ch->m[1];
	near_in[1] = ch->m[0];
	near_out[1] = ch->c[1];
	slot_in[0] = 0;
	slot_out[0] = 1;
	slot_in[1] = 2;
	slot_out[1] = 3;

	ASSERT_EQ(0, pthread_create(&ch->wthr, NULL, chain_writer, ch));
	ASSERT_EQ(0, pthread_create(&ch->rthr, NULL, chain_reader, ch));

	for (;;) {
		unsigned int queued = 0, want;
		uint64_t lim[2];

		if (iou_now_ms() - last_report >= CHAIN_REPORT_S * 1000) {
			last_report = iou_now_ms();
			fprintf(stderr, "# chain: %llu + %llu splices, %llu + %llu bytes, in flight %u + %u, after %lld s\n",
				(unsigned long long)count[0],
				(unsigned long long)count[1],
				(unsigned long long)moved[0],
				(unsigned long long)moved[1], inflight[0],
				inflight[1], (last_report - t0) / 1000);
		}
		known = __atomic_load_n(&ch->wdone, __ATOMIC_ACQUIRE);
		if (known && ch->werr)
			break;
		if (known && moved[1] == ch->total && !inflight[0] &&
		    !inflight[1])
			break;
		if (!stopped &&
		    ((count[0] >= CHAIN_SPLICES && count[1] >= CHAIN_SPLICES) ||
		     (iou_now_ms() - t0 >= CHAIN_SECONDS * 1000 &&
		      count[0] >= CHAIN_MIN_SPLICES &&
		      count[1] >= CHAIN_MIN_SPLICES))) {
			/* from now on the writer stops at max(written, promised) */
			ch->promised = promised;
			__atomic_store_n(&ch->stop, 1, __ATOMIC_RELEASE);
			stopped = true;
		}

		/*
		 * Bytes certain to reach each hop's input.  Once stopped, the
		 * writer goes on to what was promised and no further (it
		 * never has a write(2) half done, see chain_writer()).
		 */
		if (!stopped)
			lim[0] = UINT64_MAX;
		else
			lim[0] = known ? ch->total : promised;

		for (hop = 0; hop < 2; hop++) {
			while (inflight[hop] < CHAIN_DEPTH) {
				if (hop == 1) {
					lim[1] = promised;
					if (known && ch->total > lim[1])
						lim[1] = ch->total;
				}
				len = rng_len(&r, CHAIN_MAX_LEN);
				if (lim[hop] != UINT64_MAX) {
					ASSERT_LE(asked[hop], lim[hop]);
					avail = lim[hop] - asked[hop];
					if (!avail)
						break;
					if (len > avail)
						len = avail;
				}
				want = len;
				queue_chain_sqe(_metadata, &ring, &r, hop, want,
						near_out[hop], slot_out[hop],
						near_in[hop], slot_in[hop],
						&nasync, &nfixed);
				asked[hop] += want;
				if (hop == 0 && asked[0] > promised)
					promised = asked[0];
				inflight[hop]++;
				queued++;
			}
		}

		if (!queued && !inflight[0] && !inflight[1]) {
			/* waiting for the writer to finish */
			usleep(1000);
			continue;
		}
		tw = iou_now_ms();
		ret = iou_submit_and_wait(&ring, 0);
		ASSERT_EQ((int)queued, ret);
		while (inflight[0] + inflight[1] &&
		       *ring.cq_head == __atomic_load_n(ring.cq_tail,
							__ATOMIC_ACQUIRE)) {
			struct __kernel_timespec ts = { .tv_sec = CHAIN_STALL_S };

			ret = iou_sys_enter_timeout(ring.fd, 0, 1, &ts);
			if (ret == -ETIME)
				chain_stalled(ch, inflight, moved, count);
			else
				ASSERT_TRUE(ret >= 0 || ret == -EINTR);
		}
		/* not an error, but worth knowing: io-wq left work unserved */
		tw = iou_now_ms() - tw;
		if (tw > longest)
			longest = tw;
		nslow += tw >= 1000;
		while (!iou_peek_cqe(&ring, &cqe)) {
			hop = !!(cqe.user_data & UD_HOP2);
			want = (unsigned int)cqe.user_data;
			ASSERT_LT(0, cqe.res) {
				TH_LOG("hop %u: splice of %u bytes gave %d after %llu",
				       hop + 1, want, cqe.res,
				       (unsigned long long)count[hop]);
			}
			ASSERT_GE(want, (unsigned int)cqe.res);
			moved[hop] += cqe.res;
			/* what it did not move is asked for again later */
			asked[hop] -= want - cqe.res;
			count[hop]++;
			inflight[hop]--;
		}
	}

	/* the reader stops once it has all */
	for (i = 0; i < 10 * WAIT_MS &&
	     !__atomic_load_n(&ch->rdone, __ATOMIC_ACQUIRE); i++)
		usleep(1000);
	ASSERT_TRUE(__atomic_load_n(&ch->rdone, __ATOMIC_ACQUIRE));
	pthread_join(ch->wthr, NULL);
	pthread_join(ch->rthr, NULL);

	TH_LOG("%s: %llu + %llu splices, %llu bytes, %lld ms",
	       socket ? "pipe -> unix socket -> pipe" : "pipe -> pipe -> pipe",
	       (unsigned long long)count[0], (unsigned long long)count[1],
	       (unsigned long long)moved[1], (long long)(iou_now_ms() - t0));
	TH_LOG("%llu with IOSQE_ASYNC, %llu registered ends, %d io-wq workers left",
	       (unsigned long long)nasync, (unsigned long long)nfixed,
	       iou_count_io_workers());
	TH_LOG("longest wait for a completion %lld ms, %lld waits of 1 s or more",
	       longest, nslow);
	EXPECT_GT(CHAIN_MAX_WAIT_MS, longest) {
		TH_LOG("io-wq left a request queued while its workers were idle or blocked");
	}
	TH_LOG("checksum written 0x%016llx read 0x%016llx",
	       (unsigned long long)ch->wsum, (unsigned long long)ch->rsum);

	EXPECT_EQ(0, ch->werr);
	EXPECT_EQ(0, ch->rerr);
	EXPECT_LE(CHAIN_MIN_SPLICES, count[0]);
	EXPECT_LE(CHAIN_MIN_SPLICES, count[1]);
	EXPECT_EQ(ch->total, moved[0]);
	EXPECT_EQ(ch->total, moved[1]);
	EXPECT_EQ(ch->total, ch->rtotal);
	EXPECT_EQ(-1, ch->bad_at) {
		TH_LOG("stream differs from byte %lld on",
		       (long long)ch->bad_at);
	}
	EXPECT_EQ(ch->wsum, ch->rsum);
	/* nothing left over anywhere */
	EXPECT_EQ(0, readable_bytes(ch->a[0]));
	EXPECT_EQ(0, readable_bytes(ch->m[0]));
	EXPECT_EQ(0, readable_bytes(ch->c[0]));

	iou_exit(&ring);
	close(ch->a[0]);
	close(ch->a[1]);
	close(ch->m[0]);
	close(ch->m[1]);
	close(ch->c[0]);
	close(ch->c[1]);
	free(ch->pat);
	free(ch);
}

FIXTURE(chain) {
	int unused;
};

FIXTURE_SETUP(chain)
{
	const char *absent = iou_series_absent();

	/* about the inline path: without the series io-wq does it all */
	if (absent)
		SKIP(return, "%s", absent);
}

FIXTURE_TEARDOWN(chain)
{
}

TEST_F_TIMEOUT(chain, pipes, CHAIN_TIMEOUT_S)
{
	run_chain(_metadata, false);
}

TEST_F_TIMEOUT(chain, unix_socket, CHAIN_TIMEOUT_S)
{
	run_chain(_metadata, true);
}

TEST_HARNESS_MAIN
