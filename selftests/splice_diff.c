// SPDX-License-Identifier: GPL-2.0
/*
 * splice_diff: a differential test of IORING_OP_SPLICE and IORING_OP_TEE.
 *
 * Each scenario is drawn from a seed and an index: the input (pipe, AF_UNIX
 * or TCP socket, tmpfs or ext4 file; or a tee between pipes), the output
 * (pipe, AF_UNIX or TCP socket, small buffers or not, full or not; a file
 * to a socket is the series' sendfile, sendfile(2) in one sqe), the
 * sizes, the splice flags, O_NONBLOCK, SO_RCVLOWAT, a linked NOP and/or
 * IORING_OP_LINK_TIMEOUT, and a schedule of peer actions after the submit
 * (write to the input, read or drain the output, a second reader of the
 * input, end of input, the output's reader closed, cancel by user_data, by
 * fd or any). The scenario runs twice, each time in a fresh child process
 * with the same schedule: as a plain sqe (with the inline splice series:
 * tried inline, then waiting on poll) and with IOSQE_ASYNC, 6.12's path,
 * where an io-wq worker runs the blocking splice. After the schedule the
 * output is drained (every splice that moved bytes must complete then, as
 * the blocking splice does, an AF_UNIX input below its SO_RCVLOWAT aside),
 * then the input is ended, and every sqe must have its CQE.
 *
 * Checked in each run (invariants): one CQE per sqe; the splice's result is
 * the bytes that left the input and reached the output (a tee: the bytes
 * that came out, the input untouched), and an error only when nothing
 * moved, so a cancelled or timed-out splice that moved bytes reports them;
 * the output's bytes, a second reader's and those left in the input are the
 * input's bytes, in order, none lost or twice; the linked NOP runs only
 * after a full count; cancel and link timeout results in their sets.
 * Compared between the two runs where 6.12 itself is not racy (no cancel,
 * link timeout or second reader, no write into an input pipe whose mutex
 * 6.12's worker holds across its send, no input write that may arrive in
 * pieces): the splice's CQE and the step it came in, the NOP's, the bytes
 * out, written and left. A link timeout never compares: 6.12 arms it after
 * ->issue() returns, so on an IOSQE_ASYNC splice it starts only once the
 * blocking splice is done, while a splice tried inline first has it running
 * as it waits. A mismatch is run again, both ways: it counts only if each
 * path repeats its first outcome; otherwise the scenario is reported
 * UNSTABLE (its outcome depends on timing) and not compared. The summary
 * counts how link timeouts and cancels ended in each mode.
 *
 * usage: splice_diff [--seed S] [--count N] [--seconds T] [--start I] [--index I] [-v]
 * A failure prints its seed and index; "--seed S --index I -v" replays it.
 * Exit 0: no mismatch or failure, 1: some, 4: io_uring unavailable.
 */

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "iou_helpers.h"
#include "../kselftest.h"

#define EXT4_MAGIC		0xEF53
/* kernel-internal errnos that must never reach a CQE */
#define ERESTARTSYS_		512
#define ERESTARTNOINTR_		513
#define EXT4_DIR		"/mnt/ext4"

#define DEF_SECONDS		60
/*
 * Without the series both modes take io-wq's path, so a random run there
 * checks only the test itself (iou_series_absent() says so).
 */
#define ABSENT_SECONDS		10
#define MAX_STEPS		4
#define K			1024
#define STREAM_MAX		(2 << 20)	/* input bytes of one scenario */
#define OUT_MAX			(8 << 20)	/* prefill and output */
#define PREFILL_MAX		(4 << 20)
#define INF_BYTES		(1L << 40)

/* settle: quiet this long, at least MIN, at most MAX after an action */
#define SETTLE_MIN_MS		150
#define SETTLE_QUIET_MS		100
#define SETTLE_MAX_MS		1500
#define TICK_MS			20
/* after the output is drained, a splice that moved bytes must end */
#define F1_WAIT_MS		1500
/* after the input is ended, every CQE must come */
#define F2_WAIT_MS		6000
#define CHILD_ALARM_S		40

#define UD_SPLICE		1
#define UD_LT			2
#define UD_NOP			3
#define UD_CANCEL		10	/* + step */

enum kind { K_PIPE, K_UNIX, K_TCP, K_TMPFS, K_EXT4, K_NR };
static const char * const kind_name[K_NR] = { "pipe", "unix", "tcp", "tmpfs", "ext4" };

enum act {
	A_WRITE_IN, A_READ_OUT, A_DRAIN_OUT, A_READER2, A_EOF_IN, A_CLOSE_OUT,
	A_CANCEL_UD, A_CANCEL_FD, A_CANCEL_ANY, A_NR
};
static const char * const act_name[A_NR] = {
	"write-in", "read-out", "drain-out", "reader2", "eof-in", "close-out",
	"cancel-ud", "cancel-fd", "cancel-any",
};

enum link { L_NONE, L_NOP, L_LT, L_LT_NOP };

/* why 6.12 itself gives no fixed result: then invariants only */
#define R_CANCEL	(1U << 0)
#define R_LTIMEOUT	(1U << 1)
#define R_READER2	(1U << 2)
#define R_PIPE_MUTEX	(1U << 3)
#define R_SOCK_PIECES	(1U << 4)
static const char * const racy_name[] = {
	"cancel", "link-timeout", "second-reader", "pipe-mutex", "input-in-pieces",
};

struct step {
	int act;
	long n;
};

struct scen {
	bool tee;
	int in, out;
	unsigned int len;
	long in_bytes;		/* prefill of the input; a file's size */
	long file_off;		/* file input: -1 f_pos, else splice_off_in */
	bool uncached;		/* ext4 file dropped from the page cache */
	int in_pipe_sz, out_pipe_sz;	/* F_SETPIPE_SZ, 0: default */
	int in_buf, out_buf;	/* socket buffers, 0: default */
	int rcvlowat;		/* SO_RCVLOWAT of a socket input, 0: none */
	bool out_full;
	unsigned int sflags;
	bool in_nonblock, out_nonblock;
	int link, lt_ms;
	int nsteps;
	struct step step[MAX_STEPS];
	unsigned int racy;
	bool lossy;		/* the output's reader closes: bytes may be lost */
};

#define MAX_FAILS	6
struct outcome {
	int done;		/* the child got to the end */
	char err[160];		/* the run could not be set up */
	int nfails;
	char fail[MAX_FAILS][200];
	int splice_res, splice_step, lt_res, nop_res;
	int cancel_res[MAX_STEPS + 1];
	int cqes[UD_CANCEL + MAX_STEPS + 1];
	long written, prefill_in, prefill_out, out_bytes, reader2, left;
	long file_pos;
	int workers;
	long moved_f1;
	bool pending_f1;
};

static __u64 rng_state;
static bool verbose;
static bool have_ext4;
static struct outcome *shared;

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

static long pick(const long *v, int n)
{
	return v[rnd(n)];
}

#define PICK(arr)	pick(arr, ARRAY_SIZE(arr))

static const char *errstr(int res)
{
	static char buf[4][32];
	static int i;
	char *b = buf[i++ & 3];

	if (res == INT_MIN)
		return "none";
	if (res >= 0)
		snprintf(b, 32, "%d", res);
	else if (res == -ERESTARTSYS_)
		snprintf(b, 32, "-ERESTARTSYS");
	else
#if defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 32)
		snprintf(b, 32, "-%s", strerrorname_np(-res) ?: "?");
#else
		snprintf(b, 32, "%d", res);
#endif
	return b;
}

/* ------------------------------------------------------------------ */
/* the scenario */

static bool sock_kind(int k)
{
	return k == K_UNIX || k == K_TCP;
}

static bool file_kind(int k)
{
	return k == K_TMPFS || k == K_EXT4;
}

static int pipe_cap(int sz)
{
	return sz ? sz : 65536;
}

/* racy actions rarer, so that most scenarios can be compared */
static int weighted_act(void)
{
	static const int weight[A_NR] = { 22, 22, 17, 6, 12, 6, 5, 5, 5 };
	int a, r = rnd(100);

	for (a = 0; a < A_NR - 1; a++) {
		if (r < weight[a])
			break;
		r -= weight[a];
	}
	return a;
}

