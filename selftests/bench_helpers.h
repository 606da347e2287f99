/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the io_uring benchmarks (splice_bench, proxy_bench, ioctl_bench)
 * share: the median of a figure over rounds, and how far the rounds
 * spread; and their instruction-count mode (-i, or IOU_ICOUNT=1 from
 * run_selftests.sh --icount), where QEMU's -icount shift=0,sleep=off makes
 * the guest's clock advance one nanosecond per instruction executed and
 * stand still while the vCPUs idle: a "second" is then 10^9 guest
 * instructions, and ops per second say instructions per op.
 */
#ifndef __BENCH_HELPERS_H
#define __BENCH_HELPERS_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

static inline int bench_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/*
 * Sorts @v (one figure per round, @n of them) and returns the median;
 * *@spread gets (max - min) / median, 0 for a median of 0.
 */
static inline double bench_median(double *v, int n, double *spread)
{
	qsort(v, n, sizeof(v[0]), bench_cmp_double);
	*spread = v[n / 2] > 0 ? (v[n - 1] - v[0]) / v[n / 2] : 0;
	return v[n / 2];
}

/* Whether run_selftests.sh --icount booted this guest (IOU_ICOUNT=1). */
static inline bool bench_icount_env(void)
{
	const char *v = getenv("IOU_ICOUNT");

	return v && !strcmp(v, "1");
}

/* Guest instructions per op from ops per guest second (-icount shift=0). */
static inline double bench_insn_per_op(double ops_per_sec)
{
	return ops_per_sec > 0 ? 1e9 / ops_per_sec : 0;
}

/*
 * Guest nanoseconds per instruction of a loop of two instructions
 * (dec, jnz) run 10^7 times: 1.00 when the clock counts instructions
 * (-icount shift=0), something else on a real clock; 0 where the loop
 * is not written for the CPU.
 */
static inline double bench_ns_per_insn(void)
{
#if defined(__x86_64__)
	const unsigned long iters = 10000000;
	unsigned long n = iters;
	struct timespec a, b;

	clock_gettime(CLOCK_MONOTONIC, &a);
	asm volatile("1: dec %0\n\tjnz 1b" : "+r" (n) : : "cc");
	clock_gettime(CLOCK_MONOTONIC, &b);
	return ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) /
	       (2.0 * iters);
#else
	return 0;
#endif
}

/*
 * Under -icount the clock counts every vCPU's instructions, so work left
 * by an earlier cell or program (sockets closing, io-wq workers exiting)
 * would be counted in the next one: wait for the guest to be quiet,
 * sleeping between tries (free under -icount), until a loop of two
 * instructions takes at most 1% more than its own (50 tries at most).
 * Returns the last try's guest ns per instruction; *@tries gets the tries.
 */
static inline double bench_icount_settle(int *tries)
{
	double ns = 0;

	for (*tries = 1; *tries <= 50; ++*tries) {
		ns = bench_ns_per_insn();
		if (ns <= 1.01)
			return ns;
		usleep(100000);
	}
	*tries = 50;
	return ns;
}

/*
 * In the instruction-count mode, say so and check that the clock does
 * count instructions (and that the guest is quiet); false, with the
 * reason printed, when it does not (-i without -icount).
 */
static inline bool bench_icount_check(const char *prog)
{
	int tries;
	double ns = bench_icount_settle(&tries);

	printf("%s: instruction counts (QEMU -icount shift=0,sleep=off):\n"
	       "  1 guest ns = 1 instruction, a guest second = 10^9 of them;\n"
	       "  idle vCPUs cost nothing, so rows that hand work to io-wq or\n"
	       "  wait for another thread look better than on hardware\n",
	       prog);
	if (ns == 0) {
		printf("%s: clock check not done on this CPU\n", prog);
		return true;
	}
	printf("%s: clock check, a 2-instruction loop: %.3f guest ns per instruction (try %d)\n",
	       prog, ns, tries);
	if (ns < 0.95 || ns > 1.05) {
		printf("%s: the guest's clock does not count instructions:\n"
		       "  -i (IOU_ICOUNT=1) needs QEMU -icount shift=0,sleep=off\n",
		       prog);
		return false;
	}
	return true;
}

/*
 * A benchmark's first line: the kernel, the time per cell and the rounds,
 * in guest seconds under -i (then the clock check too: false if the
 * guest's clock does not count instructions).
 */
static inline bool bench_print_header(const char *prog, bool icount,
				      double dur, int nrounds)
{
	struct utsname uts;

	uname(&uts);
	if (!icount) {
		printf("%s: kernel %s %s, %.1f s per cell, median of %d rounds\n",
		       prog, uts.release, uts.machine, dur, nrounds);
		return true;
	}
	printf("%s: kernel %s %s, %.2f guest s per cell, %d round%s\n",
	       prog, uts.release, uts.machine, dur, nrounds,
	       nrounds > 1 ? "s, the median" : "");
	return bench_icount_check(prog);
}

/*
 * The markers of lib/insn_profile.c, a QEMU plugin that counts the guest
 * instructions between them (run_selftests.sh --icount --profile): 7-byte
 * NOPs, "nopl DISP(%rax)", that nothing else uses; a cell runs
 * bench_mark_begin() when its measured time starts and bench_mark_end()
 * when it ends.  One instruction each, without the plugin a NOP.
 */
static inline void bench_mark_begin(void)
{
#if defined(__x86_64__)
	asm volatile(".byte 0x0f, 0x1f, 0x80\n\t.long 0x1a0c0b01");
#endif
}

static inline void bench_mark_end(void)
{
#if defined(__x86_64__)
	asm volatile(".byte 0x0f, 0x1f, 0x80\n\t.long 0x1a0c0e01");
#endif
}

#endif
