// SPDX-License-Identifier: GPL-2.0
/*
 * splice_bench: IORING_OP_SPLICE inline vs. io-wq vs. splice(2).
 *
 * Prints figures, it is not a test: exit 0 unless something failed.
 *
 * Workloads (each operation is checked for a full-length result):
 *   pipe->pipe 4K / 64K  one splice of 4 KiB / 64 KiB between two pipes.
 *                        A pair of pipes X, Y holds one chunk, which is
 *                        spliced X->Y, then Y->X, and so on: nothing has to
 *                        be refilled or drained, so only the splice itself
 *                        is measured.
 *   file->pipe->tcp      a linked pair: 64 KiB from a page-cache-hot file
 *                        (tmpfs, written just before) into an empty pipe,
 *                        then those 64 KiB from the pipe to a TCP loopback
 *                        socket; a reader thread drains the peers.
 *                        One operation = the pair (the sendfile pattern).
 *                        splice(2) mode: the same two splices as syscalls.
 *
 * Queue depth: QD1 is one pipe pair (one chain): submit one operation,
 * wait for it, submit the next.  QD32 is 32 independent pipe pairs (32
 * chains, each with its own pipe and socket), one operation in flight on
 * each: whenever one completes, the next one on that pair is queued, and
 * everything queued is submitted with the next io_uring_enter(2), which
 * waits for at least one completion.  So 32 splices that do not depend on
 * each other are really in flight at once.  splice(2) has no queue: at
 * QD32 it walks the same 32 pairs round robin in a loop.
 *
 * Modes: "inline" is the ring as it is (with the inline splice series the
 * eligible splices complete in io_uring_enter(2)); "inline reg" the same
 * with both ends registered (no fget()/fput() per splice); "async" sets
 * IOSQE_ASYNC on every SQE, which forces io-wq as 6.12 always did;
 * "splice(2)" is the syscall in a loop.
 *
 * Each cell runs in a fresh child process with a fresh ring: a warm-up of
 * a tenth of the duration (at least 0.1 s; io-wq workers get created), then
 * -d seconds measured.  The modes of one workload and depth take turns, -n
 * rounds of them (each round starting with the next mode), so that a slow
 * spell of the machine does not fall on one mode only; the table gives the
 * median round's ops/s and MB/s, and the spread (max - min) / median.
 * "wrk" is the most io-wq workers (threads iou-wrk-*) a child had at the
 * end of its cell.
 *
 * Ratios of the medians: inline/async ops/s at QD1 (target >= 3), inline
 * ops/s / splice(2) ops/s at QD32 (target >= 1), and the same for inline
 * reg, per workload.
 */

#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/statfs.h>
#include <sys/types.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_helpers.h"
#include "iou_helpers.h"

#define NO_OFF		((__u64)-1)
#define MAX_QD		32
#define FPS_CHUNK	65536
#define FILE_CHUNKS	(4 * MAX_QD)	/* 8 MiB file */
#define TMPFS_MAGIC_	0x01021994

enum workload { W_PP4K, W_PP64K, W_FPS, NR_WL };
enum mode { M_INLINE, M_INLINE_REG, M_ASYNC, M_SYSCALL, NR_MODES };

static const char * const wl_name[] = {
	[W_PP4K] = "pipe->pipe 4K",
	[W_PP64K] = "pipe->pipe 64K",
	[W_FPS] = "file->pipe->tcp",
};

static const unsigned int wl_chunk[] = {
	[W_PP4K] = 4096, [W_PP64K] = 65536, [W_FPS] = FPS_CHUNK,
};

static const char * const mode_name[] = {
	[M_INLINE] = "inline", [M_INLINE_REG] = "inline reg",
	[M_ASYNC] = "async", [M_SYSCALL] = "splice(2)",
};

static const int qds[] = { 1, 32 };

/* the ring uses registered files for both ends (set in the cell's child) */
static bool use_fixed;

#define MAX_ROUNDS	15

struct result {
	double ops;		/* per second */
	double mbs;		/* MB/s, 1 MB = 10^6 bytes */
	int workers;
	int failed;
	char msg[160];
};