/* the schedule: up to MAX_STEPS actions that make sense for the ends */
static void gen_steps(struct scen *s, int nsteps, const int *bias, int nbias)
{
	const long sizes[] = { 1, 10, 100, 990, 1000, 4096, 10000, 65536, 131072 };
	bool eof = false, closed = false;
	int i, tries, a;

	s->nsteps = 0;
	for (i = 0; i < nsteps; i++) {
		for (tries = 0; tries < 20; tries++) {
			a = nbias && rnd(3) ? bias[rnd(nbias)] : weighted_act();
			if ((a == A_WRITE_IN || a == A_EOF_IN) && (file_kind(s->in) || eof))
				continue;
			if (a == A_READER2 && file_kind(s->in))
				continue;
			if ((a == A_READ_OUT || a == A_DRAIN_OUT || a == A_CLOSE_OUT) && closed)
				continue;
			break;
		}
		if (tries == 20)
			break;
		s->step[s->nsteps].act = a;
		s->step[s->nsteps].n = 0;
		switch (a) {
		case A_WRITE_IN:
		case A_READ_OUT:
			s->step[s->nsteps].n = one_in(4) ? (long)rnd(200000) + 1 : PICK(sizes);
			break;
		case A_READER2:
			s->step[s->nsteps].n = one_in(2) ? INF_BYTES : PICK(sizes);
			break;
		case A_EOF_IN:
			eof = true;
			break;
		case A_CLOSE_OUT:
			closed = true;
			break;
		}
		s->nsteps++;
	}
}

static void classify(struct scen *s)
{
	int i;

	s->racy = 0;
	s->lossy = false;
	if (s->link == L_LT || s->link == L_LT_NOP)
		s->racy |= R_LTIMEOUT;
	for (i = 0; i < s->nsteps; i++) {
		switch (s->step[i].act) {
		case A_CANCEL_UD:
		case A_CANCEL_FD:
		case A_CANCEL_ANY:
			s->racy |= R_CANCEL;
			break;
		case A_READER2:
			s->racy |= R_READER2;
			break;
		case A_WRITE_IN:
			/* 6.12's worker holds the pipe mutex across its send */
			if (s->in == K_PIPE && !s->tee && sock_kind(s->out))
				s->racy |= R_PIPE_MUTEX;
			if (sock_kind(s->in) && (s->step[i].n > 4000 || s->in_buf))
				s->racy |= R_SOCK_PIECES;
			break;
		case A_EOF_IN:
			if (s->in == K_PIPE && !s->tee && sock_kind(s->out))
				s->racy |= R_PIPE_MUTEX;
			break;
		case A_CLOSE_OUT:
			s->lossy = true;
			break;
		}
	}
}

static void gen_scen(struct scen *s, __u64 seed, unsigned long idx)
{
	const long lens[] = { 1, 10, 100, 1000, 4096, 4097, 10000, 65535, 65536, 65537,
			      131072, 262144 };
	const long pipesz[] = { 0, 0, 4096, 16384, 131072, 262144, 1 << 20 };
	const int cancel_bias[] = { A_CANCEL_UD, A_CANCEL_FD, A_CANCEL_ANY, A_READER2,
				    A_READER2, A_DRAIN_OUT, A_READ_OUT, A_WRITE_IN };
	const int lowat_bias[] = { A_WRITE_IN, A_WRITE_IN, A_READ_OUT, A_EOF_IN };
	unsigned int r, f;
	int nsteps;

	memset(s, 0, sizeof(*s));
	rng_state = seed ^ ((idx + 1) * 0xd1b54a32d192ed03ULL);
	rnd64();
	s->file_off = -1;
	r = rnd(100);
	if (r < 30) {
		/* pipe -> TCP with small buffers: a part moves, then it waits */
		s->in = K_PIPE;
		s->out = one_in(5) ? K_UNIX : K_TCP;
		s->out_buf = one_in(4) ? 8192 : 4096;
		s->in_pipe_sz = one_in(3) ? 262144 : 0;
		s->in_bytes = one_in(4) ? (long)rnd(pipe_cap(s->in_pipe_sz)) + 1 :
			      pipe_cap(s->in_pipe_sz);
		s->len = one_in(3) ? PICK(lens) : s->in_bytes;
		s->link = rnd(4);
		s->lt_ms = 100 + rnd(600);
		nsteps = 1 + rnd(3);
		gen_steps(s, nsteps, cancel_bias, 8);
		switch (rnd(3)) {
		case 0:
			/* cancelled while it waits for room */
			s->step[0].act = A_CANCEL_UD + rnd(3);
			s->step[0].n = 0;
			break;
		case 1:
			/* the input drained by another reader meanwhile */
			s->step[0].act = A_READER2;
			s->step[0].n = INF_BYTES;
			if (s->link == L_LT || s->link == L_LT_NOP)
				s->link = L_NOP;
			break;
		}
	} else if (r < 42) {
		/* AF_UNIX input below its SO_RCVLOWAT */
		s->in = one_in(5) ? K_TCP : K_UNIX;
		s->out = K_PIPE;
		s->in_bytes = one_in(4) ? 0 : (long)rnd(200) + 1;
		s->rcvlowat = one_in(2) ? 1000 : (int)(s->in_bytes + 1 + rnd(8000));
		s->len = one_in(2) ? 65536 : (unsigned int)(s->rcvlowat + rnd(70000));
		s->link = one_in(2) ? L_NOP : L_NONE;
		nsteps = rnd(3);
		gen_steps(s, nsteps, lowat_bias, 4);
	} else {
		r = rnd(100);
		if (r < 15) {
			s->tee = true;
			s->in = K_PIPE;
			s->out = K_PIPE;
		} else if (r < 45) {
			s->in = K_PIPE;
			s->out = rnd(3);
		} else if (r < 60) {
			s->in = K_UNIX;
		} else if (r < 75) {
			s->in = K_TCP;
		} else if (r < 88 || !have_ext4) {
			s->in = K_TMPFS;
		} else {
			s->in = K_EXT4;
		}
		if (file_kind(s->in) && one_in(3))
			/* a regular file to a socket: the series' sendfile */
			s->out = one_in(2) ? K_UNIX : K_TCP;
		else if (s->in != K_PIPE)
			s->out = K_PIPE;
		if (s->in == K_PIPE)
			s->in_pipe_sz = PICK(pipesz);
		if (s->out == K_PIPE)
			s->out_pipe_sz = PICK(pipesz);
		if (sock_kind(s->in) && one_in(3))
			s->in_buf = 4096;
		if (sock_kind(s->out) && !one_in(3))
			s->out_buf = one_in(2) ? 4096 : 16384;
		s->len = one_in(4) ? rnd(262144) + 1 : PICK(lens);
		switch (rnd(6)) {
		case 0:
			s->in_bytes = 0;
			break;
		case 1:
			s->in_bytes = rnd(4096) + 1;
			break;
		case 2:
			s->in_bytes = s->len;
			break;
		case 3:
			s->in_bytes = s->len + 1 + rnd(5000);
			break;
		case 4:
			s->in_bytes = s->len > 1 ? s->len - 1 : 1;
			break;
		default:
			s->in_bytes = rnd(300000);
		}
		if (file_kind(s->in)) {
			if (one_in(3))
				s->file_off = rnd(s->in_bytes + 2);
			s->uncached = s->in == K_EXT4 && one_in(2);
		}
		if (sock_kind(s->in) && one_in(6))
			s->rcvlowat = rnd(5000) + 1;
		/* a full TCP output only with fixed (small) buffers */
		s->out_full = one_in(3) && (s->out != K_TCP || s->out_buf);
		r = rnd(100);
		s->link = r < 35 ? L_NONE : r < 82 ? L_NOP : r < 90 ? L_LT : L_LT_NOP;
		s->lt_ms = 50 + rnd(700);
		nsteps = rnd(MAX_STEPS + 1);
		gen_steps(s, nsteps, NULL, 0);
	}
	f = rnd(16);
	s->sflags = (f & 1 ? SPLICE_F_NONBLOCK : 0) | (f & 2 ? SPLICE_F_MOVE : 0) |
		    (f & 4 ? SPLICE_F_MORE : 0);
	if (!one_in(3))
		s->sflags &= ~SPLICE_F_NONBLOCK;
	/* sendfile takes no splice flag (-EINVAL): mostly none */
	if (file_kind(s->in) && sock_kind(s->out) && !one_in(4))
		s->sflags = 0;
	s->in_nonblock = one_in(8);
	s->out_nonblock = one_in(8);
	if (!s->len)
		s->len = 1;
	if (s->in_bytes > STREAM_MAX / 2)
		s->in_bytes = STREAM_MAX / 2;
	classify(s);
}

