// SPDX-License-Identifier: GPL-2.0
/*
 * sqe_fuzz: random well-formed and malformed IORING_OP_SPLICE, IORING_OP_TEE
 * and, when the kernel has it, IORING_OP_IOCTL sqes.
 *
 * Each round makes a ring of random size and setup flags, a pool of files
 * of every kind (pipe ends, FIFO ends, AF_UNIX stream/dgram and TCP/UDP
 * sockets, a tmpfs file opened several ways, a directory, an O_PATH fd,
 * /dev/null, an eventfd, io_uring fds) plus descriptor numbers that are not
 * open, maybe a registered file table, a personality and restrictions, and
 * a few pairs of files of their own for splices compared with splice(2)
 * ("mirrors", see below).  It then submits batches of random sqes and,
 * between batches, swaps or clears registered slots, closes files, moves
 * data, resizes pipes, shuts sockets down and cancels requests, while
 * earlier requests sit blocked in io-wq.
 * At the end of the round every request is made to finish (data fed and
 * drained, slots cleared, files closed, sockets shut down, and as a last
 * resort IORING_REGISTER_SYNC_CANCEL) and reaped with a timeout.
 *
 * Checked:
 *  - every sqe gets exactly one CQE: none lost, none twice, no unknown
 *    user_data (IOSQE_CQE_SKIP_SUCCESS may drop it, only on success);
 *  - where the sqe alone decides the result (bad flags, offsets on tee,
 *    reserved fields, closed fds, restrictions, an ioctl command or file
 *    kind that is not allowed) it is that errno;
 *  - a splice or tee gives what the kernel can give for the files each of
 *    its ends may be (its fd's file, or any file its registered slot held
 *    while it was in flight; kprops[] says where each errno comes from):
 *    the one result where the kinds of file and the sqe decide (-EBADF,
 *    -ESPIPE, -EINVAL; 0 for a len of 0), else a byte count in [0, len]
 *    only where bytes can move, and only that pair's errnos: -EAGAIN only
 *    if the request was non-blocking (SPLICE_F_NONBLOCK, or an end that
 *    may have been an O_NONBLOCK pipe or socket while it was in flight),
 *    -EPIPE into a pipe only once a read end of it was closed, -ECANCELED
 *    only after a cancel or in a link chain, -EINTR only in a round with
 *    a cancel;
 *  - a splice or tee between files of its own (pipe, tmpfs file, AF_UNIX
 *    stream, /dev/null; made twice the same way at the start of the round)
 *    gives the result splice(2) or tee(2) gives on the twin pair, and
 *    leaves the same bytes in the output and in the input and the same
 *    file positions.  Not compared: splices on the pool's files (what they
 *    hold depends on the order the requests ran in), TCP (loopback
 *    delivery may lag behind the send), requests completed in a round
 *    with a cancel (a signalled io-wq worker stops short), successes
 *    without a CQE (IOSQE_CQE_SKIP_SUCCESS);
 *  - ioctl: res 0 or small, or an errno the command may give on that
 *    file; it writes its argument only on success, and only an int;
 *  - a cancelled request never completes with -ERESTARTSYS (6.18 does);
 *  - an IOSQE_IO_DRAIN request completes after every earlier one, and
 *    does not stall (6.12 miscounts sqes refused at submission after a
 *    waiting drain; the series fixes it: a failure with the series,
 *    an expected one without it; -D leaves drains out);
 *  - no descriptor is leaked (/proc/self/fd) and no file reference is left
 *    once the ring is gone (every pipe sees its writers go away);
 *  - the rounds run in a child, so a crash or a hang is reported.
 * Kernel splats and kmemleak reports are checked by the runner.
 *
 * usage: sqe_fuzz [-s SEED] [-n SQES] [-t SECONDS] [-r ROUND] [-v] [-D]
 *   environment: IOU_FUZZ_SEED, IOU_FUZZ_ITERS, IOU_FUZZ_SECONDS,
 *   IOU_FUZZ_NO_DRAIN
 * A failure prints its seed and round; "-s SEED -r ROUND -v" replays that
 * round alone and prints every sqe.
 */

#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/netlink.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "iou_helpers.h"
#include "../kselftest.h"

/* IORING_OP_IOCTL, new with the series (iou_helpers.h). */
#define OP_IOCTL_NR		IOU_OP_IOCTL_NR
#define FZ_FIONREAD		0x541B
#define FZ_SIOCOUTQ		0x5411
#define FZ_SIOCOUTQNSD		0x894B
#define FZ_DMA_BUF_SYNC		0x40086200	/* _IOW('b', 0, __u64) */

#define NO_OFF			((__u64)-1)
#define FZ_SPLICE_F_ALL		0xfU
#define FZ_SPLICE_F_NONBLOCK	0x2U
#define FZ_SPLICE_F_FD_IN_FIXED	(1U << 31)
#define FZ_IOSQE_BAD		(1U << 7)

#define MAX_POOL		48	/* < 63: a bit each in a __u64 */
#define CAND_NONE		(1ULL << 63)
#define MAX_PIPES		8
#define MAX_SLOTS		256
#define MAX_REQS		512
#define FILE_SIZE		16384
#define ARG_SIZE		16
#define ARG_FILL		0xa5
/* How long a round may take to finish all its requests before a CQE is lost. */
#define LOST_MS			10000
/* How long the last writer of a pipe may stay after the ring is closed. */
#define WATCH_MS		10000
#define MAX_REPORTS		10
/* Main thread stuck this long: the watchdog shuts the sockets down. */
#define WD_MS			1000

#define DEF_ITERS		1000000ULL
#define DEF_SECONDS		50

enum op { OP_SPLICE, OP_TEE, OP_IOCTL, OP_NR };
static const char * const op_name[OP_NR] = { "SPLICE", "TEE", "IOCTL" };

enum kind {
	K_PIPE_R, K_PIPE_W, K_FIFO_R, K_FIFO_W, K_FIFO_RW,
	K_UNIX_STREAM, K_UNIX_DGRAM, K_TCP, K_TCP_LISTEN, K_UDP, K_UDP6,
	K_NETLINK, K_FILE, K_FILE_APPEND, K_FILE_RO, K_OPATH, K_DIR,
	K_DEVNULL, K_EVENTFD, K_URING, K_URING_OTHER, K_NR
};

static const char * const kind_name[K_NR] = {
	"pipe-r", "pipe-w", "fifo-r", "fifo-w", "fifo-rw",
	"unix-stream", "unix-dgram", "tcp", "tcp-listen", "udp", "udp6",
	"netlink", "file", "file-append", "file-ro", "o-path", "dir",
	"devnull", "eventfd", "this-ring", "other-ring",
};

#define KM(k)		(1U << (k))
#define KM_PIPE		(KM(K_PIPE_R) | KM(K_PIPE_W) | KM(K_FIFO_R) | \
			 KM(K_FIFO_W) | KM(K_FIFO_RW))
#define KM_SOCK		(KM(K_UNIX_STREAM) | KM(K_UNIX_DGRAM) | KM(K_TCP) | \
			 KM(K_TCP_LISTEN) | KM(K_UDP) | KM(K_UDP6))
#define KM_TCP_ANY	(KM(K_TCP) | KM(K_TCP_LISTEN))
#define KM_PIPE_IN	(KM(K_PIPE_R) | KM(K_FIFO_R) | KM(K_FIFO_RW))
#define KM_PIPE_OUT	(KM(K_PIPE_W) | KM(K_FIFO_W) | KM(K_FIFO_RW))
#define KM_FILE_IN	(KM(K_FILE) | KM(K_FILE_RO) | KM(K_DEVNULL))
#define KM_FILE_OUT	(KM(K_FILE) | KM(K_FILE_APPEND) | KM(K_DEVNULL))
#define KM_SOCK_DATA	(KM(K_UNIX_STREAM) | KM(K_UNIX_DGRAM) | KM(K_TCP) | \
			 KM(K_UDP))
/* what IORING_REGISTER_FILES takes */
#define KM_NOREG	(KM(K_OPATH) | KM(K_URING) | KM(K_URING_OTHER))

/* Summary slots: errno e < 200 in slot e, 512... (kernel-internal) in 200... */
#define ERR_SLOTS	256
#define ERR_OTHER	(ERR_SLOTS - 1)

enum reg {
	REG_FILES, REG_UPDATE, REG_UNREGISTER, REG_CANCEL, REG_ASYNC_CANCEL,
	REG_NR
};

static const char * const reg_name[REG_NR] = {
	"REGISTER_FILES", "FILES_UPDATE", "UNREGISTER_FILES", "SYNC_CANCEL",
	"ASYNC_CANCEL (sqe)",
};

/* user_data of our own IORING_OP_ASYNC_CANCEL sqes */
#define CANCEL_UD		(1ULL << 63)

enum fail_cat {
	F_CQE, F_RES, F_RESTART, F_DRAIN, F_DRAIN_612, F_FD, F_REF, F_SETUP,
	F_BLOCKED, F_MIRROR, F_NR
};

/* Shared with the parent, which reports even if the child dies. */
struct shared {
	unsigned long long iters, rounds, cqes, skipped, blocked_rounds;
	unsigned long long cancels_needed, watchdog_rounds, drain_stalls;
	unsigned long long mirror_cmp, mirror_bytes, mirror_skipped;
	unsigned long long ok[OP_NR], ok_pos[OP_NR], err[OP_NR][ERR_SLOTS];
	unsigned long long reg_ok[REG_NR], reg_err[REG_NR][ERR_SLOTS];
	unsigned long long fails[F_NR];
	unsigned long long cur_round;
	const char *phase;	/* a literal: same address in the parent */
	unsigned long long setup_flags_seen;
	int child_done;
};

struct pent {
	int fd;			/* -1 once closed */
	int num;		/* the number it had */
	enum kind kind;
	int pipe;		/* index in fz.pipes, or -1 */
	int closed_batch;	/* batch in which it was closed, or -1 */
	bool owned;		/* closed by the pool, not a ring */
	bool nonblock;		/* O_NONBLOCK as we set it */
};

struct pipe_obj {
	int r, w, rw;		/* pool entries, -1 if none */
	bool reader_closed;	/* a read end's fd closed: it may have no reader */
};

enum exact_kind { EX_NONE, EX_INIT, EX_ISSUE };
enum arg_kind { ARG_VALID, ARG_BAD };

struct req {
	struct io_uring_sqe sqe;
	enum op op;
	int batch;
	bool optional;		/* no CQE is fine (CQE_SKIP_SUCCESS) */
	bool skip_flag;
	bool done;
	enum exact_kind exact_kind;
	int exact;
	const char *why;
	int out_pool, in_pool;	/* non-fixed pool entries, or -1 */
	int out_slot, in_slot;	/* registered slots, or -1 */
	/*
	 * The pool entries each end of a splice or tee may be when the
	 * request looks its files up (CAND_NONE: no file there, -EBADF): the
	 * entry of its fd, plus CAND_NONE once that fd is closed; for a
	 * registered slot, every entry the slot held while the request was
	 * in flight (it looks the slot up when first issued, which a drain
	 * or a link may delay; a table registered anew counts too).
	 */
	__u64 out_cand, in_cand;
	/*
	 * SPLICE_F_NONBLOCK, or an end that may have been an O_NONBLOCK pipe
	 * or socket when the request ran: O_NONBLOCK at submission, toggled
	 * while it was in flight, or a slot that took such a file meanwhile.
	 */
	bool nonblock;
	bool linked;		/* in a link chain: an earlier failure cancels it */
	int mirror;		/* its files are mirrors[mirror]'s pair a, or -1 */
	unsigned int cancel_gen;	/* F.cancel_gen when it was made */
	char out_desc[40], in_desc[40];
	enum arg_kind arg_kind;
	int arg_off;
	int head;		/* first sqe of its link chain (itself if none) */
	int res;
};

struct fz {
	unsigned long long round;
	__u64 seed;
	struct iou_ring ring;
	struct iou_ring other;
	unsigned int setup_flags;
	bool sqpoll, iopoll, restricted, skip_round, drain_disabled;
	bool cancel_issued;
	unsigned int cancel_gen;	/* cancels issued this round */
	__u32 allowed_ops;
	__u8 flags_allowed, flags_required;
	int personality;

	struct pent pool[MAX_POOL];
	int npool;
	struct pipe_obj pipes[MAX_PIPES];
	int npipes;
	int closed_nums[4];
	int nclosed;

	int table[MAX_SLOTS];	/* pool entry per slot, -1 empty */
	int table_nr;		/* 0: no table */

	struct req reqs[MAX_REQS];
	int nreqs;
	int inflight;		/* submitted, no CQE yet, CQE mandatory */
	int inflight_opt;	/* same for optional ones */
	int cancels;		/* our ASYNC_CANCEL sqes without a CQE */
	int batch;
	bool drain_seen;	/* an IOSQE_IO_DRAIN sqe this round */
	bool chain_skip;	/* the open link chain has a CQE_SKIP member */
	int chain_head;		/* first sqe of the open link chain, or -1 */
	bool stop;
};

static struct fz F;
static struct shared *stats;
static __u64 rng_state;
static bool verbose;
static bool no_drain;	/* -D: no drains (6.12 miscounts refused sqes) */
static bool have_ioctl;
/* IORING_OP_SPLICE from a regular file to a socket is sendfile(2) */
static bool have_sendfile;
static bool rwf_nowait = true;
static bool tcp_ok = true, udp6_ok = true, proc_ok = true;
static int fd_baseline;
static const char *tmpdir;
static unsigned char junk[65536];
static unsigned char argbuf[MAX_REQS][ARG_SIZE] __attribute__((aligned(16)));
static void *ro_page;

/*
 * A splice between a socket and a pipe sleeps on the socket with the pipe's
 * mutex held, and anything of ours that takes that mutex (read, write,
 * F_SETPIPE_SZ, the last close of the other end) sleeps behind it.  If the
 * main thread makes no progress for WD_MS, this thread shuts every socket
 * down and drains it, which ends such waits; after 2 * WD_MS it also
 * cancels every request (IORING_REGISTER_SYNC_CANCEL), which ends the wait
 * of IORING_UNREGISTER_FILES for the requests using the table, and others.
 */
static pthread_mutex_t wd_lock = PTHREAD_MUTEX_INITIALIZER;
static long long wd_beat;
static bool wd_armed, wd_fired;
/* the main thread is in io_uring_enter(2) submitting, not waiting */
static int wd_in_submit, wd_fired_in_submit;
static int wd_ring = -1;	/* ring fd for the watchdog's cancel, or -1 */

/*
 * IORING_REGISTER_SYNC_CANCEL from the watchdog thread: not on a
 * SINGLE_ISSUER ring (-EEXIST from any other task), and it does not reach
 * the SQPOLL thread's io-wq.
 */
static bool wd_can_cancel(void)
{
	return !(F.setup_flags & (IORING_SETUP_SQPOLL |
				  IORING_SETUP_SINGLE_ISSUER));
}