/* What a cell measures: counters and the clock, shared by all loops. */
struct cell {
	enum workload wl;
	enum mode mode;
	int qd;
	double warm, dur;
	double t_warm_end, t_start, t_end;
	uint64_t ops, bytes, ops0, bytes0;
	bool measuring;
	struct result *res;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Account one operation; false once the measured time is over. */
static bool cell_tick(struct cell *c, uint64_t bytes)
{
	double t;

	c->ops++;
	c->bytes += bytes;
	if (c->ops & 15)
		return true;
	t = now_s();
	if (!c->measuring) {
		if (!c->t_warm_end)
			c->t_warm_end = t + c->warm;
		if (t < c->t_warm_end)
			return true;
		c->measuring = true;
		c->ops0 = c->ops;
		c->bytes0 = c->bytes;
		c->t_start = t;
		c->t_end = t + c->dur;
		return true;
	}
	if (t < c->t_end)
		return true;
	c->res->ops = (c->ops - c->ops0) / (t - c->t_start);
	c->res->mbs = (c->bytes - c->bytes0) / (t - c->t_start) / 1e6;
	return false;
}

static __attribute__((format(printf, 2, 3)))
int fail(struct cell *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->res->msg, sizeof(c->res->msg), fmt, ap);
	va_end(ap);
	c->res->failed = 1;
	return -1;
}

/* pipe->pipe ping-pong ------------------------------------------------ */

struct pp {
	int x[2], y[2];
	int dir;		/* 0: X->Y next, 1: Y->X next */
};

static int pp_setup(struct cell *c, struct pp *pp, unsigned int chunk)
{
	static char buf[65536];
	int i;

	memset(buf, 0xa5, sizeof(buf));
	for (i = 0; i < c->qd; i++) {
		if (pipe(pp[i].x) || pipe(pp[i].y))
			return fail(c, "pipe: %s", strerror(errno));
		if (write(pp[i].x[1], buf, chunk) != chunk)
			return fail(c, "filling a pipe: %s", strerror(errno));
		pp[i].dir = 0;
	}
	return 0;
}

/* Registered, pair i's x[0], x[1], y[0], y[1] are slots 4i .. 4i + 3. */
static void pp_prep(struct io_uring_sqe *sqe, struct pp *p, int i,
		    unsigned int chunk, __u8 flags)
{
	int in = p->dir ? p->y[0] : p->x[0];
	int out = p->dir ? p->x[1] : p->y[1];
	unsigned int sflags = 0;

	if (use_fixed) {
		in = 4 * i + (p->dir ? 2 : 0);
		out = 4 * i + (p->dir ? 1 : 3);
		sflags = SPLICE_F_FD_IN_FIXED;
		flags |= IOSQE_FIXED_FILE;
	}
	iou_prep_splice(sqe, out, NO_OFF, in, NO_OFF, chunk, sflags);
	sqe->flags = flags;
	sqe->user_data = i;
}

static int pp_ring(struct cell *c, struct pp *pp, unsigned int chunk)
{
	__u8 flags = c->mode == M_ASYNC ? IOSQE_ASYNC : 0;
	struct iou_ring ring;
	struct iou_cqe cqe;
	int i, ret, inflight = 0;
	bool more = true;

	ret = iou_setup(&ring, 2 * MAX_QD, 0);
	if (ret)
		return fail(c, "io_uring_setup: %s", strerror(-ret));
	if (use_fixed) {
		int fds[4 * MAX_QD];

		for (i = 0; i < c->qd; i++) {
			fds[4 * i] = pp[i].x[0];
			fds[4 * i + 1] = pp[i].x[1];
			fds[4 * i + 2] = pp[i].y[0];
			fds[4 * i + 3] = pp[i].y[1];
		}
		ret = iou_register_files(&ring, fds, 4 * c->qd);
		if (ret)
			return fail(c, "registering files: %s", strerror(-ret));
	}
	for (i = 0; i < c->qd; i++) {
		pp_prep(iou_get_sqe(&ring), &pp[i], i, chunk, flags);
		inflight++;
	}
	while (inflight) {
		ret = iou_submit_and_wait(&ring, 1);
		if (ret < 0 && ret != -EINTR)
			return fail(c, "io_uring_enter: %s", strerror(-ret));
		while (!iou_peek_cqe(&ring, &cqe)) {
			struct pp *p = &pp[cqe.user_data];

			inflight--;
			if (cqe.res != (int)chunk)
				return fail(c, "splice gave %d, not %u",
					    cqe.res, chunk);
			p->dir ^= 1;
			if (more)
				more = cell_tick(c, chunk);
			if (more) {
				pp_prep(iou_get_sqe(&ring), p, cqe.user_data,
					chunk, flags);
				inflight++;
			}
		}
	}
	iou_exit(&ring);
	return 0;
}

