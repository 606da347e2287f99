// SPDX-License-Identifier: GPL-2.0
/*
 * FIONREAD through IORING_OP_IOCTL against ioctl(2): a benchmark, not a
 * test.  For a pipe holding data, an AF_UNIX stream socket and a TCP
 * socket with queued data it times, for a fixed duration (-d seconds) or
 * op count (-n ops) per row:
 *   ioctl(2) in a loop,
 *   the ring at queue depth 1 (one sqe per io_uring_enter()),
 *   the ring at depth 32 (32 sqes per io_uring_enter()),
 *   the same with the file registered (IOSQE_FIXED_FILE),
 *   the same with the 32 sqes written once and resubmitted,
 * on TCP also 6.12's own IORING_OP_URING_CMD SOCKET_URING_OP_SIOCINQ at
 * depth 32 and prefilled (the answer comes in cqe->res, no put_user()),
 * then 32 prefilled NOPs per io_uring_enter() (the ring's own cost), and
 * prints ops/s and each row's ratio to ioctl(2) on the same file.
 * Every answer is checked; a wrong one makes the exit status 1.
 * Exit 4 (skip) when io_uring or IORING_OP_IOCTL is missing.
 *
 * -i (the default when IOU_ICOUNT=1, run_selftests.sh --icount): the
 * guest's clock counts instructions (QEMU -icount shift=0,sleep=off), so
 * the table gives ops per guest second and guest instructions per op, and
 * adds the ring's floor: getppid() in a loop and NOPs at depth 1 and 32
 * through the same loop as the FIONREAD rows; then, per file, the ideal
 * ratio to ioctl(2) at depth 1 and 32, what the ring would reach if it
 * added only a NOP's cost to the work ioctl(2) does after its syscall
 * entry: ioctl(2) / (ioctl(2) - getppid() + NOP) in instructions per op.
 */

#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "bench_helpers.h"
#include "iou_helpers.h"
#include "ioctl_helpers.h"

#define KSFT_SKIP	4
#define DEPTH		32
#define CHECK_EVERY	32	/* ops between clock reads */
#define TCP_QUEUED	1000

/* 6.12 has both; older uAPI headers may not */
#ifndef IORING_OP_URING_CMD
#define IORING_OP_URING_CMD	46
#endif
#define IOU_SOCKET_URING_OP_SIOCINQ	0

/* What a ring row submits. */
enum ring_op { RING_IOCTL, RING_URING_CMD, RING_NOP };

struct row {
	const char *file;
	const char *method;
	unsigned long long ops;
	double secs;
	double ratio;
};

static double opt_secs = 0.9;
static unsigned long long opt_ops;
static bool icount;	/* the clock counts instructions (-i, IOU_ICOUNT=1) */
static unsigned long long wrong;

static double now_sec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Whether a row that started at @t0 with @ops done should stop. */
static bool row_done(double t0, unsigned long long ops)
{
	if (opt_ops)
		return ops >= opt_ops;
	return now_sec() - t0 >= opt_secs;
}

static void check(int res, int val, int want)
{
	if (res == 0 && val == want)
		return;
	if (wrong++ < 5)
		fprintf(stderr, "wrong answer: res %d value %d, want 0 and %d\n",
			res, val, want);
}

static void bench_ioctl(struct row *r, int fd, int want)
{
	unsigned long long ops = 0;
	double t0 = now_sec();
	int i, v;

	bench_mark_begin();
	do {
		for (i = 0; i < CHECK_EVERY; i++) {
			int res;

			v = -1;
			res = ioctl(fd, FIONREAD, &v);
			check(res, v, want);
		}
		ops += CHECK_EVERY;
	} while (!row_done(t0, ops));
	bench_mark_end();
	r->secs = now_sec() - t0;
	r->ops = ops;
}

/* getppid() in a loop as bench_ioctl() loops: a syscall's own cost. */
static void bench_getppid(struct row *r)
{
	unsigned long long ops = 0;
	pid_t parent = getppid();
	double t0 = now_sec();
	int i;

	bench_mark_begin();
	do {
		for (i = 0; i < CHECK_EVERY; i++)
			check(0, getppid(), parent);
		ops += CHECK_EVERY;
	} while (!row_done(t0, ops));
	bench_mark_end();
	r->secs = now_sec() - t0;
	r->ops = ops;
}