static void describe(char *b, size_t sz, const struct scen *s)
{
	int n = 0, i;

	n += snprintf(b + n, sz - n, "%s %s", s->tee ? "tee" : "splice", kind_name[s->in]);
	if (s->in_pipe_sz)
		n += snprintf(b + n, sz - n, "(pipe %d)", s->in_pipe_sz);
	if (s->in_buf)
		n += snprintf(b + n, sz - n, "(buf %d)", s->in_buf);
	if (s->rcvlowat)
		n += snprintf(b + n, sz - n, "(rcvlowat %d)", s->rcvlowat);
	if (s->file_off >= 0)
		n += snprintf(b + n, sz - n, "(off %ld)", s->file_off);
	if (s->uncached)
		n += snprintf(b + n, sz - n, "(uncached)");
	n += snprintf(b + n, sz - n, " -> %s", kind_name[s->out]);
	if (s->out_pipe_sz)
		n += snprintf(b + n, sz - n, "(pipe %d)", s->out_pipe_sz);
	if (s->out_buf)
		n += snprintf(b + n, sz - n, "(buf %d)", s->out_buf);
	n += snprintf(b + n, sz - n, ", len %u, %ld in the input%s, flags %#x%s%s",
		      s->len, s->in_bytes, s->out_full ? ", output full" : "", s->sflags,
		      s->in_nonblock ? ", input O_NONBLOCK" : "",
		      s->out_nonblock ? ", output O_NONBLOCK" : "");
	if (s->link == L_NOP || s->link == L_LT_NOP)
		n += snprintf(b + n, sz - n, ", linked nop");
	if (s->link == L_LT || s->link == L_LT_NOP)
		n += snprintf(b + n, sz - n, ", link timeout %d ms", s->lt_ms);
	n += snprintf(b + n, sz - n, "; steps:");
	for (i = 0; i < s->nsteps; i++) {
		const struct step *st = &s->step[i];

		if (st->act == A_READER2 && st->n == INF_BYTES)
			n += snprintf(b + n, sz - n, " %d:%s(all)", i + 1, act_name[st->act]);
		else if (st->n)
			n += snprintf(b + n, sz - n, " %d:%s(%ld)", i + 1, act_name[st->act],
				      st->n);
		else
			n += snprintf(b + n, sz - n, " %d:%s", i + 1, act_name[st->act]);
	}
	if (!s->nsteps)
		n += snprintf(b + n, sz - n, " none");
	if (s->racy) {
		n += snprintf(b + n, sz - n, "; racy:");
		for (i = 0; i < 5; i++)
			if (s->racy & (1U << i))
				n += snprintf(b + n, sz - n, " %s", racy_name[i]);
	}
}

/* ------------------------------------------------------------------ */
/* one run, in a child process */

struct feeder {
	pthread_t thr;
	int fd;
	bool sock;
	const unsigned char *pat;
	long want, written;
	int eof, stop, ended;
};

struct reader {
	pthread_t thr;
	int fd;
	unsigned char *buf;
	long allow, got;
	int close_req, closed, stop, eof;
};

struct reader2 {
	pthread_t thr;
	int fd;
	bool sock;
	unsigned char *buf;
	long want, got;
	int stop, busy;
};

#define LD(x)		__atomic_load_n(&(x), __ATOMIC_ACQUIRE)
#define ST(x, v)	__atomic_store_n(&(x), (v), __ATOMIC_RELEASE)

static int set_fl(int fd, int flag, bool on)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0)
		return -errno;
	fl = on ? fl | flag : fl & ~flag;
	return fcntl(fd, F_SETFL, fl) ? -errno : 0;
}

static void *feeder_fn(void *arg)
{
	struct feeder *f = arg;
	struct pollfd pfd = { .fd = f->fd, .events = POLLOUT };
	long want, w;
	ssize_t n;

	while (!LD(f->stop)) {
		if (LD(f->eof)) {
			ST(f->want, LD(f->written));
			if (f->sock)
				shutdown(f->fd, SHUT_WR);
			else
				close(f->fd);
			ST(f->ended, 1);
			break;
		}
		want = LD(f->want);
		w = LD(f->written);
		if (w >= want) {
			usleep(TICK_MS * 500);
			continue;
		}
		n = write(f->fd, f->pat + w, want - w > 65536 ? 65536 : want - w);
		if (n > 0) {
			ST(f->written, w + n);
		} else if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
			poll(&pfd, 1, TICK_MS);
		} else {
			/* EPIPE, ECONNRESET: no more */
			ST(f->want, w);
		}
	}
	return NULL;
}

static void *reader_fn(void *arg)
{
	struct reader *r = arg;
	struct pollfd pfd = { .fd = r->fd, .events = POLLIN };
	long allow, got;
	ssize_t n;

	for (;;) {
		if (LD(r->close_req)) {
			close(r->fd);
			ST(r->closed, 1);
			break;
		}
		allow = LD(r->allow);
		got = LD(r->got);
		if (allow > OUT_MAX)
			allow = OUT_MAX;
		if (got < allow) {
			n = read(r->fd, r->buf + got, allow - got);
			if (n > 0) {
				ST(r->got, got + n);
				continue;
			}
			if (!n)
				ST(r->eof, 1);
			if (LD(r->stop))
				break;
			if (n < 0 && errno == EAGAIN)
				poll(&pfd, 1, TICK_MS);
			else
				usleep(TICK_MS * 1000);
			continue;
		}
		if (LD(r->stop))
			break;
		usleep(TICK_MS * 500);
	}
	return NULL;
}

static void *reader2_fn(void *arg)
{
	struct reader2 *r = arg;
	struct iovec iov;
	long want, got;
	ssize_t n;

	while (!LD(r->stop)) {
		want = LD(r->want);
		got = LD(r->got);
		if (got >= want) {
			usleep(TICK_MS * 500);
			continue;
		}
		ST(r->busy, 1);
		iov.iov_base = r->buf + got;
		iov.iov_len = want - got > STREAM_MAX - got ? STREAM_MAX - got : want - got;
		if (r->sock)
			n = recv(r->fd, iov.iov_base, iov.iov_len, MSG_DONTWAIT);
		else
			/* RWF_NOWAIT: no wait for data (the pipe mutex still is) */
			n = syscall(__NR_preadv2, r->fd, &iov, 1, -1L, -1L, RWF_NOWAIT);
		if (n > 0) {
			ST(r->got, got + n);
		} else {
			/* what was there is taken: this request is done */
			ST(r->want, got);
		}
		ST(r->busy, 0);
	}
	return NULL;
}

/* everything a run keeps while it goes on */
struct run {
	const struct scen *s;
	bool async;
	struct outcome *o;
	struct iou_ring ring;
	int in[2], out[2];
	struct feeder fd_;
	struct reader rd;
	struct reader2 r2;
	bool have_feeder, have_r2;
	unsigned char *pat, *prefill;
	int step;
	int nsqes, ncqes;
	long long t0;
};

static void fail(struct run *R, const char *fmt, ...)
{
	struct outcome *o = R->o;
	va_list ap;

	if (o->nfails < MAX_FAILS) {
		va_start(ap, fmt);
		vsnprintf(o->fail[o->nfails], sizeof(o->fail[0]), fmt, ap);
		va_end(ap);
	}
	o->nfails++;
}

static void vlog(struct run *R, const char *fmt, ...)
{
	char line[256];
	va_list ap;

	if (!verbose)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	printf("#     [%s %5lld ms] %s\n", R->async ? "async" : "plain",
	       iou_now_ms() - R->t0, line);
	fflush(stdout);
}

static void record(struct run *R, const struct iou_cqe *c)
{
	struct outcome *o = R->o;
	__u64 ud = c->user_data;

	vlog(R, "step %d: cqe user_data %llu res %s", R->step, (unsigned long long)ud,
	     errstr(c->res));
	if (ud >= ARRAY_SIZE(o->cqes)) {
		fail(R, "CQE with unknown user_data %llu", (unsigned long long)ud);
		return;
	}
	o->cqes[ud]++;
	if (o->cqes[ud] > 1)
		fail(R, "second CQE for user_data %llu (res %s)", (unsigned long long)ud,
		     errstr(c->res));
	R->ncqes++;
	if (ud == UD_SPLICE) {
		o->splice_res = c->res;
		o->splice_step = R->step;
	} else if (ud == UD_LT) {
		o->lt_res = c->res;
	} else if (ud == UD_NOP) {
		o->nop_res = c->res;
	} else if (ud >= UD_CANCEL) {
		o->cancel_res[ud - UD_CANCEL] = c->res;
	} else {
		fail(R, "CQE with unknown user_data %llu", (unsigned long long)ud);
	}
}