/* splitmix64 */
static __u64 rnd64(void)
{
	__u64 z = (rng_state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static __u32 rnd(__u32 n)
{
	return n ? rnd64() % n : 0;
}

static bool one_in(__u32 n)
{
	return rnd(n) == 0;
}

static const char *errname(int e)
{
	static char buf[16];
	const char *n;

	switch (e) {
	case 512: return "ERESTARTSYS";
	case 513: return "ERESTARTNOINTR";
	case 514: return "ERESTARTNOHAND";
	case 515: return "ENOIOCTLCMD";
	case 516: return "ERESTART_RESTARTBLOCK";
	case 524: return "ENOTSUPP";
	case 529: return "EIOCBQUEUED";
	}
	n = strerrorname_np(e);
	if (n)
		return n;
	snprintf(buf, sizeof(buf), "E%d", e);
	return buf;
}

static int err_slot(int e)
{
	if (e > 0 && e < 200)
		return e;
	if (e >= 512 && e < 512 + 50)
		return 200 + e - 512;
	return ERR_OTHER;
}

static int slot_err(int slot)
{
	if (slot < 200)
		return slot;
	return slot - 200 + 512;
}

static long long now_ms(void)
{
	return iou_now_ms();
}

static void beat(void)
{
	__atomic_store_n(&wd_beat, now_ms(), __ATOMIC_RELAXED);
}

/* Open descriptors of this process. */
static int count_fds(void)
{
	struct dirent *de;
	int n = 0, fd;
	DIR *d;

	d = opendir("/proc/self/fd");
	if (!d) {
		for (fd = 0; fd < 4096; fd++)
			if (fcntl(fd, F_GETFD) >= 0)
				n++;
		return n;
	}
	while ((de = readdir(d)))
		if (de->d_name[0] != '.')
			n++;
	closedir(d);
	return n - 1;	/* the directory's own */
}

static void list_fds(void)
{
	char path[300], link[256];
	struct dirent *de;
	ssize_t len;
	DIR *d;

	d = opendir("/proc/self/fd");
	if (!d)
		return;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/fd/%s", de->d_name);
		len = readlink(path, link, sizeof(link) - 1);
		link[len > 0 ? len : 0] = 0;
		ksft_print_msg("  fd %s -> %s\n", de->d_name, link);
	}
	closedir(d);
}

/* Print at most MAX_REPORTS failures of each kind. */
static int report_cat;

static bool report_ok(void)
{
	unsigned long long n = stats->fails[report_cat];

	if (n == MAX_REPORTS + 1)
		ksft_print_msg("(more failures of this kind: not printed)\n");
	return n <= MAX_REPORTS;
}

static void fail(enum fail_cat cat, const char *fmt, ...) __printf(2, 3);

static void fail(enum fail_cat cat, const char *fmt, ...)
{
	va_list ap;

	stats->fails[cat]++;
	report_cat = cat;
	if (!report_ok())
		return;
	printf("# FAIL seed %llu round %llu (replay: -s %llu -r %llu -v): ",
	       (unsigned long long)F.seed, F.round,
	       (unsigned long long)F.seed, F.round);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

/* Print a /proc file, each line as a diagnostic. */
static void dump_file(const char *path)
{
	char buf[8192], *line, *save;
	ssize_t len;
	int fd;

	fd = open(path, O_RDONLY);
	if (fd < 0)
		return;
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len <= 0)
		return;
	buf[len] = 0;
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save))
		ksft_print_msg("   %s\n", line);
}

/* Where the threads of @pid sleep (the stacks need root). */
static void dump_stacks(pid_t pid)
{
	char path[300];
	struct dirent *de;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	if (!d)
		return;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		ksft_print_msg(" task %s:\n", de->d_name);
		snprintf(path, sizeof(path), "/proc/%d/task/%s/comm", pid,
			 de->d_name);
		dump_file(path);
		snprintf(path, sizeof(path), "/proc/%d/task/%s/stack", pid,
			 de->d_name);
		dump_file(path);
	}
	closedir(d);
}

/* ------------------------------------------------------------------ */
/* the pool of files */

static int pool_add(int fd, enum kind k, int pipe)
{
	struct pent *e;

	if (fd < 0)
		return -1;
	if (F.npool == MAX_POOL) {
		close(fd);
		return -1;
	}
	e = &F.pool[F.npool];
	e->fd = fd;
	e->num = fd;
	e->kind = k;
	e->pipe = pipe;
	e->closed_batch = -1;
	e->owned = k != K_URING && k != K_URING_OTHER;
	e->nonblock = fcntl(fd, F_GETFL) & O_NONBLOCK;
	return F.npool++;
}

static __u64 cand_bit(int i)
{
	return i >= 0 ? 1ULL << i : CAND_NONE;
}

/* A splice or tee without its CQE yet: it may still look its files up. */
static bool open_splice(const struct req *rq)
{
	return rq->op != OP_IOCTL && !rq->done;
}

static void pool_close(int i)
{
	struct pent *e = &F.pool[i];
	struct req *rq;

	if (e->fd < 0 || !e->owned)
		return;
	close(e->fd);
	e->fd = -1;
	e->closed_batch = F.batch;
	if (e->kind == K_PIPE_R || e->kind == K_FIFO_R || e->kind == K_FIFO_RW)
		F.pipes[e->pipe].reader_closed = true;
	/* an fd looked up from now on is not there (a slot keeps its file) */
	for (rq = F.reqs; rq < F.reqs + F.nreqs; rq++) {
		if (!open_splice(rq))
			continue;
		if (rq->in_slot < 0 && (rq->in_cand & cand_bit(i)))
			rq->in_cand |= CAND_NONE;
		if (rq->out_slot < 0 && (rq->out_cand & cand_bit(i)))
			rq->out_cand |= CAND_NONE;
	}
}

static int reopen(int fd, int flags)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	return open(path, flags);
}

/*
 * Pool entry @i (-1: none) is a pipe or socket end that is O_NONBLOCK now.
 * O_NONBLOCK of other files changes nothing in a splice: do_splice() and
 * do_tee() look at it on pipe ends, the socket layer on sockets.
 */
static bool end_nonblock(int i)
{
	return i >= 0 && F.pool[i].nonblock &&
	       (KM(F.pool[i].kind) & (KM_PIPE | KM_SOCK | KM(K_NETLINK)));
}

/* Registered slot @slot holds pool entry @ent now (-1: nothing). */
static void slot_changed(int slot, int ent)
{
	struct req *rq;

	for (rq = F.reqs; rq < F.reqs + F.nreqs; rq++) {
		if (!open_splice(rq))
			continue;
		if (rq->in_slot == slot) {
			rq->in_cand |= cand_bit(ent);
			rq->nonblock |= end_nonblock(ent);
		}
		if (rq->out_slot == slot) {
			rq->out_cand |= cand_bit(ent);
			rq->nonblock |= end_nonblock(ent);
		}
	}
}

/* Every slot may hold something else: a table registered, cleared or gone. */
static void table_changed(void)
{
	struct req *rq;

	for (rq = F.reqs; rq < F.reqs + F.nreqs; rq++) {
		if (!open_splice(rq))
			continue;
		if (rq->in_slot >= 0)
			slot_changed(rq->in_slot, rq->in_slot < F.table_nr ?
				     F.table[rq->in_slot] : -1);
		if (rq->out_slot >= 0)
			slot_changed(rq->out_slot, rq->out_slot < F.table_nr ?
				     F.table[rq->out_slot] : -1);
	}
}

static void set_nonblock(int i, bool on)
{
	struct pent *e = &F.pool[i];
	int fl = fcntl(e->fd, F_GETFL);
	struct req *rq;

	if (fl < 0)
		return;
	fcntl(e->fd, F_SETFL, on ? fl | O_NONBLOCK : fl & ~O_NONBLOCK);
	e->nonblock = on;
	/* requests in flight on it may have run with it non-blocking */
	if (!(KM(e->kind) & (KM_PIPE | KM_SOCK | KM(K_NETLINK))))
		return;
	for (rq = F.reqs; rq < F.reqs + F.nreqs; rq++)
		if (open_splice(rq) && ((rq->in_cand | rq->out_cand) & cand_bit(i)))
			rq->nonblock = true;
}

static void add_pipe(void)
{
	struct pipe_obj *po = &F.pipes[F.npipes];
	int p[2], n;

	if (pipe2(p, one_in(4) ? O_DIRECT : 0))
		return;
	if (one_in(3))
		fcntl(p[1], F_SETPIPE_SZ, 4096);
	/* the pipe is empty and holds at least a page: this cannot block */
	if (one_in(2)) {
		n = write(p[1], junk, 1 + rnd(4096));
		(void)n;
	}
	po->r = pool_add(p[0], K_PIPE_R, F.npipes);
	po->w = pool_add(p[1], K_PIPE_W, F.npipes);
	po->rw = -1;
	po->reader_closed = false;
	F.npipes++;
}

static void add_fifo(void)
{
	struct pipe_obj *po = &F.pipes[F.npipes];
	char path[PATH_MAX];
	int r, w, rw;

	snprintf(path, sizeof(path), "%s/sqe_fuzz.%d.fifo", tmpdir, getpid());
	unlink(path);
	if (mkfifo(path, 0600))
		return;
	r = open(path, O_RDONLY | O_NONBLOCK);
	w = open(path, O_WRONLY | O_NONBLOCK);
	rw = open(path, O_RDWR);
	unlink(path);
	po->r = pool_add(r, K_FIFO_R, F.npipes);
	po->w = pool_add(w, K_FIFO_W, F.npipes);
	po->rw = pool_add(rw, K_FIFO_RW, F.npipes);
	po->reader_closed = false;
	if (po->w >= 0)
		set_nonblock(po->w, false);
	if (po->r >= 0 && one_in(2))
		set_nonblock(po->r, false);
	F.npipes++;
}

static void prefill_sock(int fd)
{
	if (one_in(2))
		send(fd, junk, 1 + rnd(8192), MSG_DONTWAIT);
	if (one_in(3)) {
		int sz = 4096;

		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
	}
}

static void add_tcp(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t sl = sizeof(sa);
	int l, c, a;

	if (!tcp_ok)
		return;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	l = socket(AF_INET, SOCK_STREAM, 0);
	c = socket(AF_INET, SOCK_STREAM, 0);
	if (l < 0 || c < 0 || bind(l, (void *)&sa, sizeof(sa)) ||
	    listen(l, 4) || getsockname(l, (void *)&sa, &sl) ||
	    connect(c, (void *)&sa, sizeof(sa))) {
		ksft_print_msg("no TCP loopback (%s): TCP sockets left out\n",
			       strerror(errno));
		tcp_ok = false;
		if (l >= 0)
			close(l);
		if (c >= 0)
			close(c);
		return;
	}
	a = accept(l, NULL, NULL);
	prefill_sock(c);
	prefill_sock(a);
	pool_add(c, K_TCP, -1);
	pool_add(a, K_TCP, -1);
	pool_add(l, K_TCP_LISTEN, -1);
}

static void add_file(void)
{
	int fd, n;

	fd = memfd_create("sqe_fuzz", 0);
	if (fd < 0) {
		char path[PATH_MAX];

		snprintf(path, sizeof(path), "%s/sqe_fuzz.XXXXXX", tmpdir);
		fd = mkstemp(path);
		if (fd >= 0)
			unlink(path);
	}
	if (fd < 0)
		return;
	n = write(fd, junk, FILE_SIZE);
	(void)n;
	lseek(fd, rnd(FILE_SIZE), SEEK_SET);
	pool_add(fd, K_FILE, -1);
	if (!proc_ok)
		return;
	pool_add(reopen(fd, O_RDWR | O_APPEND), K_FILE_APPEND, -1);
	pool_add(reopen(fd, O_RDONLY), K_FILE_RO, -1);
	pool_add(reopen(fd, O_PATH), K_OPATH, -1);
}

/* Numbers nothing here has open: the lowest free ones never reach them. */
static void pick_closed_nums(void)
{
	int i, fd;

	F.nclosed = 0;
	for (i = 0; i < 20 && F.nclosed < 4; i++) {
		fd = 600 + rnd(400);
		if (fcntl(fd, F_GETFD) < 0)
			F.closed_nums[F.nclosed++] = fd;
	}
}

static void make_pool(void)
{
	int i, n, sv[2];

	F.npool = 0;
	F.npipes = 0;
	n = 2 + rnd(3);
	for (i = 0; i < n; i++)
		add_pipe();
	add_fifo();

	if (!socketpair(AF_UNIX, SOCK_STREAM, 0, sv)) {
		prefill_sock(sv[0]);
		prefill_sock(sv[1]);
		pool_add(sv[0], K_UNIX_STREAM, -1);
		pool_add(sv[1], K_UNIX_STREAM, -1);
	}
	if (!socketpair(AF_UNIX, SOCK_DGRAM, 0, sv)) {
		prefill_sock(sv[0]);
		pool_add(sv[0], K_UNIX_DGRAM, -1);
		pool_add(sv[1], K_UNIX_DGRAM, -1);
	}
	add_tcp();
	pool_add(socket(AF_INET, SOCK_DGRAM, 0), K_UDP, -1);
	if (udp6_ok) {
		int fd = socket(AF_INET6, SOCK_DGRAM, 0);

		if (fd < 0)
			udp6_ok = false;
		pool_add(fd, K_UDP6, -1);
	}
	/*
	 * A user-space-only protocol: nothing in the kernel parses what we
	 * send.  Non-blocking: no shutdown(2) ends a splice waiting on it.
	 */
	pool_add(socket(AF_NETLINK, SOCK_RAW | SOCK_NONBLOCK, NETLINK_USERSOCK),
		 K_NETLINK, -1);
	add_file();
	pool_add(open("/", O_RDONLY | O_DIRECTORY), K_DIR, -1);
	pool_add(open("/dev/null", O_RDWR), K_DEVNULL, -1);
	pool_add(eventfd(0, 0), K_EVENTFD, -1);
	pool_add(F.ring.fd, K_URING, -1);
	if (!iou_setup(&F.other, 2, 0))
		pool_add(F.other.fd, K_URING_OTHER, -1);
	pick_closed_nums();
}

/* A random pool entry whose kind is in @mask; open ones mostly. */
static int pick_kind(__u32 mask)
{
	int cand[MAX_POOL], n = 0, i;
	bool open_only = !one_in(10);

	for (i = 0; i < F.npool; i++) {
		if (!(mask & KM(F.pool[i].kind)))
			continue;
		if (open_only && F.pool[i].fd < 0)
			continue;
		cand[n++] = i;
	}
	return n ? cand[rnd(n)] : -1;
}

/* ------------------------------------------------------------------ */
/* registered files */

static int registerable(void)
{
	int i = pick_kind(~KM_NOREG);

	return i >= 0 && F.pool[i].fd >= 0 ? i : -1;
}

static void reg_stat(enum reg r, int ret)
{
	if (ret >= 0)
		stats->reg_ok[r]++;
	else
		stats->reg_err[r][err_slot(-ret)]++;
}

static void register_table(void)
{
	int fds[MAX_SLOTS], i, ret, nr;

	nr = 1 + rnd(one_in(8) ? MAX_SLOTS : 12);
	for (i = 0; i < nr; i++) {
		F.table[i] = one_in(3) ? -1 : registerable();
		fds[i] = F.table[i] >= 0 ? F.pool[F.table[i]].fd : -1;
	}
	/* an fd the table refuses: the whole registration fails */
	if (one_in(16)) {
		int bad = pick_kind(KM_NOREG);

		if (bad >= 0)
			fds[rnd(nr)] = F.pool[bad].num;
	}
	ret = iou_register_files(&F.ring, fds, nr);
	reg_stat(REG_FILES, ret);
	F.table_nr = ret ? 0 : nr;
	table_changed();
	if (verbose)
		ksft_print_msg("register %d files: %d\n", nr, ret);
}

static void update_table(void)
{
	int fds[3], ent[3], i, n, off, ret;

	n = 1 + rnd(3);
	off = rnd(F.table_nr + 2);
	for (i = 0; i < n; i++) {
		int r = rnd(10), e = r < 5 ? registerable() : -1;

		ent[i] = -1;
		if (e >= 0) {
			fds[i] = F.pool[e].fd;
			ent[i] = e;
		} else if (r < 7) {
			fds[i] = -1;
		} else if (r < 8) {
			fds[i] = IORING_REGISTER_FILES_SKIP;
		} else if (r < 9) {
			fds[i] = F.closed_nums[0];
		} else {
			e = pick_kind(KM_NOREG);
			fds[i] = e >= 0 ? F.pool[e].num : -1;
		}
	}
	ret = iou_update_files(&F.ring, off, fds, n);
	reg_stat(REG_UPDATE, ret);
	for (i = 0; i < ret && off + i < F.table_nr; i++) {
		if (fds[i] != IORING_REGISTER_FILES_SKIP) {
			F.table[off + i] = ent[i];
			slot_changed(off + i, ent[i]);
		}
	}
	/*
	 * __io_sqe_files_update() empties a slot before it looks the new fd
	 * up: the slot where a bad fd stopped it (-EBADF: the first) is
	 * left empty.
	 */
	i = ret == -EBADF ? 0 : ret;
	if (i >= 0 && i < n && off + i < F.table_nr &&
	    fds[i] != IORING_REGISTER_FILES_SKIP && fds[i] != -1) {
		F.table[off + i] = -1;
		slot_changed(off + i, -1);
	}
	if (verbose)
		ksft_print_msg("update %d slots at %d: %d\n", n, off, ret);
}

