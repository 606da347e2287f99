/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the io_uring benchmarks (splice_bench, proxy_bench) share: the
 * median of a figure over rounds, and how far the rounds spread.
 */
#ifndef __BENCH_HELPERS_H
#define __BENCH_HELPERS_H

#include <stdlib.h>

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

#endif
