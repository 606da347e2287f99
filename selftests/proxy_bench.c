// SPDX-License-Identifier: GPL-2.0
/*
 * proxy_bench: a TCP proxy that splices socket -> pipe -> socket, through
 * the ring and the way HAProxy does it with epoll and splice(2).
 *
 * Prints figures, it is not a test: exit 0 unless something failed.
 *
 * N connections (-c, default 1, 64 and 1000), each: a source thread writes
 * into client socket C; the proxy reads its peer A, splices A -> pipe ->
 * B; a sink thread reads B's peer D and counts the bytes. All sockets are
 * TCP over loopback. Source and sink use epoll and non-blocking sockets;
 * they are the same in every mode.
 *
 * Modes of the proxy (one thread):
 *   ring       per connection, IORING_OP_SPLICE A -> pipe (64 KiB), then on
 *              its completion pipe -> B for what it moved (again for a
 *              short count); all connections in flight at once, one
 *              io_uring_enter(2) submits what completions queued and waits
 *              for the next. Blocking splice semantics: a splice waits for
 *              data or room, in a worker on 6.12, on poll with the series.
 *   async      the same with IOSQE_ASYNC on every sqe: 6.12's path.
 *   epoll      HAProxy's raw_sock: non-blocking sockets, epoll (level-
 *              triggered), splice(2) with SPLICE_F_NONBLOCK|SPLICE_F_MOVE;
 *              -EAGAIN on A means no data, on B a full socket, which is
 *              then waited for with EPOLLOUT while A is not read.
 *
 * Each cell runs in a fresh child with a warm-up of a tenth of the time
 * (at least 0.2 s), then -d seconds measured: MB/s at the sink, proxy
 * splices (ops) per second, and the io-wq workers the child had at the
 * end. The modes of one N take turns over -n rounds; the median round is
 * shown with its spread. Last, "idle": IDLE_CONNS connections with the
 * ring's A -> pipe splices pending and no traffic, and the workers they
 * hold after a second.
 *
 * -i (the default when IOU_ICOUNT=1, run_selftests.sh --icount): the
 * guest's clock counts instructions (QEMU -icount shift=0,sleep=off), so
 * each cell runs once (-n 1 unless given) and the table gives MB and
 * splices per guest second (10^9 instructions) and guest instructions per
 * splice, the source's and the sink's included.  Every row here waits for
 * other threads, and async's for io-wq: idle time is free and a wake-up
 * costs only its instructions, so these rows look better than on hardware.
 */

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_helpers.h"
#include "iou_helpers.h"

#define NO_OFF		((__u64)-1)
#define CHUNK		65536
#define MAX_CONNS	1000
#define IDLE_CONNS	1000
#define MAX_ROUNDS	15
#define MAX_NS		8

enum mode { M_RING, M_ASYNC, M_EPOLL, NR_MODES };

static const char * const mode_name[] = {
	[M_RING] = "ring", [M_ASYNC] = "async", [M_EPOLL] = "epoll",
};

/* the guest's clock counts instructions (-i, IOU_ICOUNT=1) */
static bool icount;

struct result {
	double mbs, ops;
	int workers;
	int failed;
	char msg[160];
};

struct conn {
	int c, a, b, d;		/* source end, proxy in, proxy out, sink end */
	int p[2];
	unsigned int in_pipe;	/* bytes the proxy has in the pipe */
	bool sending;		/* ring: a pipe -> B splice is in flight */
	bool want_out;		/* epoll: waiting for B to take more */
};

struct bench {
	struct conn *conns;
	int n;
	enum mode mode;
	double warm, dur;
	int stop;			/* atomic: source and sink end */
	uint64_t sunk;			/* atomic: bytes at the sink */
	uint64_t ops;
	struct result *res;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static __attribute__((format(printf, 2, 3)))
int fail(struct bench *b, const char *fmt, ...)
{
	va_list ap;

	if (!b->res->failed) {
		va_start(ap, fmt);
		vsnprintf(b->res->msg, sizeof(b->res->msg), fmt, ap);
		va_end(ap);
	}
	b->res->failed = 1;
	return -1;
}

static int set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	return fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) ? -errno : 0;
}