static void clear_table(void)
{
	int fds[MAX_SLOTS], i;

	if (!F.table_nr)
		return;
	for (i = 0; i < F.table_nr; i++)
		fds[i] = -1;
	reg_stat(REG_UPDATE, iou_update_files(&F.ring, 0, fds, F.table_nr));
	for (i = 0; i < F.table_nr; i++)
		F.table[i] = -1;
	table_changed();
}

static void unregister_table(void)
{
	int ret = iou_unregister_files(&F.ring);

	reg_stat(REG_UNREGISTER, ret);
	if (!ret) {
		F.table_nr = 0;
		table_changed();
	}
	if (verbose)
		ksft_print_msg("unregister: %d\n", ret);
}

static int sync_cancel(__u64 ud, unsigned int flags, long timeout_ns)
{
	struct io_uring_sync_cancel_reg sc;
	int ret;

	memset(&sc, 0, sizeof(sc));
	sc.addr = ud;
	sc.flags = flags;
	sc.timeout.tv_sec = timeout_ns / 1000000000L;
	sc.timeout.tv_nsec = timeout_ns % 1000000000L;
	ret = iou_sys_register(F.ring.fd, IORING_REGISTER_SYNC_CANCEL, &sc, 1);
	reg_stat(REG_CANCEL, ret);
	F.cancel_issued = true;
	__atomic_add_fetch(&F.cancel_gen, 1, __ATOMIC_SEQ_CST);
	return ret;
}

static void print_req(struct req *rq);

/* ------------------------------------------------------------------ */
/* sqe generation */

struct fdesc {
	int val;
	int pool;		/* entry it refers to, -1: none */
	bool invalid;		/* EBADF, whatever the table or pool does */
	bool closed;		/* a pool entry closed before submission */
};

static void describe(struct fdesc *d, bool fixed, char *buf, size_t len)
{
	if (d->pool >= 0)
		snprintf(buf, len, "%s%s%s", fixed ? "slot:" : "",
			 kind_name[F.pool[d->pool].kind],
			 d->closed ? "(closed)" : "");
	else
		snprintf(buf, len, "%s%s", fixed ? "slot:" : "",
			 d->invalid ? "invalid" : "empty/unknown");
}

static int huge_num(void)
{
	switch (rnd(4)) {
	case 0: return INT_MAX;
	case 1: return 1 << 20;
	case 2: return (1 << 20) + rnd(INT_MAX - (1 << 20));
	default: return -(int)(2 + rnd(INT_MAX - 2));
	}
}

/*
 * A value for an fd field: a pool entry (@want >= 0 asks for that one),
 * or not open, or -1, or huge; a table index when @fixed.
 */
static void gen_fd(bool fixed, int want, struct fdesc *d)
{
	int i, r = rnd(100);

	d->pool = -1;
	d->invalid = false;
	d->closed = false;
	if (fixed) {
		if (want >= 0) {
			for (i = 0; i < F.table_nr; i++)
				if (F.table[i] == want)
					break;
			if (i < F.table_nr && !one_in(4)) {
				d->val = i;
				d->pool = want;
				return;
			}
		}
		if (r < 70 && F.table_nr) {
			d->val = rnd(F.table_nr);
			for (i = 0; i < 4 && F.table[d->val] < 0; i++)
				d->val = rnd(F.table_nr);
		} else if (r < 80) {
			d->val = rnd(F.table_nr + 1);
		} else if (r < 92) {
			d->val = F.table_nr + rnd(8);
		} else {
			/* beyond any table (IORING_MAX_FIXED_FILES is 1 << 20) */
			d->val = huge_num();
			d->invalid = true;
			return;
		}
		if (d->val < F.table_nr)
			d->pool = F.table[d->val];
		return;
	}

	if (want < 0 && r < 88)
		want = rnd(F.npool);
	if (want >= 0) {
		struct pent *e = &F.pool[want];

		d->pool = want;
		d->val = e->fd >= 0 ? e->fd : e->num;
		d->closed = e->fd < 0;
		d->invalid = d->closed || e->kind == K_OPATH;
		return;
	}
	d->invalid = true;
	if (r < 93 && F.nclosed)
		d->val = F.closed_nums[rnd(F.nclosed)];
	else if (r < 96)
		d->val = -1;
	else
		d->val = huge_num();
}

static __u64 gen_off(void)
{
	switch (rnd(20)) {
	case 0 ... 9: return NO_OFF;
	case 10 ... 12: return 0;
	case 13 ... 15: return rnd(2 * FILE_SIZE);
	case 16: return rnd64();
	case 17: return -(__u64)(2 + rnd(4096));
	case 18: return LLONG_MAX - rnd(4096);
	default: return (1ULL << 40) + rnd(1 << 20);
	}
}

static __u32 gen_len(void)
{
	switch (rnd(20)) {
	case 0 ... 1: return 0;
	case 2 ... 10: return 1 + rnd(4096);
	case 11 ... 14: return 1 + rnd(256 << 10);
	case 15 ... 16: return UINT_MAX;
	case 17: return INT_MAX;
	case 18: return 1U << 31;
	default: return 1 + rnd(UINT_MAX);
	}
}

static __u8 gen_sqe_flags(void)
{
	__u8 fl = 0;

	if (one_in(6))
		fl |= IOSQE_IO_LINK;
	if (one_in(16))
		fl |= IOSQE_IO_HARDLINK;
	/*
	 * Everything after a drain waits for it, our cancel sqes too, and with
	 * SQPOLL nothing else reaches a request blocked in the poller's io-wq.
	 */
	if (!F.sqpoll && !no_drain && one_in(24))
		fl |= IOSQE_IO_DRAIN;
	if (one_in(4))
		fl |= IOSQE_ASYNC;
	if (one_in(40))
		fl |= IOSQE_BUFFER_SELECT;
	if (F.skip_round && one_in(5))
		fl |= IOSQE_CQE_SKIP_SUCCESS;
	if (one_in(64))
		fl |= FZ_IOSQE_BAD;
	return fl;
}

static bool ioctl_cmd_listed(__u32 cmd)
{
	return cmd == FZ_FIONREAD || cmd == FZ_SIOCOUTQ ||
	       cmd == FZ_SIOCOUTQNSD || cmd == FZ_DMA_BUF_SYNC;
}

/* Kernel order of io_init_req() and the prep handlers; 0: no error. */
static int init_error(struct req *rq)
{
	struct io_uring_sqe *sqe = &rq->sqe;
	__u8 fl = sqe->flags;

	if (fl & FZ_IOSQE_BAD)
		return -EINVAL;
	if (fl & IOSQE_BUFFER_SELECT)
		return -EOPNOTSUPP;
	if (fl & IOSQE_CQE_SKIP_SUCCESS)
		F.drain_disabled = true;
	if ((fl & IOSQE_IO_DRAIN) && F.drain_disabled)
		return -EOPNOTSUPP;
	if (F.restricted) {
		if (!(F.allowed_ops & (1U << rq->op)))
			return -EACCES;
		if ((fl & F.flags_required) != F.flags_required)
			return -EACCES;
		if (fl & ~(F.flags_allowed | F.flags_required))
			return -EACCES;
	}
	if (sqe->ioprio)
		return -EINVAL;
	if (F.iopoll)
		return -EINVAL;
	if (sqe->personality && sqe->personality != F.personality)
		return -EINVAL;
	if (rq->op == OP_IOCTL) {
		if (sqe->addr || sqe->rw_flags || sqe->buf_index ||
		    sqe->splice_fd_in || sqe->addr3 || sqe->__pad2[0])
			return -EINVAL;
		/* a command on no entry of the allowlist: refused at prep */
		if (!ioctl_cmd_listed(sqe->len))
			return -EOPNOTSUPP;
		return 0;
	}
	if (rq->op == OP_TEE && (sqe->off || sqe->splice_off_in))
		return -EINVAL;
	if (sqe->splice_flags & ~(FZ_SPLICE_F_FD_IN_FIXED | FZ_SPLICE_F_ALL))
		return -EINVAL;
	return 0;
}

static void gen_reserved(struct io_uring_sqe *sqe, bool ioctl)
{
	unsigned int n = ioctl ? 24 : 8;

	if (one_in(48))
		sqe->ioprio = 1 + rnd(0xffff);
	if (one_in(n))
		sqe->buf_index = rnd(0x10000);
	if (one_in(n))
		sqe->addr3 = rnd64();
	if (one_in(n))
		sqe->__pad2[0] = rnd64();
	if (F.personality && one_in(8))
		sqe->personality = F.personality;
	else if (one_in(48))
		sqe->personality = F.personality + 1 + rnd(100);
	if (ioctl) {
		if (one_in(n))
			sqe->addr = rnd64();
		if (one_in(n))
			sqe->rw_flags = rnd64();
		if (one_in(n))
			sqe->splice_fd_in = rnd64();
	}
}

static void gen_splice_tee(struct req *rq, struct io_uring_sqe *sqe)
{
	int in_want = -1, out_want = -1;
	bool in_fixed, out_fixed, tee = rq->op == OP_TEE;
	struct fdesc in, out;
	__u32 sflags;

	if (!one_in(4)) {
		/* mostly something that can work */
		switch (tee ? 4 : rnd(4)) {
		case 0:
			in_want = pick_kind(KM_FILE_IN);
			out_want = pick_kind(KM_PIPE_OUT);
			break;
		case 1:
			in_want = pick_kind(KM_PIPE_IN);
			out_want = pick_kind(KM_FILE_OUT | KM_PIPE_OUT);
			break;
		case 2:
			in_want = pick_kind(KM_SOCK_DATA);
			out_want = pick_kind(KM_PIPE_OUT);
			break;
		case 3:
			in_want = pick_kind(KM_PIPE_IN);
			out_want = pick_kind(KM_SOCK_DATA | KM(K_NETLINK));
			break;
		default:
			in_want = pick_kind(KM_PIPE_IN);
			out_want = pick_kind(KM_PIPE_OUT);
			break;
		}
	}
	in_fixed = one_in(4);
	out_fixed = one_in(4);
	gen_fd(in_fixed, in_want, &in);
	gen_fd(out_fixed, out_want, &out);

	sflags = rnd(16) & ~FZ_SPLICE_F_NONBLOCK;
	if (one_in(4))
		sflags |= FZ_SPLICE_F_NONBLOCK;
	if (one_in(12))
		sflags |= 1U << (4 + rnd(27));
	if (in_fixed)
		sflags |= FZ_SPLICE_F_FD_IN_FIXED;

	sqe->opcode = tee ? IORING_OP_TEE : IORING_OP_SPLICE;
	sqe->fd = out.val;
	sqe->splice_fd_in = in.val;
	sqe->len = gen_len();
	sqe->splice_flags = sflags;
	if (tee) {
		if (one_in(12))
			sqe->off = gen_off();
		if (one_in(12))
			sqe->splice_off_in = gen_off();
	} else {
		/* files get real offsets, pipes mostly none */
		bool in_file = in.pool >= 0 &&
			       (KM_FILE_IN & KM(F.pool[in.pool].kind));
		bool out_file = out.pool >= 0 &&
				(KM_FILE_OUT & KM(F.pool[out.pool].kind));

		sqe->splice_off_in = in_file || one_in(8) ? gen_off() : NO_OFF;
		sqe->off = out_file || one_in(8) ? gen_off() : NO_OFF;
	}
	if (out_fixed)
		sqe->flags |= IOSQE_FIXED_FILE;
	gen_reserved(sqe, false);

	rq->in_pool = in_fixed ? -1 : in.pool;
	rq->out_pool = out_fixed ? -1 : out.pool;
	rq->in_slot = in_fixed && !in.invalid ? in.val : -1;
	rq->out_slot = out_fixed && !out.invalid ? out.val : -1;
	rq->in_cand = in.invalid ? CAND_NONE : cand_bit(in.pool);
	rq->out_cand = out.invalid ? CAND_NONE : cand_bit(out.pool);
	rq->nonblock = (sflags & FZ_SPLICE_F_NONBLOCK) ||
		       (!in.invalid && end_nonblock(in.pool)) ||
		       (!out.invalid && end_nonblock(out.pool));
	describe(&in, in_fixed, rq->in_desc, sizeof(rq->in_desc));
	describe(&out, out_fixed, rq->out_desc, sizeof(rq->out_desc));
	if (in.invalid || out.invalid) {
		rq->exact_kind = EX_ISSUE;
		rq->exact = -EBADF;
		rq->why = "descriptor not open";
	}
}

static __u32 gen_ioctl_cmd(void)
{
	static const __u32 others[] = {
		0x5421 /* FIONBIO */, 0x5452 /* FIOASYNC */,
		0x5451 /* FIOCLEX */, 0x5450 /* FIONCLEX */,
		0x5401 /* TCGETS */, 0x8905 /* SIOCATMARK */,
		0x8910 /* SIOCGIFNAME */, 0x80081272 /* BLKGETSIZE64 */,
		0x40086201 /* DMA_BUF_SET_NAME */, 0x541B + 1, 0x5411 - 1,
		0x80045430 /* TIOCGPTN */, 0x5413 /* TIOCGWINSZ */,
		0xc0086202 /* DMA_BUF_IOCTL_EXPORT_SYNC_FILE */,
	};

	switch (rnd(20)) {
	case 0 ... 7: return FZ_FIONREAD;
	case 8 ... 10: return FZ_SIOCOUTQ;
	case 11 ... 12: return FZ_SIOCOUTQNSD;
	case 13: return FZ_DMA_BUF_SYNC;
	case 14 ... 16: return others[rnd(ARRAY_SIZE(others))];
	case 17: return 0;
	default: return rnd64();
	}
}

static void gen_ioctl(struct req *rq, struct io_uring_sqe *sqe, int idx)
{
	bool fixed = one_in(5);
	struct fdesc d;
	__u64 arg;
	int r = rnd(100);

	gen_fd(fixed, one_in(4) ? -1 : pick_kind(~0U), &d);
	sqe->opcode = OP_IOCTL_NR;
	sqe->fd = d.val;
	sqe->len = gen_ioctl_cmd();	/* ioctl_cmd */
	memset(argbuf[idx], ARG_FILL, ARG_SIZE);
	rq->arg_kind = ARG_BAD;
	rq->arg_off = 0;
	if (r < 75) {
		rq->arg_kind = ARG_VALID;
		rq->arg_off = one_in(10) ? 1 + rnd(ARG_SIZE - 8) : 0;
		arg = (__u64)(uintptr_t)&argbuf[idx][rq->arg_off];
	} else if (r < 83) {
		arg = 0;
	} else if (r < 90) {
		arg = 0xffff888000000000ULL + rnd(1 << 20) * 8;
	} else if (r < 95) {
		arg = (__u64)(uintptr_t)ro_page;
	} else {
		arg = rnd64();
	}
	sqe->off = arg;			/* ioctl_arg */
	if (fixed)
		sqe->flags |= IOSQE_FIXED_FILE;
	gen_reserved(sqe, true);
	rq->out_pool = fixed ? -1 : d.pool;
	rq->in_pool = -1;
	describe(&d, fixed, rq->out_desc, sizeof(rq->out_desc));
	rq->in_desc[0] = 0;
	if (d.invalid) {
		rq->exact_kind = EX_ISSUE;
		rq->exact = -EBADF;
		rq->why = "descriptor not open";
	}
}

static void dump_req(struct req *rq);

/* ------------------------------------------------------------------ */
/*
 * Side by side with splice(2) and tee(2). A few splices and tees a round
 * ("mirrors") name files of their own instead of the pool's, each made
 * twice at the start of the round, the same way: pair a for the ring,
 * pair b for the system call. Their content is the fuzzer's (a pattern
 * per mirror), and they are set up so that nothing waits: the input holds
 * data or is at its end, the output has room. Nothing but its request
 * touches pair a. When the request completes, and no cancel was issued in
 * the round (a signalled io-wq worker stops a splice short), the same
 * splice(2) or tee(2) runs on pair b: the result, the bytes that reached
 * the output, what is left in the input and the file positions must be
 * the same. Kinds: pipe -> pipe, tee, tmpfs file -> pipe, pipe -> tmpfs
 * file, AF_UNIX stream -> pipe, pipe -> AF_UNIX stream, pipe -> /dev/null.
 * Not TCP: loopback delivery may lag behind the send, and the two pairs
 * would not hold the same bytes. AF_UNIX sends stay below one linear skb,
 * and the pipe after an AF_UNIX input has room for all of it: where the
 * skb's bytes land in pipe buffers depends on the task's page fragment
 * (linear_to_page()), which differs between an io-wq worker and us.
 */