static int pp_syscall(struct cell *c, struct pp *pp, unsigned int chunk)
{
	ssize_t n;
	int i;

	for (;;) {
		for (i = 0; i < c->qd; i++) {
			struct pp *p = &pp[i];

			n = splice(p->dir ? p->y[0] : p->x[0], NULL,
				   p->dir ? p->x[1] : p->y[1], NULL, chunk, 0);
			if (n != chunk)
				return fail(c, "splice(2) gave %zd: %s", n,
					    strerror(errno));
			p->dir ^= 1;
			if (!cell_tick(c, chunk))
				return 0;
		}
	}
}

/* file->pipe->socket --------------------------------------------------- */

struct fps {
	int p[2];		/* the pipe */
	int s[2];		/* s[0] written by the splice, s[1] drained */
	uint64_t off;		/* next file offset */
	int awaiting;		/* CQEs still to come */
	int in_pipe;		/* bytes put into the pipe, not yet sent */
};

struct drainer {
	pthread_t thr;
	struct fps *f;
	int n;
	int stop;		/* atomic */
};

static void *drain_fn(void *arg)
{
	struct drainer *d = arg;
	struct pollfd pfd[MAX_QD];
	static char buf[1 << 20];
	int i;

	for (i = 0; i < d->n; i++) {
		pfd[i].fd = d->f[i].s[1];
		pfd[i].events = POLLIN;
	}
	while (!__atomic_load_n(&d->stop, __ATOMIC_ACQUIRE)) {
		if (poll(pfd, d->n, 50) <= 0)
			continue;
		for (i = 0; i < d->n; i++)
			if (pfd[i].revents & POLLIN)
				(void)!read(pfd[i].fd, buf, sizeof(buf));
	}
	return NULL;
}

/* A page-cache-hot file: on tmpfs when there is one. */
static int hot_file(struct cell *c)
{
	const char * const dirs[] = { "/dev/shm", "/tmp", "." };
	static char buf[FPS_CHUNK];
	char path[256];
	struct statfs sfs;
	unsigned int i;
	int fd = -1;

	for (i = 0; i < 3 && fd < 0; i++) {
		if (i < 2 && (statfs(dirs[i], &sfs) ||
			      sfs.f_type != TMPFS_MAGIC_))
			continue;
		snprintf(path, sizeof(path), "%s/splice_bench.XXXXXX", dirs[i]);
		fd = mkstemp(path);
		if (fd >= 0)
			unlink(path);
	}
	if (fd < 0)
		return fail(c, "no temporary file: %s", strerror(errno));
	memset(buf, 0x5a, sizeof(buf));
	for (i = 0; i < FILE_CHUNKS; i++)
		if (write(fd, buf, sizeof(buf)) != sizeof(buf))
			return fail(c, "writing the file: %s", strerror(errno));
	return fd;
}

static int fps_setup(struct cell *c, struct fps *f)
{
	int i;

	for (i = 0; i < c->qd; i++) {
		int ret = pipe(f[i].p) ? -errno :
			  iou_tcp_pair(&f[i].s[0], &f[i].s[1], 0);

		if (ret)
			return fail(c, "pipe/TCP pair: %s", strerror(-ret));
		f[i].off = (uint64_t)i * FPS_CHUNK;
		f[i].awaiting = 0;
		f[i].in_pipe = 0;
	}
	return 0;
}

