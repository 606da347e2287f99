// SPDX-License-Identifier: GPL-2.0
/*
 * splice_bench: IORING_OP_SPLICE inline vs. io-wq vs. splice(2) and
 * sendfile(2).
 *
 * Prints figures, it is not a test: exit 0 unless something failed.
 *
 * Workloads (each operation is checked for a full-length result; -w
 * selects some of them by the key in brackets):
 *   pipe->pipe 4K / 64K  [pipe4k, pipe64k] one splice of 4 KiB / 64 KiB
 *                        between two pipes.  A pair of pipes X, Y holds one
 *                        chunk, which is spliced X->Y, then Y->X, and so on:
 *                        nothing has to be refilled or drained, so only the
 *                        splice itself is measured.
 *   file->pipe->tcp      [tmpfs] a linked pair: 64 KiB from a page-cache-hot
 *                        file (tmpfs, written just before) into an empty
 *                        pipe, then those 64 KiB from the pipe to a TCP
 *                        loopback socket; a reader thread drains the peers.
 *                        One operation = the pair (the sendfile pattern).
 *                        splice(2) mode: the same two splices as syscalls.
 *   sendfile ext4 1M / 16K
 *                        [ext4-1m, ext4-16k] a web server's sendfile: a
 *                        whole file of 1 MiB / 16 KiB on ext4 to a TCP
 *                        loopback socket, a reader thread draining the
 *                        peers (epoll).  One operation = the whole file
 *                        delivered to the socket.  The measured time starts
 *                        and ends with no request in flight and every byte
 *                        read (cell_quiesced()), so a row's count holds all
 *                        of its reads too.  The files are made in the -D
 *                        directory (default /mnt/ext4) before the first
 *                        cell: written, fsync()ed, read once a tick later
 *                        (no access time due), so that they
 *                        are in the page cache and clean (the header says
 *                        how many of their pages mincore() found there).
 *                        The ring sends the file as linked pairs file->pipe,
 *                        pipe->socket, each as large as the pipe: the pipes
 *                        are grown with F_SETPIPE_SZ to 1 MiB (or the most
 *                        that is allowed), so 1 MiB is one pair; with a
 *                        smaller pipe the pairs loop over the file.
 *                        "sendfile sqe" sends each file with one
 *                        IORING_OP_SPLICE from the file to the socket
 *                        (the series' sendfile, no pipe; again from
 *                        where it stopped if it comes back short).
 *                        "sendfile(2)" is sendfile(2) in a loop,
 *                        "splice(2)" the ring's splices as syscalls.  When
 *                        the directory is not on ext4 (not mounted), these
 *                        two are skipped and the table says why.
 *
 * Queue depth: QD1 is one pipe pair (one chain): submit one operation,
 * wait for it, submit the next.  QD32 is 32 independent pipe pairs (32
 * chains, each with its own pipe and socket), one operation in flight on
 * each: whenever one completes, the next one on that pair is queued, and
 * everything queued is submitted with the next io_uring_enter(2), which
 * waits for at least one completion.  So 32 splices that do not depend on
 * each other are really in flight at once.  splice(2) and sendfile(2) have
 * no queue: at QD32 they walk the same 32 pairs round robin in a loop.
 *
 * Modes: "inline" is the ring as it is (with the inline splice series the
 * eligible splices complete in io_uring_enter(2)); "inline reg" the same
 * with both ends registered (no fget()/fput() per splice; not for the
 * ext4 workloads); "async" sets IOSQE_ASYNC on every SQE, which forces
 * io-wq as 6.12 always did; "splice(2)" is the syscall in a loop, and
 * "sendfile(2)" (ext4 workloads only) sendfile(2) in a loop.
 *
 * Each cell runs in a fresh child process with a fresh ring: a warm-up of
 * a tenth of the duration (at least 0.1 s; io-wq workers get created), then
 * -d seconds measured.  The modes of one workload and depth take turns, -n
 * rounds of them (each round starting with the next mode), so that a slow
 * spell of the machine does not fall on one mode only; the table gives the
 * median round's ops/s and MB/s, and the spread (max - min) / median.
 * "wrk" is the most io-wq workers (threads iou-wrk-*) a child had at the
 * end of its cell.  All workloads: 44 cells, 5 rounds of 1.1 s each, about
 * 4 minutes; the ext4 ones are 20 of them, about 2 minutes.
 *
 * Ratios of the medians: inline/async ops/s at QD1 (target >= 3), inline
 * ops/s / splice(2) ops/s at QD32 (target >= 1), and the same for inline
 * reg, per workload.  For the ext4 workloads: inline/async at QD1 (target
 * >= 3), inline / sendfile(2) at QD32 (target >= 1, and no io-wq worker in
 * the inline cell) and inline / splice(2) at QD32; and, last, one line
 * per file size: "ring sendfile 16K QD32: R x sendfile(2), W workers",
 * the sendfile sqe's ops/s over sendfile(2)'s at QD32 and its workers.
 *
 * -i (the default when IOU_ICOUNT=1, run_selftests.sh --icount): the
 * guest's clock counts instructions (QEMU -icount shift=0,sleep=off), so
 * each cell runs once (-n 1 unless given: the count repeats) and the table
 * gives ops per guest second and guest instructions per op instead of the
 * spread.  The workload "ring floor" [nop] is then added: IORING_OP_NOP
 * through the same ring loop at QD1 and QD32 ("NOP") and getppid() in a
 * loop ("getppid()"), the ring's own cost and a syscall's.  With them the
 * ratios table of the pipe workloads gives, next to each inline/splice(2)
 * ratio, the ideal one: what the ring would reach if it added only a NOP's
 * cost to the work splice(2) does after its syscall entry,
 * splice(2) / (splice(2) - getppid() + NOP) in instructions per op at the
 * same depth.  Rows that use io-wq (async) or wait for another thread
 * (the TCP reader) look better than on hardware there: a vCPU's idle time
 * is free, a hand-off costs only its instructions.  -m keeps some modes
 * only (run_perf_gate.sh leaves out async).
 */

#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <mntent.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/statfs.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_helpers.h"
#include "iou_helpers.h"
#include "../kselftest.h"	/* ARRAY_SIZE(), __printf() */

#define NO_OFF		((__u64)-1)
#define MAX_QD		32
#define FPS_CHUNK	65536
#define FILE_CHUNKS	(4 * MAX_QD)	/* 8 MiB file */
#define TMPFS_MAGIC_	0x01021994
#define EXT4_MAGIC_	0xef53		/* ext2, ext3 and ext4 */
#define SF_PIPE_MAX	(1024 * 1024)	/* the ext4 workloads' pipe size */
#define SF_FILE_MAX	(1024 * 1024)	/* their largest file */