#define MAX_MIRRORS	6
#define MIRROR_CHUNK	6000
#define MIRROR_UNIX	3000	/* < SKB_MAX_HEAD(0): one linear skb */
#define MBUF		(256 << 10)

enum mkind {
	MK_PIPE_PIPE, MK_TEE, MK_FILE_PIPE, MK_PIPE_FILE, MK_UNIX_PIPE,
	MK_PIPE_UNIX, MK_PIPE_NULL, MK_NR
};

static const char * const mk_in[MK_NR] = {
	"pipe", "pipe", "file", "pipe", "unix-stream", "pipe", "pipe",
};

static const char * const mk_out[MK_NR] = {
	"pipe", "pipe", "pipe", "file", "pipe", "unix-stream", "devnull",
};

struct mset {
	int in, out;		/* the ends the sqe or the system call names */
	int in_peer;		/* the input pipe's writer, the sending socket */
	int out_peer;		/* the output pipe's reader, the receiving socket */
};

struct mirror {
	enum mkind kind;
	unsigned int pat;	/* the input's pattern; +1 the file's, +2 prefill */
	int nchunks;
	unsigned int chunk[3];	/* writes into the input pipe or socket */
	bool eof;		/* the input's writer closed or shut down */
	bool in_nb, out_nb;	/* O_NONBLOCK on the ends */
	bool out_small;		/* an output pipe of one page */
	unsigned int prefill;	/* bytes already in the output pipe */
	unsigned int fsize, fpos;	/* the tmpfs file and its position */
	struct mset a, b;
	int req;		/* request using it, or -1 */
};

static struct mirror mirrors[MAX_MIRRORS];
static int nmirrors;
static unsigned char mbuf[2][MBUF];

static void pattern(unsigned char *buf, size_t len, unsigned int pat,
		    size_t from)
{
	size_t i;

	for (i = 0; i < len; i++)
		buf[i] = ((from + i) * 31 + ((from + i) >> 7) + pat * 101) & 0xff;
}

static void mset_close(struct mset *f)
{
	int *fds[4] = { &f->in, &f->out, &f->in_peer, &f->out_peer };
	int i;

	for (i = 0; i < 4; i++) {
		if (*fds[i] >= 0)
			close(*fds[i]);
		*fds[i] = -1;
	}
}

/* A tmpfs file of @size pattern bytes, at @pos. */
static int mirror_file(unsigned int size, unsigned int pat, unsigned int pos)
{
	unsigned char buf[4096];
	unsigned int at;
	int fd, n;

	fd = memfd_create("sqe_fuzz_mirror", 0);
	if (fd < 0)
		return -1;
	for (at = 0; at < size; at += n) {
		n = size - at < sizeof(buf) ? size - at : sizeof(buf);
		pattern(buf, n, pat, at);
		if (write(fd, buf, n) != n) {
			close(fd);
			return -1;
		}
	}
	lseek(fd, pos, SEEK_SET);
	return fd;
}

static void set_fl(int fd, bool nonblock)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl >= 0)
		fcntl(fd, F_SETFL, nonblock ? fl | O_NONBLOCK : fl & ~O_NONBLOCK);
}

static bool mirror_open(const struct mirror *m, struct mset *f)
{
	unsigned char buf[MIRROR_CHUNK];
	size_t at = 0;
	int p[2], i;

	f->in = -1;
	f->out = -1;
	f->in_peer = -1;
	f->out_peer = -1;
	if (m->kind == MK_FILE_PIPE) {
		f->in = mirror_file(m->fsize, m->pat + 1, m->fpos);
		if (f->in < 0)
			goto fail;
	} else {
		if (m->kind == MK_UNIX_PIPE ?
		    socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, p) :
		    pipe2(p, O_NONBLOCK))
			goto fail;
		f->in = p[0];
		f->in_peer = p[1];
		for (i = 0; i < m->nchunks; i++) {
			pattern(buf, m->chunk[i], m->pat, at);
			if (write(p[1], buf, m->chunk[i]) != (ssize_t)m->chunk[i])
				goto fail;
			at += m->chunk[i];
		}
		if (m->eof && m->kind == MK_UNIX_PIPE) {
			shutdown(p[1], SHUT_WR);
		} else if (m->eof) {
			close(p[1]);
			f->in_peer = -1;
		}
		set_fl(f->in, m->in_nb);
	}

	switch (m->kind) {
	case MK_PIPE_FILE:
		f->out = mirror_file(m->fsize, m->pat + 1, m->fpos);
		if (f->out < 0)
			goto fail;
		break;
	case MK_PIPE_UNIX:
		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, p))
			goto fail;
		f->out = p[0];
		f->out_peer = p[1];
		set_fl(f->out, m->out_nb);
		break;
	case MK_PIPE_NULL:
		f->out = open("/dev/null", O_WRONLY);
		if (f->out < 0)
			goto fail;
		break;
	default:
		if (pipe2(p, O_NONBLOCK))
			goto fail;
		f->out = p[1];
		f->out_peer = p[0];
		if (m->out_small && fcntl(p[1], F_SETPIPE_SZ, 4096) < 0)
			goto fail;
		pattern(buf, m->prefill, m->pat + 2, 0);
		if (m->prefill &&
		    write(p[1], buf, m->prefill) != (ssize_t)m->prefill)
			goto fail;
		set_fl(f->out, m->out_nb);
		break;
	}
	return true;
fail:
	mset_close(f);
	return false;
}

/*
 * The round's mirrors: made before any pool fd is closed, so that no
 * number an sqe names as closed is reused by them.
 */
static void make_mirrors(void)
{
	struct mirror *m;
	int n = rnd(MAX_MIRRORS + 1), i, c, total;

	nmirrors = 0;
	for (i = 0; i < n; i++) {
		m = &mirrors[nmirrors];
		m->kind = rnd(MK_NR);
		m->pat = rnd(256);
		m->nchunks = rnd(4);
		total = 0;
		for (c = 0; c < m->nchunks; c++) {
			m->chunk[c] = 1 + rnd(m->kind == MK_UNIX_PIPE ?
					      MIRROR_UNIX : MIRROR_CHUNK);
			total += m->chunk[c];
		}
		/* an empty input with a writer would wait */
		m->eof = !total || one_in(2);
		m->in_nb = one_in(4);
		m->out_nb = one_in(4);
		/* after AF_UNIX, room for everything (see above) */
		m->out_small = m->kind != MK_UNIX_PIPE && one_in(4);
		m->prefill = !m->out_small && one_in(3) ? 1 + rnd(MIRROR_CHUNK) : 0;
		m->fsize = rnd(64 << 10);
		m->fpos = rnd(m->fsize + 8192);
		m->req = -1;
		if (!mirror_open(m, &m->a))
			continue;
		if (!mirror_open(m, &m->b)) {
			mset_close(&m->a);
			continue;
		}
		nmirrors++;
	}
}

static void close_mirrors(void)
{
	int i;

	for (i = 0; i < nmirrors; i++) {
		mset_close(&mirrors[i].a);
		mset_close(&mirrors[i].b);
	}
	nmirrors = 0;
}

/* Mostly none on a pipe or socket; on a file mostly inside it. */
static __u64 mirror_off(bool file, unsigned int size)
{
	if (!file)
		return one_in(10) ? gen_off() : NO_OFF;
	switch (rnd(8)) {
	case 0 ... 3: return NO_OFF;
	case 4 ... 6: return rnd(2 * size + 1);
	default: return gen_off();
	}
}

/* A splice or tee between the files of a free mirror, if there is one. */
static bool gen_mirror(struct req *rq, struct io_uring_sqe *sqe)
{
	struct mirror *m = NULL;
	__u32 sflags;
	int i;

	for (i = 0; i < nmirrors && !m; i++)
		if (mirrors[i].req < 0)
			m = &mirrors[i];
	if (!m)
		return false;
	m->req = rq - F.reqs;
	rq->mirror = m - mirrors;
	rq->op = m->kind == MK_TEE ? OP_TEE : OP_SPLICE;
	sqe->opcode = m->kind == MK_TEE ? IORING_OP_TEE : IORING_OP_SPLICE;
	sqe->fd = m->a.out;
	sqe->splice_fd_in = m->a.in;
	sqe->len = gen_len();
	sflags = rnd(16) & ~FZ_SPLICE_F_NONBLOCK;
	if (one_in(4))
		sflags |= FZ_SPLICE_F_NONBLOCK;
	if (one_in(24))
		sflags |= 1U << (4 + rnd(27));
	sqe->splice_flags = sflags;
	if (m->kind == MK_TEE) {
		if (one_in(12))
			sqe->off = gen_off();
		if (one_in(12))
			sqe->splice_off_in = gen_off();
	} else {
		sqe->splice_off_in = mirror_off(m->kind == MK_FILE_PIPE, m->fsize);
		sqe->off = mirror_off(m->kind == MK_PIPE_FILE, m->fsize);
	}
	gen_reserved(sqe, false);
	snprintf(rq->in_desc, sizeof(rq->in_desc), "mirror:%s", mk_in[m->kind]);
	snprintf(rq->out_desc, sizeof(rq->out_desc), "mirror:%s",
		 mk_out[m->kind]);
	return true;
}

/* Everything readable from @fd now, at most MBUF bytes. */
static size_t read_all(int fd, unsigned char *buf)
{
	size_t got = 0;
	ssize_t n;

	if (fd < 0)
		return 0;
	set_fl(fd, true);
	while (got < MBUF) {
		n = read(fd, buf + got, MBUF - got);
		if (n <= 0)
			break;
		got += n;
	}
	return got;
}

/* NULL if the streams out of @fa and @fb are the same, else what differs. */
static const char *cmp_stream(int fa, int fb, const char *name, char *why,
			      size_t len)
{
	size_t na = read_all(fa, mbuf[0]), nb = read_all(fb, mbuf[1]), i;

	for (i = 0; i < na && i < nb && mbuf[0][i] == mbuf[1][i]; i++)
		;
	if (na == nb && i == na)
		return NULL;
	snprintf(why, len, "%s: %zu bytes against %zu, the same up to byte %zu",
		 name, na, nb, i);
	return why;
}

/* Position, size and content (its start, and where the request wrote). */
static const char *cmp_file(int fa, int fb, __u64 off, int res,
			    const char *name, char *why, size_t len)
{
	off_t pa = lseek(fa, 0, SEEK_CUR), pb = lseek(fb, 0, SEEK_CUR);
	struct stat sa, sb;
	off_t from[2] = { 0, off != NO_OFF && res > 0 ? (off_t)off : 0 };
	ssize_t na, nb;
	int i, j;

	if (fstat(fa, &sa) || fstat(fb, &sb))
		return "fstat failed";
	if (pa != pb || sa.st_size != sb.st_size) {
		snprintf(why, len, "%s: position %lld, size %lld against %lld, %lld",
			 name, (long long)pa, (long long)sa.st_size,
			 (long long)pb, (long long)sb.st_size);
		return why;
	}
	for (i = 0; i < 2; i++) {
		/* up to LLONG_MAX: pread(2) refuses a range beyond it */
		size_t n = LLONG_MAX - from[i] < MBUF ? LLONG_MAX - from[i] : MBUF;

		na = pread(fa, mbuf[0], n, from[i]);
		nb = pread(fb, mbuf[1], n, from[i]);
		if (na < 0 || nb < 0) {
			snprintf(why, len, "%s: pread(2) at %lld: %s", name,
				 (long long)from[i], strerror(errno));
			return why;
		}
		for (j = 0; j < na && j < nb && mbuf[0][j] == mbuf[1][j]; j++)
			;
		if (na != nb || j != na) {
			snprintf(why, len, "%s: content from %lld differs at byte %lld",
				 name, (long long)from[i],
				 (long long)from[i] + j);
			return why;
		}
	}
	return NULL;
}

/* Run the request's splice or tee on pair b and compare. */
static void mirror_compare(struct req *rq, int res)
{
	struct mirror *m = &mirrors[rq->mirror];
	const struct io_uring_sqe *s = &rq->sqe;
	loff_t oi = s->splice_off_in, oo = s->off;
	const char *diff = NULL, *sys = m->kind == MK_TEE ? "tee" : "splice";
	char why[200];
	long ref;

	if (m->kind == MK_TEE)
		ref = tee(m->b.in, m->b.out, s->len, s->splice_flags);
	else
		ref = splice(m->b.in, s->splice_off_in == NO_OFF ? NULL : &oi,
			     m->b.out, s->off == NO_OFF ? NULL : &oo, s->len,
			     s->splice_flags);
	if (ref < 0)
		ref = -errno;
	stats->mirror_cmp++;
	if (res > 0)
		stats->mirror_bytes++;
	if (res != ref) {
		fail(F_MIRROR, "sqe #%ld %s %s -> %s: res %d, %s(2) on an identical pair %ld",
		     (long)(rq - F.reqs), op_name[rq->op], mk_in[m->kind],
		     mk_out[m->kind], res, sys, ref);
		dump_req(rq);
		return;
	}
	if (m->kind == MK_PIPE_FILE)
		diff = cmp_file(m->a.out, m->b.out, s->off, res, "output file",
				why, sizeof(why));
	else if (m->kind != MK_PIPE_NULL)
		diff = cmp_stream(m->a.out_peer, m->b.out_peer, "output", why,
				  sizeof(why));
	if (!diff && m->kind == MK_FILE_PIPE)
		diff = cmp_file(m->a.in, m->b.in, NO_OFF, 0, "input file", why,
				sizeof(why));
	else if (!diff)
		diff = cmp_stream(m->a.in, m->b.in, "input left", why,
				  sizeof(why));
	if (diff) {
		fail(F_MIRROR, "sqe #%ld %s %s -> %s: res %d as %s(2) on an identical pair, but %s",
		     (long)(rq - F.reqs), op_name[rq->op], mk_in[m->kind],
		     mk_out[m->kind], res, sys, diff);
		dump_req(rq);
	}
}

/*
 * A splice or tee that ended -ECANCELED or -EINTR: NULL if a cancel (or,
 * for -ECANCELED, a broken link) can explain it, else why not.
 */
static const char *check_cancelled(struct req *rq, int res)
{
	if (res == -EINTR)
		return F.cancel_issued ? NULL : "EINTR without a cancel";
	if (rq->linked || rq->cancel_gen !=
	    __atomic_load_n(&F.cancel_gen, __ATOMIC_SEQ_CST))
		return NULL;
	return "-ECANCELED without a cancel or a link";
}

/* NULL if @res is fine for this mirror request, else why not. */
static const char *check_mirror(struct req *rq, int res)
{
	struct mirror *m = &mirrors[rq->mirror];

	if (res == -ECANCELED || res == -EINTR)
		return check_cancelled(rq, res);
	if (res > (long long)rq->sqe.len)
		return "byte count beyond len";
	if (__atomic_load_n(&F.cancel_issued, __ATOMIC_SEQ_CST))
		stats->mirror_skipped++;
	else
		mirror_compare(rq, res);
	/* done with it: nothing names these numbers any more */
	mset_close(&m->a);
	mset_close(&m->b);
	return NULL;
}

