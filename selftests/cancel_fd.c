// SPDX-License-Identifier: GPL-2.0
/*
 * IORING_OP_ASYNC_CANCEL by file (IORING_ASYNC_CANCEL_FD), of a splice that
 * waits in io-wq for input. The cancel looks its file up the way splice
 * looks up its input, normal or registered (IORING_ASYNC_CANCEL_FD_FIXED),
 * through io_get_file(); this pins both lookups and their -EBADF.
 *
 * The splice goes from an empty pipe A to pipe B, so it waits in a worker;
 * cancelling by B's write end (the splice's sqe->fd) finds it: the cancel
 * completes with 0 (not started yet) or -EALREADY (running: the worker is
 * woken), and the splice with -ECANCELED or -EINTR. A restart code
 * (-ERESTARTSYS) must never reach the CQE.
 */

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <unistd.h>

#include "iou_helpers.h"
#include "../kselftest_harness.h"

#define UD_SPLICE	1
#define UD_CANCEL	2
/* generous: the debug (KASAN) kernel under TCG on a busy host is slow */
#define TIMEOUT_MS	20000
#define TEST_SECS	90

FIXTURE(cancel_fd) {
	struct iou_ring ring;
	int a[2], b[2];
	/* the splice's CQE, if cancel_by_fd() reaped it before the cancel's */
	bool splice_done;
	int splice_res;
};

FIXTURE_SETUP(cancel_fd)
{
	int ret = iou_setup(&self->ring, 8, 0);
	int slots[2] = { -1, -1 };

	if (ret == -ENOSYS || ret == -EPERM)
		SKIP(return, "io_uring unavailable: %s", strerror(-ret));
	ASSERT_EQ(0, ret);
	ASSERT_EQ(0, pipe(self->a));
	ASSERT_EQ(0, pipe(self->b));
	/* slot 0: B's write end, slot 1: empty */
	slots[0] = self->b[1];
	ASSERT_EQ(0, iou_register_files(&self->ring, slots, 2));
}

FIXTURE_TEARDOWN(cancel_fd)
{
	close(self->a[0]);
	close(self->a[1]);
	close(self->b[0]);
	close(self->b[1]);
	iou_exit(&self->ring);
}

/* Queue a splice A -> B that has to wait for input; fixed: B by slot 0. */
static void queue_waiting_splice(struct __test_metadata *_metadata,
				 FIXTURE_DATA(cancel_fd) *self, bool fixed)
{
	struct io_uring_sqe *sqe = iou_get_sqe(&self->ring);
	struct iou_cqe cqe;

	ASSERT_NE(NULL, sqe);
	iou_prep_splice(sqe, fixed ? 0 : self->b[1], (__u64)-1, self->a[0],
			(__u64)-1, 100, 0);
	if (fixed)
		sqe->flags |= IOSQE_FIXED_FILE;
	sqe->user_data = UD_SPLICE;
	ASSERT_EQ(1, iou_submit_and_wait(&self->ring, 0));
	/* still waiting: no completion */
	ASSERT_EQ(-ETIME, iou_wait_cqe_timeout(&self->ring, &cqe, 200));
}

static int cancel_by_fd(struct __test_metadata *_metadata,
			FIXTURE_DATA(cancel_fd) *self, int fd, bool fixed)
{
	struct io_uring_sqe *sqe = iou_get_sqe(&self->ring);
	struct iou_cqe cqe;

	EXPECT_NE(NULL, sqe);
	if (!sqe)
		return -ENOMEM;
	memset(sqe, 0, sizeof(*sqe));
	sqe->opcode = IORING_OP_ASYNC_CANCEL;
	sqe->fd = fd;
	sqe->cancel_flags = IORING_ASYNC_CANCEL_FD;
	if (fixed)
		sqe->cancel_flags |= IORING_ASYNC_CANCEL_FD_FIXED;
	sqe->user_data = UD_CANCEL;
	EXPECT_EQ(1, iou_submit_and_wait(&self->ring, 0));
	for (;;) {
		int ret = iou_wait_cqe_timeout(&self->ring, &cqe, TIMEOUT_MS);

		EXPECT_EQ(0, ret);
		if (ret)
			return ret;
		if (cqe.user_data == UD_CANCEL)
			return cqe.res;
		/*
		 * The worker the cancel woke may post the splice's CQE
		 * before the cancel posts its own: keep it for
		 * splice_result().
		 */
		EXPECT_EQ(UD_SPLICE, cqe.user_data);
		EXPECT_FALSE(self->splice_done);
		self->splice_done = true;
		self->splice_res = cqe.res;
	}
}