enum workload { W_PP4K, W_PP64K, W_FPS, W_SF1M, W_SF16K, W_NOP, NR_WL };
enum mode {
	M_INLINE, M_INLINE_REG, M_ASYNC, M_SENDFILE, M_SYSCALL, M_NOP,
	M_GETPPID, M_SF_SQE, NR_MODES
};

static const enum mode splice_modes[] = {
	M_INLINE, M_INLINE_REG, M_ASYNC, M_SYSCALL,
};

static const enum mode sendfile_modes[] = {
	M_SF_SQE, M_INLINE, M_ASYNC, M_SENDFILE, M_SYSCALL,
};

static const enum mode floor_modes[] = { M_NOP, M_GETPPID };

static const struct {
	const char *name;	/* in the tables */
	const char *key;	/* for -w */
	unsigned int bytes;	/* per operation */
	bool ext4;		/* a file on ext4 to a socket */
	const enum mode *modes;	/* in the order of the table */
	int nr_modes;
} wls[] = {
	[W_PP4K] = { "pipe->pipe 4K", "pipe4k", 4096, false,
		     splice_modes, ARRAY_SIZE(splice_modes) },
	[W_PP64K] = { "pipe->pipe 64K", "pipe64k", 65536, false,
		      splice_modes, ARRAY_SIZE(splice_modes) },
	[W_FPS] = { "file->pipe->tcp", "tmpfs", FPS_CHUNK, false,
		    splice_modes, ARRAY_SIZE(splice_modes) },
	[W_SF1M] = { "sendfile ext4 1M", "ext4-1m", SF_FILE_MAX, true,
		     sendfile_modes, ARRAY_SIZE(sendfile_modes) },
	[W_SF16K] = { "sendfile ext4 16K", "ext4-16k", 16384, true,
		      sendfile_modes, ARRAY_SIZE(sendfile_modes) },
	[W_NOP] = { "ring floor", "nop", 0, false,
		    floor_modes, ARRAY_SIZE(floor_modes) },
};

static const char * const mode_name[] = {
	[M_INLINE] = "inline", [M_INLINE_REG] = "inline reg",
	[M_ASYNC] = "async", [M_SENDFILE] = "sendfile(2)",
	[M_SYSCALL] = "splice(2)", [M_NOP] = "NOP", [M_GETPPID] = "getppid()",
	[M_SF_SQE] = "sendfile sqe",
};

/* -m keys, by mode */
static const char * const mode_key[] = {
	[M_INLINE] = "inline", [M_INLINE_REG] = "inline-reg",
	[M_ASYNC] = "async", [M_SENDFILE] = "sendfile",
	[M_SYSCALL] = "splice", [M_NOP] = "nop", [M_GETPPID] = "getppid",
	[M_SF_SQE] = "sf-sqe",
};

/* the guest's clock counts instructions (-i, IOU_ICOUNT=1) */
static bool icount;

static const int qds[] = { 1, 32 };

/* the ring uses registered files for both ends (set in the cell's child) */
static bool use_fixed;

/* The ext4 workloads' files, made by the parent; -1 without one. */
static int sf_file[NR_WL] = { [0 ... NR_WL - 1] = -1 };
/* their pipes' size: the most F_SETPIPE_SZ allowed the parent, up to 1 MiB */
static int sf_pipe_size;

#define MAX_ROUNDS	64

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
	__u64 ops, bytes, ops0, bytes0;
	__u64 tail_bytes;	/* of operations completed after the end */
	bool measuring;
	/* the sendfile cells' reader: their measured time starts and ends quiesced */
	struct drainer *quiesce;
	struct result *res;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void cell_begin(struct cell *c, double t)
{
	c->measuring = true;
	bench_mark_begin();
	c->ops0 = c->ops;
	c->bytes0 = c->bytes;
	c->t_start = t;
	c->t_end = t + c->dur;
}

/* An operation that completed after cell_tick() said stop: still the cell's */
static void cell_count(struct cell *c, __u64 bytes)
{
	c->ops++;
	c->bytes += bytes;
}

static void cell_end(struct cell *c, double t)
{
	bench_mark_end();
	c->res->ops = (c->ops - c->ops0) / (t - c->t_start);
	c->res->mbs = (c->bytes - c->bytes0) / (t - c->t_start) / 1e6;
}

/*
 * Account one operation; false once the warm-up (in a quiesced cell) or
 * the measured time is over.
 */
static bool cell_tick(struct cell *c, __u64 bytes)
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
		if (c->quiesce)		/* cell_quiesced() begins */
			return false;
		cell_begin(c, t);
		return true;
	}
	if (t < c->t_end)
		return true;
	if (!c->quiesce)
		cell_end(c, t);
	return false;
}

static __printf(2, 3)
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
	__u64 off;		/* next file offset */
	int awaiting;		/* CQEs still to come */
	int in_pipe;		/* bytes put into the pipe, not yet sent */
};

/*
 * A reader thread: reads whatever arrives on @fds until told to stop, and
 * counts it.  @stop is 1 to stop at once, 2 to stop once @want bytes came
 * (or after 10 s).
 */
struct drainer {
	pthread_t thr;
	int fds[MAX_QD];
	int n;
	int stop;		/* atomic */
	__u64 want;		/* set before @stop */
	__u64 got;
};

/*
 * epoll, not poll(): poll() asks each of the 32 sockets at every wakeup
 * whatever arrived (tcp_poll() alone ran 289 instructions per op in a
 * profile of sendfile(2)'s 16K QD32 cell), so a row's count depended on
 * how many sockets had data at each wakeup.
 */
static void *drain_fn(void *arg)
{
	struct drainer *d = arg;
	struct epoll_event ev[MAX_QD];
	static char buf[1 << 20];
	double deadline = 0;
	int i, nev, stop, ep;
	ssize_t n;

	ep = epoll_create1(EPOLL_CLOEXEC);
	if (ep < 0)
		return NULL;
	for (i = 0; i < d->n; i++) {
		ev[0].events = EPOLLIN;
		ev[0].data.fd = d->fds[i];
		if (epoll_ctl(ep, EPOLL_CTL_ADD, d->fds[i], &ev[0]))
			goto out;
	}
	for (;;) {
		stop = __atomic_load_n(&d->stop, __ATOMIC_ACQUIRE);
		if (stop == 1 || (stop == 2 && d->got >= d->want))
			break;
		if (stop == 2 && !deadline)
			deadline = now_s() + 10;
		if (deadline && now_s() > deadline)
			break;
		nev = epoll_wait(ep, ev, MAX_QD, 50);
		for (i = 0; i < nev; i++) {
			n = read(ev[i].data.fd, buf, sizeof(buf));
			if (n > 0)
				__atomic_fetch_add(&d->got, n, __ATOMIC_RELEASE);
		}
	}
out:
	close(ep);
	return NULL;
}