static void gen_one(struct io_uring_sqe *sqe)
{
	int idx = F.nreqs++;
	struct req *rq = &F.reqs[idx];
	__u8 link, fl;
	int e, r;

	memset(rq, 0, sizeof(*rq));
	r = rnd(100);
	if (have_ioctl)
		rq->op = r < 40 ? OP_SPLICE : r < 70 ? OP_TEE : OP_IOCTL;
	else
		rq->op = r < 55 ? OP_SPLICE : OP_TEE;
	rq->batch = F.batch;
	rq->in_pool = -1;
	rq->out_pool = -1;
	rq->in_slot = -1;
	rq->out_slot = -1;
	rq->exact_kind = EX_NONE;

	rq->mirror = -1;

	if (rq->op == OP_IOCTL)
		gen_ioctl(rq, sqe, idx);
	else if (!one_in(6) || !gen_mirror(rq, sqe))
		gen_splice_tee(rq, sqe);
	fl = gen_sqe_flags();
	sqe->flags |= fl;
	if (fl & IOSQE_IO_DRAIN)
		F.drain_seen = true;
	sqe->user_data = ((F.round & 0xffffffffULL) << 32) | (idx + 1);
	rq->skip_flag = sqe->flags & IOSQE_CQE_SKIP_SUCCESS;
	rq->sqe = *sqe;

	e = init_error(rq);
	if (e) {
		rq->exact_kind = EX_INIT;
		rq->exact = e;
		rq->why = "refused at submission";
	}
	/*
	 * CQE_SKIP_SUCCESS: no CQE on success; a failing request posts one
	 * but then hides those of the links it cancels.
	 */
	rq->optional = F.chain_skip || (rq->skip_flag && !e);
	rq->head = F.chain_head >= 0 ? F.chain_head : idx;
	link = sqe->flags & (IOSQE_IO_LINK | IOSQE_IO_HARDLINK);
	rq->linked = link || rq->head != idx;
	rq->cancel_gen = __atomic_load_n(&F.cancel_gen, __ATOMIC_SEQ_CST);
	if (link) {
		if (rq->skip_flag)
			F.chain_skip = true;
		if (F.chain_head < 0)
			F.chain_head = idx;
	} else {
		F.chain_skip = false;
		F.chain_head = -1;
	}
	if (rq->optional)
		F.inflight_opt++;
	else
		F.inflight++;
	if (verbose)
		print_req(rq);
}

/* ------------------------------------------------------------------ */
/* completions */

static void print_req(struct req *rq)
{
	struct io_uring_sqe *s = &rq->sqe;

	ksft_print_msg("  sqe #%ld %s ud=0x%llx flags=0x%x fd=%d(%s) ",
		       (long)(rq - F.reqs), op_name[rq->op],
		       (unsigned long long)s->user_data, s->flags, s->fd,
		       rq->out_desc);
	if (rq->op == OP_IOCTL)
		printf("cmd=0x%x arg=0x%llx(%s+%d) splice_fd_in=0x%x ", s->len,
		       (unsigned long long)s->off,
		       rq->arg_kind == ARG_VALID ? "valid" : "bad", rq->arg_off,
		       s->splice_fd_in);
	else
		printf("in=%d(%s) off=%lld off_in=%lld len=%u sflags=0x%x ",
		       s->splice_fd_in, rq->in_desc, (long long)s->off,
		       (long long)s->splice_off_in, s->len, s->splice_flags);
	printf("ioprio=%u buf_index=%u pers=%u addr=0x%llx rw_flags=0x%x addr3=0x%llx pad2=0x%llx batch=%d ring_flags=0x%x table_nr=%d\n",
	       s->ioprio, s->buf_index, s->personality,
	       (unsigned long long)s->addr, s->rw_flags,
	       (unsigned long long)s->addr3,
	       (unsigned long long)s->__pad2[0], rq->batch, F.setup_flags,
	       F.table_nr);
}

static void dump_req(struct req *rq)
{
	if (report_ok())
		print_req(rq);
}

static bool arg_untouched(int idx, int from)
{
	int i;

	for (i = from; i < ARG_SIZE; i++)
		if (argbuf[idx][i] != ARG_FILL)
			return false;
	return true;
}

/* A pool entry never closed this round: the kernel saw that file. */
static bool entry_known(int ent)
{
	return ent >= 0 && F.pool[ent].closed_batch < 0;
}

/* NULL if @res is fine for this ioctl, else why not. */
static const char *check_ioctl(struct req *rq, int res)
{
	int idx = rq - F.reqs;
	__u32 cmd = rq->sqe.len;
	enum kind k;
	bool runs, pipe_cmd, sock_cmd;
	int v;

	if (res >= 0) {
		if (res > 4096)
			return "ioctl result too big";
		if (rq->arg_kind == ARG_VALID) {
			memcpy(&v, &argbuf[idx][rq->arg_off], sizeof(v));
			if (v < 0 || v > (64 << 20))
				return "ioctl stored an out-of-range count";
			if (!arg_untouched(idx, rq->arg_off + 4) ||
			    (rq->arg_off && argbuf[idx][0] != ARG_FILL))
				return "ioctl wrote beyond an int";
		}
	} else if (!arg_untouched(idx, 0)) {
		return "ioctl failed but wrote its argument";
	}
	if (res > 0)
		return NULL;

	if (!entry_known(rq->out_pool)) {
		/* registered slot or closed meanwhile: only the set */
		switch (-res) {
		case 0: case EBADF: case EOPNOTSUPP: case EFAULT: case EINVAL:
		case ENOTTY: case ECANCELED:
			return NULL;
		}
		if (res == -EINTR && F.cancel_issued)
			return NULL;
		return "unexpected result";
	}
	if (res == -ECANCELED || (res == -EINTR && F.cancel_issued))
		return NULL;

	k = F.pool[rq->out_pool].kind;
	pipe_cmd = cmd == FZ_FIONREAD && (KM(k) & KM_PIPE);
	/* SIOCOUTQNSD: TCP's and MPTCP's alone */
	sock_cmd = ((cmd == FZ_FIONREAD || cmd == FZ_SIOCOUTQ) &&
		    (KM(k) & KM_SOCK)) ||
		   (cmd == FZ_SIOCOUTQNSD && (KM(k) & KM_TCP_ANY));
	runs = pipe_cmd || sock_cmd;
	if (!runs)
		return res == -EOPNOTSUPP ? NULL :
			"not on the allowlist for this file: -EOPNOTSUPP expected";
	if (pipe_cmd) {
		if (rq->arg_kind == ARG_VALID)
			return res == 0 ? NULL : "FIONREAD on a pipe must work";
		return res == -EFAULT ? NULL : "bad pointer: -EFAULT expected";
	}
	/* sockets: the protocol's own answer */
	if (cmd != FZ_SIOCOUTQNSD && k != K_TCP_LISTEN &&
	    rq->arg_kind == ARG_VALID)
		return res == 0 ? NULL : "socket ioctl must work";
	switch (-res) {
	case 0: case EFAULT: case EINVAL: case ENOTTY: case EOPNOTSUPP:
		return NULL;
	}
	return "unexpected result";
}

/* ------------------------------------------------------------------ */
/*
 * What a splice or tee may return, from the kernel code (6.12's
 * fs/splice.c, io_uring/splice.c and the files' and protocols' methods;
 * the series changes when a splice waits, never what it returns).
 *
 * io_uring first: the output is looked up before the issue, the input by
 * io_splice()/io_tee(): -EBADF for an fd not open or a slot empty or out
 * of range. A len of 0 then completes with 0 before do_splice()/do_tee()
 * look at the files (io_splice(): "if (sp->len)").
 *
 * do_splice() and do_tee() then check, in this order, what the sqe and
 * the kinds of file alone decide (one errno, whatever happens meanwhile):
 *  -EBADF  input not FMODE_READ or output not FMODE_WRITE
 *  tee: -EINVAL unless both are pipes, and not the same one
 *  pipe -> pipe: -ESPIPE for an offset on either, -EINVAL for the same
 *          pipe at both ends
 *  pipe -> other: -ESPIPE for an input offset; -EINVAL for an output
 *          offset on a file without FMODE_PWRITE (sockets, eventfd,
 *          rings), for O_APPEND, for an offset rw_verify_area() refuses
 *          (negative, or offset + len past LLONG_MAX) and for a file
 *          without ->splice_write (do_splice_from())
 *  other -> pipe: -ESPIPE for an output offset; -EINVAL for an input
 *          offset without FMODE_PREAD or refused by rw_verify_area()
 *  other -> other: -EINVAL
 * and then what may happen while it runs:
 *  from a pipe: 0 once it is empty without writers; -EAGAIN if the splice
 *          is non-blocking (rq->nonblock) and it is empty
 *  into a pipe: -EPIPE without readers (possible only once a read end's fd
 *          was closed: pipe_obj.reader_closed), -EAGAIN when full if
 *          non-blocking; into a pipe from a file without ->splice_read,
 *          -EINVAL, but only after that wait for room (splice_file_to_pipe())
 *  the other end's own results: struct kprop's rd (read into a pipe) and
 *          wr (written from a pipe), and whether bytes can come at all
 *  any of them: -EAGAIN from a non-blocking socket end (in rq->nonblock)
 * Whatever the request: -ECANCELED once cancelled (a cancel issued after
 * it was made) or as a member of a link chain; -EINTR once a cancel was
 * issued this round (a signalled io-wq worker's -ERESTARTSYS, which
 * io_uring turns into -EINTR).
 */
enum {
	EB_BADF, EB_INVAL, EB_SPIPE, EB_PIPE, EB_AGAIN, EB_NOTCONN,
	EB_CONNRESET, EB_CONNREFUSED, EB_MSGSIZE, EB_DESTADDRREQ, EB_NR
};

static const int eb_errno[EB_NR] = {
	EBADF, EINVAL, ESPIPE, EPIPE, EAGAIN, ENOTCONN,
	ECONNRESET, ECONNREFUSED, EMSGSIZE, EDESTADDRREQ,
};

#define EB(e)		(1U << EB_##e)
/* what byte counts can come: some bytes, 0 */
#define RES_BYTES	1U
#define RES_ZERO	2U

struct kprop {
	bool pipe;
	bool r, w;		/* FMODE_READ, FMODE_WRITE */
	bool pos;		/* FMODE_PREAD and FMODE_PWRITE */
	bool append;		/* O_APPEND */
	bool sread, swrite;	/* has ->splice_read, ->splice_write */
	bool reg, sock;		/* a regular file, a socket */
	unsigned int rd, wr;	/* EB_*: reading it into a pipe, writing it */
	unsigned int rd_res, wr_res;	/* RES_* */
};

static const struct kprop kprops[K_NR] = {
	/* pipes and FIFOs: do_splice()/do_tee() handle both ends themselves */
	[K_PIPE_R]	= { .pipe = true, .r = true },
	[K_PIPE_W]	= { .pipe = true, .w = true },
	[K_FIFO_R]	= { .pipe = true, .r = true },
	[K_FIFO_W]	= { .pipe = true, .w = true },
	[K_FIFO_RW]	= { .pipe = true, .r = true, .w = true },
	/*
	 * AF_UNIX stream pair. unix_stream_splice_read(): the sk_err that
	 * unix_release_sock() leaves when the peer closes with bytes unread
	 * (-ECONNRESET); 0 after the peer's close or a shutdown.
	 * unix_stream_sendmsg(): -EPIPE after a shutdown or the peer's close
	 * (pipe_err), or that sk_err (sock_alloc_send_pskb()).
	 */
	[K_UNIX_STREAM]	= { .sock = true, .r = true, .w = true, .sread = true, .swrite = true,
			    .rd = EB(CONNRESET), .rd_res = RES_BYTES | RES_ZERO,
			    .wr = EB(PIPE) | EB(CONNRESET), .wr_res = RES_BYTES },
	/*
	 * AF_UNIX dgram pair. No ->splice_read: copy_splice_read() and
	 * unix_dgram_recvmsg(): data, or 0 after a shutdown; no sk_err is
	 * ever set on it here. unix_dgram_sendmsg(): -EMSGSIZE above
	 * sk_sndbuf - 32 (prefill_sock() makes it small), -ECONNREFUSED once
	 * the peer is closed, -ENOTCONN after that, -ECONNRESET when the peer
	 * closes during the send (restart without a peer), -EPIPE after a
	 * shutdown of either side.
	 */
	[K_UNIX_DGRAM]	= { .sock = true, .r = true, .w = true, .swrite = true, .sread = true,
			    .rd_res = RES_BYTES | RES_ZERO,
			    .wr = EB(MSGSIZE) | EB(CONNREFUSED) | EB(NOTCONN) |
				  EB(CONNRESET) | EB(PIPE),
			    .wr_res = RES_BYTES },
	/*
	 * Connected TCP. tcp_splice_read(): the socket's error (-ECONNRESET;
	 * -EPIPE for a reset in CLOSE_WAIT, tcp_reset()), -ENOTCONN in
	 * TCP_CLOSE without a shutdown, 0 after a FIN or a shutdown.
	 * tcp_sendmsg_locked(): -EPIPE after a shutdown or when no longer
	 * connected (sk_stream_wait_connect()), or the socket's error.
	 */
	[K_TCP]		= { .sock = true, .r = true, .w = true, .sread = true, .swrite = true,
			    .rd = EB(CONNRESET) | EB(PIPE) | EB(NOTCONN),
			    .rd_res = RES_BYTES | RES_ZERO,
			    .wr = EB(PIPE) | EB(CONNRESET), .wr_res = RES_BYTES },
	/*
	 * Listening TCP: tcp_read_sock() refuses it (-ENOTCONN); a
	 * shutdown(SHUT_RD) disconnects it (inet_shutdown()) to TCP_CLOSE:
	 * -ENOTCONN, or 0 once shut down again. Sending:
	 * sk_stream_wait_connect() gives -EPIPE. No byte ever moves.
	 */
	[K_TCP_LISTEN]	= { .sock = true, .r = true, .w = true, .sread = true, .swrite = true,
			    .rd = EB(NOTCONN), .rd_res = RES_ZERO,
			    .wr = EB(PIPE) },
	/*
	 * UDP, never connected, bound or sent to: copy_splice_read() and
	 * udp_recvmsg() find nothing (0 after a shutdown); udp_sendmsg():
	 * -EMSGSIZE above 0xffff bytes, else -EDESTADDRREQ; udpv6_sendmsg()
	 * -EDESTADDRREQ first.
	 */
	[K_UDP]		= { .sock = true, .r = true, .w = true, .sread = true, .swrite = true,
			    .rd_res = RES_ZERO,
			    .wr = EB(MSGSIZE) | EB(DESTADDRREQ) },
	[K_UDP6]	= { .sock = true, .r = true, .w = true, .sread = true, .swrite = true,
			    .rd_res = RES_ZERO, .wr = EB(DESTADDRREQ) },
	/*
	 * NETLINK_USERSOCK, O_NONBLOCK: nothing ever arrives, so
	 * netlink_recvmsg() gives -EAGAIN only; netlink_sendmsg(): -EMSGSIZE
	 * above sk_sndbuf - 32, else -ECONNREFUSED (no kernel socket at port
	 * 0: netlink_getsockbyportid()). shutdown(2) does nothing to it.
	 */
	[K_NETLINK]	= { .sock = true, .r = true, .w = true, .sread = true, .swrite = true,
			    .wr = EB(MSGSIZE) | EB(CONNREFUSED) },
	/*
	 * tmpfs (memfd_create(), or reopened through /proc): shmem's
	 * ->splice_read gives 0 at or past the end; iter_file_splice_write()
	 * writes anywhere below LLONG_MAX (s_maxbytes), sparse.
	 */
	[K_FILE]	= { .reg = true, .r = true, .w = true, .pos = true, .sread = true,
			    .swrite = true, .rd_res = RES_BYTES | RES_ZERO,
			    .wr_res = RES_BYTES },
	[K_FILE_APPEND]	= { .reg = true, .r = true, .w = true, .pos = true, .append = true,
			    .sread = true, .swrite = true,
			    .rd_res = RES_BYTES | RES_ZERO },
	[K_FILE_RO]	= { .reg = true, .r = true, .pos = true, .sread = true, .swrite = true,
			    .rd_res = RES_BYTES | RES_ZERO },
	/* O_PATH: fget() refuses it, -EBADF at the lookup */
	[K_OPATH]	= { 0 },
	/* "/" (rootfs): simple directory operations, no ->splice_read */
	[K_DIR]		= { .r = true, .pos = true },
	/* null_fops: ->splice_write (splice_write_null()) but no ->splice_read */
	[K_DEVNULL]	= { .r = true, .w = true, .pos = true, .swrite = true,
			    .wr_res = RES_BYTES },
	/* anonymous inodes without splice methods or FMODE_PREAD/PWRITE */
	[K_EVENTFD]	= { .r = true, .w = true },
	[K_URING]	= { .r = true, .w = true },
	[K_URING_OTHER]	= { .r = true, .w = true },
};

struct expect {
	unsigned int errs;	/* EB_* */
	unsigned int res;	/* RES_* */
};

