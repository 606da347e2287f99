// SPDX-License-Identifier: GPL-2.0
/*
 * How an IORING_OP_SPLICE that has already moved some bytes, or is
 * waiting, ends: the same CQEs as 6.12's io-wq path.
 *
 * Each case runs twice, each time in a fresh child process with a fresh
 * ring: as a plain sqe (with the series: tried inline, then waiting on
 * poll) and with IOSQE_ASYNC (6.12's path: an io-wq worker runs the
 * blocking splice). 6.12's blocking splice is the reference (fs/splice.c,
 * net/ipv4/tcp.c, net/unix/af_unix.c):
 *
 * cancel: a 64 KiB splice from a full pipe into a TCP socket with small
 *   buffers moves part of it and waits for room; it is then cancelled by
 *   user_data, by fd, or by a linked timeout. A signalled worker returns
 *   what it sent, so the CQE is the count of bytes that left the pipe and
 *   reached the receiver, never -ECANCELED; the linked NOP fails (a short
 *   count fails the link). The counts may differ a little between runs
 *   (TCP's buffers), so each run is checked on its own. 6.12 arms a linked
 *   timeout only once its request's first issue returns, so with
 *   IOSQE_ASYNC it never fires while the worker blocks: that run may
 *   instead end when the output is drained, with every byte.
 * rcvlowat: SO_RCVLOWAT on the input socket. AF_UNIX waits until it has
 *   read that many bytes, whatever it found at the call; TCP returns what
 *   it finds, and with an empty queue waits until that many arrived.
 * other_reader: another reader empties the input pipe while the splice
 *   waits for room. splice_to_socket() returns what it moved once the pipe
 *   is empty: the splice completes and does not wait for the pipe's
 *   writer. 6.12's worker holds the pipe mutex across its send, so there
 *   the other reader finds the pipe empty: invariants are compared, not
 *   counts.
 *
 * Every sqe gets exactly one CQE, and the bytes that come out are the
 * input's, in order.
 */

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "iou_helpers.h"
#include "../kselftest_harness.h"
#include "splice_helpers.h"

#define QUIET_MS	300
#define WAIT_MS		10000
#define LINK_TIMEOUT_MS	1000
#define CHILD_ALARM_S	24
#define K64		65536
#define LOWAT		1000
#define SEED		0xe2d5

#define UD_SPLICE	1
#define UD_NOP		2
#define UD_CANCEL	3	/* the ASYNC_CANCEL or the LINK_TIMEOUT */

/* What one run gave, written by the child into shared memory. */
struct outcome {
	int res[UD_CANCEL + 1];	/* CQE of each user_data; INT_MIN: none */
	int cqes;		/* CQEs reaped */
	int stray;		/* CQEs for no sqe, or a second one for one */
	int early;		/* CQEs before the cancel, feed or drain */
	bool late;		/* completed only once the input lost its writer */
	long received;		/* bytes that came out of the output */
	long left;		/* bytes left in the input pipe */
	long other;		/* bytes another reader took from the input */
	bool data_ok;		/* what came out is the input's start */
	bool other_ok;		/* what the other reader got is the rest */
	char skip[120];
	char err[160];
};

typedef void (*run_fn)(const void *c, __u8 sqe_flags, struct outcome *o);

static void record(struct outcome *o, const struct iou_cqe *cqe)
{
	o->cqes++;
	if (cqe->user_data >= UD_SPLICE && cqe->user_data <= UD_CANCEL &&
	    o->res[cqe->user_data] == INT_MIN)
		o->res[cqe->user_data] = cqe->res;
	else
		o->stray++;
}

/* Reap up to @nr CQEs, waiting at most @ms for each; returns how many. */
static int reap(struct iou_ring *ring, struct outcome *o, int nr, unsigned int ms)
{
	struct iou_cqe cqe;
	int got = 0;

	while (got < nr && !iou_wait_cqe_timeout(ring, &cqe, ms)) {
		record(o, &cqe);
		got++;
	}
	return got;
}

/* Any CQE left over after the expected ones is a stray one. */
static void reap_stray(struct iou_ring *ring, struct outcome *o)
{
	struct iou_cqe cqe;

	usleep(50000);
	while (!iou_peek_cqe(ring, &cqe)) {
		o->cqes++;
		o->stray++;
	}
}