/* Source (write C) or sink (read D) over all connections, with epoll. */
static void *pump_fn(void *arg, bool source)
{
	static char buf[CHUNK];
	struct bench *b = arg;
	struct epoll_event ev[64];
	int ep = epoll_create1(0), i, n;
	ssize_t r;

	for (i = 0; i < b->n; i++) {
		struct epoll_event e = {
			.events = source ? EPOLLOUT : EPOLLIN,
			.data.u32 = i,
		};
		int fd = source ? b->conns[i].c : b->conns[i].d;

		set_nonblock(fd);
		epoll_ctl(ep, EPOLL_CTL_ADD, fd, &e);
	}
	while (!__atomic_load_n(&b->stop, __ATOMIC_ACQUIRE)) {
		n = epoll_wait(ep, ev, 64, 20);
		for (i = 0; i < n; i++) {
			struct conn *c = &b->conns[ev[i].data.u32];

			if (source) {
				(void)!write(c->c, buf, 16384);
				continue;
			}
			r = read(c->d, buf, sizeof(buf));
			if (r > 0)
				__atomic_add_fetch(&b->sunk, r, __ATOMIC_RELAXED);
		}
	}
	close(ep);
	return NULL;
}

static void *source_fn(void *arg)
{
	return pump_fn(arg, true);
}

static void *sink_fn(void *arg)
{
	return pump_fn(arg, false);
}

/* The ring's two steps; user_data: connection * 2 + (0: A -> pipe, 1: pipe -> B). */
static void ring_recv(struct iou_ring *ring, struct conn *c, int i, __u8 flags)
{
	struct io_uring_sqe *sqe = iou_get_sqe(ring);

	iou_prep_splice(sqe, c->p[1], NO_OFF, c->a, NO_OFF, CHUNK,
			SPLICE_F_MOVE);
	sqe->flags = flags;
	sqe->user_data = (__u64)i * 2;
}

static void ring_send(struct iou_ring *ring, struct conn *c, int i, __u8 flags)
{
	struct io_uring_sqe *sqe = iou_get_sqe(ring);

	iou_prep_splice(sqe, c->b, NO_OFF, c->p[0], NO_OFF, c->in_pipe,
			SPLICE_F_MOVE);
	sqe->flags = flags;
	sqe->user_data = (__u64)i * 2 + 1;
}

/* Run the proxy until @until; returns 0 or -1 (failed). */
static int proxy_ring(struct bench *b, struct iou_ring *ring, double until)
{
	__u8 flags = b->mode == M_ASYNC ? IOSQE_ASYNC : 0;
	struct iou_cqe cqe;
	int ret;

	struct __kernel_timespec ts = { .tv_nsec = 100000000 };
	unsigned int pending;

	while (now_s() < until) {
		/* publish what the last completions queued, wait for one */
		pending = ring->sqe_next - *ring->sq_tail;
		__atomic_store_n(ring->sq_tail, ring->sqe_next,
				 __ATOMIC_RELEASE);
		ret = iou_sys_enter_timeout(ring->fd, pending, 1, &ts);
		if (ret < 0 && ret != -EINTR && ret != -ETIME)
			return fail(b, "io_uring_enter: %s", strerror(-ret));
		while (!iou_peek_cqe(ring, &cqe)) {
			int i = cqe.user_data / 2;
			struct conn *c = &b->conns[i];

			if (cqe.res <= 0)
				return fail(b, "%s splice gave %d",
					    cqe.user_data & 1 ? "pipe->B" : "A->pipe",
					    cqe.res);
			b->ops++;
			if (cqe.user_data & 1)
				c->in_pipe -= cqe.res;
			else
				c->in_pipe += cqe.res;
			if (c->in_pipe)
				ring_send(ring, c, i, flags);
			else
				ring_recv(ring, c, i, flags);
		}
	}
	return 0;
}

/* Move what the pipe holds to B; false if B is full. */
static bool epoll_flush(struct bench *b, struct conn *c)
{
	ssize_t m;

	while (c->in_pipe) {
		m = splice(c->p[0], NULL, c->b, NULL, c->in_pipe,
			   SPLICE_F_NONBLOCK | SPLICE_F_MOVE);
		if (m <= 0)
			return false;
		b->ops++;
		c->in_pipe -= m;
	}
	return true;
}