/* rw_verify_area() on an explicit offset (6.12, no FOP_UNSIGNED_OFFSET) */
static bool bad_pos(__u64 off, __u32 len)
{
	return (long long)off < 0 || (long long)(off + len) < 0;
}

/* Into the pipe of pool entry @oe: no reader, full. */
static void into_pipe(const struct req *rq, int oe, struct expect *x)
{
	if (F.pipes[F.pool[oe].pipe].reader_closed)
		x->errs |= EB(PIPE);
	if (rq->nonblock)
		x->errs |= EB(AGAIN);
}

/* Out of a pipe: empty without writers, empty. */
static void from_pipe(const struct req *rq, struct expect *x)
{
	x->res |= RES_ZERO;
	if (rq->nonblock)
		x->errs |= EB(AGAIN);
}

/*
 * A regular file to a socket, with the series: sendfile(2) (io_sendfile()),
 * whatever the length. -EINVAL for an output offset or a splice flag, or
 * for an input offset rw_verify_area() refuses; then the socket's own
 * results, -EAGAIN if it is non-blocking, and 0 at or past the file's end.
 */
static void sendfile_expect(const struct req *rq, const struct kprop *op,
			    struct expect *x)
{
	const struct io_uring_sqe *s = &rq->sqe;

	if (s->off != NO_OFF || (s->splice_flags & FZ_SPLICE_F_ALL) ||
	    (s->splice_off_in != NO_OFF && bad_pos(s->splice_off_in, s->len))) {
		x->errs |= EB(INVAL);
		return;
	}
	x->errs |= op->wr;
	x->res |= op->wr_res | RES_ZERO;
	if (rq->nonblock)
		x->errs |= EB(AGAIN);
}

/*
 * Add what the request may give if its input is pool entry @ie and its
 * output @oe (-1: no file there) to @x, in the kernel's order.
 */
static void pair_expect(const struct req *rq, int ie, int oe, struct expect *x)
{
	const struct io_uring_sqe *s = &rq->sqe;
	const struct kprop *ip, *op;
	bool off_in = s->splice_off_in != NO_OFF, off_out = s->off != NO_OFF;

	if (ie < 0 || oe < 0) {
		x->errs |= EB(BADF);
		return;
	}
	if (have_sendfile && rq->op == OP_SPLICE &&
	    kprops[F.pool[ie].kind].reg && kprops[F.pool[oe].kind].sock) {
		sendfile_expect(rq, &kprops[F.pool[oe].kind], x);
		return;
	}
	if (!s->len) {
		x->res |= RES_ZERO;
		return;
	}
	ip = &kprops[F.pool[ie].kind];
	op = &kprops[F.pool[oe].kind];
	if (!ip->r || !op->w) {
		x->errs |= EB(BADF);
		return;
	}
	if (ip->pipe && op->pipe) {
		if (rq->op == OP_SPLICE && (off_in || off_out)) {
			x->errs |= EB(SPIPE);
			return;
		}
		if (F.pool[ie].pipe == F.pool[oe].pipe) {
			x->errs |= EB(INVAL);
			return;
		}
		from_pipe(rq, x);
		into_pipe(rq, oe, x);
		x->res |= RES_BYTES;
		return;
	}
	if (rq->op == OP_TEE) {
		x->errs |= EB(INVAL);
		return;
	}
	if (ip->pipe) {
		if (off_in) {
			x->errs |= EB(SPIPE);
			return;
		}
		if ((off_out && (!op->pos || bad_pos(s->off, s->len))) ||
		    op->append || !op->swrite) {
			x->errs |= EB(INVAL);
			return;
		}
		from_pipe(rq, x);
		x->errs |= op->wr;
		x->res |= op->wr_res;
		return;
	}
	if (op->pipe) {
		if (off_out) {
			x->errs |= EB(SPIPE);
			return;
		}
		if (off_in && (!ip->pos || bad_pos(s->splice_off_in, s->len))) {
			x->errs |= EB(INVAL);
			return;
		}
		into_pipe(rq, oe, x);
		if (!ip->sread) {
			x->errs |= EB(INVAL);
			return;
		}
		x->errs |= ip->rd;
		x->res |= ip->rd_res;
		if (rq->nonblock)
			x->errs |= EB(AGAIN);
		return;
	}
	x->errs |= EB(INVAL);
}

/* Everything the request may give, over every file each end may be. */
static void splice_expect(const struct req *rq, struct expect *x)
{
	int i, o;

	memset(x, 0, sizeof(*x));
	for (i = 0; i < 64; i++) {
		if (!(rq->in_cand & (1ULL << i)))
			continue;
		for (o = 0; o < 64; o++)
			if (rq->out_cand & (1ULL << o))
				pair_expect(rq, i == 63 ? -1 : i,
					    o == 63 ? -1 : o, x);
	}
}

static void print_errs(char *buf, size_t len, unsigned int errs,
		       unsigned int res)
{
	int i, n = 0;

	buf[0] = 0;
	if (res & RES_BYTES)
		n += snprintf(buf + n, len - n, " count");
	else if (res & RES_ZERO)
		n += snprintf(buf + n, len - n, " 0");
	for (i = 0; i < EB_NR && n < (int)len; i++)
		if (errs & (1U << i))
			n += snprintf(buf + n, len - n, " -%s",
				      errname(eb_errno[i]));
	if (!buf[0])
		snprintf(buf, len, " nothing");
}

static const char *check_splice(struct req *rq, int res)
{
	static char why[300];
	struct expect x;
	char set[160];
	int i;

	if (res == -ECANCELED || res == -EINTR)
		return check_cancelled(rq, res);
	splice_expect(rq, &x);
	if (res >= 0) {
		if (res > (long long)rq->sqe.len)
			return "byte count beyond len";
		if (x.res & (res > 0 ? RES_BYTES : RES_ZERO))
			return NULL;
	} else {
		for (i = 0; i < EB_NR; i++)
			if (-res == eb_errno[i] && (x.errs & (1U << i)))
				return NULL;
		if (res == -EAGAIN && !rq->nonblock)
			return "-EAGAIN without SPLICE_F_NONBLOCK or an O_NONBLOCK end";
	}
	print_errs(set, sizeof(set), x.errs, x.res);
	snprintf(why, sizeof(why), "not what %s -> %s can give (expected:%s)",
		 rq->in_desc, rq->out_desc, set);
	return why;
}

static void stat_res(enum op op, int res)
{
	if (res >= 0) {
		stats->ok[op]++;
		if (res > 0)
			stats->ok_pos[op]++;
	} else {
		stats->err[op][err_slot(-res)]++;
	}
}

/*
 * 6.12: requests refused at submission after a waiting drain post their
 * CQEs at once, and the drain, which waits for the CQ tail to equal its
 * sequence exactly (req_need_defer()), counts them: it runs too early or,
 * once the tail has passed its sequence, never.  The series carries the fix
 * (requests are counted, as upstream since 6.16); such failures are
 * counted apart (F_DRAIN_612) and are an expected failure only without
 * it.  Was an sqe after the one at @n refused so?
 */
static bool refused_after(int n)
{
	int i;

	for (i = F.reqs[n].head + 1; i < F.nreqs; i++)
		if (F.reqs[i].exact_kind == EX_INIT)
			return true;
	return false;
}

/*
 * A drained request starts only once every request submitted before it
 * has completed, so their CQEs come first.
 */
static void check_drain_order(struct req *rq)
{
	int i, n = rq - F.reqs;

	for (i = 0; i < n; i++) {
		if (F.reqs[i].done || F.reqs[i].optional)
			continue;
		fail(refused_after(n) ? F_DRAIN_612 : F_DRAIN,
		     "IOSQE_IO_DRAIN sqe #%d completed (res %d) before sqe #%d submitted ahead of it",
		     n, rq->res, i);
		dump_req(rq);
		dump_req(&F.reqs[i]);
		return;
	}
}

/*
 * The 6.12 drain miscount of refused_after(), as a stall.  (A drain flag
 * inside a link, even on a refused sqe, drains the link's head and the
 * request after the link.)  Is this such a stall: everything lost comes
 * after a drain flag, and sqes were refused after it?
 */
static bool drain_stall(void)
{
	int i, d = -1, lost_min = -1;
	bool refused_after = false;

	for (i = 0; i < F.nreqs; i++) {
		struct req *rq = &F.reqs[i];

		if (!rq->done && !rq->optional && lost_min < 0)
			lost_min = i;
		/* a drain flag in a link drains the link's head */
		if (d < 0 && (rq->sqe.flags & IOSQE_IO_DRAIN))
			d = rq->head;
		else if (d >= 0 && rq->exact_kind == EX_INIT)
			refused_after = true;
	}
	return d >= 0 && lost_min >= d && refused_after;
}

static void handle_cqe(struct iou_cqe *c)
{
	unsigned long long idx = (c->user_data & 0xffffffffULL) - 1;
	const char *bad = NULL;
	struct req *rq;
	char want[64];

	stats->cqes++;
	if (c->user_data == (CANCEL_UD | F.round)) {
		reg_stat(REG_ASYNC_CANCEL, c->res);
		if (!F.cancels--)
			fail(F_CQE, "one CQE too many for our ASYNC_CANCEL sqes");
		return;
	}
	if ((c->user_data >> 32) != (F.round & 0xffffffffULL) ||
	    idx >= (unsigned long long)F.nreqs) {
		fail(F_CQE, "CQE with unknown user_data 0x%llx res %d",
		     (unsigned long long)c->user_data, c->res);
		return;
	}
	rq = &F.reqs[idx];
	if (rq->done) {
		fail(F_CQE, "second CQE for sqe #%llu: res %d, first %d",
		     idx, c->res, rq->res);
		dump_req(rq);
		return;
	}
	rq->done = true;
	rq->res = c->res;
	if (rq->optional)
		F.inflight_opt--;
	else
		F.inflight--;
	stat_res(rq->op, c->res);
	if (verbose) {
		ksft_print_msg("cqe #%llu res %d (%s)\n", idx, c->res,
			       c->res < 0 ? errname(-c->res) : "ok");
	}
	/* (a cancelled one never started) */
	if ((rq->sqe.flags & IOSQE_IO_DRAIN) && rq->exact_kind != EX_INIT &&
	    c->res != -ECANCELED)
		check_drain_order(rq);

	if (c->flags) {
		bad = "CQE flags set";
	} else if (rq->exact_kind == EX_INIT) {
		if (c->res != rq->exact)
			bad = "wrong errno";
	} else if (rq->exact_kind == EX_ISSUE) {
		if (c->res != rq->exact && c->res != -ECANCELED &&
		    !(c->res == -EINTR && F.cancel_issued))
			bad = "wrong errno";
	} else if (rq->op == OP_IOCTL) {
		bad = check_ioctl(rq, c->res);
	} else if (rq->mirror >= 0) {
		bad = check_mirror(rq, c->res);
	} else {
		bad = check_splice(rq, c->res);
	}
	if (!bad && rq->skip_flag && rq->exact_kind == EX_NONE &&
	    (rq->op == OP_IOCTL ? c->res >= 0 : c->res == (int)rq->sqe.len))
		bad = "CQE posted for a success with IOSQE_CQE_SKIP_SUCCESS";
	if (!bad)
		return;
	if (rq->exact_kind != EX_NONE)
		snprintf(want, sizeof(want), ", expected %s (%s)",
			 errname(-rq->exact), rq->why);
	else
		want[0] = 0;
	fail(c->res == -512 ? F_RESTART : F_RES, "%s: sqe #%llu %s res %d (%s)%s", bad, idx,
	     op_name[rq->op], c->res, c->res < 0 ? errname(-c->res) : "count",
	     want);
	dump_req(rq);
}

/* DEFER_TASKRUN rings only complete from io_uring_enter(). */
static void reap_available(void)
{
	struct iou_cqe c;

	iou_sys_enter(F.ring.fd, 0, 0, IORING_ENTER_GETEVENTS);
	while (!iou_peek_cqe(&F.ring, &c))
		handle_cqe(&c);
}

static void reap_wait(unsigned int ms)
{
	long long end = now_ms() + ms;
	struct iou_cqe c;
	long long left;

	reap_available();
	while (F.inflight + F.inflight_opt + F.cancels > 0) {
		beat();
		left = end - now_ms();
		if (left <= 0)
			return;
		if (iou_wait_cqe_timeout(&F.ring, &c, left))
			return;
		handle_cqe(&c);
		reap_available();
	}
}

/* Hand everything queued to the kernel; it may stop after a failed sqe. */
static void submit_all(void)
{
	unsigned int tail = F.ring.sqe_next;
	long long end = now_ms() + 5000;
	int ret;

	__atomic_store_n(F.ring.sq_tail, tail, __ATOMIC_RELEASE);
	F.batch++;
	F.chain_skip = false;
	F.chain_head = -1;
	while (__atomic_load_n(F.ring.sq_head, __ATOMIC_ACQUIRE) != tail) {
		unsigned int left = tail -
			__atomic_load_n(F.ring.sq_head, __ATOMIC_ACQUIRE);

		if (F.sqpoll) {
			iou_sys_enter(F.ring.fd, left, 0,
				      IORING_ENTER_SQ_WAKEUP);
			usleep(200);
		} else {
			__atomic_store_n(&wd_in_submit, 1, __ATOMIC_RELEASE);
			ret = iou_sys_enter(F.ring.fd, left, 0, 0);
			__atomic_store_n(&wd_in_submit, 0, __ATOMIC_RELEASE);
			if (__atomic_exchange_n(&wd_fired_in_submit, 0,
						__ATOMIC_ACQ_REL))
				fail(F_BLOCKED, "io_uring_enter(2) submitting %u sqes took over %d ms: an inline issue blocked",
				     left, WD_MS);
			if (ret < 0 && ret != -EAGAIN && ret != -EBUSY &&
			    ret != -EINTR) {
				fail(F_SETUP, "io_uring_enter submit: %s",
				     errname(-ret));
				F.stop = true;
				return;
			}
			if (ret <= 0)
				reap_available();
		}
		beat();
		if (now_ms() > end) {
			fail(F_CQE, "%u sqes not consumed after 5 s", left);
			F.stop = true;
			return;
		}
	}
}

/*
 * Cancel by IORING_OP_ASYNC_CANCEL.  With SQPOLL the work runs in the
 * poller's io-wq, which IORING_REGISTER_SYNC_CANCEL from this task does not
 * search: only a cancel sqe, issued by the poller, finds it.
 */
static void cancel_sqe(__u64 ud, unsigned int flags)
{
	struct io_uring_sqe *sqe = iou_get_sqe(&F.ring);

	if (!sqe) {
		submit_all();
		sqe = iou_get_sqe(&F.ring);
		if (!sqe)
			return;
	}
	sqe->opcode = IORING_OP_ASYNC_CANCEL;
	sqe->addr = ud;
	sqe->cancel_flags = flags;
	sqe->flags = F.restricted ? F.flags_required : 0;
	sqe->user_data = CANCEL_UD | F.round;
	F.cancels++;
	F.cancel_issued = true;
	__atomic_add_fetch(&F.cancel_gen, 1, __ATOMIC_SEQ_CST);
	submit_all();
}

static void cancel_all(void)
{
	if (F.sqpoll)
		cancel_sqe(0, IORING_ASYNC_CANCEL_ANY);
	else
		sync_cancel(0, IORING_ASYNC_CANCEL_ANY, 50000000);
}

/* ------------------------------------------------------------------ */
/* moving data without blocking */

static ssize_t nb_write(int fd, size_t len)
{
	struct iovec iov = { junk, len };
	ssize_t ret;

	if (rwf_nowait) {
		ret = syscall(__NR_pwritev2, fd, &iov, 1, -1L, -1L, RWF_NOWAIT);
		if (ret >= 0 || errno != EOPNOTSUPP)
			return ret;
		rwf_nowait = false;
	}
	return -1;
}

static ssize_t nb_read(int fd, size_t len)
{
	static unsigned char sink[65536];
	struct iovec iov = { sink, len < sizeof(sink) ? len : sizeof(sink) };
	ssize_t ret;

	if (rwf_nowait) {
		ret = syscall(__NR_preadv2, fd, &iov, 1, -1L, -1L, RWF_NOWAIT);
		if (ret >= 0 || errno != EOPNOTSUPP)
			return ret;
		rwf_nowait = false;
	}
	return -1;
}