struct reader {
	pthread_t thr;
	int fd;
	unsigned char *buf;
	long max;
	long got;
	int done;
};

/* Blocking reads until EOF (or an error): a pipe's or a socket's. */
static void *reader_fn(void *arg)
{
	struct reader *r = arg;
	ssize_t n;

	for (;;) {
		n = read(r->fd, r->buf + r->got, r->max - r->got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		__atomic_store_n(&r->got, r->got + n, __ATOMIC_RELEASE);
	}
	__atomic_store_n(&r->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* Wait until @fd has @n bytes queued (FIONREAD), at most WAIT_MS. */
static bool wait_queued(int fd, int n)
{
	long long end = iou_now_ms() + WAIT_MS;
	int q;

	while (iou_now_ms() < end) {
		if (!ioctl(fd, FIONREAD, &q) && q >= n)
			return true;
		usleep(1000);
	}
	return false;
}

static bool ring_up(struct iou_ring *ring, struct outcome *o)
{
	int ret = iou_setup(ring, 8, 0);

	if (ret == -ENOSYS || ret == -EPERM) {
		snprintf(o->skip, sizeof(o->skip), "io_uring unavailable: %s",
			 strerror(-ret));
		return false;
	}
	if (ret) {
		snprintf(o->err, sizeof(o->err), "io_uring_setup: %s",
			 strerror(-ret));
		return false;
	}
	if (!(ring->features & IORING_FEAT_EXT_ARG)) {
		snprintf(o->skip, sizeof(o->skip), "no IORING_FEAT_EXT_ARG");
		iou_exit(ring);
		return false;
	}
	return true;
}

static bool tcp_up(int *c, int *s, int bufsize, struct outcome *o)
{
	int ret = iou_tcp_pair(c, s, bufsize);

	if (ret)
		snprintf(o->skip, sizeof(o->skip), "no TCP over IPv4 loopback: %s",
			 strerror(-ret));
	return !ret;
}

/* The splice, linked to what follows it. */
static void prep_splice(struct iou_ring *ring, int out, int in,
			unsigned int len, __u8 sqe_flags)
{
	struct io_uring_sqe *sqe = iou_get_sqe(ring);

	iou_prep_splice(sqe, out, (__u64)-1, in, (__u64)-1, len, 0);
	sqe->user_data = UD_SPLICE;
	sqe->flags = IOSQE_IO_LINK | sqe_flags;
}

static void prep_nop(struct iou_ring *ring)
{
	struct io_uring_sqe *sqe = iou_get_sqe(ring);

	iou_prep_nop(sqe);
	sqe->user_data = UD_NOP;
}

/* Run @run in a fresh child; its outcome comes back in @o. */
static void run_in_child(struct __test_metadata *_metadata, run_fn run,
			 const void *c, __u8 sqe_flags, struct outcome *o)
{
	struct outcome *shared;
	int status, i;
	pid_t pid;

	shared = mmap(NULL, sizeof(*shared), PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, shared);
	memset(shared, 0, sizeof(*shared));
	for (i = 0; i <= UD_CANCEL; i++)
		shared->res[i] = INT_MIN;
	shared->received = shared->left = shared->other = -1;
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		signal(SIGPIPE, SIG_IGN);
		alarm(CHILD_ALARM_S);
		run(c, sqe_flags, shared);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	*o = *shared;
	munmap(shared, sizeof(*shared));
	if (!WIFEXITED(status))
		snprintf(o->err, sizeof(o->err), "child killed by signal %d%s",
			 WTERMSIG(status),
			 WTERMSIG(status) == SIGALRM ? " (alarm: a hang)" : "");
}

static void log_outcome(struct __test_metadata *_metadata, const char *mode,
			const struct outcome *o)
{
	TH_LOG("  %-5s splice %d, nop %d, cancel/timeout %d; %d cqe(s), %d stray, %d early%s; received %ld, left %ld, other reader %ld%s%s%s%s",
	       mode, o->res[UD_SPLICE], o->res[UD_NOP], o->res[UD_CANCEL],
	       o->cqes, o->stray, o->early, o->late ? ", LATE" : "",
	       o->received, o->left, o->other,
	       o->data_ok ? "" : " (wrong data out)",
	       o->other_ok ? "" : " (wrong data to the other reader)",
	       o->err[0] ? "; error: " : "", o->err);
}

/* Both runs, logged; SKIP if either could not be set up. */
static bool run_both(struct __test_metadata *_metadata, run_fn run,
		     const void *c, struct outcome *plain,
		     struct outcome *async)
{
	run_in_child(_metadata, run, c, 0, plain);
	run_in_child(_metadata, run, c, IOSQE_ASYNC, async);
	log_outcome(_metadata, "plain", plain);
	log_outcome(_metadata, "async", async);
	if (plain->skip[0] || async->skip[0])
		return false;
	EXPECT_STREQ("", plain->err);
	EXPECT_STREQ("", async->err);
	return true;
}

/*
 * 1. Cancel after partial progress.
 */
enum cancel_how { BY_USER_DATA, BY_FD, BY_LINK_TIMEOUT };

struct cancel_case {
	enum cancel_how how;
};

/*
 * What both 64 KiB pipe -> TCP cases start from: a ring, a TCP pair with
 * small buffers, and a pipe holding K64 bytes of the pattern. False, with
 * o->skip or o->err set, if any of it cannot be had.
 */
static bool setup_pipe_to_tcp(struct iou_ring *ring, int *cl, int *sv,
			      int p[2], unsigned char *pat, struct outcome *o)
{
	if (!ring_up(ring, o) || !tcp_up(cl, sv, 4096, o))
		return false;
	if (!pat || pipe(p)) {
		snprintf(o->err, sizeof(o->err), "setup: %s", strerror(errno));
		return false;
	}
	fill_pattern(pat, K64, SEED);
	if (write(p[1], pat, K64) != K64) {
		snprintf(o->err, sizeof(o->err), "fill: %s", strerror(errno));
		return false;
	}
	return true;
}

static void run_cancel(const void *arg, __u8 sqe_flags, struct outcome *o)
{
	struct __kernel_timespec ts = {
		.tv_sec = LINK_TIMEOUT_MS / 1000,
		.tv_nsec = (LINK_TIMEOUT_MS % 1000) * 1000000LL,
	};
	const struct cancel_case *c = arg;
	struct reader recv = { .buf = malloc(K64 + 1), .max = K64 + 1 };
	int p[2], cl, sv, nr = c->how == BY_LINK_TIMEOUT ? 2 : 3;
	unsigned char *pat = malloc(K64);
	bool recv_started = false;
	struct io_uring_sqe *sqe;
	struct iou_ring ring;

	if (!recv.buf) {
		snprintf(o->err, sizeof(o->err), "setup: out of memory");
		return;
	}
	if (!setup_pipe_to_tcp(&ring, &cl, &sv, p, pat, o))
		return;

	prep_splice(&ring, cl, p[0], K64, sqe_flags);
	if (c->how == BY_LINK_TIMEOUT) {
		sqe = iou_get_sqe(&ring);
		sqe->opcode = IORING_OP_LINK_TIMEOUT;
		sqe->addr = (__u64)(uintptr_t)&ts;
		sqe->len = 1;
		sqe->user_data = UD_CANCEL;
	} else {
		prep_nop(&ring);
	}
	if (iou_submit_and_wait(&ring, 0) != 2) {
		snprintf(o->err, sizeof(o->err), "submit failed");
		return;
	}
	/* it moves what fits, then waits for room (the timer is longer) */
	o->early = reap(&ring, o, nr, QUIET_MS);

	if (c->how != BY_LINK_TIMEOUT) {
		sqe = iou_get_sqe(&ring);
		sqe->opcode = IORING_OP_ASYNC_CANCEL;
		sqe->addr = UD_SPLICE;
		sqe->user_data = UD_CANCEL;
		if (c->how == BY_FD) {
			/* the splice's sqe->fd is its output */
			sqe->fd = cl;
			sqe->cancel_flags = IORING_ASYNC_CANCEL_FD;
		}
		if (iou_submit_and_wait(&ring, 0) != 1) {
			snprintf(o->err, sizeof(o->err), "cancel submit failed");
			return;
		}
	}
	/* the linked timeout has to fire first */
	reap(&ring, o, nr - o->cqes,
	     c->how == BY_LINK_TIMEOUT ? LINK_TIMEOUT_MS + 2000 : WAIT_MS);

	/*
	 * If the splice is still waiting, the cancel did not end it: let it
	 * go on (it completes once it has sent everything) and say so.
	 */
	recv.fd = sv;
	if (o->res[UD_SPLICE] == INT_MIN) {
		o->late = true;
		pthread_create(&recv.thr, NULL, reader_fn, &recv);
		recv_started = true;
	}
	reap(&ring, o, nr - o->cqes, WAIT_MS);
	if (o->res[UD_SPLICE] == INT_MIN) {
		/* a worker may still hold the pipe: no FIONREAD */
		snprintf(o->err, sizeof(o->err), "no splice CQE, even with the output drained");
		return;
	}
	reap_stray(&ring, o);

	o->left = pipe_bytes(p[0]);
	shutdown(cl, SHUT_WR);
	if (!recv_started)
		pthread_create(&recv.thr, NULL, reader_fn, &recv);
	pthread_join(recv.thr, NULL);
	o->received = recv.got;
	o->data_ok = o->received <= K64 && !memcmp(recv.buf, pat, o->received);
	o->other_ok = true;
	iou_exit(&ring);
}

/*
 * 6.12 arms a linked timeout only when the first issue of its request
 * returns (io_issue_sqe()): a worker blocked in the splice has none, so
 * the timeout never fires, the splice goes on until it has sent everything
 * (the output drained) and the timeout, armed at last, is then disarmed.
 */
static bool ltimeout_never_armed(const struct outcome *o)
{
	return o->late && o->res[UD_SPLICE] == K64 &&
	       o->res[UD_CANCEL] == -ECANCELED;
}

static void check_cancel_run(struct __test_metadata *_metadata,
			     const struct cancel_case *c, const char *mode,
			     const struct outcome *o, bool ref)
{
	int res = o->res[UD_SPLICE], cres = o->res[UD_CANCEL];

	/* the splice moved part, then waited until it was cancelled */
	EXPECT_EQ(0, o->early) TH_LOG("%s: completed before the cancel", mode);
	EXPECT_EQ(c->how == BY_LINK_TIMEOUT ? 2 : 3, o->cqes) TH_LOG("%s", mode);
	EXPECT_EQ(0, o->stray) TH_LOG("%s", mode);
	/* the CQE is what left the pipe, which is what reached the receiver */
	EXPECT_EQ(o->received, res) TH_LOG("%s: CQE != bytes received", mode);
	EXPECT_EQ(K64 - o->left, res) TH_LOG("%s: CQE != bytes gone from the pipe", mode);
	EXPECT_TRUE(o->data_ok) TH_LOG("%s", mode);

	if (ref && c->how == BY_LINK_TIMEOUT && ltimeout_never_armed(o)) {
		TH_LOG("%s: the linked timeout never fired (6.12: armed after the blocking issue)",
		       mode);
		return;
	}
	EXPECT_FALSE(o->late) TH_LOG("%s: the cancel did not end the splice", mode);
	EXPECT_LT(0, res) TH_LOG("%s: no bytes counted though bytes moved", mode);
	EXPECT_GT(K64, res) TH_LOG("%s: the splice did not wait", mode);
	if (c->how == BY_LINK_TIMEOUT) {
		/* -EALREADY: a running worker was signalled; -ETIME: removed */
		EXPECT_TRUE(cres == -ETIME || cres == -EALREADY)
			TH_LOG("%s: link timeout %d", mode, cres);
	} else {
		/* -EALREADY: a running worker was signalled; 0: found waiting */
		EXPECT_TRUE(cres == 0 || cres == -EALREADY)
			TH_LOG("%s: cancel %d", mode, cres);
		/* a short count fails the link */
		EXPECT_EQ(-ECANCELED, o->res[UD_NOP]) TH_LOG("%s", mode);
	}
}

FIXTURE(cancel) {};
FIXTURE_SETUP(cancel) {}
FIXTURE_TEARDOWN(cancel) {}

FIXTURE_VARIANT(cancel) {
	struct cancel_case c;
};

FIXTURE_VARIANT_ADD(cancel, by_user_data) {
	.c = { .how = BY_USER_DATA },
};

FIXTURE_VARIANT_ADD(cancel, by_fd) {
	.c = { .how = BY_FD },
};

FIXTURE_VARIANT_ADD(cancel, by_link_timeout) {
	.c = { .how = BY_LINK_TIMEOUT },
};

TEST_F_TIMEOUT(cancel, after_partial_progress, 55)
{
	struct outcome plain, async;

	TH_LOG("pipe (64 KiB) -> TCP (small buffers, not read), len 64 KiB; cancel %s",
	       variant->c.how == BY_USER_DATA ? "by user_data" :
	       variant->c.how == BY_FD ? "by fd" : "by a linked timeout");
	if (!run_both(_metadata, run_cancel, &variant->c, &plain, &async))
		SKIP(return, "%s", plain.skip[0] ? plain.skip : async.skip);
	if (plain.err[0] || async.err[0])
		return;
	/* without the series the plain sqe takes 6.12's path too */
	check_cancel_run(_metadata, &variant->c, "plain", &plain,
			 iou_series_absent() != NULL);
	check_cancel_run(_metadata, &variant->c, "async", &async, true);
}

/*
 * 2. SO_RCVLOWAT on the input socket.
 */
struct lowat_case {
	bool tcp;
	int before;		/* in the socket before the submit */
	int during;		/* written after the submit, before QUIET_MS */
	int feed[2];		/* written one after the other after it */
	bool waits;		/* the blocking splice waits through QUIET_MS */
	int want;		/* its CQE */
};

static void run_lowat(const void *arg, __u8 sqe_flags, struct outcome *o)
{
	const struct lowat_case *c = arg;
	unsigned char pat[4096], out[4096];
	int p[2], sk[2], lowat = LOWAT, off = 0, ret, i;
	struct iou_ring ring;

	if (!ring_up(&ring, o))
		return;
	fill_pattern(pat, sizeof(pat), SEED);
	/* sk[0] is read from, sk[1] written to */
	if (c->tcp) {
		if (!tcp_up(&sk[1], &sk[0], 0, o))
			return;
	} else if (socketpair(AF_UNIX, SOCK_STREAM, 0, sk)) {
		snprintf(o->err, sizeof(o->err), "socketpair: %s", strerror(errno));
		return;
	}
	if (pipe(p) ||
	    setsockopt(sk[0], SOL_SOCKET, SO_RCVLOWAT, &lowat, sizeof(lowat))) {
		snprintf(o->err, sizeof(o->err), "setup: %s", strerror(errno));
		return;
	}
	if (c->before) {
		if (write(sk[1], pat, c->before) != c->before ||
		    !wait_queued(sk[0], c->before)) {
			snprintf(o->err, sizeof(o->err), "before: %s", strerror(errno));
			return;
		}
		off += c->before;
	}

	prep_splice(&ring, p[1], sk[0], sizeof(out), sqe_flags);
	prep_nop(&ring);
	if (iou_submit_and_wait(&ring, 0) != 2) {
		snprintf(o->err, sizeof(o->err), "submit failed");
		return;
	}
	if (c->during) {
		/* let a worker reach its wait first (6.12 reads what is there) */
		o->early = reap(&ring, o, 2, QUIET_MS / 2);
		if (write(sk[1], pat + off, c->during) != c->during) {
			snprintf(o->err, sizeof(o->err), "during: %s", strerror(errno));
			return;
		}
		off += c->during;
	}
	o->early += reap(&ring, o, 2 - o->cqes, QUIET_MS);

	for (i = 0; i < 2; i++) {
		if (!c->feed[i])
			continue;
		ret = write(sk[1], pat + off, c->feed[i]);
		if (ret != c->feed[i]) {
			snprintf(o->err, sizeof(o->err), "feed: %s", strerror(errno));
			return;
		}
		off += ret;
	}
	reap(&ring, o, 2 - o->cqes, WAIT_MS);
	if (o->res[UD_SPLICE] == INT_MIN) {
		snprintf(o->err, sizeof(o->err), "no splice CQE after the feed");
		return;
	}
	reap_stray(&ring, o);

	o->received = pipe_bytes(p[0]);
	if (o->received > 0 && o->received <= (long)sizeof(out) &&
	    read(p[0], out, o->received) == o->received)
		o->data_ok = !memcmp(out, pat, o->received);
	else
		o->data_ok = !o->received;
	o->other_ok = true;
	iou_exit(&ring);
}

FIXTURE(rcvlowat) {};
FIXTURE_SETUP(rcvlowat) {}
FIXTURE_TEARDOWN(rcvlowat) {}

FIXTURE_VARIANT(rcvlowat) {
	struct lowat_case c;
};

/* 6.12: unix_stream_read_generic() takes 10, waits for SO_RCVLOWAT */
FIXTURE_VARIANT_ADD(rcvlowat, unix_present) {
	.c = {
		.before = 10, .feed = { 500, 600 }, .waits = true,
		.want = 1110,
	},
};

FIXTURE_VARIANT_ADD(rcvlowat, unix_empty) {
	.c = {
		.during = 10, .feed = { 500, 600 }, .waits = true,
		.want = 1110,
	},
};

/* 6.12: tcp_splice_read() returns what it finds */
FIXTURE_VARIANT_ADD(rcvlowat, tcp_present) {
	.c = { .tcp = true, .before = 10, .want = 10 },
};

/* ... and with nothing there, waits for a wakeup: SO_RCVLOWAT bytes */
FIXTURE_VARIANT_ADD(rcvlowat, tcp_empty) {
	.c = {
		.tcp = true, .during = 10, .feed = { 1000 }, .waits = true,
		.want = 1010,
	},
};

TEST_F_TIMEOUT(rcvlowat, input_socket, 55)
{
	const struct lowat_case *c = &variant->c;
	struct outcome plain, async;

	TH_LOG("%s -> pipe, len 4096, SO_RCVLOWAT %d: %d before, %d after the submit, then %d + %d; want %d%s",
	       c->tcp ? "TCP" : "AF_UNIX", LOWAT, c->before, c->during,
	       c->feed[0], c->feed[1], c->want, c->waits ? " (waits)" : "");
	if (!run_both(_metadata, run_lowat, c, &plain, &async))
		SKIP(return, "%s", plain.skip[0] ? plain.skip : async.skip);
	if (plain.err[0] || async.err[0])
		return;

	/* 6.12's path first: it is the reference */
	EXPECT_EQ(c->want, async.res[UD_SPLICE]);
	EXPECT_EQ(c->want, plain.res[UD_SPLICE]);
	EXPECT_EQ(async.res[UD_SPLICE], plain.res[UD_SPLICE]);
	EXPECT_EQ(c->waits ? 0 : 2, async.early);
	EXPECT_EQ(c->waits ? 0 : 2, plain.early)
		TH_LOG("plain: completed before SO_RCVLOWAT bytes were there");
	EXPECT_EQ(-ECANCELED, async.res[UD_NOP]);
	EXPECT_EQ(-ECANCELED, plain.res[UD_NOP]);
	EXPECT_EQ(2, plain.cqes);
	EXPECT_EQ(2, async.cqes);
	EXPECT_EQ(0, plain.stray);
	EXPECT_EQ(0, async.stray);
	EXPECT_EQ(plain.res[UD_SPLICE], plain.received);
	EXPECT_EQ(async.res[UD_SPLICE], async.received);
	EXPECT_TRUE(plain.data_ok);
	EXPECT_TRUE(async.data_ok);
}

/*
 * 3. Another reader of the input pipe.
 */
static void run_other(const void *arg, __u8 sqe_flags, struct outcome *o)
{
	unsigned char *pat = malloc(K64);
	struct reader other = { .buf = malloc(K64), .max = K64 };
	struct reader recv = { .buf = malloc(K64 + 1), .max = K64 + 1 };
	long long end;
	int p[2], cl, sv;
	long seen;
	struct iou_ring ring;

	if (!other.buf || !recv.buf) {
		snprintf(o->err, sizeof(o->err), "setup: out of memory");
		return;
	}
	if (!setup_pipe_to_tcp(&ring, &cl, &sv, p, pat, o))
		return;
	prep_splice(&ring, cl, p[0], K64, sqe_flags);
	prep_nop(&ring);
	if (iou_submit_and_wait(&ring, 0) != 2) {
		snprintf(o->err, sizeof(o->err), "submit failed");
		return;
	}
	/* it moves what fits, then waits for room */
	o->early = reap(&ring, o, 2, QUIET_MS);

	/*
	 * The other reader takes what is left in the pipe. It may block on
	 * the pipe mutex (6.12's worker holds it while it waits for room):
	 * a blocking read in a thread, joined once the pipe lost its writer.
	 */
	other.fd = p[0];
	pthread_create(&other.thr, NULL, reader_fn, &other);
	end = iou_now_ms() + 1000;
	do {
		seen = __atomic_load_n(&other.got, __ATOMIC_ACQUIRE);
		usleep(200000);
	} while ((!seen || seen != __atomic_load_n(&other.got, __ATOMIC_ACQUIRE)) &&
		 iou_now_ms() < end);

	/* room in the socket: the splice goes on, finds the pipe empty, ends */
	recv.fd = sv;
	pthread_create(&recv.thr, NULL, reader_fn, &recv);
	reap(&ring, o, 2 - o->cqes, WAIT_MS);
	o->late = o->res[UD_SPLICE] == INT_MIN;

	/* the other reader's EOF (and the end of a splice that hangs) */
	close(p[1]);
	reap(&ring, o, 2 - o->cqes, WAIT_MS);
	if (o->res[UD_SPLICE] == INT_MIN) {
		snprintf(o->err, sizeof(o->err),
			 "no splice CQE, even once the pipe lost its writer");
		return;
	}
	reap_stray(&ring, o);
	pthread_join(other.thr, NULL);
	shutdown(cl, SHUT_WR);
	pthread_join(recv.thr, NULL);

	o->received = recv.got;
	o->other = other.got;
	o->left = pipe_bytes(p[0]);
	o->data_ok = o->received <= K64 && !memcmp(recv.buf, pat, o->received);
	o->other_ok = o->received + o->other <= K64 &&
		      !memcmp(other.buf, pat + o->received, o->other);
	iou_exit(&ring);
}

static void check_other_run(struct __test_metadata *_metadata, const char *mode,
			    const struct outcome *o)
{
	int res = o->res[UD_SPLICE];

	EXPECT_EQ(0, o->early) TH_LOG("%s: completed before the drain", mode);
	EXPECT_FALSE(o->late)
		TH_LOG("%s: the splice waited for the pipe's writer to close", mode);
	EXPECT_EQ(2, o->cqes) TH_LOG("%s", mode);
	EXPECT_EQ(0, o->stray) TH_LOG("%s", mode);
	EXPECT_LT(0, res) TH_LOG("%s", mode);
	EXPECT_EQ(o->received, res) TH_LOG("%s: CQE != bytes received", mode);
	EXPECT_EQ(K64, o->received + o->other)
		TH_LOG("%s: bytes lost or duplicated", mode);
	EXPECT_EQ(0, o->left) TH_LOG("%s", mode);
	EXPECT_TRUE(o->data_ok) TH_LOG("%s: receiver's data", mode);
	EXPECT_TRUE(o->other_ok) TH_LOG("%s: other reader's data", mode);
	EXPECT_EQ(res == K64 ? 0 : -ECANCELED, o->res[UD_NOP]) TH_LOG("%s", mode);
}

FIXTURE(other_reader) {};
FIXTURE_SETUP(other_reader) {}
FIXTURE_TEARDOWN(other_reader) {}

TEST_F_TIMEOUT(other_reader, empties_input_pipe, 55)
{
	struct outcome plain, async;

	TH_LOG("pipe (64 KiB) -> TCP (small buffers), len 64 KiB; another reader empties the pipe, then the socket is drained");
	if (!run_both(_metadata, run_other, NULL, &plain, &async))
		SKIP(return, "%s", plain.skip[0] ? plain.skip : async.skip);
	if (plain.err[0] || async.err[0])
		return;
	check_other_run(_metadata, "plain", &plain);
	check_other_run(_metadata, "async", &async);
}

TEST_HARNESS_MAIN
