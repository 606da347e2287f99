// SPDX-License-Identifier: GPL-2.0
/*
 * IORING_OP_SPLICE and IORING_OP_TEE that have to wait: the same CQEs as
 * 6.12's io-wq path, and no io-wq worker while they wait.
 *
 * Every case of the "same" tests runs twice, each time in a fresh child
 * process with a fresh ring: once as a plain sqe (tried inline with the
 * series, waiting on poll when it must) and once with IOSQE_ASYNC, which is
 * 6.12's path (a worker runs the blocking splice). The splice is linked to
 * a NOP. The case's files are set up, the sqes submitted, and for QUIET_MS
 * nothing may complete when the case says the blocking splice waits; then
 * the io-wq workers of the child are counted, the input is fed or the
 * output drained, and the results are compared: the splice's CQE, the
 * NOP's CQE (a short count fails the link), whether anything completed
 * before the feed, and the bytes that came out, which must be the input's.
 * With the series, the plain run must have had no worker while it waited.
 *
 * many_idle: 1000 splices wait on 1000 idle AF_UNIX socket pairs, with no
 * worker, and all complete when fed. cancel_* and close_* and ring_exit:
 * a waiting splice is cancelled (by user_data and by fd), has its fds
 * closed or its registered slot replaced, or its ring closed, and nothing
 * leaks: the files the ring held are released.
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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "iou_helpers.h"
#include "../kselftest_harness.h"
#include "splice_helpers.h"

#define QUIET_MS	300
#define WAIT_MS		10000
#define OUT_MAX		(4 << 20)
#define PAT_MAX		(1 << 20)
#define UD_SPLICE	1
#define UD_NOP		2
#define IDLE_PAIRS	1000

enum end_kind { END_PIPE, END_TCP, END_UNIX };

static const char * const end_name[] = { "pipe", "tcp", "unix" };

/* One case: what the splice connects, what it finds, what comes later. */
struct sp_case {
	bool tee;
	enum end_kind in, out;
	int pipe_size;		/* F_SETPIPE_SZ of an input pipe, if set */
	int in_bytes;		/* in the input before the submit */
	int in_buf;		/* a TCP input's SO_RCVBUF and its writer's
				 * SO_SNDBUF: a small window, so that part of
				 * in_bytes waits in the writer's queue */
	bool out_full;		/* output filled until it takes no more */
	unsigned int len;
	unsigned int splice_flags;
	bool in_nonblock, out_nonblock;	/* O_NONBLOCK on the spliced fds */
	int feed;		/* written to the input after QUIET_MS */
	bool waits;		/* the blocking splice waits before the feed */
	int want_res;		/* expected CQE of the splice */
};

/* What a run gave; compared between the two runs. */
struct outcome {
	int splice_res, nop_res;
	int cqes_before_feed;
	int workers_waiting;
	long out_bytes;		/* spliced bytes that came out */
	bool data_ok;
	char err[160];		/* set when the run itself could not be done */
};

/*
 * fds[0] is read from, fds[1] written to, as with pipe(2). An output
 * socket gets small buffers, so that a 64 KiB splice does not fit at once;
 * an input keeps the defaults, so that a feed arrives as one segment and
 * the blocking splice_read (which returns what one read finds) takes all
 * of it, as the inline try does.
 */
static int make_end(enum end_kind kind, bool output, int in_buf, int fds[2])
{
	int small = 4096;

	switch (kind) {
	case END_PIPE:
		return pipe(fds) ? -errno : 0;
	case END_TCP:
		return iou_tcp_pair(&fds[1], &fds[0], output ? small : in_buf);
	case END_UNIX:
		if (socketpair(AF_UNIX, SOCK_STREAM, 0, fds))
			return -errno;
		if (output)
			setsockopt(fds[1], SOL_SOCKET, SO_SNDBUF, &small,
				   sizeof(small));
		return 0;
	}
	return -EINVAL;
}