static int proxy_epoll(struct bench *b, int ep, double until)
{
	struct epoll_event ev[64];
	int i, n;
	ssize_t r;

	while (now_s() < until) {
		n = epoll_wait(ep, ev, 64, 100);
		for (i = 0; i < n; i++) {
			int k = ev[i].data.u32;
			struct conn *c = &b->conns[k];
			bool was_out = c->want_out;

			if (!c->want_out) {
				r = splice(c->a, NULL, c->p[1], NULL, CHUNK,
					   SPLICE_F_NONBLOCK | SPLICE_F_MOVE);
				if (r > 0) {
					b->ops++;
					c->in_pipe += r;
				} else if (r < 0 && errno != EAGAIN) {
					return fail(b, "splice(2) A->pipe: %s",
						    strerror(errno));
				}
			}
			c->want_out = !epoll_flush(b, c);
			if (c->want_out != was_out) {
				struct epoll_event e = { .data.u32 = k };

				/* watch the other socket from now on */
				epoll_ctl(ep, EPOLL_CTL_DEL,
					  was_out ? c->b : c->a, &e);
				e.events = c->want_out ? EPOLLOUT : EPOLLIN;
				epoll_ctl(ep, EPOLL_CTL_ADD,
					  c->want_out ? c->b : c->a, &e);
			}
		}
	}
	return 0;
}

static int setup_conns(struct bench *b)
{
	int i, ret;

	for (i = 0; i < b->n; i++) {
		struct conn *c = &b->conns[i];

		ret = iou_tcp_pair(&c->c, &c->a, 0);
		if (!ret)
			ret = iou_tcp_pair(&c->b, &c->d, 0);
		if (!ret && pipe(c->p))
			ret = -errno;
		if (ret)
			return fail(b, "connection %d: %s", i, strerror(-ret));
	}
	return 0;
}

/* The ring, with every connection's first A -> pipe splice queued. */
static int ring_start(struct bench *b, struct iou_ring *ring)
{
	int i, ret = iou_setup(ring, 2 * MAX_CONNS, 0);

	if (ret)
		return fail(b, "io_uring_setup: %s", strerror(-ret));
	for (i = 0; i < b->n; i++)
		ring_recv(ring, &b->conns[i], i,
			  b->mode == M_ASYNC ? IOSQE_ASYNC : 0);
	return 0;
}

static void run_cell(struct bench *b)
{
	pthread_t src, snk;
	struct iou_ring ring;
	double t0, t1;
	uint64_t sunk0 = 0, ops0 = 0;
	int ep = -1, i;

	if (setup_conns(b))
		return;
	if (b->mode == M_EPOLL) {
		ep = epoll_create1(0);
		for (i = 0; i < b->n; i++) {
			struct epoll_event e = { .events = EPOLLIN, .data.u32 = i };

			set_nonblock(b->conns[i].a);
			set_nonblock(b->conns[i].b);
			epoll_ctl(ep, EPOLL_CTL_ADD, b->conns[i].a, &e);
		}
	} else if (ring_start(b, &ring)) {
		return;
	}
	pthread_create(&src, NULL, source_fn, b);
	pthread_create(&snk, NULL, sink_fn, b);

	t0 = now_s();
	for (i = 0; i < 2; i++) {
		double until = t0 + b->warm + (i ? b->dur : 0);

		if (b->mode == M_EPOLL)
			proxy_epoll(b, ep, until);
		else
			proxy_ring(b, &ring, until);
		if (b->res->failed)
			break;
		if (!i) {
			sunk0 = __atomic_load_n(&b->sunk, __ATOMIC_RELAXED);
			ops0 = b->ops;
		}
	}
	t1 = now_s() - t0 - b->warm;
	b->res->mbs = (__atomic_load_n(&b->sunk, __ATOMIC_RELAXED) - sunk0) /
		      t1 / 1e6;
	b->res->ops = (b->ops - ops0) / t1;
	b->res->workers = iou_count_io_workers();
	__atomic_store_n(&b->stop, 1, __ATOMIC_RELEASE);
	pthread_join(src, NULL);
	pthread_join(snk, NULL);
}