static void fps_next_off(struct cell *c, struct fps *f)
{
	f->off += (uint64_t)c->qd * FPS_CHUNK;
	if (f->off >= (uint64_t)FILE_CHUNKS * FPS_CHUNK)
		f->off %= (uint64_t)FILE_CHUNKS * FPS_CHUNK;
}

/*
 * The pipe->socket splice of chain @i.  Registered, the file is slot 0 and
 * chain i's p[0], p[1], s[0] are slots 3i + 1 .. 3i + 3.
 */
static void fps_prep_send(struct io_uring_sqe *sqe, struct fps *f, int i,
			  unsigned int len, __u8 flags)
{
	if (use_fixed) {
		iou_prep_splice(sqe, 3 * i + 3, NO_OFF, 3 * i + 1, NO_OFF, len,
				SPLICE_F_FD_IN_FIXED);
		flags |= IOSQE_FIXED_FILE;
	} else {
		iou_prep_splice(sqe, f->s[0], NO_OFF, f->p[0], NO_OFF, len, 0);
	}
	sqe->flags = flags;
	sqe->user_data = i * 2 + 1;
}

/* user_data: chain index * 2 + 0 (file->pipe) or + 1 (pipe->socket) */
static void fps_queue(struct iou_ring *ring, struct fps *f, int i, int file,
		      __u8 flags)
{
	struct io_uring_sqe *sqe = iou_get_sqe(ring);

	if (use_fixed) {
		iou_prep_splice(sqe, 3 * i + 2, NO_OFF, 0, f->off, FPS_CHUNK,
				SPLICE_F_FD_IN_FIXED);
		sqe->flags = flags | IOSQE_IO_LINK | IOSQE_FIXED_FILE;
	} else {
		iou_prep_splice(sqe, f->p[1], NO_OFF, file, f->off, FPS_CHUNK,
				0);
		sqe->flags = flags | IOSQE_IO_LINK;
	}
	sqe->user_data = i * 2;
	fps_prep_send(iou_get_sqe(ring), f, i, FPS_CHUNK, flags);
	f->awaiting = 2;
}

static int fps_ring(struct cell *c, struct fps *fs, int file)
{
	__u8 flags = c->mode == M_ASYNC ? IOSQE_ASYNC : 0;
	struct iou_ring ring;
	struct iou_cqe cqe;
	int i, ret, busy = 0;
	bool more = true;

	ret = iou_setup(&ring, 4 * MAX_QD, 0);
	if (ret)
		return fail(c, "io_uring_setup: %s", strerror(-ret));
	if (use_fixed) {
		int fds[1 + 3 * MAX_QD];

		fds[0] = file;
		for (i = 0; i < c->qd; i++) {
			fds[3 * i + 1] = fs[i].p[0];
			fds[3 * i + 2] = fs[i].p[1];
			fds[3 * i + 3] = fs[i].s[0];
		}
		ret = iou_register_files(&ring, fds, 1 + 3 * c->qd);
		if (ret)
			return fail(c, "registering files: %s", strerror(-ret));
	}
	for (i = 0; i < c->qd; i++, busy++)
		fps_queue(&ring, &fs[i], i, file, flags);
	while (busy) {
		ret = iou_submit_and_wait(&ring, 1);
		if (ret < 0 && ret != -EINTR)
			return fail(c, "io_uring_enter: %s", strerror(-ret));
		while (!iou_peek_cqe(&ring, &cqe)) {
			struct fps *f = &fs[cqe.user_data / 2];
			struct io_uring_sqe *sqe;

			i = cqe.user_data / 2;
			f->awaiting--;
			if (!(cqe.user_data & 1)) {
				if (cqe.res != FPS_CHUNK)
					return fail(c, "file->pipe gave %d",
						    cqe.res);
				f->in_pipe += cqe.res;
			} else {
				if (cqe.res <= 0)
					return fail(c, "pipe->socket gave %d",
						    cqe.res);
				f->in_pipe -= cqe.res;
			}
			if (f->awaiting)
				continue;
			if (f->in_pipe) {
				/* a short send: move the rest first */
				sqe = iou_get_sqe(&ring);
				fps_prep_send(sqe, f, i, f->in_pipe, flags);
				f->awaiting = 1;
				continue;
			}
			busy--;
			fps_next_off(c, f);
			if (more)
				more = cell_tick(c, FPS_CHUNK);
			if (more) {
				fps_queue(&ring, f, i, file, flags);
				busy++;
			}
		}
	}
	iou_exit(&ring);
	return 0;
}