static int set_fl(int fd, int flag, bool on)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0)
		return -errno;
	fl = on ? fl | flag : fl & ~flag;
	return fcntl(fd, F_SETFL, fl) ? -errno : 0;
}

/* Write until the fd takes no more; returns the bytes written. */
static long fill_until_full(int fd, const unsigned char *pat)
{
	long total = 0;
	ssize_t n;

	set_fl(fd, O_NONBLOCK, true);
	for (;;) {
		n = write(fd, pat + (total % 4096), 4096);
		if (n <= 0)
			break;
		total += n;
	}
	set_fl(fd, O_NONBLOCK, false);
	return total;
}

/* Reads everything from an fd into a buffer until told to stop. */
struct drain {
	pthread_t thr;
	int fd;
	unsigned char *buf;
	long got;
	int stop;
};

static void *drain_fn(void *arg)
{
	struct drain *d = arg;
	struct pollfd pfd = { .fd = d->fd, .events = POLLIN };
	ssize_t n;

	set_fl(d->fd, O_NONBLOCK, true);
	for (;;) {
		n = read(d->fd, d->buf + d->got, OUT_MAX - d->got);
		if (n > 0) {
			d->got += n;
			continue;
		}
		if (n == 0 || (errno != EAGAIN && errno != EINTR))
			break;
		if (__atomic_load_n(&d->stop, __ATOMIC_ACQUIRE))
			break;
		poll(&pfd, 1, 20);
	}
	return NULL;
}

static void sp_prep(struct io_uring_sqe *sqe, const struct sp_case *c,
		    int out, int in, __u8 sqe_flags)
{
	if (c->tee)
		iou_prep_tee(sqe, out, in, c->len, c->splice_flags);
	else
		iou_prep_splice(sqe, out, (__u64)-1, in, (__u64)-1, c->len,
				c->splice_flags);
	sqe->user_data = UD_SPLICE;
	sqe->flags = IOSQE_IO_LINK | sqe_flags;
}

static void record_cqe(struct outcome *o, const struct iou_cqe *cqe)
{
	if (cqe->user_data == UD_SPLICE)
		o->splice_res = cqe->res;
	else if (cqe->user_data == UD_NOP)
		o->nop_res = cqe->res;
}

/* One run of @c, in the calling (child) process. */
static void run_case(const struct sp_case *c, __u8 sqe_flags,
		     struct outcome *o)
{
	unsigned char *pat = malloc(PAT_MAX);
	struct drain d = { .buf = malloc(OUT_MAX) };
	int in[2], out[2], cqes = 0, ret;
	long prefill = 0;
	struct iou_ring ring;
	struct iou_cqe cqe;
	struct io_uring_sqe *sqe;

	o->splice_res = o->nop_res = INT_MIN;
	if (!pat || !d.buf || iou_setup(&ring, 8, 0)) {
		snprintf(o->err, sizeof(o->err), "setup: %s", strerror(errno));
		return;
	}
	fill_pattern(pat, PAT_MAX, 0x5eed);
	ret = make_end(c->in, false, c->in_buf, in);
	if (!ret)
		ret = make_end(c->out, true, 0, out);
	if (!ret && c->pipe_size &&
	    fcntl(in[1], F_SETPIPE_SZ, c->pipe_size) < c->pipe_size)
		ret = -errno;
	if (ret) {
		snprintf(o->err, sizeof(o->err), "files: %s", strerror(-ret));
		return;
	}
	/* behind a small window, without blocking: the rest is queued */
	set_fl(in[1], O_NONBLOCK, c->in_buf);
	while (prefill < c->in_bytes) {
		ssize_t n = write(in[1], pat + prefill, c->in_bytes - prefill);

		if (n <= 0) {
			snprintf(o->err, sizeof(o->err), "preload: %ld of %d: %s",
				 prefill, c->in_bytes, n ? strerror(errno) : "0");
			return;
		}
		prefill += n;
	}
	prefill = 0;
	set_fl(in[1], O_NONBLOCK, false);
	if (c->out_full)
		prefill = fill_until_full(out[1], pat);
	set_fl(in[0], O_NONBLOCK, c->in_nonblock);
	set_fl(out[1], O_NONBLOCK, c->out_nonblock);