/* IDLE_CONNS connections, A -> pipe splices pending, no traffic. */
static void run_idle(struct bench *b)
{
	struct iou_ring ring;
	int ret;

	if (setup_conns(b) || ring_start(b, &ring))
		return;
	ret = iou_submit_and_wait(&ring, 0);
	if (ret != b->n) {
		fail(b, "submitted %d of %d", ret, b->n);
		return;
	}
	sleep(1);
	b->res->workers = iou_count_io_workers();
}

static void cell_in_child(int n, enum mode mode, double dur, bool idle,
			  struct result *out)
{
	struct rlimit rl = { 8 * MAX_CONNS + 64, 8 * MAX_CONNS + 64 };
	struct result res = { 0 };
	struct bench b = { 0 };
	int fds[2], status;
	pid_t pid;

	memset(out, 0, sizeof(*out));
	/* what the previous cell left running is not this one's */
	if (icount)
		bench_icount_settle(&status);
	if (pipe(fds)) {
		out->failed = 1;
		snprintf(out->msg, sizeof(out->msg), "pipe: %s", strerror(errno));
		return;
	}
	fflush(NULL);
	pid = fork();
	if (!pid) {
		b.n = n;
		b.mode = mode;
		b.dur = dur;
		b.warm = dur / 10 > 0.2 ? dur / 10 : 0.2;
		b.res = &res;
		b.conns = calloc(n, sizeof(*b.conns));
		if (setrlimit(RLIMIT_NOFILE, &rl))
			fail(&b, "RLIMIT_NOFILE: %s", strerror(errno));
		else if (idle)
			run_idle(&b);
		else
			run_cell(&b);
		(void)!write(fds[1], &res, sizeof(res));
		_exit(0);
	}
	close(fds[1]);
	if (pid < 0 || read(fds[0], out, sizeof(*out)) != sizeof(*out)) {
		out->failed = 1;
		snprintf(out->msg, sizeof(out->msg), "child died");
	}
	close(fds[0]);
	if (pid > 0)
		waitpid(pid, &status, 0);
}

/* The median round by MB/s, its spread, the most workers of any round. */
static void pick_median(struct result *rounds, int n, struct result *out,
			double *spread)
{
	double v[MAX_ROUNDS], median;
	int k, workers = 0;

	for (k = 0; k < n; k++) {
		if (rounds[k].failed) {
			*out = rounds[k];
			return;
		}
		v[k] = rounds[k].mbs;
		if (rounds[k].workers > workers)
			workers = rounds[k].workers;
	}
	median = bench_median(v, n, spread);
	for (k = 0; k < n; k++)
		if (rounds[k].mbs == median)
			break;
	*out = rounds[k];
	out->workers = workers;
}

static void usage(const char *prog, FILE *f)
{
	fprintf(f,
		"Usage: %s [-i] [-d SECONDS] [-n ROUNDS] [-c N[,N...]] [-h]\n"
		"A TCP proxy splicing socket -> pipe -> socket: through the ring,\n"
		"with IOSQE_ASYNC (6.12's path), and with epoll + splice(2).\n"
		"  -i          the guest's clock counts instructions (QEMU -icount\n"
		"              shift=0,sleep=off; default when IOU_ICOUNT=1): one\n"
		"              round, guest instructions per splice\n"
		"  -d SECONDS  measured time per cell and round (default 1; guest\n"
		"              seconds, 10^9 instructions, with -i)\n"
		"  -n ROUNDS   rounds, the median is shown (default 5, 1 with -i;\n"
		"              at most %d)\n"
		"  -c N,...    connection counts (default 1,64,1000; at most %d)\n"
		"  -h          this text\n", prog, MAX_ROUNDS, MAX_CONNS);
}