static int fps_syscall(struct cell *c, struct fps *fs, int file)
{
	ssize_t n, m;
	loff_t off;
	int i;

	for (;;) {
		for (i = 0; i < c->qd; i++) {
			struct fps *f = &fs[i];

			off = f->off;
			n = splice(file, &off, f->p[1], NULL, FPS_CHUNK, 0);
			if (n != FPS_CHUNK)
				return fail(c, "splice(2) file->pipe gave %zd: %s",
					    n, strerror(errno));
			while (n) {
				m = splice(f->p[0], NULL, f->s[0], NULL, n, 0);
				if (m <= 0)
					return fail(c, "splice(2) pipe->socket gave %zd: %s",
						    m, strerror(errno));
				n -= m;
			}
			fps_next_off(c, f);
			if (!cell_tick(c, FPS_CHUNK))
				return 0;
		}
	}
}

/* one cell, in a child --------------------------------------------------- */

static void run_cell(struct cell *c)
{
	int ret = 0;

	if (c->wl == W_FPS) {
		struct fps fs[MAX_QD];
		struct drainer d = { .f = fs, .n = c->qd };
		int file = hot_file(c);

		if (file < 0 || fps_setup(c, fs))
			return;
		if (pthread_create(&d.thr, NULL, drain_fn, &d)) {
			fail(c, "pthread_create failed");
			return;
		}
		if (c->mode == M_SYSCALL)
			ret = fps_syscall(c, fs, file);
		else
			ret = fps_ring(c, fs, file);
		c->res->workers = iou_count_io_workers();
		__atomic_store_n(&d.stop, 1, __ATOMIC_RELEASE);
		pthread_join(d.thr, NULL);
	} else {
		struct pp pp[MAX_QD];

		if (pp_setup(c, pp, wl_chunk[c->wl]))
			return;
		if (c->mode == M_SYSCALL)
			ret = pp_syscall(c, pp, wl_chunk[c->wl]);
		else
			ret = pp_ring(c, pp, wl_chunk[c->wl]);
		c->res->workers = iou_count_io_workers();
	}
	(void)ret;
}