	sqe = iou_get_sqe(&ring);
	sp_prep(sqe, c, out[1], in[0], sqe_flags);
	sqe = iou_get_sqe(&ring);
	iou_prep_nop(sqe);
	sqe->user_data = UD_NOP;
	if (iou_submit_and_wait(&ring, 0) != 2) {
		snprintf(o->err, sizeof(o->err), "submit failed");
		return;
	}

	while (cqes < 2 && !iou_wait_cqe_timeout(&ring, &cqe, QUIET_MS)) {
		record_cqe(o, &cqe);
		cqes++;
	}
	o->cqes_before_feed = cqes;
	o->workers_waiting = iou_count_io_workers();

	/* let the output flow, then feed the input */
	d.fd = out[0];
	pthread_create(&d.thr, NULL, drain_fn, &d);
	if (c->feed && write(in[1], pat + c->in_bytes, c->feed) != c->feed) {
		snprintf(o->err, sizeof(o->err), "feed: %s", strerror(errno));
		return;
	}
	while (cqes < 2 && !iou_wait_cqe_timeout(&ring, &cqe, WAIT_MS)) {
		record_cqe(o, &cqe);
		cqes++;
	}
	usleep(50000);
	__atomic_store_n(&d.stop, 1, __ATOMIC_RELEASE);
	pthread_join(d.thr, NULL);

	/* a tee leaves its input; the prefill came out first */
	o->out_bytes = d.got - prefill;
	o->data_ok = o->out_bytes >= 0 && o->out_bytes <= PAT_MAX &&
		     !memcmp(d.buf + prefill, pat, o->out_bytes);
	iou_exit(&ring);
}

/* Run @c in a child with @sqe_flags; the outcome comes back in @o. */
static void run_in_child(struct __test_metadata *_metadata,
			 const struct sp_case *c, __u8 sqe_flags,
			 struct outcome *o)
{
	struct outcome *shared;
	int status;
	pid_t pid;

	shared = mmap(NULL, sizeof(*shared), PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, shared);
	memset(shared, 0, sizeof(*shared));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		alarm(60);
		run_case(c, sqe_flags, shared);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status)) TH_LOG("child died");
	*o = *shared;
	munmap(shared, sizeof(*shared));
}

static void log_outcome(struct __test_metadata *_metadata, const char *mode,
			const struct outcome *o)
{
	TH_LOG("  %-7s splice %d, nop %d, %d cqe(s) before the feed, %d worker(s) waiting, %ld bytes out%s",
	       mode, o->splice_res, o->nop_res, o->cqes_before_feed,
	       o->workers_waiting, o->out_bytes,
	       o->data_ok ? "" : " (wrong data)");
}

static void check_same(struct __test_metadata *_metadata,
		       const struct sp_case *c)
{
	const char *absent = iou_series_absent();
	struct outcome plain, async;
	int want_nop = c->want_res == (int)c->len ? 0 : -ECANCELED;

	run_in_child(_metadata, c, 0, &plain);
	run_in_child(_metadata, c, IOSQE_ASYNC, &async);
	ASSERT_STREQ("", plain.err);
	ASSERT_STREQ("", async.err);

	TH_LOG("%s -> %s, len %u, flags %#x%s%s",
	       end_name[c->in], end_name[c->out], c->len, c->splice_flags,
	       c->in_nonblock ? ", input O_NONBLOCK" : "",
	       c->out_nonblock ? ", output O_NONBLOCK" : "");
	log_outcome(_metadata, "plain", &plain);
	log_outcome(_metadata, "async", &async);

	/* the same CQEs as 6.12's path, which are the expected ones */
	EXPECT_EQ(async.splice_res, plain.splice_res);
	EXPECT_EQ(async.nop_res, plain.nop_res);
	EXPECT_EQ(async.cqes_before_feed, plain.cqes_before_feed);
	EXPECT_EQ(async.out_bytes, plain.out_bytes);
	EXPECT_EQ(c->want_res, plain.splice_res);
	EXPECT_EQ(want_nop, plain.nop_res);
	EXPECT_EQ(c->waits ? 0 : 2, plain.cqes_before_feed);
	EXPECT_TRUE(plain.data_ok);
	EXPECT_TRUE(async.data_ok);
	if (!c->tee)
		EXPECT_EQ(c->want_res > 0 ? c->want_res : 0, plain.out_bytes);

	/* waiting on poll, not in a worker */
	if (absent)
		TH_LOG("no worker check: %s", absent);
	else if (c->waits)
		EXPECT_EQ(0, plain.workers_waiting);
	if (c->waits)
		EXPECT_LT(0, async.workers_waiting);
}