/*
 * @depth FIONREADs per io_uring_enter() on @fd (a slot if @sqe_flags has
 * IOSQE_FIXED_FILE), all waited for before the next batch.
 */
static void prep_op(struct io_uring_sqe *sqe, enum ring_op op, int fd,
		    int *val)
{
	if (op == RING_IOCTL) {
		iou_prep_ioctl(sqe, fd, FIONREAD, IOCTL_PTR(val));
		return;
	}
	if (op == RING_NOP) {
		sqe->opcode = IORING_OP_NOP;
		return;
	}
	sqe->opcode = IORING_OP_URING_CMD;
	sqe->fd = fd;
	/* cmd_op aliases the low half of off */
	sqe->off = IOU_SOCKET_URING_OP_SIOCINQ;
}

/* An answer: the argument's value, or for URING_CMD the result itself. */
static void check_op(enum ring_op op, int res, int val, int want)
{
	if (op == RING_URING_CMD)
		check(res < 0 ? res : 0, res, want);
	else if (op == RING_NOP)
		check(res, 0, 0);
	else
		check(res, val, want);
}

static int bench_ring(struct row *r, struct iou_ring *ring, enum ring_op op,
		      int fd, __u8 sqe_flags, unsigned int depth, int want)
{
	int vals[DEPTH];
	unsigned long long ops = 0;
	struct io_uring_sqe *sqe;
	struct iou_cqe cqe;
	unsigned int i, n;
	double t0 = now_sec();
	int ret;

	bench_mark_begin();
	do {
		for (n = 0; n < CHECK_EVERY; n += depth) {
			for (i = 0; i < depth; i++) {
				sqe = iou_get_sqe(ring);
				if (!sqe)
					return -EBUSY;
				vals[i] = -1;
				prep_op(sqe, op, fd, &vals[i]);
				sqe->flags = sqe_flags;
				sqe->user_data = i;
			}
			ret = iou_submit_and_wait(ring, depth);
			if (ret != (int)depth)
				return ret < 0 ? ret : -EIO;
			for (i = 0; i < depth; i++) {
				if (iou_peek_cqe(ring, &cqe))
					return -EIO;
				check_op(op, cqe.res, vals[cqe.user_data],
					 want);
			}
			ops += depth;
		}
	} while (!row_done(t0, ops));
	bench_mark_end();
	r->secs = now_sec() - t0;
	r->ops = ops;
	return 0;
}

/*
 * As bench_ring() at depth DEPTH, but the sqes are written once: each
 * batch only points the SQ ring at them again.  The least user-space work
 * a submitter can do per request.  @opcode IORING_OP_NOP gives the ring's
 * own cost.
 */
static int bench_ring_prefilled(struct row *r, struct iou_ring *ring,
				__u8 opcode, int fd, __u8 sqe_flags, int want)
{
	int vals[DEPTH];
	unsigned long long ops = 0;
	struct io_uring_sqe *sqe;
	struct iou_cqe cqe;
	unsigned int i, tail;
	double t0;
	int ret;

	if (ring->sq_entries < DEPTH || ring->sqe_next != *ring->sq_tail)
		return -EINVAL;
	for (i = 0; i < DEPTH; i++) {
		sqe = &ring->sqes[i];
		memset(sqe, 0, sizeof(*sqe));
		if (opcode == IOU_OP_IOCTL)
			prep_op(sqe, RING_IOCTL, fd, &vals[i]);
		else if (opcode == IORING_OP_URING_CMD)
			prep_op(sqe, RING_URING_CMD, fd, &vals[i]);
		else
			sqe->opcode = opcode;
		sqe->flags = sqe_flags;
		sqe->user_data = i;
	}

	t0 = now_sec();
	bench_mark_begin();
	do {
		tail = *ring->sq_tail;
		for (i = 0; i < DEPTH; i++) {
			vals[i] = -1;
			ring->sq_array[(tail + i) & ring->sq_mask] = i;
		}
		ring->sqe_next = tail + DEPTH;
		ret = iou_submit_and_wait(ring, DEPTH);
		if (ret != DEPTH)
			return ret < 0 ? ret : -EIO;
		for (i = 0; i < DEPTH; i++) {
			if (iou_peek_cqe(ring, &cqe))
				return -EIO;
			if (opcode == IOU_OP_IOCTL)
				check_op(RING_IOCTL, cqe.res,
					 vals[cqe.user_data], want);
			else if (opcode == IORING_OP_URING_CMD)
				check_op(RING_URING_CMD, cqe.res, 0, want);
			else
				check(cqe.res, 0, 0);
		}
		ops += DEPTH;
	} while (!row_done(t0, ops));
	bench_mark_end();
	r->secs = now_sec() - t0;
	r->ops = ops;
	return 0;
}