static void feed(int i, size_t len)
{
	struct pent *e = &F.pool[i];

	if (e->fd < 0)
		return;
	if (KM(e->kind) & KM_SOCK_DATA)
		send(e->fd, junk, len, MSG_DONTWAIT);
	else if (KM(e->kind) & KM_PIPE_OUT)
		nb_write(e->fd, len);
}

static void drain(int i)
{
	struct pent *e = &F.pool[i];
	int n;

	if (e->fd < 0)
		return;
	if (KM(e->kind) & KM_SOCK_DATA) {
		for (n = 0; n < 16; n++)
			if (recv(e->fd, junk, sizeof(junk), MSG_DONTWAIT) <= 0)
				break;
	} else if (KM(e->kind) & KM_PIPE_IN) {
		for (n = 0; n < 16; n++)
			if (nb_read(e->fd, 65536) <= 0)
				break;
	}
}

/*
 * Sockets first: a splice between a socket and a pipe waits on the socket
 * with the pipe locked, and pipe reads and writes would wait behind it.
 */
static void feed_and_drain_all(void)
{
	int i, pass;

	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < F.npool; i++) {
			if (!!(KM(F.pool[i].kind) & KM_SOCK) == pass)
				continue;
			drain(i);
			feed(i, 4096);
		}
	}
}

/* ------------------------------------------------------------------ */
/* things done while requests are in flight */

static void socket_pass(void)
{
	int i;

	for (i = 0; i < F.npool; i++) {
		if (!(KM(F.pool[i].kind) & KM_SOCK))
			continue;
		drain(i);
		feed(i, 4096);
	}
}

/*
 * Pipe reads, writes, resizes and last closes wait for the pipe's mutex,
 * which a splice holds while it sleeps on a socket: give the sockets
 * something to do first.
 */
static void before_pipe_op(int i)
{
	if (KM(F.pool[i].kind) & KM_PIPE)
		socket_pass();
}

static void chaos(void)
{
	int i, r = rnd(100);

	beat();
	if (r < 22) {
		if (F.table_nr || one_in(4))
			update_table();
	} else if (r < 30) {
		i = rnd(F.npool);
		if (F.pool[i].fd >= 0 && F.pool[i].owned) {
			if (verbose)
				ksft_print_msg("close %d (%s)\n", F.pool[i].fd,
					       kind_name[F.pool[i].kind]);
			before_pipe_op(i);
			/*
			 * Nothing of ours could reach a socket any more, so no
			 * splice may stay asleep on it with a pipe locked.
			 */
			if (KM(F.pool[i].kind) & KM_SOCK)
				shutdown(F.pool[i].fd, SHUT_RDWR);
			pool_close(i);
		}
	} else if (r < 45) {
		i = rnd(F.npool);
		before_pipe_op(i);
		feed(i, 1 + rnd(8192));
	} else if (r < 58) {
		i = rnd(F.npool);
		before_pipe_op(i);
		drain(i);
	} else if (r < 64) {
		static const int sizes[] = { 4096, 8192, 65536, 1 << 20 };

		i = pick_kind(KM_PIPE);
		if (i >= 0 && F.pool[i].fd >= 0) {
			before_pipe_op(i);
			fcntl(F.pool[i].fd, F_SETPIPE_SZ, sizes[rnd(4)]);
		}
	} else if (r < 68) {
		i = pick_kind(KM_SOCK);
		if (i >= 0 && F.pool[i].fd >= 0)
			shutdown(F.pool[i].fd, rnd(3));
	} else if (r < 71) {
		/*
		 * 6.12's unregister waits for every request using the table,
		 * deferred ones too (after a drain that may never happen), and
		 * only the watchdog's cancel ends a wait that needs one.
		 */
		if (F.drain_seen || !wd_can_cancel())
			return;
		unregister_table();
		if (one_in(2))
			register_table();
	} else if (r < 76) {
		if (!F.nreqs || F.iopoll)
			return;
		if (F.sqpoll || one_in(2))
			cancel_sqe(F.reqs[rnd(F.nreqs)].sqe.user_data, 0);
		else
			sync_cancel(F.reqs[rnd(F.nreqs)].sqe.user_data, 0,
				    rnd(5000000));
	} else if (r < 80) {
		i = rnd(F.npool);
		if (F.pool[i].fd >= 0 && F.pool[i].owned &&
		    F.pool[i].kind != K_NETLINK)
			set_nonblock(i, !F.pool[i].nonblock);
	} else if (r < 90) {
		usleep(rnd(3000));
	}
}

/* ------------------------------------------------------------------ */
/* the watchdog */

static void *watchdog(void *arg)
{
	int i, fd, n;

	for (;;) {
		usleep(50000);
		pthread_mutex_lock(&wd_lock);
		if (wd_armed &&
		    now_ms() - __atomic_load_n(&wd_beat, __ATOMIC_RELAXED) > WD_MS) {
			if (!wd_fired)
				stats->watchdog_rounds++;
			wd_fired = true;
			if (__atomic_load_n(&wd_in_submit, __ATOMIC_ACQUIRE))
				__atomic_store_n(&wd_fired_in_submit, 1,
						 __ATOMIC_RELEASE);
			for (i = 0; i < F.npool; i++) {
				fd = __atomic_load_n(&F.pool[i].fd, __ATOMIC_RELAXED);
				if (fd < 0 || !(KM(F.pool[i].kind) &
						(KM_SOCK | KM(K_NETLINK))))
					continue;
				shutdown(fd, SHUT_RDWR);
				for (n = 0; n < 64; n++)
					if (recv(fd, junk, sizeof(junk),
						 MSG_DONTWAIT) <= 0)
						break;
			}
			/* still stuck: cancel everything (not SQPOLL's io-wq) */
			if (wd_ring >= 0 &&
			    now_ms() - __atomic_load_n(&wd_beat, __ATOMIC_RELAXED) >
			    2 * WD_MS) {
				struct io_uring_sync_cancel_reg sc = {
					.flags = IORING_ASYNC_CANCEL_ANY,
					.timeout.tv_nsec = 10000000,
				};

				/* before: the main thread may reap at once */
				__atomic_store_n(&F.cancel_issued, true,
						 __ATOMIC_SEQ_CST);
				__atomic_add_fetch(&F.cancel_gen, 1,
						   __ATOMIC_SEQ_CST);
				iou_sys_register(wd_ring,
						 IORING_REGISTER_SYNC_CANCEL,
						 &sc, 1);
			}
		}
		pthread_mutex_unlock(&wd_lock);
	}
	return arg;
}

static void wd_arm(bool on)
{
	pthread_mutex_lock(&wd_lock);
	wd_armed = on;
	wd_fired = false;
	wd_ring = on && wd_can_cancel() ? F.ring.fd : -1;
	beat();
	pthread_mutex_unlock(&wd_lock);
}

/* ------------------------------------------------------------------ */
/* a round */

static int setup_ring(void)
{
	unsigned int entries, flags = 0, tries[3];
	int ret = -EINVAL, i;

	entries = 1 + rnd(one_in(8) ? 512 : 64);
	if (one_in(3))
		flags |= IORING_SETUP_SUBMIT_ALL;
	if (one_in(4))
		flags |= IORING_SETUP_COOP_TASKRUN;
	if (one_in(4)) {
		flags |= IORING_SETUP_SINGLE_ISSUER;
		if (one_in(2))
			flags |= IORING_SETUP_DEFER_TASKRUN;
	}
	if (one_in(16))
		flags |= IORING_SETUP_IOPOLL;
	else if (one_in(16))
		flags = (flags & ~IORING_SETUP_DEFER_TASKRUN) |
			IORING_SETUP_SQPOLL;
	if (one_in(8))
		flags |= IORING_SETUP_R_DISABLED;

	tries[0] = flags;
	tries[1] = flags & ~(IORING_SETUP_DEFER_TASKRUN |
			     IORING_SETUP_SINGLE_ISSUER |
			     IORING_SETUP_SQPOLL);
	tries[2] = 0;
	for (i = 0; i < 3; i++) {
		ret = iou_setup(&F.ring, entries, tries[i]);
		if (!ret)
			break;
	}
	if (ret)
		return ret;
	F.setup_flags = tries[i];
	stats->setup_flags_seen |= F.setup_flags;
	F.sqpoll = F.setup_flags & IORING_SETUP_SQPOLL;
	F.iopoll = F.setup_flags & IORING_SETUP_IOPOLL;
	F.restricted = F.setup_flags & IORING_SETUP_R_DISABLED;
	return 0;
}

static void add_restriction(struct io_uring_restriction *r, int *n,
			    __u16 opcode, __u8 val)
{
	memset(&r[*n], 0, sizeof(r[*n]));
	r[*n].opcode = opcode;
	r[*n].sqe_op = val;
	(*n)++;
}

/* Restrictions, then enable the ring; a few register ops stay allowed. */
static int restrict_ring(void)
{
	struct io_uring_restriction r[16];
	int n = 0, ret;

	add_restriction(r, &n, IORING_RESTRICTION_REGISTER_OP,
			IORING_REGISTER_SYNC_CANCEL);
	add_restriction(r, &n, IORING_RESTRICTION_REGISTER_OP,
			IORING_REGISTER_FILES);
	add_restriction(r, &n, IORING_RESTRICTION_REGISTER_OP,
			IORING_UNREGISTER_FILES);
	if (!one_in(4))
		add_restriction(r, &n, IORING_RESTRICTION_REGISTER_OP,
				IORING_REGISTER_FILES_UPDATE);
	add_restriction(r, &n, IORING_RESTRICTION_SQE_OP,
			IORING_OP_ASYNC_CANCEL);
	F.allowed_ops = 0;
	if (!one_in(3)) {
		add_restriction(r, &n, IORING_RESTRICTION_SQE_OP,
				IORING_OP_SPLICE);
		F.allowed_ops |= 1U << OP_SPLICE;
	}
	if (!one_in(3)) {
		add_restriction(r, &n, IORING_RESTRICTION_SQE_OP,
				IORING_OP_TEE);
		F.allowed_ops |= 1U << OP_TEE;
	}
	if (have_ioctl && !one_in(3)) {
		add_restriction(r, &n, IORING_RESTRICTION_SQE_OP, OP_IOCTL_NR);
		F.allowed_ops |= 1U << OP_IOCTL;
	}
	F.flags_allowed = one_in(3) ? 0x7f : rnd(0x80);
	add_restriction(r, &n, IORING_RESTRICTION_SQE_FLAGS_ALLOWED,
			F.flags_allowed);
	F.flags_required = 0;
	if (one_in(8)) {
		F.flags_required = IOSQE_ASYNC;
		add_restriction(r, &n, IORING_RESTRICTION_SQE_FLAGS_REQUIRED,
				F.flags_required);
	}
	ret = iou_sys_register(F.ring.fd, IORING_REGISTER_RESTRICTIONS, r, n);
	if (ret)
		return ret;
	return iou_sys_register(F.ring.fd, IORING_REGISTER_ENABLE_RINGS,
				NULL, 0);
}

static void start_round(void)
{
	int ret;

	memset(&F.ring, 0, sizeof(F.ring));
	memset(&F.other, 0, sizeof(F.other));
	F.ring.fd = -1;
	F.other.fd = -1;
	F.nreqs = 0;
	F.inflight = 0;
	F.inflight_opt = 0;
	F.batch = 0;
	F.cancels = 0;
	F.table_nr = 0;
	F.personality = 0;
	F.cancel_issued = false;
	F.cancel_gen = 0;
	F.drain_disabled = false;
	F.drain_seen = false;
	F.chain_skip = false;
	F.chain_head = -1;

	ret = setup_ring();
	if (ret) {
		fail(F_SETUP, "io_uring_setup: %s", errname(-ret));
		F.stop = true;
		return;
	}
	F.skip_round = !F.sqpoll && one_in(6);
	make_pool();
	make_mirrors();
	wd_arm(true);
	if (!one_in(4))
		register_table();
	if (one_in(4)) {
		ret = iou_sys_register(F.ring.fd,
				       IORING_REGISTER_PERSONALITY, NULL, 0);
		F.personality = ret > 0 ? ret : 0;
	}
	if (F.restricted) {
		ret = restrict_ring();
		if (ret) {
			fail(F_SETUP, "restrictions: %s", errname(-ret));
			F.stop = true;
		}
	}
	if (verbose)
		ksft_print_msg("round %llu: ring %u entries flags 0x%x, %d files, table %d, personality %d, restricted %d (ops 0x%x flags 0x%x/0x%x)\n",
			       F.round, F.ring.sq_entries, F.setup_flags,
			       F.npool, F.table_nr, F.personality,
			       F.restricted, F.allowed_ops, F.flags_allowed,
			       F.flags_required);
}

static void check_flags_kept(void)
{
	int i, fl;

	for (i = 0; i < F.npool; i++) {
		struct pent *e = &F.pool[i];

		if (e->fd < 0 || e->kind == K_OPATH)
			continue;
		fl = fcntl(e->fd, F_GETFL);
		if (fl >= 0 && !!(fl & O_NONBLOCK) != e->nonblock)
			fail(F_RES, "O_NONBLOCK of %s fd %d changed behind our back",
			     kind_name[e->kind], e->fd);
	}
}

/*
 * Make every request finish: feed and drain everything, clear the table,
 * then close and shut down, then cancel; all with a deadline.
 */
static void finish_requests(void)
{
	long long end = now_ms() + LOST_MS, progress = now_ms();
	bool closed = false, cancelled = false;
	int it, i, last = F.inflight;

	check_flags_kept();
	for (it = 0; F.inflight > 0 && now_ms() < end; it++) {
		beat();
		if (F.inflight != last) {
			last = F.inflight;
			progress = now_ms();
		}
		/* the known drain stall: no need to wait LOST_MS for it */
		if (cancelled && now_ms() - progress > 1000 && drain_stall())
			break;
		if (it == 1)
			clear_table();
		if (it == 3 && !closed) {
			/*
			 * Sockets first, so that no splice sleeps on one with
			 * a pipe locked when our close releases that pipe.
			 * Keep pipe read ends: the watch needs them.
			 */
			for (i = 0; i < F.npool; i++)
				if (F.pool[i].fd >= 0 &&
				    (KM(F.pool[i].kind) & KM_SOCK))
					shutdown(F.pool[i].fd, SHUT_RDWR);
			feed_and_drain_all();
			for (i = 0; i < F.npool; i++) {
				struct pent *e = &F.pool[i];

				if (e->kind != K_PIPE_R && e->kind != K_FIFO_R)
					pool_close(i);
			}
			closed = true;
		}
		if (it >= 5) {
			cancel_all();
			cancelled = true;
		}
		feed_and_drain_all();
		reap_wait(it < 3 ? 2 : 20);
	}
	if (it > 1)
		stats->blocked_rounds++;
	if (cancelled)
		stats->cancels_needed++;

	/* optional CQEs: nothing may stay in flight once we stop looking */
	if (F.inflight_opt > 0) {
		for (it = 0; it < 20 && now_ms() < end; it++) {
			feed_and_drain_all();
			if (F.sqpoll)
				cancel_sqe(0, IORING_ASYNC_CANCEL_ANY);
			else if (sync_cancel(0, IORING_ASYNC_CANCEL_ANY,
					     50000000) == -ENOENT)
				break;
			reap_wait(5);
		}
		reap_wait(5);
		stats->skipped += F.inflight_opt;
	}
	if (F.cancels > 0)
		reap_wait(end > now_ms() ? end - now_ms() : 1);
	if ((F.inflight > 0 || F.cancels > 0) && drain_stall()) {
		/* known: report it apart, the ring's exit ends them */
		fail(F_DRAIN_612, "%d requests (and %d cancels) stuck behind an IOSQE_IO_DRAIN sqe that has sqes refused at submission after it",
		     F.inflight, F.cancels);
		for (i = 0; i < F.nreqs; i++)
			if (!F.reqs[i].done && !F.reqs[i].optional) {
				dump_req(&F.reqs[i]);
				break;
			}
		stats->drain_stalls++;
	} else if (F.inflight > 0 || F.cancels > 0) {
		fail(F_CQE, "lost CQE: %d requests (and %d cancels) without a completion %d ms after the round ended",
		     F.inflight, F.cancels, LOST_MS);
		for (i = 0; i < F.nreqs; i++)
			if (!F.reqs[i].done && !F.reqs[i].optional)
				dump_req(&F.reqs[i]);
		if (report_ok()) {
			char path[64];

			ksft_print_msg("ring state and our threads:\n");
			snprintf(path, sizeof(path), "/proc/self/fdinfo/%d",
				 F.ring.fd);
			dump_file(path);
			dump_stacks(getpid());
		}
		F.stop = true;
	}
	reap_available();
}