#define K64	65536


FIXTURE(same) {};
FIXTURE_SETUP(same) {}
FIXTURE_TEARDOWN(same) {}

FIXTURE_VARIANT(same) {
	struct sp_case c;
};

/* a short send must not complete the request: it waits for room */
FIXTURE_VARIANT_ADD(same, pipe_tcp_64k) {
	.c = {
		.in = END_PIPE, .out = END_TCP, .in_bytes = K64, .len = K64,
		.waits = true, .want_res = K64,
	},
};

/* one sendmsg takes 64 KiB whole, the next one has to wait */
FIXTURE_VARIANT_ADD(same, pipe_unix_64k) {
	.c = {
		.in = END_PIPE, .out = END_UNIX, .in_bytes = K64, .len = K64,
		.want_res = K64,
	},
};

FIXTURE_VARIANT_ADD(same, pipe_unix_256k) {
	.c = {
		.in = END_PIPE, .out = END_UNIX, .pipe_size = 4 * K64,
		.in_bytes = 4 * K64, .len = 4 * K64, .waits = true,
		.want_res = 4 * K64,
	},
};

/* SPLICE_F_NONBLOCK does not make the socket send non-blocking */
FIXTURE_VARIANT_ADD(same, pipe_tcp_64k_nonblock) {
	.c = {
		.in = END_PIPE, .out = END_TCP, .in_bytes = K64, .len = K64,
		.splice_flags = SPLICE_F_NONBLOCK, .waits = true,
		.want_res = K64,
	},
};

/* an O_NONBLOCK socket: the short count, at once, in both modes */
FIXTURE_VARIANT_ADD(same, pipe_unix_full_o_nonblock) {
	.c = {
		.in = END_PIPE, .out = END_UNIX, .in_bytes = 3000,
		.out_full = true, .len = 3000, .out_nonblock = true,
		.want_res = -EAGAIN,
	},
};

/* empty input: wait for data, then the CQE carries it */
FIXTURE_VARIANT_ADD(same, tcp_pipe_empty) {
	.c = {
		.in = END_TCP, .out = END_PIPE, .len = 3000, .feed = 3000,
		.waits = true, .want_res = 3000,
	},
};

FIXTURE_VARIANT_ADD(same, unix_pipe_empty) {
	.c = {
		.in = END_UNIX, .out = END_PIPE, .len = 3000, .feed = 3000,
		.waits = true, .want_res = 3000,
	},
};

FIXTURE_VARIANT_ADD(same, pipe_unix_empty) {
	.c = {
		.in = END_PIPE, .out = END_UNIX, .len = 3000, .feed = 3000,
		.waits = true, .want_res = 3000,
	},
};

FIXTURE_VARIANT_ADD(same, pipe_pipe_empty) {
	.c = {
		.in = END_PIPE, .out = END_PIPE, .len = 3000, .feed = 3000,
		.waits = true, .want_res = 3000,
	},
};

FIXTURE_VARIANT_ADD(same, tee_empty) {
	.c = {
		.tee = true, .in = END_PIPE, .out = END_PIPE, .len = 3000,
		.feed = 3000, .waits = true, .want_res = 3000,
	},
};