static void print_usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s [-i] [-d seconds | -n ops]\n"
		"  -i    the guest's clock counts instructions (QEMU -icount\n"
		"        shift=0,sleep=off; default when IOU_ICOUNT=1):\n"
		"        instructions per op, the ring's floor (getppid(),\n"
		"        NOPs) and the ideal ratios\n"
		"  -d S  run each row for S seconds (default %.1f; guest\n"
		"        seconds, 10^9 instructions, with -i)\n"
		"  -n N  run each row for N operations instead\n",
		prog, opt_secs);
	exit(2);
}

/* The rate of the row of @file and @method, 0 if there is none. */
static double row_rate(const struct row *rows, int nrows, const char *file,
		       const char *method)
{
	int i;

	for (i = 0; i < nrows; i++)
		if (!strcmp(rows[i].file, file) &&
		    !strcmp(rows[i].method, method))
			return rows[i].ops / rows[i].secs;
	return 0;
}

/* Wait until @fd has @want bytes to read (TCP loopback delivers soon). */
static int wait_readable(int fd, int want)
{
	int i, v = -1;

	for (i = 0; i < 1000; i++) {
		if (!ioctl(fd, FIONREAD, &v) && v == want)
			return 0;
		usleep(1000);
	}
	return -ETIMEDOUT;
}