/* reap for @ms at most, returning early once @want CQEs are in (0: no early) */
static void reap_for(struct run *R, int ms, int want)
{
	long long end = iou_now_ms() + ms;
	struct iou_cqe c;
	long long left;

	for (;;) {
		while (!iou_peek_cqe(&R->ring, &c))
			record(R, &c);
		if (want && R->ncqes >= want)
			return;
		left = end - iou_now_ms();
		if (left <= 0)
			return;
		if (!iou_wait_cqe_timeout(&R->ring, &c, left > TICK_MS ? TICK_MS : left))
			record(R, &c);
	}
}

/* wait until nothing changes: no CQE, no byte moved by us */
static void settle(struct run *R)
{
	long long start = iou_now_ms(), quiet = start, now;
	long snap[5] = { -1 }, cur[5];

	for (;;) {
		reap_for(R, TICK_MS, 0);
		cur[0] = R->ncqes;
		cur[1] = LD(R->rd.got);
		cur[2] = R->have_r2 ? LD(R->r2.got) + LD(R->r2.busy) : 0;
		cur[3] = R->have_feeder ? LD(R->fd_.written) : 0;
		cur[4] = R->have_feeder ? LD(R->fd_.want) : 0;
		now = iou_now_ms();
		if (memcmp(cur, snap, sizeof(cur))) {
			memcpy(snap, cur, sizeof(cur));
			quiet = now;
		}
		if (now - start >= SETTLE_MAX_MS)
			break;
		if (now - start >= SETTLE_MIN_MS && now - quiet >= SETTLE_QUIET_MS)
			break;
	}
}

static int make_pair(int kind, int bufsize, bool output, int fds[2])
{
	int ret, sv[2];

	switch (kind) {
	case K_PIPE:
		return pipe2(fds, O_CLOEXEC) ? -errno : 0;
	case K_UNIX:
		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
			return -errno;
		/* fds[0] is read from, fds[1] written to */
		fds[0] = sv[0];
		fds[1] = sv[1];
		if (bufsize) {
			setsockopt(fds[1], SOL_SOCKET, SO_SNDBUF, &bufsize, sizeof(bufsize));
			if (!output)
				setsockopt(fds[0], SOL_SOCKET, SO_RCVBUF, &bufsize,
					   sizeof(bufsize));
		}
		return 0;
	case K_TCP:
		ret = iou_tcp_pair(&fds[1], &fds[0], bufsize);
		return ret;
	}
	return -EINVAL;
}

static int make_file(struct run *R, int kind)
{
	const struct scen *s = R->s;
	char path[64];
	long off;
	int fd;

	if (kind == K_TMPFS) {
		fd = memfd_create("splice_diff", MFD_CLOEXEC);
	} else {
		snprintf(path, sizeof(path), EXT4_DIR "/splice_diff.%d", getpid());
		fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		unlink(path);
	}
	if (fd < 0)
		return -errno;
	for (off = 0; off < s->in_bytes; ) {
		ssize_t n = pwrite(fd, R->pat + off, s->in_bytes - off, off);

		if (n <= 0)
			return -errno;
		off += n;
	}
	if (kind == K_EXT4) {
		fsync(fd);
		if (s->uncached)
			posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	}
	return fd;
}

static long fill_until_full(int fd, const unsigned char *pat, long max)
{
	long total = 0;
	ssize_t n;

	set_fl(fd, O_NONBLOCK, true);
	while (total < max) {
		n = write(fd, pat + total, max - total > 4096 ? 4096 : max - total);
		if (n <= 0)
			break;
		total += n;
	}
	set_fl(fd, O_NONBLOCK, false);
	return total;
}

static int setup_run(struct run *R)
{
	const struct scen *s = R->s;
	struct outcome *o = R->o;
	int ret;

	R->in[0] = R->in[1] = R->out[0] = R->out[1] = -1;
	ret = iou_setup(&R->ring, 16, 0);
	if (ret) {
		snprintf(o->err, sizeof(o->err), "io_uring_setup: %s", strerror(-ret));
		return ret;
	}
	if (file_kind(s->in)) {
		ret = make_file(R, s->in);
		if (ret < 0)
			goto out;
		R->in[0] = ret;
		if (s->file_off < 0 && lseek(R->in[0], 0, SEEK_SET))
			goto out;
	} else {
		ret = make_pair(s->in, s->in_buf, false, R->in);
		if (ret)
			goto out;
		if (s->in_pipe_sz && fcntl(R->in[1], F_SETPIPE_SZ, s->in_pipe_sz) < 0) {
			ret = -errno;
			goto out;
		}
		if (s->rcvlowat)
			setsockopt(R->in[0], SOL_SOCKET, SO_RCVLOWAT, &s->rcvlowat,
				   sizeof(s->rcvlowat));
		/* the prefill: what the input takes without blocking */
		set_fl(R->in[1], O_NONBLOCK, true);
		while (o->prefill_in < s->in_bytes) {
			long left = s->in_bytes - o->prefill_in;
			ssize_t n = write(R->in[1], R->pat + o->prefill_in,
					  left > 65536 ? 65536 : left);

			if (n <= 0)
				break;
			o->prefill_in += n;
		}
		o->written = o->prefill_in;
	}
	ret = make_pair(s->out, s->out_buf, true, R->out);
	if (ret)
		goto out;
	if (s->out_pipe_sz && fcntl(R->out[1], F_SETPIPE_SZ, s->out_pipe_sz) < 0) {
		ret = -errno;
		goto out;
	}
	if (s->out_full)
		o->prefill_out = fill_until_full(R->out[1], R->prefill, PREFILL_MAX);
	set_fl(R->in[0], O_NONBLOCK, s->in_nonblock);
	set_fl(R->out[1], O_NONBLOCK, s->out_nonblock);
	set_fl(R->out[0], O_NONBLOCK, true);
	return 0;
out:
	if (!ret)
		ret = -errno;
	snprintf(o->err, sizeof(o->err), "setting up the files: %s", strerror(-ret));
	return ret;
}

static void submit(struct run *R)
{
	const struct scen *s = R->s;
	static struct __kernel_timespec ts;
	struct io_uring_sqe *sqe;
	int ret;

	sqe = iou_get_sqe(&R->ring);
	if (s->tee)
		iou_prep_tee(sqe, R->out[1], R->in[0], s->len, s->sflags);
	else
		iou_prep_splice(sqe, R->out[1], (__u64)-1, R->in[0],
				s->file_off >= 0 ? (__u64)s->file_off : (__u64)-1,
				s->len, s->sflags);
	sqe->user_data = UD_SPLICE;
	if (R->async)
		sqe->flags |= IOSQE_ASYNC;
	if (s->link != L_NONE)
		sqe->flags |= IOSQE_IO_LINK;
	R->nsqes = 1;
	if (s->link == L_LT || s->link == L_LT_NOP) {
		ts.tv_sec = s->lt_ms / 1000;
		ts.tv_nsec = (s->lt_ms % 1000) * 1000000LL;
		sqe = iou_get_sqe(&R->ring);
		sqe->opcode = IORING_OP_LINK_TIMEOUT;
		sqe->addr = (__u64)(uintptr_t)&ts;
		sqe->len = 1;
		sqe->user_data = UD_LT;
		if (s->link == L_LT_NOP)
			sqe->flags |= IOSQE_IO_LINK;
		R->nsqes++;
	}
	if (s->link == L_NOP || s->link == L_LT_NOP) {
		sqe = iou_get_sqe(&R->ring);
		iou_prep_nop(sqe);
		sqe->user_data = UD_NOP;
		R->nsqes++;
	}
	ret = iou_submit_and_wait(&R->ring, 0);
	if (ret != R->nsqes)
		fail(R, "submitted %d of %d sqes: %s", ret, R->nsqes,
		     ret < 0 ? strerror(-ret) : "short");
}

static void submit_cancel(struct run *R, int act, int k)
{
	struct io_uring_sqe *sqe = iou_get_sqe(&R->ring);
	int ret;

	sqe->opcode = IORING_OP_ASYNC_CANCEL;
	sqe->user_data = UD_CANCEL + k;
	if (act == A_CANCEL_UD) {
		sqe->addr = UD_SPLICE;
	} else if (act == A_CANCEL_FD) {
		sqe->fd = R->out[1];
		sqe->cancel_flags = IORING_ASYNC_CANCEL_FD;
	} else {
		sqe->cancel_flags = IORING_ASYNC_CANCEL_ANY;
	}
	R->nsqes++;
	ret = iou_submit_and_wait(&R->ring, 0);
	if (ret != 1)
		fail(R, "cancel not submitted: %d", ret);
}