/* TCP's splice_read ignores SPLICE_F_NONBLOCK: it waits */
FIXTURE_VARIANT_ADD(same, tcp_pipe_empty_nonblock) {
	.c = {
		.in = END_TCP, .out = END_PIPE, .len = 3000,
		.splice_flags = SPLICE_F_NONBLOCK, .feed = 3000, .waits = true,
		.want_res = 3000,
	},
};

/* AF_UNIX honours it: -EAGAIN at once */
FIXTURE_VARIANT_ADD(same, unix_pipe_empty_nonblock) {
	.c = {
		.in = END_UNIX, .out = END_PIPE, .len = 3000,
		.splice_flags = SPLICE_F_NONBLOCK, .feed = 3000,
		.want_res = -EAGAIN,
	},
};

FIXTURE_VARIANT_ADD(same, pipe_pipe_empty_o_nonblock) {
	.c = {
		.in = END_PIPE, .out = END_PIPE, .len = 3000,
		.in_nonblock = true, .feed = 3000, .want_res = -EAGAIN,
	},
};

/*
 * More than the window: the blocking tcp_splice_read() releases the socket
 * lock after each read, which lets in what the read's window update brought,
 * and reads on; the inline try must too (patch 0014), so both take all of
 * it, not the first window's worth.
 */
FIXTURE_VARIANT_ADD(same, tcp_pipe_behind_window) {
	.c = {
		.in = END_TCP, .in_buf = 4096, .out = END_PIPE,
		.in_bytes = 10240, .len = K64, .want_res = 10240,
	},
};

/* full output: wait for room */
FIXTURE_VARIANT_ADD(same, pipe_pipe_full) {
	.c = {
		.in = END_PIPE, .out = END_PIPE, .in_bytes = 3000,
		.out_full = true, .len = 3000, .waits = true, .want_res = 3000,
	},
};

FIXTURE_VARIANT_ADD(same, tee_full) {
	.c = {
		.tee = true, .in = END_PIPE, .out = END_PIPE, .in_bytes = 3000,
		.out_full = true, .len = 3000, .waits = true, .want_res = 3000,
	},
};

FIXTURE_VARIANT_ADD(same, unix_pipe_full) {
	.c = {
		.in = END_UNIX, .out = END_PIPE, .in_bytes = 3000,
		.out_full = true, .len = 3000, .waits = true, .want_res = 3000,
	},
};

/* a full pipe whose writer is O_NONBLOCK: -EAGAIN at once */
FIXTURE_VARIANT_ADD(same, unix_pipe_full_o_nonblock) {
	.c = {
		.in = END_UNIX, .out = END_PIPE, .in_bytes = 3000,
		.out_full = true, .len = 3000, .out_nonblock = true,
		.want_res = -EAGAIN,
	},
};

/* room in the pipe first: full pipe and empty socket, O_NONBLOCK pipe */
FIXTURE_VARIANT_ADD(same, tcp_pipe_full_empty_o_nonblock) {
	.c = {
		.in = END_TCP, .out = END_PIPE, .out_full = true, .len = 3000,
		.out_nonblock = true, .feed = 3000, .want_res = -EAGAIN,
	},
};

TEST_F_TIMEOUT(same, as_io_wq, 120)
{
	check_same(_metadata, &variant->c);
}

FIXTURE(waiting) {
	struct iou_ring ring;
	int sv[2], p[2];
	const char *absent;
};

FIXTURE_SETUP(waiting)
{
	int ret = iou_setup(&self->ring, 8, 0);

	if (ret == -ENOSYS || ret == -EPERM)
		SKIP(return, "io_uring unavailable: %s", strerror(-ret));
	ASSERT_EQ(0, ret);
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM, 0, self->sv));
	ASSERT_EQ(0, pipe(self->p));
	self->absent = iou_series_absent();
}

FIXTURE_TEARDOWN(waiting)
{
	close(self->sv[0]);
	close(self->sv[1]);
	close(self->p[0]);
	close(self->p[1]);
	iou_exit(&self->ring);
}

