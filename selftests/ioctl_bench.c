// SPDX-License-Identifier: GPL-2.0
/*
 * FIONREAD through IORING_OP_IOCTL against ioctl(2): a benchmark, not a
 * test.  For a pipe holding data and an AF_UNIX stream socket with queued
 * data it times, for a fixed duration (-d seconds) or op count (-n ops)
 * per row:
 *   ioctl(2) in a loop,
 *   the ring at queue depth 1 (one sqe per io_uring_enter()),
 *   the ring at depth 32 (32 sqes per io_uring_enter()),
 *   the same with the file registered (IOSQE_FIXED_FILE),
 *   the same with the 32 sqes written once and resubmitted,
 * then 32 prefilled NOPs per io_uring_enter() (the ring's own cost), and
 * prints ops/s and each row's ratio to ioctl(2) on the same file.
 * Every answer is checked; a wrong one makes the exit status 1.
 * Exit 4 (skip) when io_uring or IORING_OP_IOCTL is missing.
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

#include "iou_helpers.h"
#include "ioctl_helpers.h"

#define KSFT_SKIP	4
#define DEPTH		32
#define CHECK_EVERY	32	/* ops between clock reads */

struct row {
	const char *file;
	const char *method;
	unsigned long long ops;
	double secs;
	double ratio;
};

static double opt_secs = 0.9;
static unsigned long long opt_ops;
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

	do {
		for (i = 0; i < CHECK_EVERY; i++) {
			int res;

			v = -1;
			res = ioctl(fd, FIONREAD, &v);
			check(res, v, want);
		}
		ops += CHECK_EVERY;
	} while (!row_done(t0, ops));
	r->secs = now_sec() - t0;
	r->ops = ops;
}

/*
 * @depth FIONREADs per io_uring_enter() on @fd (a slot if @sqe_flags has
 * IOSQE_FIXED_FILE), all waited for before the next batch.
 */
static int bench_ring(struct row *r, struct iou_ring *ring, int fd,
		      __u8 sqe_flags, unsigned int depth, int want)
{
	int vals[DEPTH];
	unsigned long long ops = 0;
	struct io_uring_sqe *sqe;
	struct iou_cqe cqe;
	unsigned int i, n;
	double t0 = now_sec();
	int ret;

	do {
		for (n = 0; n < CHECK_EVERY; n += depth) {
			for (i = 0; i < depth; i++) {
				sqe = iou_get_sqe(ring);
				if (!sqe)
					return -EBUSY;
				vals[i] = -1;
				iou_prep_ioctl(sqe, fd, FIONREAD,
					       IOCTL_PTR(&vals[i]));
				sqe->flags = sqe_flags;
				sqe->user_data = i;
			}
			ret = iou_submit_and_wait(ring, depth);
			if (ret != (int)depth)
				return ret < 0 ? ret : -EIO;
			for (i = 0; i < depth; i++) {
				if (iou_peek_cqe(ring, &cqe))
					return -EIO;
				check(cqe.res, vals[cqe.user_data], want);
			}
			ops += depth;
		}
	} while (!row_done(t0, ops));
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
			iou_prep_ioctl(sqe, fd, FIONREAD, IOCTL_PTR(&vals[i]));
		else
			sqe->opcode = opcode;
		sqe->flags = sqe_flags;
		sqe->user_data = i;
	}

	t0 = now_sec();
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
				check(cqe.res, vals[cqe.user_data], want);
			else
				check(cqe.res, 0, 0);
		}
		ops += DEPTH;
	} while (!row_done(t0, ops));
	r->secs = now_sec() - t0;
	r->ops = ops;
	return 0;
}

static void print_usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s [-d seconds | -n ops]\n"
		"  -d S  run each row for S seconds (default %.1f)\n"
		"  -n N  run each row for N operations instead\n",
		prog, opt_secs);
	exit(2);
}