int main(int argc, char **argv)
{
	static char data[4096];
	static const char * const files[] = { "pipe", "unix", "tcp" };
	enum { NFILES = 3 };
	struct row rows[24];
	struct iou_ring ring;
	struct utsname uts;
	int fds[NFILES][2], want[NFILES], nrows = 0, f, opt, ret;
	bool have_cmd;
	double base, ioc, cmd;

	icount = bench_icount_env();
	while ((opt = getopt(argc, argv, "d:in:h")) != -1) {
		switch (opt) {
		case 'i':
			icount = true;
			break;
		case 'd':
			opt_secs = strtod(optarg, NULL);
			if (opt_secs <= 0)
				print_usage(argv[0]);
			break;
		case 'n':
			opt_ops = strtoull(optarg, NULL, 0);
			if (!opt_ops)
				print_usage(argv[0]);
			break;
		default:
			print_usage(argv[0]);
		}
	}

	ret = iou_setup(&ring, 2 * DEPTH, 0);
	if (ret) {
		printf("SKIP: io_uring_setup: %s\n", strerror(-ret));
		return KSFT_SKIP;
	}
	ret = iou_probe_op(&ring, IOU_OP_IOCTL);
	if (ret <= 0) {
		printf("SKIP: IORING_OP_IOCTL (%d) not supported (%s)\n",
		       IOU_OP_IOCTL, ret ? strerror(-ret) : "probe");
		return KSFT_SKIP;
	}
	have_cmd = iou_probe_op(&ring, IORING_OP_URING_CMD) > 0;

	/*
	 * A pipe holding 4 KiB; an AF_UNIX stream socket and a TCP loopback
	 * socket with 1000 bytes each.  The reading ends are measured.
	 */
	if (pipe(fds[0]) || socketpair(AF_UNIX, SOCK_STREAM, 0, fds[1])) {
		perror("pipe/socketpair");
		return 1;
	}
	ret = iou_tcp_pair(&fds[2][1], &fds[2][0], 0);
	if (ret) {
		fprintf(stderr, "TCP loopback pair: %s\n", strerror(-ret));
		return 1;
	}
	want[0] = sizeof(data);
	want[1] = TCP_QUEUED;
	want[2] = TCP_QUEUED;
	if (write(fds[0][1], data, want[0]) != want[0] ||
	    send(fds[1][1], data, want[1], 0) != want[1] ||
	    send(fds[2][1], data, want[2], 0) != want[2] ||
	    wait_readable(fds[2][0], want[2])) {
		perror("queueing data");
		return 1;
	}
	ret = iou_register_files(&ring, (int[]){ fds[0][0], fds[1][0],
						 fds[2][0] }, NFILES);
	if (ret) {
		fprintf(stderr, "IORING_REGISTER_FILES: %s\n", strerror(-ret));
		return 1;
	}

	uname(&uts);
	printf("FIONREAD: ioctl(2) against IORING_OP_IOCTL, kernel %s\n",
	       uts.release);
	if (icount && !bench_icount_check("ioctl_bench"))
		return 1;
	if (opt_ops)
		printf("%llu ops per row\n", opt_ops);
	else
		printf("%.2f %s per row\n", opt_secs,
		       icount ? "guest s (10^9 instructions)" : "s");

	for (f = 0; f < NFILES; f++) {
		int fd = fds[f][0], slot = f;

		/* warm up caches and the ring */
		ioctl(fd, FIONREAD, &ret);

		rows[nrows] = (struct row){ files[f], "ioctl(2)" };
		bench_ioctl(&rows[nrows++], fd, want[f]);

		rows[nrows] = (struct row){ files[f], "ring depth 1" };
		ret = bench_ring(&rows[nrows++], &ring, RING_IOCTL, fd, 0, 1,
				 want[f]);
		if (!ret) {
			rows[nrows] = (struct row){ files[f], "ring depth 32" };
			ret = bench_ring(&rows[nrows++], &ring, RING_IOCTL, fd,
					 0, DEPTH, want[f]);
		}
		if (!ret) {
			rows[nrows] = (struct row){ files[f],
						    "ring depth 32, fixed" };
			ret = bench_ring(&rows[nrows++], &ring, RING_IOCTL,
					 slot, IOSQE_FIXED_FILE, DEPTH,
					 want[f]);
		}
		if (!ret) {
			rows[nrows] = (struct row){ files[f],
						    "ring 32, fixed, prefill" };
			ret = bench_ring_prefilled(&rows[nrows++], &ring,
						   IOU_OP_IOCTL, slot,
						   IOSQE_FIXED_FILE, want[f]);
		}
		/* TCP: the same through 6.12's URING_CMD SIOCINQ */
		if (!ret && have_cmd && !strcmp(files[f], "tcp")) {
			rows[nrows] = (struct row){ files[f],
						    "uring_cmd depth 32" };
			ret = bench_ring(&rows[nrows++], &ring, RING_URING_CMD,
					 fd, 0, DEPTH, want[f]);
			if (!ret) {
				rows[nrows] = (struct row){ files[f],
							    "uring_cmd 32, fixed, prefill" };
				ret = bench_ring_prefilled(&rows[nrows++], &ring,
							   IORING_OP_URING_CMD,
							   slot,
							   IOSQE_FIXED_FILE,
							   want[f]);
			}
		}
		if (ret) {
			fprintf(stderr, "ring failed: %s\n", strerror(-ret));
			return 1;
		}
	}

	/*
	 * The ring's floor: with -i, a syscall (getppid()) and NOPs through
	 * the FIONREAD rows' loop; NOPs, no file, prefilled.
	 */
	ret = 0;
	if (icount) {
		rows[nrows] = (struct row){ "-", "getppid()" };
		bench_getppid(&rows[nrows++]);
		rows[nrows] = (struct row){ "-", "NOP depth 1" };
		ret = bench_ring(&rows[nrows++], &ring, RING_NOP, -1, 0, 1, 0);
	}
	if (!ret && icount) {
		rows[nrows] = (struct row){ "-", "NOP depth 32" };
		ret = bench_ring(&rows[nrows++], &ring, RING_NOP, -1, 0, DEPTH,
				 0);
	}
	if (!ret) {
		rows[nrows] = (struct row){ "-", "NOP 32, prefill" };
		ret = bench_ring_prefilled(&rows[nrows++], &ring, IORING_OP_NOP,
					   -1, 0, 0);
	}
	if (ret) {
		fprintf(stderr, "ring failed: %s\n", strerror(-ret));
		return 1;
	}

	printf("\n%-5s %-30s %10s %12s %9s %11s\n", "file", "method", "ops",
	       icount ? "ops/guest-s" : "ops/s", icount ? "insn/op" : "ns/op",
	       "/ ioctl(2)");
	base = 0;
	for (f = 0; f < nrows; f++) {
		double rate = rows[f].ops / rows[f].secs;

		if (!strcmp(rows[f].method, "ioctl(2)"))
			base = rate;
		rows[f].ratio = rate / base;
		printf("%-5s %-30s %10llu %12.0f %9.*f", rows[f].file,
		       rows[f].method, rows[f].ops, rate, icount ? 0 : 1,
		       1e9 / rate);
		if (strcmp(rows[f].file, "-"))
			printf(" %10.2fx", rows[f].ratio);
		printf("\n");
	}
	printf("\ndepth 32 / ioctl(2): pipe %.2fx (target >= 1.5x), unix %.2fx, tcp %.2fx\n",
	       row_rate(rows, nrows, "pipe", "ring depth 32") /
	       row_rate(rows, nrows, "pipe", "ioctl(2)"),
	       row_rate(rows, nrows, "unix", "ring depth 32") /
	       row_rate(rows, nrows, "unix", "ioctl(2)"),
	       row_rate(rows, nrows, "tcp", "ring depth 32") /
	       row_rate(rows, nrows, "tcp", "ioctl(2)"));
	if (have_cmd) {
		ioc = row_rate(rows, nrows, "tcp", "ring depth 32");
		cmd = row_rate(rows, nrows, "tcp", "uring_cmd depth 32");
		printf("tcp, IORING_OP_IOCTL / URING_CMD SIOCINQ: depth 32 %.2fx (target >= 1.0x)",
		       ioc / cmd);
		ioc = row_rate(rows, nrows, "tcp", "ring 32, fixed, prefill");
		cmd = row_rate(rows, nrows, "tcp",
			       "uring_cmd 32, fixed, prefill");
		printf(", fixed and prefilled %.2fx\n", ioc / cmd);
	} else {
		printf("tcp: no IORING_OP_URING_CMD to compare with\n");
	}
	if (icount) {
		double ppid = row_rate(rows, nrows, "-", "getppid()");
		static const char * const nops[] = { "NOP depth 1",
						      "NOP depth 32" };
		int d;

		for (d = 0; d < 2; d++) {
			double nop = row_rate(rows, nrows, "-", nops[d]);

			printf("ideal at depth %d, ioctl(2) / (ioctl(2) - getppid() + NOP):",
			       d ? DEPTH : 1);
			for (f = 0; f < NFILES; f++) {
				double sys = row_rate(rows, nrows, files[f],
						      "ioctl(2)");

				if (!sys || !ppid || !nop) {
					printf(" %s n/a", files[f]);
					continue;
				}
				sys = bench_insn_per_op(sys);
				printf(" %s %.2fx", files[f],
				       sys / (sys - bench_insn_per_op(ppid) +
					      bench_insn_per_op(nop)));
			}
			printf("\n");
		}
	}
	printf("io-wq workers of this process: %d (0: everything ran inline)\n",
	       iou_count_io_workers());
	if (wrong) {
		printf("FAIL: %llu wrong answers\n", wrong);
		return 1;
	}
	printf("all answers correct\n");
	iou_exit(&ring);
	return 0;
}