/* A splice of 100 bytes from @in (empty) into the pipe, user_data 1. */
static void submit_wait(struct __test_metadata *_metadata,
			FIXTURE_DATA(waiting) *self, int in, bool fixed_in)
{
	struct io_uring_sqe *sqe = next_sqe(_metadata, &self->ring, UD_SPLICE);

	iou_prep_splice(sqe, self->p[1], (__u64)-1, in, (__u64)-1, 100, 0);
	if (fixed_in)
		sqe->splice_flags |= SPLICE_F_FD_IN_FIXED;
	ASSERT_EQ(1, iou_submit_and_wait(&self->ring, 0));
	usleep(QUIET_MS * 1000);
	EXPECT_EQ(-EAGAIN, iou_peek_cqe(&self->ring, &(struct iou_cqe){ 0 }));
	if (!self->absent)
		EXPECT_EQ(0, iou_count_io_workers());
}

/* Cancel user_data 1 (by @fd with CANCEL_FD when @fd >= 0); reap both. */
static void cancel_waiting(struct __test_metadata *_metadata,
			   FIXTURE_DATA(waiting) *self, int fd)
{
	struct io_uring_sqe *sqe = next_sqe(_metadata, &self->ring, 2);
	int res[2];

	sqe->opcode = IORING_OP_ASYNC_CANCEL;
	sqe->addr = UD_SPLICE;
	if (fd >= 0) {
		sqe->fd = fd;
		sqe->cancel_flags = IORING_ASYNC_CANCEL_FD;
	}
	ASSERT_EQ(1, iou_submit_and_wait(&self->ring, 0));
	reap_cqes(_metadata, &self->ring, 2, res, WAIT_MS);
	TH_LOG("splice %d, cancel %d", res[0], res[1]);
	if (self->absent) {
		/* 6.12: a worker sleeps in do_splice() and is interrupted */
		EXPECT_TRUE(res[1] == 0 || res[1] == -EALREADY);
		EXPECT_TRUE(res[0] == -ECANCELED || res[0] == -EINTR);
		return;
	}
	EXPECT_EQ(-ECANCELED, res[0]);
	EXPECT_EQ(0, res[1]);
}

TEST_F(waiting, cancel_by_user_data)
{
	submit_wait(_metadata, self, self->sv[0], false);
	cancel_waiting(_metadata, self, -1);
}

/* By the splice's sqe->fd, the output, as for a request in io-wq. */
TEST_F(waiting, cancel_by_fd)
{
	submit_wait(_metadata, self, self->sv[0], false);
	cancel_waiting(_metadata, self, self->p[1]);
}

/* The waiting splice holds its input: closing the fd changes nothing. */
TEST_F(waiting, input_fd_closed)
{
	unsigned char data[100];
	int res;

	fill_pattern(data, sizeof(data), 7);
	submit_wait(_metadata, self, self->sv[0], false);
	close(self->sv[0]);
	self->sv[0] = open("/dev/null", O_RDONLY);
	ASSERT_EQ(100, write(self->sv[1], data, 100));
	reap_cqes(_metadata, &self->ring, 1, &res, WAIT_MS);
	EXPECT_EQ(100, res);
	check_pipe(_metadata, self->p[0], data, 100, "output");
}

/* A registered input replaced while the splice waits: it keeps the old. */
TEST_F(waiting, registered_slot_replaced)
{
	unsigned char data[100];
	int slot = self->sv[0], none = -1, res;

	fill_pattern(data, sizeof(data), 8);
	ASSERT_EQ(0, iou_register_files(&self->ring, &slot, 1));
	submit_wait(_metadata, self, 0, true);
	ASSERT_EQ(1, iou_update_files(&self->ring, 0, &none, 1));
	ASSERT_EQ(100, write(self->sv[1], data, 100));
	reap_cqes(_metadata, &self->ring, 1, &res, WAIT_MS);
	EXPECT_EQ(100, res);
	check_pipe(_metadata, self->p[0], data, 100, "output");
}