int main(int argc, char **argv)
{
	static struct result rounds[NR_MODES][MAX_ROUNDS];
	struct result r[MAX_NS][NR_MODES], idle[2];
	int ns[MAX_NS] = { 1, 64, 1000 }, nn = 3;
	int opt, nrounds = 0, failed = 0, i, k, m;
	double dur = 1, spread;
	char *tok;

	icount = bench_icount_env();
	while ((opt = getopt(argc, argv, "c:d:hin:")) != -1) {
		switch (opt) {
		case 'i':
			icount = true;
			break;
		case 'c':
			nn = 0;
			for (tok = strtok(optarg, ","); tok && nn < MAX_NS;
			     tok = strtok(NULL, ","))
				ns[nn++] = atoi(tok);
			for (i = 0; i < nn; i++)
				if (ns[i] < 1 || ns[i] > MAX_CONNS) {
					usage(argv[0], stderr);
					return 2;
				}
			break;
		case 'd':
			dur = atof(optarg);
			if (dur <= 0) {
				usage(argv[0], stderr);
				return 2;
			}
			break;
		case 'n':
			nrounds = atoi(optarg);
			if (nrounds < 1 || nrounds > MAX_ROUNDS) {
				usage(argv[0], stderr);
				return 2;
			}
			break;
		case 'h':
			usage(argv[0], stdout);
			return 0;
		default:
			usage(argv[0], stderr);
			return 2;
		}
	}
	if (!nrounds)
		nrounds = icount ? 1 : 5;
	signal(SIGPIPE, SIG_IGN);
	if (!bench_print_header("proxy_bench", icount, dur, nrounds))
		return 1;
	if (icount) {
		printf("%-6s %-6s %10s %9s %12s %5s\n", "conns", "mode",
		       "MB/guest-s", "insn/op", "splices/g-s", "wrk");
	} else {
		printf("%-6s %-6s %10s %7s %12s %5s\n", "conns", "mode",
		       "MB/s", "spread", "splices/s", "wrk");
	}
	for (i = 0; i < nn; i++) {
		for (k = 0; k < nrounds; k++)
			for (m = 0; m < NR_MODES; m++) {
				int mode = (m + k) % NR_MODES;

				cell_in_child(ns[i], mode, dur, false,
					      &rounds[mode][k]);
			}
		for (m = 0; m < NR_MODES; m++) {
			spread = 0;
			pick_median(rounds[m], nrounds, &r[i][m], &spread);
			if (r[i][m].failed) {
				failed = 1;
				printf("%-6d %-6s FAILED: %s\n", ns[i],
				       mode_name[m], r[i][m].msg);
				continue;
			}
			if (icount)
				printf("%-6d %-6s %10.1f %9.0f %12.0f %5d\n",
				       ns[i], mode_name[m], r[i][m].mbs,
				       bench_insn_per_op(r[i][m].ops),
				       r[i][m].ops, r[i][m].workers);
			else
				printf("%-6d %-6s %10.1f %6.0f%% %12.0f %5d\n",
				       ns[i], mode_name[m], r[i][m].mbs,
				       100 * spread, r[i][m].ops,
				       r[i][m].workers);
		}
		fflush(stdout);
	}
	for (m = 0; m < 2; m++) {
		cell_in_child(IDLE_CONNS, m, dur, true, &idle[m]);
		if (idle[m].failed) {
			failed = 1;
			printf("idle %d, %s: FAILED: %s\n", IDLE_CONNS,
			       mode_name[m], idle[m].msg);
		} else {
			printf("idle %d connections, %s: %d io-wq workers\n",
			       IDLE_CONNS, mode_name[m], idle[m].workers);
		}
	}

	printf("\n%-6s %-26s %s\n", "conns",
	       icount ? "ring/epoll MB/s" : "ring/epoll MB/s (>=1)",
	       icount ? "ring/async MB/s (flattered: io-wq)" :
	       "ring/async MB/s");
	for (i = 0; i < nn; i++) {
		const struct result *ring = &r[i][M_RING];
		const struct result *ep = &r[i][M_EPOLL];
		const struct result *as = &r[i][M_ASYNC];
		char a[40] = "n/a", b[40] = "n/a";

		if (!ring->failed && !ep->failed && ep->mbs > 0)
			snprintf(a, sizeof(a), "%.2f%s", ring->mbs / ep->mbs,
				 icount ? "" : ring->mbs >= ep->mbs ?
				 " met" : " MISSED");
		if (!ring->failed && !as->failed && as->mbs > 0)
			snprintf(b, sizeof(b), "%.2f", ring->mbs / as->mbs);
		printf("%-6d %-26s %s\n", ns[i], a, b);
	}
	return failed;
}
