// SPDX-License-Identifier: GPL-2.0
/*
 * IOSQE_IO_DRAIN with sqes refused at submission after the drain.
 *
 * A drained request may start only once every request submitted before it
 * has completed.  6.12 decides that by comparing the CQ tail with the
 * drain's sequence number, exactly: an sqe refused at submission (a bad
 * opcode) after the drain posts its CQE at once and moves the tail.  One
 * such CQE makes the tail equal the sequence while the earlier request
 * still waits, so the drain runs early; two in one submission move the
 * tail past it, and the drain never runs.  The series counts requests
 * instead (upstream's 6.16 fix), and both orders come out right.
 *
 * Each case: sqe 0 reads a pipe that is empty (it waits), sqe 1 is a NOP
 * with IOSQE_IO_DRAIN, then N sqes with a bad opcode, all in one
 * submission (IORING_SETUP_SUBMIT_ALL goes on past a refused sqe).  The
 * refused sqes complete at once with -EINVAL, the NOP must not complete
 * yet; after a byte is written to the pipe, the read and then the NOP
 * complete.  Without the series, the 6.12 miscount is reported as an
 * expected failure (XFAIL); with it, as a failure.
 */

#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "iou_helpers.h"
#include "../kselftest.h"

#define UD_READ		1
#define UD_DRAIN	2
#define UD_REFUSED	3
/* how long a CQE that must not come is waited for */
#define QUIET_MS	500
/* how long one that must come is waited for (KASAN guests under TCG) */
#define WAIT_MS		10000

enum outcome { OK, EARLY, STALLED, WRONG };

static const char *outcome_name[] = {
	[OK] = "ok",
	[EARLY] = "the drained NOP completed before the read submitted ahead of it",
	[STALLED] = "the drained NOP never completed",
	[WRONG] = "unexpected CQE or error",
};

static enum outcome run_case(unsigned int refused)
{
	enum outcome outcome = WRONG;
	struct io_uring_sqe *sqe;
	struct iou_ring ring;
	struct iou_cqe cqe;
	char byte = 0, buf;
	unsigned int i;
	int fds[2] = { -1, -1 };
	int ret;

	ret = iou_setup(&ring, 8, IORING_SETUP_SUBMIT_ALL);
	if (ret) {
		ksft_print_msg("io_uring_setup: %s\n", strerror(-ret));
		return WRONG;
	}
	if (pipe(fds))
		goto out;

	sqe = iou_get_sqe(&ring);
	sqe->opcode = IORING_OP_READ;
	sqe->fd = fds[0];
	sqe->addr = (__u64)(uintptr_t)&buf;
	sqe->len = 1;
	sqe->off = -1ULL;
	sqe->user_data = UD_READ;
	sqe = iou_get_sqe(&ring);
	iou_prep_nop(sqe);
	sqe->flags = IOSQE_IO_DRAIN;
	sqe->user_data = UD_DRAIN;
	for (i = 0; i < refused; i++) {
		sqe = iou_get_sqe(&ring);
		sqe->opcode = 0xff;	/* no such opcode: refused in io_init_req() */
		sqe->user_data = UD_REFUSED;
	}
	ret = iou_submit_and_wait(&ring, 0);
	if (ret != (int)(2 + refused)) {
		ksft_print_msg("submitted %d of %u sqes\n", ret, 2 + refused);
		goto out;
	}

	/* The refused sqes complete at once, and nothing else may. */
	for (i = 0; i < refused; i++) {
		ret = iou_wait_cqe_timeout(&ring, &cqe, WAIT_MS);
		if (ret || cqe.user_data != UD_REFUSED || cqe.res != -EINVAL) {
			if (!ret && cqe.user_data == UD_DRAIN)
				outcome = EARLY;
			ksft_print_msg("refused sqe %u: ret %d, CQE %llu res %d\n",
				       i, ret, (unsigned long long)cqe.user_data,
				       cqe.res);
			goto out;
		}
	}
	ret = iou_wait_cqe_timeout(&ring, &cqe, QUIET_MS);
	if (ret != -ETIME) {
		if (!ret && cqe.user_data == UD_DRAIN)
			outcome = EARLY;
		ksft_print_msg("before the write: ret %d, CQE %llu res %d\n",
			       ret, ret ? 0ULL : (unsigned long long)cqe.user_data,
			       ret ? 0 : cqe.res);
		goto out;
	}

	/* Now the read completes, and after it the drained NOP. */
	if (write(fds[1], &byte, 1) != 1)
		goto out;
	ret = iou_wait_cqe_timeout(&ring, &cqe, WAIT_MS);
	if (ret || cqe.user_data != UD_READ || cqe.res != 1) {
		ksft_print_msg("after the write: ret %d, CQE %llu res %d, not the read's\n",
			       ret, (unsigned long long)cqe.user_data, cqe.res);
		goto out;
	}
	ret = iou_wait_cqe_timeout(&ring, &cqe, WAIT_MS);
	if (ret == -ETIME) {
		outcome = STALLED;
		goto out;
	}
	if (ret || cqe.user_data != UD_DRAIN || cqe.res != 0) {
		ksft_print_msg("after the read: ret %d, CQE %llu res %d, not the NOP's\n",
			       ret, (unsigned long long)cqe.user_data, cqe.res);
		goto out;
	}
	outcome = OK;
out:
	if (fds[0] >= 0) {
		close(fds[0]);
		close(fds[1]);
	}
	/* ring exit cancels a NOP that is still deferred */
	iou_exit(&ring);
	return outcome;
}

int main(void)
{
	/* What 6.12 does with 0, 1 and 2 refused sqes. */
	static const enum outcome on_612[] = { OK, EARLY, STALLED };
	const char *absent = iou_series_absent();
	struct iou_ring probe;
	unsigned int refused;
	int ret;

	ksft_print_header();
	ret = iou_setup(&probe, 2, IORING_SETUP_SUBMIT_ALL);
	if (ret)
		ksft_exit_skip("io_uring with IORING_SETUP_SUBMIT_ALL unavailable: %s\n",
			       strerror(-ret));
	if (!(probe.features & IORING_FEAT_EXT_ARG))
		ksft_exit_skip("no IORING_FEAT_EXT_ARG to wait with a timeout\n");
	iou_exit(&probe);
	ksft_print_msg("series: %s\n", absent ? absent : "present");
	ksft_set_plan(3);

	for (refused = 0; refused < 3; refused++) {
		enum outcome outcome = run_case(refused);

		if (outcome == OK)
			ksft_test_result_pass("drain with %u sqes refused after it\n",
					      refused);
		else if (absent && outcome == on_612[refused])
			ksft_test_result_xfail("drain with %u sqes refused after it: %s (6.12's miscount, fixed by the series)\n",
					       refused, outcome_name[outcome]);
		else
			ksft_test_result_fail("drain with %u sqes refused after it: %s\n",
					      refused, outcome_name[outcome]);
	}
	ksft_finished();
}