/*
 * Closing the ring with a splice waiting cancels it and releases its
 * files: once the pipe's only reader is the one the splice held, a write
 * to it fails with EPIPE.
 */
TEST_F(waiting, ring_exit_releases_files)
{
	long long end;
	int q[2];

	ASSERT_EQ(0, pipe(q));
	signal(SIGPIPE, SIG_IGN);
	submit_wait(_metadata, self, q[0], false);
	/* the ring's reference is the pipe's only reader now */
	close(q[0]);
	iou_exit(&self->ring);
	ASSERT_EQ(0, iou_setup(&self->ring, 8, 0));
	end = iou_now_ms() + WAIT_MS;
	while (write(q[1], "x", 1) == 1) {
		ASSERT_GT(end, iou_now_ms()) TH_LOG("the input is still held");
		usleep(10000);
	}
	EXPECT_EQ(EPIPE, errno);
	close(q[1]);
}

FIXTURE(many_idle) {};
FIXTURE_SETUP(many_idle) {}
FIXTURE_TEARDOWN(many_idle) {}

FIXTURE_VARIANT(many_idle) {
	__u8 sqe_flags;
};

FIXTURE_VARIANT_ADD(many_idle, plain) { .sqe_flags = 0 };
FIXTURE_VARIANT_ADD(many_idle, async) { .sqe_flags = IOSQE_ASYNC };

/*
 * IDLE_PAIRS splices, each from an idle AF_UNIX socket into its own pipe:
 * with the series no worker while they wait; fed, all complete.
 */
TEST_F_TIMEOUT(many_idle, fed_late, 120)
{
	struct rlimit rl = { 4 * IDLE_PAIRS + 64, 4 * IDLE_PAIRS + 64 };
	static int sv[IDLE_PAIRS][2], p[IDLE_PAIRS][2], res[IDLE_PAIRS];
	const char *absent = iou_series_absent();
	struct io_uring_sqe *sqe;
	struct iou_ring ring;
	char buf[16];
	int i, workers;

	ASSERT_EQ(0, setrlimit(RLIMIT_NOFILE, &rl));
	ASSERT_EQ(0, iou_setup(&ring, 2 * IDLE_PAIRS, 0));
	for (i = 0; i < IDLE_PAIRS; i++) {
		ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM, 0, sv[i]));
		ASSERT_EQ(0, pipe(p[i]));
		sqe = next_sqe(_metadata, &ring, i + 1);
		iou_prep_splice(sqe, p[i][1], (__u64)-1, sv[i][0], (__u64)-1,
				sizeof(buf), 0);
		sqe->flags = variant->sqe_flags;
	}
	ASSERT_EQ(IDLE_PAIRS, iou_submit_and_wait(&ring, 0));
	usleep(QUIET_MS * 1000);
	EXPECT_EQ(-EAGAIN, iou_peek_cqe(&ring, &(struct iou_cqe){ 0 }));
	workers = iou_count_io_workers();
	TH_LOG("%d splices waiting, %d io-wq workers", IDLE_PAIRS, workers);
	if (!variant->sqe_flags && !absent)
		EXPECT_EQ(0, workers);

	for (i = 0; i < IDLE_PAIRS; i++) {
		snprintf(buf, sizeof(buf), "pair %010d", i);
		ASSERT_EQ(sizeof(buf), write(sv[i][1], buf, sizeof(buf)));
	}
	reap_cqes(_metadata, &ring, IDLE_PAIRS, res, 2 * WAIT_MS);
	for (i = 0; i < IDLE_PAIRS; i++) {
		char want[16];

		EXPECT_EQ(sizeof(buf), res[i]);
		snprintf(want, sizeof(want), "pair %010d", i);
		check_pipe(_metadata, p[i][0], want, sizeof(want), "output");
		close(sv[i][0]);
		close(sv[i][1]);
		close(p[i][0]);
		close(p[i][1]);
	}
	iou_exit(&ring);
}

TEST_HARNESS_MAIN