static void start_reader2(struct run *R)
{
	R->r2.fd = R->in[0];
	R->r2.sock = sock_kind(R->s->in);
	R->r2.buf = malloc(STREAM_MAX);
	if (!R->r2.buf || pthread_create(&R->r2.thr, NULL, reader2_fn, &R->r2)) {
		fail(R, "reader2 thread");
		return;
	}
	R->have_r2 = true;
}

static void do_action(struct run *R, const struct step *st, int k)
{
	const struct scen *s = R->s;

	vlog(R, "step %d: %s %ld", k, act_name[st->act], st->n);
	switch (st->act) {
	case A_WRITE_IN:
		if (R->have_feeder) {
			long w = LD(R->fd_.want) + st->n;

			if (w > STREAM_MAX)
				w = STREAM_MAX;
			ST(R->fd_.want, w);
		}
		break;
	case A_READ_OUT:
		ST(R->rd.allow, LD(R->rd.allow) + st->n);
		break;
	case A_DRAIN_OUT:
		ST(R->rd.allow, INF_BYTES);
		break;
	case A_READER2:
		if (!R->have_r2)
			start_reader2(R);
		if (R->have_r2)
			ST(R->r2.want, st->n == INF_BYTES ? INF_BYTES :
			   LD(R->r2.got) + st->n);
		break;
	case A_EOF_IN:
		if (R->have_feeder)
			ST(R->fd_.eof, 1);
		break;
	case A_CLOSE_OUT:
		ST(R->rd.close_req, 1);
		break;
	default:
		submit_cancel(R, st->act, k);
		break;
	}
	(void)s;
}

/* the longest run of @a[ia..] that equals @s[p..] */
static long common(const unsigned char *a, long na, long ia,
		   const unsigned char *s, long ns, long p)
{
	long n = 0;

	while (ia + n < na && p + n < ns && a[ia + n] == s[p + n])
		n++;
	return n;
}

/*
 * The consumers' bytes, each in its own order, must interleave to the
 * stream exactly (nothing lost, nothing twice); with @lossy, stream bytes
 * no one got are allowed. Returns the stream offset where it broke, or -1.
 */
static long merge_check(const unsigned char *stream, long ns,
			const unsigned char **c, const long *nc, int ncons,
			bool lossy, long *lost, int *which)
{
	long idx[3] = { 0, 0, 0 }, p = 0, best, m;
	int i, bi;

	*lost = 0;
	*which = -1;
	while (p < ns) {
		best = 0;
		bi = -1;
		for (i = 0; i < ncons; i++) {
			m = common(c[i], nc[i], idx[i], stream, ns, p);
			if (m > best) {
				best = m;
				bi = i;
			}
		}
		if (!best) {
			if (!lossy)
				return p;
			(*lost)++;
			p++;
			continue;
		}
		idx[bi] += best;
		p += best;
	}
	for (i = 0; i < ncons; i++) {
		if (idx[i] != nc[i]) {
			*which = i;
			return p;
		}
	}
	return -1;
}

static const char * const cons_name[] = { "output", "second reader", "input (left)" };

static void check_run(struct run *R, const unsigned char *left, long nleft)
{
	const struct scen *s = R->s;
	struct outcome *o = R->o;
	const unsigned char *outb = R->rd.buf + o->prefill_out;
	const unsigned char *cons[3];
	long nout = o->out_bytes, ncons[3], lost, at, moved;
	long stream_len, r2 = o->reader2;
	const unsigned char *stream = R->pat;
	int res = o->splice_res, which, i;
	bool nonblock = (s->sflags & SPLICE_F_NONBLOCK) || s->in_nonblock || s->out_nonblock;

	/* every sqe one CQE */
	if (o->cqes[UD_SPLICE] != 1)
		fail(R, "no CQE for the splice");
	if ((s->link == L_LT || s->link == L_LT_NOP) && o->cqes[UD_LT] != 1)
		fail(R, "no CQE for the link timeout");
	if ((s->link == L_NOP || s->link == L_LT_NOP) && o->cqes[UD_NOP] != 1)
		fail(R, "no CQE for the linked nop");
	for (i = 0; i < s->nsteps; i++) {
		int a = s->step[i].act;

		if (a != A_CANCEL_UD && a != A_CANCEL_FD && a != A_CANCEL_ANY)
			continue;
		if (o->cqes[UD_CANCEL + i + 1] != 1) {
			fail(R, "no CQE for the cancel of step %d", i + 1);
			continue;
		}
		at = o->cancel_res[i + 1];
		if (a == A_CANCEL_ANY ? (at != 0 && at != 1) :
		    (at != 0 && at != -EALREADY && at != -ENOENT))
			fail(R, "%s of step %d: %s", act_name[a], i + 1, errstr(at));
	}
	if (o->cqes[UD_SPLICE] != 1)
		return;

	/* the result's kind */
	if (res > (int)s->len)
		fail(R, "splice res %d above len %u", res, s->len);
	if (res == -EAGAIN && !nonblock)
		fail(R, "-EAGAIN from a blocking splice");
	if ((res == -ECANCELED || res == -EINTR) && !(s->racy & (R_CANCEL | R_LTIMEOUT)))
		fail(R, "splice %s without a cancel", errstr(res));
	if (res == -ERESTARTSYS_ || res == -ERESTARTNOINTR_)
		fail(R, "splice %s leaked", errstr(res));
	if (o->cqes[UD_NOP] == 1 && o->nop_res != (res == (int)s->len ? 0 : -ECANCELED))
		fail(R, "linked nop %s after splice %s (len %u)", errstr(o->nop_res),
		     errstr(res), s->len);
	/*
	 * -ENOENT too: io_try_cancel() signals a request it finds running in
	 * io-wq, then looks on and returns -ENOENT (6.12's own result).
	 */
	if (o->cqes[UD_LT] == 1 && o->lt_res != -ETIME && o->lt_res != -EALREADY &&
	    o->lt_res != -ECANCELED && o->lt_res != -ENOENT)
		fail(R, "link timeout %s", errstr(o->lt_res));

	/* the prefill of the output came out first */
	if (o->prefill_out && memcmp(R->rd.buf, R->prefill,
				     LD(R->rd.got) < o->prefill_out ? LD(R->rd.got) :
				     o->prefill_out))
		fail(R, "the output's prefill came out changed");

	/* the bytes */
	if (file_kind(s->in)) {
		long start = s->file_off >= 0 ? s->file_off : 0;

		stream = R->pat + (start < s->in_bytes ? start : s->in_bytes);
		stream_len = start < s->in_bytes ? s->in_bytes - start : 0;
		if (nout > stream_len || memcmp(outb, stream, nout))
			fail(R, "output: %ld bytes, not the file's bytes from %ld", nout, start);
		if (!s->lossy && res >= 0 && res != nout)
			fail(R, "splice res %d, but %ld bytes came out", res, nout);
		if (res < 0 && nout)
			fail(R, "splice %s, but %ld bytes came out", errstr(res), nout);
		moved = s->file_off >= 0 ? 0 : o->file_pos - start;
		if (s->file_off < 0 && moved != (res > 0 ? res : 0))
			fail(R, "splice res %s, but the file position moved by %ld",
			     errstr(res), moved);
		if (s->file_off >= 0 && o->file_pos != 0)
			fail(R, "splice with an offset moved the file position to %ld",
			     o->file_pos);
		return;
	}
	stream_len = o->written;
	cons[0] = outb;
	ncons[0] = nout;
	cons[1] = R->r2.buf;
	ncons[1] = r2;
	cons[2] = left;
	ncons[2] = nleft;
	if (s->tee) {
		/* the input stays whole: the second reader's and what is left */
		at = merge_check(stream, stream_len, cons + 1, ncons + 1, 2, false, &lost,
				 &which);
		if (at >= 0)
			fail(R, "tee input: %s at stream offset %ld (of %ld written)",
			     which >= 0 ? "extra bytes" : "bytes lost", at, stream_len);
		/* the output is a piece of it, from where the second reader was */
		for (at = 0; at <= r2 && at + nout <= stream_len; at++)
			if (!memcmp(outb, stream + at, nout))
				break;
		if (nout && (at > r2 || at + nout > stream_len))
			fail(R, "tee output: %ld bytes that are no piece of the input", nout);
		if (!s->lossy && res >= 0 && res != nout)
			fail(R, "tee res %d, but %ld bytes came out", res, nout);
		if (res < 0 && nout)
			fail(R, "tee %s, but %ld bytes came out", errstr(res), nout);
		if (s->lossy && res >= 0 && res < nout)
			fail(R, "tee res %d, but %ld bytes came out", res, nout);
		return;
	}
	at = merge_check(stream, stream_len, cons, ncons, 3, s->lossy, &lost, &which);
	if (at >= 0) {
		if (which >= 0)
			fail(R, "%s: bytes that are not the input's, or twice (merge stopped "
			     "at %ld of %ld)", cons_name[which], at, stream_len);
		else
			fail(R, "input byte %ld of %ld: no one got it (output %ld, second "
			     "reader %ld, left %ld)", at, stream_len, nout, r2, nleft);
	}
	moved = stream_len - r2 - nleft;
	if (res >= 0 && !s->lossy && (res != nout || res != moved))
		fail(R, "splice res %d, but %ld bytes left the input and %ld came out",
		     res, moved, nout);
	if (res >= 0 && s->lossy && (res < nout || res != moved))
		fail(R, "splice res %d, but %ld bytes left the input and %ld came out "
		     "(reader closed)", res, moved, nout);
	if (res < 0 && (moved || nout))
		fail(R, "splice %s, but %ld bytes left the input and %ld came out",
		     errstr(res), moved, nout);
}