/* Whatever the cancel said, the splice has to end, one way or another. */
static int splice_result(struct __test_metadata *_metadata,
			 FIXTURE_DATA(cancel_fd) *self, int cancel)
{
	struct iou_cqe cqe;
	int ret;

	if (self->splice_done)
		return self->splice_res;
	ret = iou_wait_cqe_timeout(&self->ring, &cqe, TIMEOUT_MS);
	if (ret == -ETIME) {
		/* not cancelled: feed it so that teardown does not hang */
		EXPECT_EQ(1, write(self->a[1], "x", 1));
		ret = iou_wait_cqe_timeout(&self->ring, &cqe, TIMEOUT_MS);
		EXPECT_EQ(0, ret) {
			TH_LOG("cancel said %d; the splice is stuck even though fed",
			       cancel);
			iou_dump_threads();
			return ret;
		}
		EXPECT_EQ(UD_SPLICE, cqe.user_data);
		return cqe.res;
	}
	EXPECT_EQ(0, ret);
	EXPECT_EQ(UD_SPLICE, cqe.user_data);
	return cqe.res;
}

static bool found(int res)
{
	return res == 0 || res == -EALREADY;
}

/*
 * 0: the splice was still queued and completes -ECANCELED. -EALREADY: it was
 * running and its worker was signalled, which wakes it with -EINTR unless
 * the worker had not started waiting yet and ran the notification as task
 * work first; then it goes on and completes normally once fed.
 */
static bool cancelled_as_said(int cancel, int splice)
{
	if (cancel == 0)
		return splice == -ECANCELED || splice == -EINTR;
	return splice == -EINTR || splice == -ECANCELED || splice == 1;
}

TEST_F_TIMEOUT(cancel_fd, by_normal_fd, TEST_SECS)
{
	int cancel, res;

	queue_waiting_splice(_metadata, self, false);
	cancel = cancel_by_fd(_metadata, self, self->b[1], false);
	EXPECT_TRUE(found(cancel)) {
		TH_LOG("cancel completed with %d", cancel);
	}
	res = splice_result(_metadata, self, cancel);
	EXPECT_TRUE(cancelled_as_said(cancel, res)) {
		TH_LOG("cancel %d, then the splice completed with %d", cancel, res);
	}
}

TEST_F_TIMEOUT(cancel_fd, by_fixed_slot, TEST_SECS)
{
	int cancel, res;

	queue_waiting_splice(_metadata, self, true);
	cancel = cancel_by_fd(_metadata, self, 0, true);
	EXPECT_TRUE(found(cancel)) {
		TH_LOG("cancel completed with %d", cancel);
	}
	res = splice_result(_metadata, self, cancel);
	EXPECT_TRUE(cancelled_as_said(cancel, res)) {
		TH_LOG("cancel %d, then the splice completed with %d", cancel, res);
	}
}

/* A file no request uses: nothing found, the splice goes on waiting. */
TEST_F_TIMEOUT(cancel_fd, other_file_not_found, TEST_SECS)
{
	struct iou_cqe cqe;

	queue_waiting_splice(_metadata, self, false);
	EXPECT_EQ(-ENOENT, cancel_by_fd(_metadata, self, self->b[0], false));
	ASSERT_FALSE(self->splice_done) {
		TH_LOG("the splice completed with %d", self->splice_res);
	}
	/* still waiting for input: feed it */
	EXPECT_EQ(1, write(self->a[1], "x", 1));
	EXPECT_EQ(0, iou_wait_cqe_timeout(&self->ring, &cqe, TIMEOUT_MS));
	EXPECT_EQ(UD_SPLICE, cqe.user_data);
	EXPECT_EQ(1, cqe.res);
}

TEST_F(cancel_fd, bad_fd)
{
	int fd = open("/dev/null", O_RDONLY);

	ASSERT_LE(0, fd);
	close(fd);
	EXPECT_EQ(-EBADF, cancel_by_fd(_metadata, self, fd, false));
}

TEST_F(cancel_fd, empty_slot)
{
	EXPECT_EQ(-EBADF, cancel_by_fd(_metadata, self, 1, true));
}

TEST_F(cancel_fd, slot_out_of_range)
{
	EXPECT_EQ(-EBADF, cancel_by_fd(_metadata, self, 2, true));
}

TEST_HARNESS_MAIN