int main(int argc, char **argv)
{
	static char data[4096];
	static const char * const files[] = { "pipe", "unix" };
	struct row rows[16];
	struct iou_ring ring;
	struct utsname uts;
	int fds[2][2], want[2], nrows = 0, f, opt, ret, slot;
	double base;

	while ((opt = getopt(argc, argv, "d:n:h")) != -1) {
		switch (opt) {
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

	/* a pipe holding 4 KiB; an AF_UNIX stream socket with 1000 bytes */
	if (pipe(fds[0]) || socketpair(AF_UNIX, SOCK_STREAM, 0, fds[1])) {
		perror("pipe/socketpair");
		return 1;
	}
	want[0] = sizeof(data);
	want[1] = 1000;
	if (write(fds[0][1], data, want[0]) != want[0] ||
	    send(fds[1][1], data, want[1], 0) != want[1]) {
		perror("queueing data");
		return 1;
	}
	ret = iou_register_files(&ring, (int[]){ fds[0][0], fds[1][0] }, 2);
	if (ret) {
		fprintf(stderr, "IORING_REGISTER_FILES: %s\n", strerror(-ret));
		return 1;
	}

	uname(&uts);
	printf("FIONREAD: ioctl(2) against IORING_OP_IOCTL, kernel %s\n",
	       uts.release);
	if (opt_ops)
		printf("%llu ops per row\n", opt_ops);
	else
		printf("%.2f s per row\n", opt_secs);

	for (f = 0; f < 2; f++) {
		int fd = fds[f][0];

		slot = f;
		/* warm up caches and the ring */
		ioctl(fd, FIONREAD, &ret);

		rows[nrows] = (struct row){ files[f], "ioctl(2)" };
		bench_ioctl(&rows[nrows++], fd, want[f]);

		rows[nrows] = (struct row){ files[f], "ring depth 1" };
		ret = bench_ring(&rows[nrows++], &ring, fd, 0, 1, want[f]);
		if (!ret) {
			rows[nrows] = (struct row){ files[f], "ring depth 32" };
			ret = bench_ring(&rows[nrows++], &ring, fd, 0, DEPTH,
					 want[f]);
		}
		if (!ret) {
			rows[nrows] = (struct row){ files[f],
						    "ring depth 32, fixed" };
			ret = bench_ring(&rows[nrows++], &ring, slot,
					 IOSQE_FIXED_FILE, DEPTH, want[f]);
		}
		if (!ret) {
			rows[nrows] = (struct row){ files[f],
						    "ring 32, fixed, prefill" };
			ret = bench_ring_prefilled(&rows[nrows++], &ring,
						   IOU_OP_IOCTL, slot,
						   IOSQE_FIXED_FILE, want[f]);
		}
		if (ret) {
			fprintf(stderr, "ring failed: %s\n", strerror(-ret));
			return 1;
		}
	}

	/* the ring's floor: NOPs, no file, prefilled */
	rows[nrows] = (struct row){ "-", "NOP 32, prefill" };
	ret = bench_ring_prefilled(&rows[nrows++], &ring, IORING_OP_NOP, -1, 0,
				   0);
	if (ret) {
		fprintf(stderr, "ring failed: %s\n", strerror(-ret));
		return 1;
	}

	printf("\n%-5s %-24s %10s %12s %9s %11s\n", "file", "method", "ops",
	       "ops/s", "ns/op", "/ ioctl(2)");
	base = 0;
	for (f = 0; f < nrows; f++) {
		double rate = rows[f].ops / rows[f].secs;

		if (!strcmp(rows[f].method, "ioctl(2)"))
			base = rate;
		rows[f].ratio = rate / base;
		printf("%-5s %-24s %10llu %12.0f %9.1f", rows[f].file,
		       rows[f].method, rows[f].ops, rate, 1e9 / rate);
		if (strcmp(rows[f].file, "-"))
			printf(" %10.2fx", rows[f].ratio);
		printf("\n");
	}
	printf("\ndepth 32 / ioctl(2): pipe %.2fx, unix %.2fx (target >= 1.5x)\n",
	       rows[2].ratio, rows[7].ratio);
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