static int drain_start(struct cell *c, struct drainer *d)
{
	if (pthread_create(&d->thr, NULL, drain_fn, d))
		return fail(c, "pthread_create failed");
	return 0;
}

/*
 * The sendfile cells' loops stop at the end of the warm-up and of the
 * measured time and wait for every request in flight (counting those of
 * the measured time in it), then call this: once the reader has every
 * byte sent, the measured time begins (true: run again) or ends (false).
 * So a cell's instructions and time are exactly those of its operations,
 * the reader's copies included: measured from one op's completion to
 * another's, the reader's share depended on how far behind it was when
 * the time ended (a profile of sendfile(2)'s 16K QD32 cell had
 * rep_movs_alternative run 1185 instructions per 16 KiB op, where the
 * reader's copy of 16 KiB takes 2048).
 */
static bool cell_quiesced(struct cell *c)
{
	double deadline = now_s() + 10;

	while (__atomic_load_n(&c->quiesce->got, __ATOMIC_ACQUIRE) <
	       c->bytes + c->tail_bytes) {
		if (now_s() > deadline) {
			fail(c, "the reader got %llu of %llu bytes in 10 s",
			     (unsigned long long)c->quiesce->got,
			     (unsigned long long)(c->bytes + c->tail_bytes));
			return false;
		}
		usleep(100);
	}
	if (c->measuring) {
		cell_end(c, now_s());
		return false;
	}
	cell_begin(c, now_s());
	return true;
}

/*
 * Stop the reader; unless the cell failed, it must have had every byte
 * of the cell's operations (all complete when the loops return).
 */
static void drain_end(struct cell *c, struct drainer *d)
{
	if (c->res->failed) {
		__atomic_store_n(&d->stop, 1, __ATOMIC_RELEASE);
	} else {
		d->want = c->bytes + c->tail_bytes;
		__atomic_store_n(&d->stop, 2, __ATOMIC_RELEASE);
	}
	pthread_join(d->thr, NULL);
	if (!c->res->failed && d->got != d->want)
		fail(c, "the reader got %llu of %llu bytes",
		     (unsigned long long)d->got, (unsigned long long)d->want);
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
		f[i].off = (__u64)i * FPS_CHUNK;
		f[i].awaiting = 0;
		f[i].in_pipe = 0;
	}
	return 0;
}