/* read what is left in the input, without blocking */
static long read_left(struct run *R, unsigned char *buf)
{
	long n = 0;
	ssize_t r;

	if (R->in[0] < 0)
		return 0;
	set_fl(R->in[0], O_NONBLOCK, true);
	while (n < STREAM_MAX) {
		r = read(R->in[0], buf + n, STREAM_MAX - n);
		if (r <= 0)
			break;
		n += r;
	}
	return n;
}

static bool all_cqes(struct run *R)
{
	return R->ncqes >= R->nsqes;
}

static void run_scen(const struct scen *s, bool async, struct outcome *o,
		     const unsigned char *pat, const unsigned char *prefill)
{
	struct run RR, *R = &RR;
	unsigned char *left;
	long nleft, moved, last;
	bool excuse;
	int k;

	memset(R, 0, sizeof(*R));
	memset(o, 0, sizeof(*o));
	o->splice_res = o->lt_res = o->nop_res = INT_MIN;
	o->splice_step = -1;
	for (k = 0; k <= MAX_STEPS; k++)
		o->cancel_res[k] = INT_MIN;
	R->s = s;
	R->async = async;
	R->o = o;
	R->pat = (unsigned char *)pat;
	R->prefill = (unsigned char *)prefill;
	R->t0 = iou_now_ms();
	signal(SIGPIPE, SIG_IGN);
	left = malloc(STREAM_MAX);
	R->rd.buf = malloc(OUT_MAX);
	if (!left || !R->rd.buf) {
		snprintf(o->err, sizeof(o->err), "malloc");
		return;
	}
	if (setup_run(R))
		return;

	R->rd.fd = R->out[0];
	if (pthread_create(&R->rd.thr, NULL, reader_fn, &R->rd)) {
		snprintf(o->err, sizeof(o->err), "pthread_create");
		return;
	}
	if (!file_kind(s->in)) {
		R->fd_.fd = R->in[1];
		R->fd_.sock = sock_kind(s->in);
		R->fd_.pat = pat;
		R->fd_.want = R->fd_.written = o->written;
		if (pthread_create(&R->fd_.thr, NULL, feeder_fn, &R->fd_)) {
			snprintf(o->err, sizeof(o->err), "pthread_create");
			return;
		}
		R->have_feeder = true;
	}

	submit(R);
	R->step = 0;
	settle(R);
	o->workers = iou_count_io_workers();
	vlog(R, "step 0: settled, %d io-wq worker(s), %ld bytes out", o->workers,
	     LD(R->rd.got));
	for (k = 0; k < s->nsteps; k++) {
		R->step = k + 1;
		do_action(R, &s->step[k], k + 1);
		settle(R);
	}

	/* F1: the output drained; a splice that moved bytes must end now */
	R->step = s->nsteps + 1;
	if (!LD(R->rd.closed) && !LD(R->rd.close_req))
		ST(R->rd.allow, INF_BYTES);
	settle(R);
	moved = LD(R->rd.got) - o->prefill_out;
	/* unix_stream_read_generic() waits for min(SO_RCVLOWAT, len) bytes */
	excuse = s->in == K_UNIX && s->rcvlowat > moved && (long)s->len > moved;
	o->pending_f1 = !o->cqes[UD_SPLICE];
	o->moved_f1 = moved;
	if (o->pending_f1 && moved > 0 && !s->lossy && !LD(R->rd.closed) && !excuse) {
		reap_for(R, F1_WAIT_MS, R->nsqes);
		if (!o->cqes[UD_SPLICE])
			fail(R, "no CQE: the splice moved %ld bytes and still waits with the "
			     "output drained (6.12's blocking splice returns)", moved);
	}

	/* F2: end the input; every CQE must come */
	R->step = s->nsteps + 2;
	if (!all_cqes(R)) {
		vlog(R, "step %d: ending the input", R->step);
		if (R->have_feeder)
			ST(R->fd_.eof, 1);
		if (!LD(R->rd.close_req))
			ST(R->rd.allow, INF_BYTES);
		reap_for(R, F2_WAIT_MS, R->nsqes);
		if (!all_cqes(R)) {
			fail(R, "no CQE: %d of %d CQEs after the output was drained and the "
			     "input ended", R->ncqes, R->nsqes);
			if (verbose)
				iou_dump_threads();
			/* the ring's exit cancels the rest; threads die with us */
			o->done = 1;
			return;
		}
	}

	/* the last bytes out, then the threads stop */
	if (R->have_feeder) {
		ST(R->fd_.stop, 1);
		pthread_join(R->fd_.thr, NULL);
		o->written = LD(R->fd_.written);
	}
	if (R->have_r2) {
		ST(R->r2.stop, 1);
		pthread_join(R->r2.thr, NULL);
		o->reader2 = LD(R->r2.got);
	}
	/*
	 * A socket's last bytes may still be in flight (a slow guest, a
	 * window update): end its sending side and read to EOF. A pipe holds
	 * all a completed splice moved; read until it stops growing.
	 */
	if (sock_kind(s->out) && !LD(R->rd.closed) && !LD(R->rd.close_req) &&
	    !shutdown(R->out[1], SHUT_WR)) {
		long long end = iou_now_ms() + F2_WAIT_MS;

		while (!LD(R->rd.eof) && iou_now_ms() < end)
			usleep(TICK_MS * 1000);
	}
	last = -1;
	while (!LD(R->rd.closed) && !LD(R->rd.close_req) && last != LD(R->rd.got)) {
		last = LD(R->rd.got);
		usleep(60000);
	}
	ST(R->rd.stop, 1);
	pthread_join(R->rd.thr, NULL);
	o->out_bytes = LD(R->rd.got) - o->prefill_out;
	if (o->out_bytes < 0)
		o->out_bytes = 0;
	if (file_kind(s->in)) {
		o->file_pos = lseek(R->in[0], 0, SEEK_CUR);
		nleft = 0;
	} else {
		nleft = read_left(R, left);
	}
	o->left = nleft;
	check_run(R, left, nleft);
	iou_exit(&R->ring);
	o->done = 1;
}

/* ------------------------------------------------------------------ */
/* the parent */

static void xorshift_fill(unsigned char *buf, long len, unsigned int seed)
{
	unsigned int x = seed | 1;
	long i;

	for (i = 0; i < len; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		buf[i] = x >> 24;
	}
}

static unsigned char *g_pat, *g_prefill;

/* one run in a fresh child; false if the child died or hung */
static bool run_child(const struct scen *s, bool async, struct outcome *o)
{
	long long deadline;
	int status;
	pid_t pid;

	memset(shared, 0, sizeof(*shared));
	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		snprintf(o->err, sizeof(o->err), "fork: %s", strerror(errno));
		return false;
	}
	if (!pid) {
		alarm(CHILD_ALARM_S);
		run_scen(s, async, shared, g_pat, g_prefill);
		fflush(stdout);
		_exit(0);
	}
	deadline = iou_now_ms() + (CHILD_ALARM_S + 10) * 1000LL;
	for (;;) {
		pid_t w = waitpid(pid, &status, WNOHANG);

		if (w == pid)
			break;
		if (iou_now_ms() > deadline) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			break;
		}
		usleep(10000);
	}
	*o = *shared;
	if (!o->done && !o->err[0]) {
		if (WIFSIGNALED(status))
			snprintf(o->err, sizeof(o->err), "child killed by signal %d%s",
				 WTERMSIG(status),
				 WTERMSIG(status) == SIGALRM ? " (hung)" : "");
		else
			snprintf(o->err, sizeof(o->err), "child exited early");
	}
	return o->done;
}