static void cell_in_child(enum workload wl, int qd, enum mode mode,
			  double dur, struct result *out)
{
	struct result res;
	struct cell c;
	int fds[2], status;
	pid_t pid;

	memset(out, 0, sizeof(*out));
	if (pipe(fds)) {
		out->failed = 1;
		snprintf(out->msg, sizeof(out->msg), "pipe: %s", strerror(errno));
		return;
	}
	fflush(NULL);
	pid = fork();
	if (!pid) {
		use_fixed = mode == M_INLINE_REG;
		memset(&res, 0, sizeof(res));
		memset(&c, 0, sizeof(c));
		c.wl = wl;
		c.qd = qd;
		c.mode = mode;
		c.dur = dur;
		c.warm = dur / 10 > 0.1 ? dur / 10 : 0.1;
		c.res = &res;
		run_cell(&c);
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

static void usage(const char *prog, FILE *f)
{
	fprintf(f,
		"Usage: %s [-d SECONDS] [-n ROUNDS] [-h]\n"
		"IORING_OP_SPLICE inline (fds, registered files) vs. IOSQE_ASYNC\n"
		"(io-wq) vs. splice(2): pipe->pipe 4K and 64K, file->pipe->tcp\n"
		"64K, at QD 1 and 32: 24 cells.\n"
		"  -d SECONDS  measured time per cell and round (default 1;\n"
		"              each adds a tenth for warm-up)\n"
		"  -n ROUNDS   rounds of each cell, the median is shown (default 5,\n"
		"              at most %d)\n"
		"  -h          this text\n", prog, MAX_ROUNDS);
}

/*
 * The cell of the median round (by ops/s) in @out, its spread in @spread;
 * a failed round makes the cell failed.
 */
static void pick_median(struct result *rounds, int n, struct result *out,
			double *spread)
{
	double ops[MAX_ROUNDS], median;
	int k, workers = 0;

	for (k = 0; k < n; k++) {
		if (rounds[k].failed) {
			*out = rounds[k];
			return;
		}
		ops[k] = rounds[k].ops;
		if (rounds[k].workers > workers)
			workers = rounds[k].workers;
	}
	median = bench_median(ops, n, spread);
	for (k = 0; k < n; k++)
		if (rounds[k].ops == median)
			break;
	*out = rounds[k];
	out->workers = workers;
}

static void print_ratio(char *buf, size_t size, const struct result *a,
			const struct result *b, double target)
{
	double ratio;

	if (a->failed || b->failed || b->ops <= 0) {
		snprintf(buf, size, "n/a");
		return;
	}
	ratio = a->ops / b->ops;
	snprintf(buf, size, "%.2f %s", ratio, ratio >= target ? "met" : "MISSED");
}

int main(int argc, char **argv)
{
	static struct result r[NR_WL][2][NR_MODES];
	static struct result rounds[NR_MODES][MAX_ROUNDS];
	double dur = 1, spread;
	struct utsname uts;
	int wl, q, m, k, opt, nrounds = 5, failed = 0;

	while ((opt = getopt(argc, argv, "d:hn:")) != -1) {
		switch (opt) {
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
	signal(SIGPIPE, SIG_IGN);
	uname(&uts);
	printf("splice_bench: kernel %s %s, %.1f s per cell, median of %d rounds\n",
	       uts.release, uts.machine, dur, nrounds);
	printf("%-20s %4s  %-10s %12s %7s %10s %4s\n", "workload", "QD", "mode",
	       "ops/s", "spread", "MB/s", "wrk");
	for (wl = 0; wl < NR_WL; wl++) {
		for (q = 0; q < 2; q++) {
			for (k = 0; k < nrounds; k++)
				for (m = 0; m < NR_MODES; m++) {
					int mode = (m + k) % NR_MODES;

					cell_in_child(wl, qds[q], mode, dur,
						      &rounds[mode][k]);
				}
			for (m = 0; m < NR_MODES; m++) {
				struct result *res = &r[wl][q][m];

				spread = 0;
				pick_median(rounds[m], nrounds, res, &spread);
				if (res->failed) {
					failed = 1;
					printf("%-20s %4d  %-10s FAILED: %s\n",
					       wl_name[wl], qds[q], mode_name[m],
					       res->msg);
					continue;
				}
				printf("%-20s %4d  %-10s %12.0f %6.0f%% %10.1f %4d\n",
				       wl_name[wl], qds[q], mode_name[m],
				       res->ops, 100 * spread, res->mbs,
				       res->workers);
			}
			fflush(stdout);
		}
	}
	printf("\n%-20s %-24s %-28s %s\n", "ratios (medians)",
	       "inline/async QD1 (>=3)", "inline/splice(2) QD32 (>=1)",
	       "inline reg/splice(2) QD32");
	for (wl = 0; wl < NR_WL; wl++) {
		char a[32], b[32], c[32];

		print_ratio(a, sizeof(a), &r[wl][0][M_INLINE], &r[wl][0][M_ASYNC], 3);
		print_ratio(b, sizeof(b), &r[wl][1][M_INLINE], &r[wl][1][M_SYSCALL], 1);
		print_ratio(c, sizeof(c), &r[wl][1][M_INLINE_REG],
			    &r[wl][1][M_SYSCALL], 1);
		printf("%-20s %-24s %-28s %s\n", wl_name[wl], a, b, c);
	}
	return failed;
}