/*
 * After the ring is gone nothing may hold a pipe's write end: the read
 * end must see POLLHUP.  A file reference that io_uring failed to drop
 * shows up here.
 */
static void close_and_watch(void)
{
	struct pollfd pfd[MAX_PIPES];
	int watch_pipe[MAX_PIPES];
	long long end;
	int i, n = 0, left;

	for (i = 0; i < F.npipes; i++) {
		struct pipe_obj *po = &F.pipes[i];
		int fd = -1;

		if (po->r >= 0 && F.pool[po->r].fd >= 0) {
			fd = F.pool[po->r].fd;
			F.pool[po->r].fd = -1;
		} else if (proc_ok && po->w >= 0 && F.pool[po->w].fd >= 0) {
			fd = reopen(F.pool[po->w].fd, O_RDONLY | O_NONBLOCK);
		} else if (proc_ok && po->rw >= 0 && F.pool[po->rw].fd >= 0) {
			fd = reopen(F.pool[po->rw].fd, O_RDONLY | O_NONBLOCK);
		}
		if (fd < 0)
			continue;
		fcntl(fd, F_SETFL, O_NONBLOCK);
		watch_pipe[n] = i;
		pfd[n].fd = fd;
		pfd[n].events = POLLIN;
		n++;
	}
	/*
	 * The ring first: its exit cancels whatever an optional request may
	 * still be doing with a pipe locked, which our closes would wait for.
	 * The watchdog stays on until our closes are done.
	 */
	stats->phase = "closing";
	pthread_mutex_lock(&wd_lock);
	wd_ring = -1;
	pthread_mutex_unlock(&wd_lock);
	iou_exit(&F.other);
	iou_exit(&F.ring);
	close_mirrors();
	for (i = 0; i < F.npool; i++)
		pool_close(i);
	wd_arm(false);
	stats->phase = "watching pipes";

	end = now_ms() + WATCH_MS;
	for (;;) {
		left = 0;
		for (i = 0; i < n; i++) {
			if (pfd[i].fd < 0)
				continue;
			pfd[i].revents = 0;
			if (poll(&pfd[i], 1, 0) == 1 &&
			    (pfd[i].revents & (POLLHUP | POLLERR))) {
				close(pfd[i].fd);
				pfd[i].fd = -1;
				continue;
			}
			while (read(pfd[i].fd, junk, sizeof(junk)) > 0)
				;
			left++;
		}
		if (!left || now_ms() > end)
			break;
		usleep(1000);
	}
	for (i = 0; i < n; i++) {
		if (pfd[i].fd < 0)
			continue;
		fail(F_REF, "pipe %d still has a writer %d ms after the ring and every descriptor were closed (leaked file reference?)",
		     watch_pipe[i], WATCH_MS);
		close(pfd[i].fd);
	}
}

static void run_round(unsigned long long iters_left)
{
	int total, done = 0, nb, i, n;
	struct io_uring_sqe *sqe;

	stats->phase = "setting up";
	start_round();
	if (F.stop) {
		if (F.ring.fd >= 0)
			close_and_watch();
		return;
	}
	total = 1 + rnd(one_in(4) ? 256 : 64);
	if ((unsigned long long)total > iters_left)
		total = iters_left;

	stats->phase = "submitting";
	while (done < total && !F.stop) {
		beat();
		nb = 1 + rnd(total - done);
		if (nb > (int)F.ring.sq_entries)
			nb = F.ring.sq_entries;
		for (i = 0; i < nb; i++) {
			sqe = iou_get_sqe(&F.ring);
			if (!sqe)
				break;
			gen_one(sqe);
		}
		done += i;
		stats->iters += i;
		submit_all();
		reap_available();
		n = rnd(4);
		for (i = 0; i < n; i++)
			chaos();
		reap_available();
	}
	stats->phase = "finishing requests";
	finish_requests();
	close_and_watch();
	stats->phase = "between rounds";
}

static int child_main(__u64 seed, unsigned long long iters,
		      unsigned int seconds, long long only_round)
{
	long long end = now_ms() + seconds * 1000LL;
	unsigned long long r;
	int fds;

	pthread_t wd;

	signal(SIGPIPE, SIG_IGN);
	if (pthread_create(&wd, NULL, watchdog, NULL)) {
		fail(F_SETUP, "pthread_create failed");
		return 1;
	}
	fd_baseline = count_fds();
	F.seed = seed;
	for (r = only_round >= 0 ? only_round : 0; !F.stop; r++) {
		if (stats->iters >= iters || now_ms() >= end)
			break;
		if (only_round >= 0 && r != (unsigned long long)only_round)
			break;
		F.round = r;
		stats->cur_round = r;
		rng_state = seed ^ (r * 0xd1b54a32d192ed03ULL);
		rnd64();
		run_round(iters - stats->iters);
		stats->rounds++;
		fds = count_fds();
		if (fds != fd_baseline) {
			fail(F_FD, "%d descriptors open after the round, %d before",
			     fds, fd_baseline);
			list_fds();
			F.stop = true;
		}
	}
	stats->child_done = 1;
	return 0;
}

/* ------------------------------------------------------------------ */

static void print_counts(const char *name, unsigned long long ok,
			 unsigned long long ok_pos, unsigned long long *err,
			 bool show_pos)
{
	char line[2048];
	int len, i;

	len = snprintf(line, sizeof(line), "%s: ok %llu", name, ok);
	if (show_pos)
		len += snprintf(line + len, sizeof(line) - len, " (>0: %llu)",
				ok_pos);
	for (i = 1; i < ERR_SLOTS; i++) {
		if (!err[i] || len > (int)sizeof(line) - 64)
			continue;
		if (i == ERR_OTHER)
			len += snprintf(line + len, sizeof(line) - len,
					", other %llu", err[i]);
		else
			len += snprintf(line + len, sizeof(line) - len,
					", -%s %llu", errname(slot_err(i)),
					err[i]);
	}
	ksft_print_msg("%s\n", line);
}

static unsigned long long env_num(const char *name, unsigned long long def)
{
	const char *v = getenv(name);

	return v && *v ? strtoull(v, NULL, 0) : def;
}

static void usage(const char *prog)
{
	printf("usage: %s [-s SEED] [-n SQES] [-t SECONDS] [-r ROUND] [-v] [-D]\n"
	       "  -r ROUND  run that round of SEED only; -v print every sqe and CQE\n"
	       "  -D        no IOSQE_IO_DRAIN (6.12's drain miscounts sqes refused at submission)\n"
	       "  env IOU_FUZZ_SEED, IOU_FUZZ_ITERS (default %llu), IOU_FUZZ_SECONDS (default %u),\n"
	       "      IOU_FUZZ_NO_DRAIN=1 (as -D)\n",
	       prog, DEF_ITERS, DEF_SECONDS);
}

int main(int argc, char **argv)
{
	unsigned long long iters = env_num("IOU_FUZZ_ITERS", DEF_ITERS);
	unsigned int seconds = env_num("IOU_FUZZ_SECONDS", DEF_SECONDS);
	__u64 seed = env_num("IOU_FUZZ_SEED", 0);
	bool seed_set = getenv("IOU_FUZZ_SEED") && *getenv("IOU_FUZZ_SEED");
	long long only_round = -1, deadline;
	const char * const dirs[] = { getenv("TMPDIR"), "/tmp", "/dev/shm", "." };
	struct iou_ring probe;
	const char *absent;
	int opt, ret, status = 0, i;
	bool died = false, hung = false;
	pid_t pid;

	no_drain = env_num("IOU_FUZZ_NO_DRAIN", 0);
	while ((opt = getopt(argc, argv, "s:n:t:r:vDh")) != -1) {
		switch (opt) {
		case 's':
			seed = strtoull(optarg, NULL, 0);
			seed_set = true;
			break;
		case 'n':
			iters = strtoull(optarg, NULL, 0);
			break;
		case 't':
			seconds = strtoul(optarg, NULL, 0);
			break;
		case 'r':
			only_round = strtoll(optarg, NULL, 0);
			break;
		case 'v':
			verbose = true;
			break;
		case 'D':
			no_drain = true;
			break;
		default:
			usage(argv[0]);
			return opt == 'h' ? 0 : KSFT_FAIL;
		}
	}
	if (!seed_set) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		seed = (ts.tv_sec * 1000000007ULL) ^ ts.tv_nsec ^ getpid();
	}

	ksft_print_header();
	ksft_print_msg("seed %llu (replay: -s %llu), at most %llu sqes or %u s\n",
		       (unsigned long long)seed, (unsigned long long)seed,
		       iters, seconds);

	ret = iou_setup(&probe, 4, 0);
	if (ret == -ENOSYS)
		ksft_exit_skip("io_uring not supported (CONFIG_IO_URING=n?)\n");
	if (ret == -EPERM)
		ksft_exit_skip("io_uring disabled (kernel.io_uring_disabled?)\n");
	if (ret)
		ksft_exit_fail_msg("io_uring_setup: %s\n", strerror(-ret));
	if (!(probe.features & IORING_FEAT_EXT_ARG))
		ksft_exit_skip("no IORING_FEAT_EXT_ARG: cannot wait with a timeout\n");
	iou_exit(&probe);
	absent = iou_series_absent();
	have_ioctl = !absent;
	have_sendfile = !absent;
	ksft_print_msg("IORING_OP_IOCTL (58): %s%s\n", have_ioctl ? "fuzzed" :
		       "not fuzzed: ", absent ?: "");
	if (no_drain)
		ksft_print_msg("no IOSQE_IO_DRAIN (-D)\n");

	for (i = 0; i < 4; i++) {
		if (dirs[i] && !access(dirs[i], W_OK)) {
			tmpdir = dirs[i];
			break;
		}
	}
	if (!tmpdir)
		tmpdir = ".";
	proc_ok = !access("/proc/self/fd", R_OK);
	for (i = 0; i < (int)sizeof(junk); i++)
		junk[i] = i * 7 + (i >> 8);
	ro_page = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);
	stats = mmap(NULL, sizeof(*stats), PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (stats == MAP_FAILED || ro_page == MAP_FAILED)
		ksft_exit_fail_msg("mmap: %s\n", strerror(errno));
	ksft_set_plan(9);

	fflush(stdout);
	pid = fork();
	if (pid < 0)
		ksft_exit_fail_msg("fork: %s\n", strerror(errno));
	if (!pid)
		_exit(child_main(seed, iters, seconds, only_round));

	/* the child checks its clock between rounds; a round may take LOST_MS */
	deadline = now_ms() + seconds * 1000LL + 3 * LOST_MS + WATCH_MS +
		   30000;
	for (;;) {
		ret = waitpid(pid, &status, WNOHANG);
		if (ret == pid)
			break;
		if (ret < 0 && errno != EINTR)
			ksft_exit_fail_msg("waitpid: %s\n", strerror(errno));
		if (now_ms() > deadline) {
			hung = true;
			ksft_print_msg("child hung while %s; its threads:\n",
				       stats->phase ? stats->phase : "?");
			dump_stacks(pid);
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			break;
		}
		usleep(50000);
	}
	died = hung || !WIFEXITED(status) || !stats->child_done;

	ksft_print_msg("%llu sqes in %llu rounds (%llu needed more than a wait, %llu a cancel, %llu the watchdog), %llu CQEs, %llu CQEs skipped by IOSQE_CQE_SKIP_SUCCESS\n",
		       stats->iters, stats->rounds, stats->blocked_rounds,
		       stats->cancels_needed, stats->watchdog_rounds, stats->cqes,
		       stats->skipped);
	ksft_print_msg("ring setup flags seen: 0x%llx\n", stats->setup_flags_seen);
	ksft_print_msg("%llu splices and tees compared with splice(2) and tee(2) on an identical pair (%llu moved bytes), %llu not compared (a cancel in the round)\n",
		       stats->mirror_cmp, stats->mirror_bytes,
		       stats->mirror_skipped);
	for (i = 0; i < OP_NR; i++)
		if (i != OP_IOCTL || have_ioctl)
			print_counts(op_name[i], stats->ok[i], stats->ok_pos[i],
				     stats->err[i], true);
	for (i = 0; i < REG_NR; i++)
		print_counts(reg_name[i], stats->reg_ok[i], 0, stats->reg_err[i],
			     false);

	if (!stats->fails[F_CQE] && !stats->fails[F_SETUP])
		ksft_test_result_pass("every sqe got exactly one CQE\n");
	else
		ksft_test_result_fail("every sqe got exactly one CQE (%llu failures)\n",
				      stats->fails[F_CQE] + stats->fails[F_SETUP]);
	if (!stats->fails[F_RES])
		ksft_test_result_pass("every result in bounds or an expected errno\n");
	else
		ksft_test_result_fail("every result in bounds or an expected errno (%llu failures)\n",
				      stats->fails[F_RES]);
	if (!stats->fails[F_MIRROR])
		ksft_test_result_pass("splices and tees on files of their own moved what splice(2) and tee(2) move\n");
	else
		ksft_test_result_fail("splices and tees on files of their own moved what splice(2) and tee(2) move (%llu failures)\n",
				      stats->fails[F_MIRROR]);
	if (!stats->fails[F_RESTART])
		ksft_test_result_pass("no -ERESTARTSYS leaked by a cancelled request\n");
	else
		ksft_test_result_fail("no -ERESTARTSYS leaked by a cancelled request (%llu)\n",
				      stats->fails[F_RESTART]);
	if (stats->fails[F_DRAIN])
		ksft_test_result_fail("IOSQE_IO_DRAIN honoured: no drained request early or stalled (%llu failures)\n",
				      stats->fails[F_DRAIN]);
	else if (stats->fails[F_DRAIN_612] && have_ioctl)
		/* the series carries the drain fix: no excuse left */
		ksft_test_result_fail("IOSQE_IO_DRAIN honoured: 6.12's miscount of sqes refused after a drain, with the series (%llu times, %llu rounds stalled)\n",
				      stats->fails[F_DRAIN_612], stats->drain_stalls);
	else if (stats->fails[F_DRAIN_612])
		ksft_test_result_xfail("IOSQE_IO_DRAIN honoured, but for 6.12's miscount of sqes refused after a drain (%llu times, %llu rounds stalled)\n",
				       stats->fails[F_DRAIN_612], stats->drain_stalls);
	else
		ksft_test_result_pass("IOSQE_IO_DRAIN honoured: no drained request early or stalled\n");
	if (!stats->fails[F_BLOCKED])
		ksft_test_result_pass("submission never blocked in io_uring_enter(2)\n");
	else
		ksft_test_result_fail("submission never blocked in io_uring_enter(2) (%llu times)\n",
				      stats->fails[F_BLOCKED]);
	if (!stats->fails[F_FD])
		ksft_test_result_pass("no descriptor leaked\n");
	else
		ksft_test_result_fail("no descriptor leaked\n");
	if (!stats->fails[F_REF])
		ksft_test_result_pass("no file reference left after the ring is gone\n");
	else
		ksft_test_result_fail("no file reference left after the ring is gone (%llu)\n",
				      stats->fails[F_REF]);
	if (!died) {
		ksft_test_result_pass("fuzzing child exited normally\n");
	} else if (hung) {
		ksft_test_result_fail("fuzzing child hung in round %llu (seed %llu): killed\n",
				      stats->cur_round, (unsigned long long)seed);
	} else if (WIFSIGNALED(status)) {
		ksft_test_result_fail("fuzzing child killed by signal %d in round %llu (seed %llu)\n",
				      WTERMSIG(status), stats->cur_round,
				      (unsigned long long)seed);
	} else {
		ksft_test_result_fail("fuzzing child exited with %d in round %llu (seed %llu)\n",
				      WEXITSTATUS(status), stats->cur_round,
				      (unsigned long long)seed);
	}
	if (ksft_get_fail_cnt())
		ksft_exit_fail();
	ksft_exit_pass();
}