static void print_outcome(const char *mode, const struct outcome *o)
{
	char cancels[96] = "";
	int i, n = 0;

	for (i = 1; i <= MAX_STEPS; i++)
		if (o->cancel_res[i] != INT_MIN)
			n += snprintf(cancels + n, sizeof(cancels) - n, " cancel%d %s", i,
				      errstr(o->cancel_res[i]));
	ksft_print_msg("  %s: splice %s at step %d, nop %s, link timeout %s%s; out %ld, "
		       "second reader %ld, left %ld, written %ld (prefill in %ld, out %ld); "
		       "%d worker(s) after the submit\n",
		       mode, errstr(o->splice_res), o->splice_step, errstr(o->nop_res),
		       errstr(o->lt_res), cancels, o->out_bytes, o->reader2, o->left,
		       o->written, o->prefill_in, o->prefill_out, o->workers);
	for (i = 0; i < o->nfails && i < MAX_FAILS; i++)
		ksft_print_msg("  %s: FAIL %s\n", mode, o->fail[i]);
	if (o->nfails > MAX_FAILS)
		ksft_print_msg("  %s: (%d more failures)\n", mode, o->nfails - MAX_FAILS);
	if (o->err[0])
		ksft_print_msg("  %s: ERROR %s\n", mode, o->err);
}

/* how link timeouts and cancelled splices ended, per mode */
enum { T_ETIME, T_ECANCELED, T_EALREADY, T_ENOENT, T_OTHER, T_NR };
static const char * const tally_name[T_NR] = {
	"-ETIME", "-ECANCELED", "-EALREADY", "-ENOENT", "other",
};

struct totals {
	unsigned long scenarios, deterministic, mismatches, unstable, known, inv_fails,
		errors;
	unsigned long lt[2][T_NR];
	unsigned long cancelled[2][3];	/* splice -ECANCELED, -EINTR, a count */
};

static void tally(struct totals *t, int mode, const struct scen *s, const struct outcome *o)
{
	int r = o->lt_res;

	if (o->cqes[UD_LT] == 1)
		t->lt[mode][r == -ETIME ? T_ETIME : r == -ECANCELED ? T_ECANCELED :
			    r == -EALREADY ? T_EALREADY : r == -ENOENT ? T_ENOENT :
			    T_OTHER]++;
	if (!(s->racy & (R_CANCEL | R_LTIMEOUT)) || o->cqes[UD_SPLICE] != 1)
		return;
	if (o->splice_res == -ECANCELED)
		t->cancelled[mode][0]++;
	else if (o->splice_res == -EINTR)
		t->cancelled[mode][1]++;
	else if (o->splice_res >= 0 && o->splice_res < (int)s->len)
		t->cancelled[mode][2]++;
}

static void print_tallies(const struct totals *t)
{
	const char * const mode[2] = { "plain", "async" };
	char line[256];
	int m, i, n;

	for (m = 0; m < 2; m++) {
		n = snprintf(line, sizeof(line), "%s: link timeouts", mode[m]);
		for (i = 0; i < T_NR; i++)
			n += snprintf(line + n, sizeof(line) - n, " %s %lu", tally_name[i],
				      t->lt[m][i]);
		n += snprintf(line + n, sizeof(line) - n, "; cancelled or timed out: ");
		snprintf(line + n, sizeof(line) - n, "-ECANCELED %lu, -EINTR %lu, short %lu",
			 t->cancelled[m][0], t->cancelled[m][1], t->cancelled[m][2]);
		ksft_print_msg("%s\n", line);
	}
}

/* compare two runs of a deterministic scenario; the differences into @why */
static int compare(const struct scen *s, const struct outcome *p, const struct outcome *a,
		   char *why, size_t sz)
{
	int n = 0, diffs = 0;

#define CMP(field, name, fmt)							\
	do {									\
		if (p->field != a->field) {					\
			n += snprintf(why + n, sz - n, " %s " fmt " vs " fmt ";",	\
				      name, p->field, a->field);		\
			diffs++;						\
		}								\
	} while (0)
	if (p->splice_res != a->splice_res) {
		n += snprintf(why + n, sz - n, " splice %s vs %s;", errstr(p->splice_res),
			      errstr(a->splice_res));
		diffs++;
	}
	CMP(splice_step, "step of the splice's CQE", "%d");
	if (p->nop_res != a->nop_res) {
		n += snprintf(why + n, sz - n, " nop %s vs %s;", errstr(p->nop_res),
			      errstr(a->nop_res));
		diffs++;
	}
	CMP(out_bytes, "bytes out", "%ld");
	CMP(left, "bytes left", "%ld");
	CMP(written, "bytes written", "%ld");
	if (file_kind(s->in))
		CMP(file_pos, "file position", "%ld");
#undef CMP
	return diffs;
}

/*
 * Does this path give @first again?  A step of the schedule can land before
 * or after a splice reaches its wait when the kernel is slow (a debug
 * kernel under TCG), which changes either path's outcome: a mismatch is a
 * difference between the paths only if each repeats its own outcome.
 */
static bool outcome_repeats(const struct scen *s, bool async, const struct outcome *first)
{
	struct outcome again;
	char why[400] = "";

	run_child(s, async, &again);
	if (again.err[0] || again.nfails) {
		ksft_print_msg("  %s again: %s\n", async ? "async" : "plain",
			       again.err[0] ? again.err : again.fail[0]);
		return false;
	}
	if (compare(s, first, &again, why, sizeof(why))) {
		ksft_print_msg("  %s again, first vs now:%s\n", async ? "async" : "plain", why);
		return false;
	}
	return true;
}

/*
 * Differences left as they are (docs/inline-splice-design.md, section 7.7,
 * items 9 and 10), both after the output's reader is closed; each pinned
 * by its exact outcomes, so that any other difference in such a scenario
 * still counts:
 *  - a socket -> pipe splice waiting for input whose pipe loses its
 *    reader, then the input ends without data: 6.12's worker checked the
 *    pipe for readers before it blocked in the socket read, so it gives 0;
 *    the series' retry checks the pipe again: -EPIPE;
 *  - a pipe -> TCP splice waiting for room when the peer closes: both
 *    report the bytes sent before the reset, and 6.12's blocking send can
 *    have queued more of them than the inline try did (the counts differ,
 *    the bytes sent plus those left in the pipe do not).
 */
static bool known_difference(const struct scen *s, const struct outcome *p,
			     const struct outcome *a)
{
	bool closed_out = false, same_rest;
	int i;

	for (i = 0; i < s->nsteps; i++)
		closed_out |= s->step[i].act == A_CLOSE_OUT;
	same_rest = closed_out && !s->tee && p->splice_step == a->splice_step &&
		    p->nop_res == a->nop_res && p->written == a->written &&
		    p->out_bytes == a->out_bytes;
	if (same_rest && sock_kind(s->in) && s->out == K_PIPE &&
	    p->splice_res == -EPIPE && a->splice_res == 0 &&
	    !p->out_bytes && !p->written)
		return true;
	return same_rest && s->in == K_PIPE && s->out == K_TCP &&
	       p->splice_res > 0 && a->splice_res > 0 &&
	       p->splice_res + p->left == a->splice_res + a->left;
}

static const char replay_fmt[] = "%s seed %llu index %lu (replay: --seed %llu --index %lu -v)\n";

static bool run_one(__u64 seed, unsigned long idx, struct totals *t)
{
	char desc[600], why[400] = "";
	struct outcome plain, async;
	struct scen s;
	bool bad = false, mismatch = false, unstable = false;

	gen_scen(&s, seed, idx);
	xorshift_fill(g_pat, STREAM_MAX, (unsigned int)(seed ^ idx ^ 0x5eed));
	xorshift_fill(g_prefill, PREFILL_MAX, (unsigned int)(seed ^ idx ^ 0xfeed));
	describe(desc, sizeof(desc), &s);
	if (verbose)
		ksft_print_msg("scenario %lu: %s\n", idx, desc);
	run_child(&s, false, &plain);
	run_child(&s, true, &async);
	t->scenarios++;
	tally(t, 0, &s, &plain);
	tally(t, 1, &s, &async);
	if (plain.err[0] || async.err[0]) {
		t->errors++;
		bad = true;
	}
	if (plain.nfails || async.nfails) {
		t->inv_fails++;
		bad = true;
	}
	if (!s.racy && !plain.err[0] && !async.err[0]) {
		t->deterministic++;
		if (compare(&s, &plain, &async, why, sizeof(why)))
			mismatch = true;
	}
	if (mismatch && known_difference(&s, &plain, &async)) {
		t->known++;
		mismatch = false;
		ksft_print_msg("KNOWN difference after the output's reader closed (design 7.7, items 9-10): seed %llu index %lu;%s\n",
			       (unsigned long long)seed, idx, why);
	}
	if (mismatch && !(outcome_repeats(&s, false, &plain) &&
			  outcome_repeats(&s, true, &async))) {
		t->unstable++;
		mismatch = false;
		unstable = true;
	} else if (mismatch) {
		t->mismatches++;
	}
	if (bad || mismatch || unstable || verbose) {
		if (bad || mismatch || unstable)
			ksft_print_msg(replay_fmt,
				       mismatch ? "MISMATCH" : bad ? "FAIL" :
				       "UNSTABLE (an outcome that did not repeat, not compared):",
				       (unsigned long long)seed, idx,
				       (unsigned long long)seed, idx);
		if (!verbose)
			ksft_print_msg("  scenario: %s\n", desc);
		if (mismatch || unstable)
			ksft_print_msg("  plain vs async:%s\n", why);
		print_outcome("plain", &plain);
		print_outcome("async", &async);
	}
	fflush(stdout);
	return !(bad || mismatch);
}