static void fps_next_off(struct cell *c, struct fps *f)
{
	f->off += (__u64)c->qd * FPS_CHUNK;
	if (f->off >= (__u64)FILE_CHUNKS * FPS_CHUNK)
		f->off %= (__u64)FILE_CHUNKS * FPS_CHUNK;
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
			else
				c->tail_bytes += FPS_CHUNK;
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

/* a file on ext4 -> socket (sendfile) ------------------------------------ */

struct sf {
	int p[2];		/* the pipe */
	int s[2];		/* s[0] written to, s[1] drained */
	unsigned int pipe_size;
	unsigned int pos;	/* bytes of the file put into the pipe so far */
	unsigned int want;	/* the length of the file->pipe splice queued */
	unsigned int in_pipe;	/* bytes put into the pipe, not yet sent */
	int awaiting;		/* CQEs still to come */
	bool short_read;	/* the file->pipe splice gave less than @want */
	bool cancelled;		/* the linked pipe->socket splice was cancelled */
};

static int sf_setup(struct cell *c, struct sf *f, unsigned int size)
{
	int i, ret, sz;

	for (i = 0; i < c->qd; i++) {
		memset(&f[i], 0, sizeof(f[i]));
		if (pipe(f[i].p))
			return fail(c, "pipe: %s", strerror(errno));
		sz = fcntl(f[i].p[1], F_GETPIPE_SZ);
		/* the most the parent found allowed; never shrink the pipe */
		if (sz >= 0 && (unsigned int)sz < size && sf_pipe_size > sz)
			sz = fcntl(f[i].p[1], F_SETPIPE_SZ, sf_pipe_size);
		if (sz < 0)
			sz = fcntl(f[i].p[1], F_GETPIPE_SZ);
		if (sz <= 0)
			return fail(c, "F_GETPIPE_SZ: %s", strerror(errno));
		f[i].pipe_size = sz;
		ret = iou_tcp_pair(&f[i].s[0], &f[i].s[1], 0);
		if (ret)
			return fail(c, "TCP pair: %s", strerror(-ret));
	}
	return 0;
}

/* The next pipe->socket splice of set @i: what the pipe holds. */
static void sf_queue_send(struct iou_ring *ring, struct sf *f, int i,
			  __u8 flags)
{
	struct io_uring_sqe *sqe = iou_get_sqe(ring);

	iou_prep_splice(sqe, f->s[0], NO_OFF, f->p[0], NO_OFF, f->in_pipe, 0);
	sqe->flags = flags;
	sqe->user_data = i * 2 + 1;
	f->awaiting = 1;
	f->short_read = false;
	f->cancelled = false;
}

/*
 * The next chunk of set @i's file: file->pipe linked to pipe->socket, as
 * much as the (empty) pipe holds.  user_data: set index * 2 + 0
 * (file->pipe) or + 1 (pipe->socket).
 */
static void sf_queue_pair(struct iou_ring *ring, struct sf *f, int i,
			  int file, unsigned int size, __u8 flags)
{
	unsigned int len = size - f->pos;
	struct io_uring_sqe *sqe;

	if (len > f->pipe_size)
		len = f->pipe_size;
	sqe = iou_get_sqe(ring);
	iou_prep_splice(sqe, f->p[1], NO_OFF, file, f->pos, len, 0);
	sqe->flags = flags | IOSQE_IO_LINK;
	sqe->user_data = i * 2;
	sqe = iou_get_sqe(ring);
	iou_prep_splice(sqe, f->s[0], NO_OFF, f->p[0], NO_OFF, len, 0);
	sqe->flags = flags;
	sqe->user_data = i * 2 + 1;
	f->want = len;
	f->awaiting = 2;
	f->short_read = false;
	f->cancelled = false;
}

/* One CQE of set @f: 0, or -1 when it is not what a chain may give. */
static int sf_complete(struct cell *c, struct sf *f, const struct iou_cqe *cqe)
{
	f->awaiting--;
	if (!(cqe->user_data & 1)) {
		if (cqe->res <= 0 || (unsigned int)cqe->res > f->want)
			return fail(c, "file->pipe gave %d of %u", cqe->res,
				    f->want);
		/* short: the link breaks, the send is cancelled */
		f->short_read = (unsigned int)cqe->res < f->want;
		f->pos += cqe->res;
		f->in_pipe += cqe->res;
	} else if (cqe->res == -ECANCELED) {
		f->cancelled = true;
	} else if (cqe->res <= 0 || (unsigned int)cqe->res > f->in_pipe) {
		return fail(c, "pipe->socket gave %d of %u", cqe->res,
			    f->in_pipe);
	} else {
		f->in_pipe -= cqe->res;
	}
	if (!f->awaiting && f->cancelled && !f->short_read)
		return fail(c, "pipe->socket cancelled after a full file->pipe");
	return 0;
}

static int sf_ring(struct cell *c, struct sf *fs, int file, unsigned int size)
{
	__u8 flags = c->mode == M_ASYNC ? IOSQE_ASYNC : 0;
	struct iou_ring ring;
	struct iou_cqe cqe;
	int i, ret, busy;
	bool more;

	ret = iou_setup(&ring, 4 * MAX_QD, 0);
	if (ret)
		return fail(c, "io_uring_setup: %s", strerror(-ret));
again:
	more = true;
	for (busy = 0; busy < c->qd; busy++)
		sf_queue_pair(&ring, &fs[busy], busy, file, size, flags);
	while (busy) {
		ret = iou_submit_and_wait(&ring, 1);
		if (ret < 0 && ret != -EINTR)
			return fail(c, "io_uring_enter: %s", strerror(-ret));
		while (!iou_peek_cqe(&ring, &cqe)) {
			struct sf *f = &fs[cqe.user_data / 2];

			i = cqe.user_data / 2;
			if (sf_complete(c, f, &cqe))
				return -1;
			if (f->awaiting)
				continue;
			if (f->in_pipe) {
				/* a short send or a broken link: the rest */
				sf_queue_send(&ring, f, i, flags);
				continue;
			}
			if (f->pos < size) {
				sf_queue_pair(&ring, f, i, file, size, flags);
				continue;
			}
			/* the whole file is in the socket */
			busy--;
			f->pos = 0;
			if (!more) {
				cell_count(c, size);
				continue;
			}
			more = cell_tick(c, size);
			if (more) {
				sf_queue_pair(&ring, f, i, file, size, flags);
				busy++;
			}
		}
	}
	if (cell_quiesced(c))
		goto again;
	iou_exit(&ring);
	return 0;
}

/*
 * The ring's sendfile: one IORING_OP_SPLICE from the file to the socket
 * per file (again from where it stopped if it comes back short), no pipe.
 * user_data: the set's index.
 */
static void sf_queue_sqe(struct iou_ring *ring, struct sf *f, int i, int file,
			 unsigned int size)
{
	struct io_uring_sqe *sqe = iou_get_sqe(ring);

	iou_prep_splice(sqe, f->s[0], NO_OFF, file, f->pos, size - f->pos, 0);
	sqe->user_data = i;
}

static int sf_sqe(struct cell *c, struct sf *fs, int file, unsigned int size)
{
	struct iou_ring ring;
	struct iou_cqe cqe;
	int i, ret, busy;
	bool more;

	ret = iou_setup(&ring, 2 * MAX_QD, 0);
	if (ret)
		return fail(c, "io_uring_setup: %s", strerror(-ret));
again:
	more = true;
	for (busy = 0; busy < c->qd; busy++)
		sf_queue_sqe(&ring, &fs[busy], busy, file, size);
	while (busy) {
		ret = iou_submit_and_wait(&ring, 1);
		if (ret < 0 && ret != -EINTR)
			return fail(c, "io_uring_enter: %s", strerror(-ret));
		while (!iou_peek_cqe(&ring, &cqe)) {
			struct sf *f = &fs[cqe.user_data];

			i = cqe.user_data;
			if (cqe.res <= 0 || (unsigned int)cqe.res > size - f->pos)
				return fail(c, "file->socket gave %d of %u",
					    cqe.res, size - f->pos);
			f->pos += cqe.res;
			if (f->pos < size) {
				sf_queue_sqe(&ring, f, i, file, size);
				continue;
			}
			busy--;
			f->pos = 0;
			if (!more) {
				cell_count(c, size);
				continue;
			}
			more = cell_tick(c, size);
			if (more) {
				sf_queue_sqe(&ring, f, i, file, size);
				busy++;
			}
		}
	}
	if (cell_quiesced(c))
		goto again;
	iou_exit(&ring);
	return 0;
}

static int sf_sendfile(struct cell *c, struct sf *fs, int file,
		       unsigned int size)
{
	ssize_t n;
	off_t off;
	int i;

	do {
		for (i = 0; ; i = (i + 1) % c->qd) {
			for (off = 0; off < size; ) {
				n = sendfile(fs[i].s[0], file, &off, size - off);
				if (n <= 0)
					return fail(c, "sendfile(2) gave %zd: %s",
						    n, strerror(errno));
			}
			if (!cell_tick(c, size))
				break;
		}
	} while (cell_quiesced(c));
	return 0;
}

/* splice(2) the @n bytes in @f's pipe to its socket. */
static int sf_send_pipe(struct cell *c, struct sf *f, ssize_t n)
{
	ssize_t m;

	for (; n; n -= m) {
		m = splice(f->p[0], NULL, f->s[0], NULL, n, 0);
		if (m <= 0)
			return fail(c, "splice(2) pipe->socket gave %zd: %s",
				    m, strerror(errno));
	}
	return 0;
}

static int sf_splice(struct cell *c, struct sf *fs, int file,
		     unsigned int size)
{
	loff_t off;
	ssize_t n;
	int i;

	do {
		for (i = 0; ; i = (i + 1) % c->qd) {
			struct sf *f = &fs[i];

			for (off = 0; off < size; ) {
				n = size - off;
				if (n > f->pipe_size)
					n = f->pipe_size;
				n = splice(file, &off, f->p[1], NULL, n, 0);
				if (n <= 0)
					return fail(c, "splice(2) file->pipe gave %zd: %s",
						    n, strerror(errno));
				if (sf_send_pipe(c, f, n))
					return -1;
			}
			if (!cell_tick(c, size))
				break;
		}
	} while (cell_quiesced(c));
	return 0;
}

/*
 * The workload's file for this child: a file description of its own (the
 * parent's file is unlinked, /proc/self/fd reopens it), or the parent's.
 */
static int sf_open(struct cell *c)
{
	char path[64];
	int fd;

	if (sf_file[c->wl] < 0)
		return fail(c, "no file");
	snprintf(path, sizeof(path), "/proc/self/fd/%d", sf_file[c->wl]);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	return fd >= 0 ? fd : sf_file[c->wl];
}

static void sf_cell(struct cell *c)
{
	unsigned int size = wls[c->wl].bytes;
	struct drainer d = { .n = c->qd };
	struct sf fs[MAX_QD];
	int i, file = sf_open(c);

	if (file < 0 || sf_setup(c, fs, size))
		return;
	for (i = 0; i < c->qd; i++)
		d.fds[i] = fs[i].s[1];
	if (drain_start(c, &d))
		return;
	c->quiesce = &d;
	if (c->mode == M_SENDFILE)
		sf_sendfile(c, fs, file, size);
	else if (c->mode == M_SF_SQE)
		sf_sqe(c, fs, file, size);
	else if (c->mode == M_SYSCALL)
		sf_splice(c, fs, file, size);
	else
		sf_ring(c, fs, file, size);
	c->res->workers = iou_count_io_workers();
	drain_end(c, &d);
}

/* the ring's floor: NOPs and getppid() ------------------------------------ */

/* NOPs through the same loop as pp_ring(): QD of them in flight. */
static int nop_ring(struct cell *c)
{
	struct iou_ring ring;
	struct iou_cqe cqe;
	int i, ret, inflight = 0;
	bool more = true;

	ret = iou_setup(&ring, 2 * MAX_QD, 0);
	if (ret)
		return fail(c, "io_uring_setup: %s", strerror(-ret));
	for (i = 0; i < c->qd; i++, inflight++)
		iou_prep_nop(iou_get_sqe(&ring));
	while (inflight) {
		ret = iou_submit_and_wait(&ring, 1);
		if (ret < 0 && ret != -EINTR)
			return fail(c, "io_uring_enter: %s", strerror(-ret));
		while (!iou_peek_cqe(&ring, &cqe)) {
			inflight--;
			if (cqe.res)
				return fail(c, "NOP gave %d", cqe.res);
			if (more)
				more = cell_tick(c, 0);
			if (more) {
				iou_prep_nop(iou_get_sqe(&ring));
				inflight++;
			}
		}
	}
	iou_exit(&ring);
	return 0;
}

/* getppid() in a loop: a syscall's entry and exit, next to splice(2)'s. */
static int nop_syscall(struct cell *c)
{
	pid_t parent = getppid();

	for (;;) {
		if (getppid() != parent)
			return fail(c, "getppid() changed");
		if (!cell_tick(c, 0))
			return 0;
	}
}

/* one cell, in a child --------------------------------------------------- */

static void run_cell(struct cell *c)
{
	unsigned int chunk = wls[c->wl].bytes;

	if (wls[c->wl].ext4) {
		sf_cell(c);
	} else if (c->wl == W_NOP) {
		if (c->mode == M_NOP)
			nop_ring(c);
		else
			nop_syscall(c);
		c->res->workers = iou_count_io_workers();
	} else if (c->wl == W_FPS) {
		struct fps fs[MAX_QD];
		struct drainer d = { .n = c->qd };
		int i, file = hot_file(c);

		if (file < 0 || fps_setup(c, fs))
			return;
		for (i = 0; i < c->qd; i++)
			d.fds[i] = fs[i].s[1];
		if (drain_start(c, &d))
			return;
		if (c->mode == M_SYSCALL)
			fps_syscall(c, fs, file);
		else
			fps_ring(c, fs, file);
		c->res->workers = iou_count_io_workers();
		drain_end(c, &d);
	} else {
		struct pp pp[MAX_QD];

		if (pp_setup(c, pp, chunk))
			return;
		if (c->mode == M_SYSCALL)
			pp_syscall(c, pp, chunk);
		else
			pp_ring(c, pp, chunk);
		c->res->workers = iou_count_io_workers();
	}
}

static void cell_in_child(enum workload wl, int qd, enum mode mode,
			  double dur, struct result *out)
{
	struct result res;
	struct cell c;
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

/* the ext4 workloads' files, in the parent -------------------------------- */

/*
 * The file system type and device of the mount that holds @path (a real
 * path), from /proc/self/mounts; false if it cannot be told.
 */
static bool mount_of(const char *path, char *type, size_t tsize, char *dev,
		     size_t dsize)
{
	size_t len, best = 0;
	struct mntent *m;
	bool found = false;
	FILE *f;

	f = setmntent("/proc/self/mounts", "r");
	if (!f)
		return false;
	while ((m = getmntent(f))) {
		len = strlen(m->mnt_dir);
		if (strcmp(m->mnt_dir, "/") &&
		    (strncmp(path, m->mnt_dir, len) ||
		     (path[len] && path[len] != '/')))
			continue;
		/* the longest match; of equal ones, the last (on top) */
		if (len < best)
			continue;
		best = len;
		snprintf(type, tsize, "%s", m->mnt_type);
		snprintf(dev, dsize, "%s", m->mnt_fsname);
		found = true;
	}
	endmntent(f);
	return found;
}

/*
 * A file of @size bytes in @dir, unlinked, written, fsync()ed and read
 * once; *@cached gets how many of its pages mincore() then finds in the
 * page cache (-1: unknown).  Its fd, or -1 with the reason in @why.
 */
static int sf_make_file(const char *dir, unsigned int size, long *cached,
			char *why, size_t wsize)
{
	static char buf[SF_FILE_MAX];
	unsigned char vec[SF_FILE_MAX / 4096];
	long i, page = sysconf(_SC_PAGESIZE);
	char path[PATH_MAX];
	unsigned int done;
	ssize_t n;
	void *map;
	int fd;

	if (snprintf(path, sizeof(path), "%s/splice_bench.XXXXXX",
		     dir) >= (int)sizeof(path)) {
		snprintf(why, wsize, "path too long");
		return -1;
	}
	fd = mkstemp(path);
	if (fd < 0) {
		snprintf(why, wsize, "cannot create a file: %s",
			 strerror(errno));
		return -1;
	}
	unlink(path);
	memset(buf, 0x5a, size);
	for (done = 0; done < size; done += n) {
		n = pwrite(fd, buf + done, size - done, done);
		if (n <= 0)
			goto io_error;
	}
	/*
	 * Read it a tick after the write (and the unlink, which changed the
	 * ctime): an access time equal to the mtime or ctime is due again
	 * under relatime, and the first cell to read the file would then
	 * update it in io-wq (the nowait read refuses a due access time).
	 */
	if (fsync(fd) || usleep(20 * 1000))
		goto io_error;
	for (done = 0; done < size; done += n) {
		n = pread(fd, buf + done, size - done, done);
		if (n <= 0)
			goto io_error;
	}
	*cached = -1;
	map = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
	if (map != MAP_FAILED) {
		if (!mincore(map, size, vec))
			for (*cached = 0, i = 0; i < (size + page - 1) / page; i++)
				*cached += vec[i] & 1;
		munmap(map, size);
	}
	return fd;

io_error:
	snprintf(why, wsize, "writing or reading the file: %s",
		 n < 0 ? strerror(errno) : "end of file");
	close(fd);
	return -1;
}

/*
 * The files of the ext4 workloads in @mask, in @dir, which must be on
 * ext4.  0 and what they are in @msg, or -1 and why they are skipped.
 */
static int sf_prepare(const char *dir, unsigned int mask, char *msg,
		      size_t size)
{
	char real[PATH_MAX], type[32], dev[128], why[256];
	struct statfs sfs;
	int wl, p[2], sz;
	size_t len;
	long cached;

	if (!realpath(dir, real) || statfs(real, &sfs)) {
		snprintf(msg, size, "%s: %s", dir, strerror(errno));
		return -1;
	}
	if (!mount_of(real, type, sizeof(type), dev, sizeof(dev))) {
		snprintf(type, sizeof(type), "%s",
			 sfs.f_type == EXT4_MAGIC_ ? "ext4" : "?");
		snprintf(dev, sizeof(dev), "?");
	}
	if (sfs.f_type != EXT4_MAGIC_ || strcmp(type, "ext4")) {
		snprintf(msg, size, "%s is on %s (%s, magic %#lx), not ext4",
			 dir, dev, type, (unsigned long)sfs.f_type);
		return -1;
	}

	/* the largest pipe allowed, up to 1 MiB */
	if (pipe(p)) {
		snprintf(msg, size, "pipe: %s", strerror(errno));
		return -1;
	}
	for (sz = SF_PIPE_MAX; sz > fcntl(p[1], F_GETPIPE_SZ); sz /= 2)
		if (fcntl(p[1], F_SETPIPE_SZ, sz) >= 0)
			break;
	sf_pipe_size = fcntl(p[1], F_GETPIPE_SZ);
	close(p[0]);
	close(p[1]);

	len = snprintf(msg, size, "%s on %s, pipes of %d KiB", dir, dev,
		       sf_pipe_size / 1024);
	for (wl = 0; wl < NR_WL; wl++) {
		unsigned int bytes = wls[wl].bytes;

		if (!wls[wl].ext4 || !(mask & 1u << wl))
			continue;
		sf_file[wl] = sf_make_file(real, bytes, &cached, why,
					   sizeof(why));
		if (sf_file[wl] < 0) {
			snprintf(msg, size, "%s: %s", dir, why);
			return -1;
		}
		if (len < size)
			len += snprintf(msg + len, size - len,
					"; %u KiB file: %ld of %ld pages cached",
					bytes / 1024, cached,
					(bytes + sysconf(_SC_PAGESIZE) - 1) /
					sysconf(_SC_PAGESIZE));
	}
	return 0;
}

static void usage(const char *prog, FILE *f)
{
	int wl;

	fprintf(f,
		"Usage: %s [-i] [-d SECONDS] [-n ROUNDS] [-w WORKLOAD,...]\n"
		"       [-m MODE,...] [-D DIR] [-h]\n"
		"IORING_OP_SPLICE inline (fds, registered files) vs. IOSQE_ASYNC\n"
		"(io-wq) vs. splice(2): pipe->pipe 4K and 64K, file->pipe->tcp\n"
		"64K; the one-sqe sendfile vs. inline pairs vs. IOSQE_ASYNC vs.\n"
		"sendfile(2) vs. splice(2): a 1 MiB and a 16 KiB file on ext4 to\n"
		"TCP; at QD 1 and 32: 44 cells.\n"
		"  -i          the guest's clock counts instructions (QEMU -icount\n"
		"              shift=0,sleep=off; default when IOU_ICOUNT=1): one\n"
		"              round, guest instructions per op, the ring floor\n"
		"              rows (NOP, getppid()) and the ideal ratios\n"
		"  -d SECONDS  measured time per cell and round (default 0.3, 1\n"
		"              guest second with -i; each adds a tenth, at least\n"
		"              0.1 s, for warm-up)\n"
		"  -n ROUNDS   rounds of each cell, the median is shown (default\n"
		"              15, 1 with -i; at most %d); a round runs each\n"
		"              mode's cell once, the sendfile sqe / sendfile(2)\n"
		"              line is the median of the rounds' ratios\n"
		"  -w LIST     only these workloads (default all, and nop with -i):\n"
		"              ext4 (both ext4 ones), all, or of",
		prog, MAX_ROUNDS);
	for (wl = 0; wl < NR_WL; wl++)
		fprintf(f, " %s%s", wls[wl].key, wl < NR_WL - 1 ? "," : "\n");
	fputs("  -m LIST     only these modes (default all) of", f);
	for (wl = 0; wl < NR_MODES; wl++)
		fprintf(f, " %s%s", mode_key[wl], wl < NR_MODES - 1 ? "," : "\n");
	fprintf(f,
		"  -D DIR      the ext4 workloads' directory, on ext4 (default\n"
		"              /mnt/ext4; elsewhere they are skipped)\n"
		"  -h          this text\n");
}

/* The modes named in @list (comma-separated -m keys), or 0. */
static unsigned int parse_modes(char *list)
{
	unsigned int mask = 0;
	char *key, *save;
	int m;

	for (key = strtok_r(list, ",", &save); key;
	     key = strtok_r(NULL, ",", &save)) {
		for (m = 0; m < NR_MODES; m++)
			if (!strcasecmp(key, mode_key[m]))
				break;
		if (m == NR_MODES)
			return 0;
		mask |= 1u << m;
	}
	return mask;
}

/* The workloads named in @list (comma-separated -w keys), or 0. */
static unsigned int parse_workloads(char *list)
{
	unsigned int mask = 0;
	char *key, *save;
	bool known;
	int wl;

	for (key = strtok_r(list, ",", &save); key;
	     key = strtok_r(NULL, ",", &save)) {
		known = false;
		for (wl = 0; wl < NR_WL; wl++) {
			if (strcasecmp(key, "all") &&
			    strcasecmp(key, wls[wl].key) &&
			    (strcasecmp(key, "ext4") || !wls[wl].ext4))
				continue;
			mask |= 1u << wl;
			known = true;
		}
		if (!known)
			return 0;
	}
	return mask;
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

/*
 * @a's ops/s over @b's, "met" if at least @target (0: no target) and,
 * with @idle, if @a ended with no io-wq worker.
 */
static void print_ratio(char *buf, size_t size, const struct result *a,
			const struct result *b, double target, bool idle)
{
	double ratio;
	int len;

	if (a->failed || b->failed || a->ops <= 0 || b->ops <= 0) {
		snprintf(buf, size, "n/a");
		return;
	}
	ratio = a->ops / b->ops;
	len = snprintf(buf, size, "%.2f", ratio);
	if (target > 0)
		len += snprintf(buf + len, size - len, " %s",
				ratio >= target && (!idle || !a->workers) ?
				"met" : "MISSED");
	if (idle && a->workers)
		snprintf(buf + len, size - len, " (%d wrk)", a->workers);
}

/*
 * With -i, the ratio inline/splice(2) the ring would reach if it added only
 * a NOP's cost to the work splice(2) does after its syscall entry, from
 * row @r of one depth: splice(2) / (splice(2) - getppid() + NOP) in
 * instructions per op, with the floor rows @fl of the same depth.
 */
static void print_ideal(char *buf, size_t size, const struct result *r,
			const struct result *fl)
{
	double sys, nop, ppid;

	if (r[M_SYSCALL].failed || fl[M_NOP].failed || fl[M_GETPPID].failed ||
	    r[M_SYSCALL].ops <= 0 || fl[M_NOP].ops <= 0 ||
	    fl[M_GETPPID].ops <= 0) {
		snprintf(buf, size, "n/a");
		return;
	}
	sys = bench_insn_per_op(r[M_SYSCALL].ops);
	nop = bench_insn_per_op(fl[M_NOP].ops);
	ppid = bench_insn_per_op(fl[M_GETPPID].ops);
	snprintf(buf, size, "%.2f", sys / (sys - ppid + nop));
}

/* every round's result of every cell, for the paired ratios */
static struct result all_rounds[NR_WL][2][NR_MODES][MAX_ROUNDS];

/*
 * The median over the @n rounds of workload @wl at depth index @q of
 * @a's ops/s over @b's in the same round, 0 if a round failed.  A round
 * runs its cells one after another, so each ratio compares cells a
 * second or two apart: on wall clock TCG's speed changed by up to 2.7x
 * from one half second to the next (1.85x with one vCPU), more than the
 * cells differ, and a ratio of two medians taken minutes apart took it in.
 */
static double paired_ratio(int wl, int q, int a, int b, int n,
			   double *lower_quartile, double *upper_quartile)
{
	const struct result *ra = all_rounds[wl][q][a];
	const struct result *rb = all_rounds[wl][q][b];
	double ratios[MAX_ROUNDS], spread, median;
	int k;

	for (k = 0; k < n; k++) {
		if (ra[k].failed || rb[k].failed || ra[k].ops <= 0 ||
		    rb[k].ops <= 0)
			return 0;
		ratios[k] = ra[k].ops / rb[k].ops;
	}
	median = bench_median(ratios, n, &spread);	/* sorts them */
	*lower_quartile = ratios[n / 4];
	*upper_quartile = ratios[(3 * n) / 4];
	return median;
}

/* The -n rounds of one workload and depth, then its rows of the table. */
static int run_rows(int wl, int q, int nrounds, double dur,
		    unsigned int modes, struct result *row)
{
	struct result (*rounds)[MAX_ROUNDS] = all_rounds[wl][q];
	int k, m, mode, nm = wls[wl].nr_modes, failed = 0;
	double spread;

	for (k = 0; k < nrounds; k++)
		for (m = 0; m < nm; m++) {
			mode = wls[wl].modes[(m + k) % nm];
			if (modes & 1u << mode)
				cell_in_child(wl, qds[q], mode, dur,
					      &rounds[mode][k]);
		}
	for (m = 0; m < nm; m++) {
		struct result *res;

		mode = wls[wl].modes[m];
		if (!(modes & 1u << mode))
			continue;
		res = &row[mode];
		spread = 0;
		pick_median(rounds[mode], nrounds, res, &spread);
		if (res->failed) {
			failed = 1;
			printf("%-20s %4d  %-11s FAILED: %s\n", wls[wl].name,
			       qds[q], mode_name[mode], res->msg);
			continue;
		}
		/* io-wq or a reader thread: flattered by free idle time */
		if (icount)
			printf("%-20s %4d  %-11s %12.0f %8.0f %10.1f %4d%s\n",
			       wls[wl].name, qds[q], mode_name[mode], res->ops,
			       bench_insn_per_op(res->ops), res->mbs,
			       res->workers, mode == M_ASYNC || wl == W_FPS ||
			       wls[wl].ext4 ? " *" : "");
		else
			printf("%-20s %4d  %-11s %12.0f %6.0f%% %10.1f %4d\n",
			       wls[wl].name, qds[q], mode_name[mode], res->ops,
			       100 * spread, res->mbs, res->workers);
	}
	fflush(stdout);
	return failed;
}

int main(int argc, char **argv)
{
	static struct result r[NR_WL][2][NR_MODES];
	unsigned int mask = 0, modes = (1u << NR_MODES) - 1;
	const char *dir = "/mnt/ext4";
	bool splices = false, sendfiles = false, sf_skipped = false;
	double dur = 0;
	char sf_msg[512];
	int wl, q, opt, nrounds = 0, failed = 0;

	icount = bench_icount_env();
	while ((opt = getopt(argc, argv, "d:D:him:n:w:")) != -1) {
		switch (opt) {
		case 'd':
			dur = atof(optarg);
			if (dur <= 0) {
				usage(argv[0], stderr);
				return 2;
			}
			break;
		case 'D':
			dir = optarg;
			break;
		case 'i':
			icount = true;
			break;
		case 'm':
			modes = parse_modes(optarg);
			if (!modes) {
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
		case 'w':
			mask = parse_workloads(optarg);
			if (!mask) {
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
	if (optind < argc) {
		usage(argv[0], stderr);
		return 2;
	}
	/* the ring floor rows by default only where they are exact */
	if (!mask)
		mask = ((1u << NR_WL) - 1) & ~(icount ? 0 : 1u << W_NOP);
	if (!nrounds)
		nrounds = icount ? 1 : 15;
	/* wall clock: many short rounds, so TCG's swings hit every cell */
	if (!dur)
		dur = icount ? 1 : 0.3;
	for (wl = 0; wl < NR_WL; wl++)
		if (mask & 1u << wl) {
			splices |= !wls[wl].ext4 && wl != W_NOP;
			sendfiles |= wls[wl].ext4;
		}
	signal(SIGPIPE, SIG_IGN);
	if (!bench_print_header("splice_bench", icount, dur, nrounds))
		return 1;
	if (sendfiles) {
		sf_skipped = sf_prepare(dir, mask, sf_msg, sizeof(sf_msg));
		printf("ext4 workloads: %s%s\n", sf_skipped ? "skipped, " : "",
		       sf_msg);
	}
	if (icount)
		printf("%-20s %4s  %-11s %12s %8s %10s %4s\n", "workload", "QD",
		       "mode", "ops/guest-s", "insn/op", "MB/guest-s", "wrk");
	else
		printf("%-20s %4s  %-11s %12s %7s %10s %4s\n", "workload", "QD",
		       "mode", "ops/s", "spread", "MB/s", "wrk");
	for (wl = 0; wl < NR_WL; wl++) {
		if (!(mask & 1u << wl))
			continue;
		if (wls[wl].ext4 && sf_skipped) {
			printf("%-20s skipped: %s\n", wls[wl].name, sf_msg);
			continue;
		}
		for (q = 0; q < 2; q++)
			failed |= run_rows(wl, q, nrounds, dur, modes, r[wl][q]);
	}
	if (icount)
		printf("* uses io-wq or another thread: idle time is free and a\n"
		       "  wake-up costs only its instructions, better than on hardware\n");
	if (splices && icount) {
		printf("\n%-20s %-29s %-29s %-26s %s\n",
		       "ratios (instructions)", "inline/splice(2) QD1 (ideal)",
		       "inline/splice(2) QD32 (ideal)",
		       "inline reg/splice(2) QD32", "inline/async QD1 (io-wq*)");
	} else if (splices) {
		printf("\n%-20s %-24s %-28s %s\n", "ratios (medians)",
		       "inline/async QD1 (>=3)", "inline/splice(2) QD32 (>=1)",
		       "inline reg/splice(2) QD32");
	}
	for (wl = 0; wl < NR_WL; wl++) {
		char a[64], b[64], c[48], d[24], e[24], f[24], g[24];

		if (!(mask & 1u << wl) || wls[wl].ext4 || wl == W_NOP)
			continue;
		if (icount) {
			/* ideal ratios for one splice per op: the pipe rows */
			print_ratio(d, sizeof(d), &r[wl][0][M_INLINE],
				    &r[wl][0][M_SYSCALL], 0, false);
			print_ratio(e, sizeof(e), &r[wl][1][M_INLINE],
				    &r[wl][1][M_SYSCALL], 0, false);
			snprintf(f, sizeof(f), "-");
			snprintf(g, sizeof(g), "-");
			if (wl != W_FPS) {
				print_ideal(f, sizeof(f), r[wl][0], r[W_NOP][0]);
				print_ideal(g, sizeof(g), r[wl][1], r[W_NOP][1]);
			}
			snprintf(a, sizeof(a), "%s (%s)", d, f);
			snprintf(b, sizeof(b), "%s (%s)", e, g);
			print_ratio(c, sizeof(c), &r[wl][1][M_INLINE_REG],
				    &r[wl][1][M_SYSCALL], 0, false);
			print_ratio(d, sizeof(d), &r[wl][0][M_INLINE],
				    &r[wl][0][M_ASYNC], 0, false);
			printf("%-20s %-29s %-29s %-26s %s\n", wls[wl].name, a,
			       b, c, d);
			continue;
		}
		print_ratio(a, sizeof(a), &r[wl][0][M_INLINE],
			    &r[wl][0][M_ASYNC], 3, false);
		print_ratio(b, sizeof(b), &r[wl][1][M_INLINE],
			    &r[wl][1][M_SYSCALL], 1, false);
		print_ratio(c, sizeof(c), &r[wl][1][M_INLINE_REG],
			    &r[wl][1][M_SYSCALL], 1, false);
		printf("%-20s %-24s %-28s %s\n", wls[wl].name, a, b, c);
	}
	if (splices && icount)
		printf("ideal: splice(2) / (splice(2) - getppid() + NOP), in\n"
		       "  instructions per op at the same QD (one splice per op:\n"
		       "  the pipe rows); * as above\n");
	if (sendfiles && !sf_skipped && icount)
		printf("\n%-20s %-24s %-38s %s\n", "ratios (instructions*)",
		       "inline/async QD1",
		       "inline/sendfile(2) QD32 (wrk)",
		       "inline/splice(2) QD32");
	else if (sendfiles && !sf_skipped)
		printf("\n%-20s %-24s %-38s %s\n", "ratios (medians)",
		       "inline/async QD1 (>=3)",
		       "inline/sendfile(2) QD32 (>=1, 0 wrk)",
		       "inline/splice(2) QD32");
	for (wl = 0; wl < NR_WL; wl++) {
		char a[48], b[48], c[48];

		if (!(mask & 1u << wl) || !wls[wl].ext4 || sf_skipped)
			continue;
		print_ratio(a, sizeof(a), &r[wl][0][M_INLINE],
			    &r[wl][0][M_ASYNC], icount ? 0 : 3, false);
		print_ratio(b, sizeof(b), &r[wl][1][M_INLINE],
			    &r[wl][1][M_SENDFILE], icount ? 0 : 1, true);
		print_ratio(c, sizeof(c), &r[wl][1][M_INLINE],
			    &r[wl][1][M_SYSCALL], 0, false);
		printf("%-20s %-24s %-38s %s\n", wls[wl].name, a, b, c);
	}
	/*
	 * One line per size, for readers and scripts: the median of the
	 * rounds' ratios (one round under -i, where the clock repeats).
	 */
	if (sendfiles && !sf_skipped && (modes & 1u << M_SF_SQE) &&
	    (modes & 1u << M_SENDFILE))
		printf("\nsendfile sqe / sendfile(2) at QD%d, %s\n", qds[1],
		       icount ? "instructions" :
		       "each round's two cells: quartiles of the ratios");
	for (wl = 0; wl < NR_WL; wl++) {
		const char *size = wls[wl].name + strlen("sendfile ext4 ");
		const struct result *sqe = &r[wl][1][M_SF_SQE];
		double ratio, low, high;

		if (!(mask & 1u << wl) || !wls[wl].ext4 || sf_skipped ||
		    !(modes & 1u << M_SF_SQE) || !(modes & 1u << M_SENDFILE))
			continue;
		ratio = paired_ratio(wl, 1, M_SF_SQE, M_SENDFILE, nrounds,
				     &low, &high);
		if (ratio > 0 && nrounds > 1)
			printf("  %s: %.2f  %.2f  %.2f (%d rounds)\n", size, low,
			       ratio, high, nrounds);
		if (ratio <= 0)
			printf("ring sendfile %s QD%d: n/a\n", size, qds[1]);
		else
			printf("ring sendfile %s QD%d: %.2f x sendfile(2), %d workers\n",
			       size, qds[1], ratio, sqe->workers);
	}
	return failed;
}