static bool is_ext4(const char *path)
{
	struct statfs sf;

	return !statfs(path, &sf) && sf.f_type == EXT4_MAGIC && !access(path, W_OK);
}

static void usage(const char *prog)
{
	printf("usage: %s [--seed S] [--count N] [--seconds T] [--start I] [--index I] [--list] [-v]\n"
	       "  runs the pinned scenarios, then random splice scenarios, each twice\n"
	       "  (plain and IOSQE_ASYNC), and compares;\n"
	       "  --seconds defaults to %d (IOU_DIFF_SECONDS; %d without the series)\n"
	       "  unless --count is given,\n"
	       "  --start the first index, --index replays one scenario (nothing pinned),\n"
	       "  --list prints the scenarios of --start and --count (default 100), runs none\n",
	       prog, DEF_SECONDS, ABSENT_SECONDS);
}

/*
 * Scenarios that once found a defect (or pin a known difference), run
 * before the random ones on every run, each as a test of its own, so that
 * a mutation can name the one that must catch it. "--list" finds the
 * index of a shape.
 */
static const struct pinned_scen {
	const char *name;
	__u64 seed;
	unsigned long idx;
} pinned[] = {
	/* pipe -> TCP(4096) 64 KiB, cancelled by user_data while it waits for room */
	{ "cancel_ud_after_bytes", 1, 2066 },
	/* the same, cancelled by fd, a linked NOP */
	{ "cancel_fd_after_bytes", 1, 264 },
	/* the same, a linked timeout of 214 ms, the output read 1000 bytes */
	{ "link_timeout_after_bytes", 1, 1036 },
	/* pipe -> TCP(4096) 64 KiB, another reader empties the input, drained */
	{ "reader2_empties_input", 1, 480 },
	/* AF_UNIX input, SO_RCVLOWAT 220 with 99 bytes queued, then drained */
	{ "unix_rcvlowat_below_mark", 1, 181 },
	/* known difference 9 (design 7.7): unix -> pipe, reader closed, EOF */
	{ "known_reader_closed_then_eof", 1796631061039022617ULL, 20 },
	/* known difference 10: pipe -> TCP(4096), the peer closed */
	{ "known_tcp_peer_closed", 1796628462126599521ULL, 18 },
};

static void list_scenarios(__u64 seed, long long start, unsigned long count)
{
	char desc[600];
	unsigned long i;
	struct scen s;

	if (count == ULONG_MAX)
		count = 100;
	for (i = 0; i < count; i++) {
		gen_scen(&s, seed, start + i);
		describe(desc, sizeof(desc), &s);
		printf("%llu %s\n", start + i, desc);
	}
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "seed", required_argument, NULL, 's' },
		{ "count", required_argument, NULL, 'n' },
		{ "seconds", required_argument, NULL, 't' },
		{ "index", required_argument, NULL, 'i' },
		{ "start", required_argument, NULL, 'f' },
		{ "list", no_argument, NULL, 'l' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *env = getenv("IOU_DIFF_SECONDS");
	unsigned long count = ULONG_MAX, idx, i;
	long long only = -1, end, start = 0;
	unsigned int seconds = env && *env ? strtoul(env, NULL, 0) : DEF_SECONDS;
	bool seed_set = false, seconds_set = false, list = false, ok = true, pinned_ok = true;
	struct totals t = { 0 };
	struct iou_ring probe;
	__u64 seed = 0;
	int opt, ret;

	while ((opt = getopt_long(argc, argv, "s:n:t:i:f:lvh", opts, NULL)) != -1) {
		switch (opt) {
		case 's':
			seed = strtoull(optarg, NULL, 0);
			seed_set = true;
			break;
		case 'n':
			count = strtoul(optarg, NULL, 0);
			break;
		case 't':
			seconds = strtoul(optarg, NULL, 0);
			seconds_set = true;
			break;
		case 'i':
			only = strtoll(optarg, NULL, 0);
			break;
		case 'f':
			start = strtoll(optarg, NULL, 0);
			break;
		case 'l':
			list = true;
			break;
		case 'v':
			verbose = true;
			break;
		default:
			usage(argv[0]);
			return opt == 'h' ? 0 : KSFT_FAIL;
		}
	}
	if (!seed_set) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		seed = ((__u64)ts.tv_sec * 1000000007ULL) ^ ts.tv_nsec ^ getpid();
	}
	if (list) {
		have_ext4 = is_ext4(EXT4_DIR);
		list_scenarios(seed, start, count);
		return 0;
	}

	ksft_print_header();
	ksft_print_msg("seed %llu (replay: --seed %llu), %s\n", (unsigned long long)seed,
		       (unsigned long long)seed, only >= 0 ? "one scenario" : "");
	ret = iou_setup(&probe, 4, 0);
	if (ret == -ENOSYS || ret == -EPERM)
		ksft_exit_skip("io_uring unavailable: %s\n", strerror(-ret));
	if (ret)
		ksft_exit_fail_msg("io_uring_setup: %s\n", strerror(-ret));
	if (!(probe.features & IORING_FEAT_EXT_ARG))
		ksft_exit_skip("no IORING_FEAT_EXT_ARG: cannot wait with a timeout\n");
	iou_exit(&probe);
	if (!seconds_set && !(env && *env) && iou_series_absent())
		seconds = ABSENT_SECONDS;
	have_ext4 = is_ext4(EXT4_DIR);
	ksft_print_msg("ext4 input files: %s\n", have_ext4 ? EXT4_DIR :
		       "none (" EXT4_DIR " is not a writable ext4 mount)");
	signal(SIGPIPE, SIG_IGN);
	shared = mmap(NULL, sizeof(*shared), PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	g_pat = malloc(STREAM_MAX);
	g_prefill = malloc(PREFILL_MAX);
	if (shared == MAP_FAILED || !g_pat || !g_prefill)
		ksft_exit_fail_msg("out of memory\n");
	ksft_set_plan(only >= 0 ? 1 : 1 + ARRAY_SIZE(pinned));

	for (i = 0; only < 0 && i < ARRAY_SIZE(pinned); i++) {
		const struct pinned_scen *p = &pinned[i];

		if (run_one(p->seed, p->idx, &t)) {
			ksft_test_result_pass("pinned.%s\n", p->name);
		} else {
			ksft_test_result_fail("pinned.%s\n", p->name);
			pinned_ok = false;
		}
	}

	/* --count alone: that many scenarios, however long they take */
	end = count != ULONG_MAX && !seconds_set ? LLONG_MAX : iou_now_ms() + seconds * 1000LL;
	for (idx = only >= 0 ? (unsigned long)only : (unsigned long)start; ; idx++) {
		if (only >= 0 && idx != (unsigned long)only)
			break;
		if (only < 0 && (t.scenarios >= count || iou_now_ms() >= end))
			break;
		if (!run_one(seed, idx, &t))
			ok = false;
	}
	ksft_print_msg("splice_diff: seed %llu, %lu scenarios (%lu compared, the others racy), "
		       "%lu mismatches, %lu unstable, %lu known differences, %lu with failed invariants, %lu errors\n",
		       (unsigned long long)seed, t.scenarios, t.deterministic, t.mismatches,
		       t.unstable, t.known, t.inv_fails, t.errors);
	print_tallies(&t);
	if (ok)
		ksft_test_result_pass("random.plain_vs_async (seed %llu)\n",
				      (unsigned long long)seed);
	else
		ksft_test_result_fail("random.plain_vs_async (seed %llu)\n",
				      (unsigned long long)seed);
	if (!ok || !pinned_ok)
		ksft_exit_fail();
	ksft_exit_pass();
}
