// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite for io_get_file() and io_put_file().
 *
 * Included at the end of io_uring/io_uring.c so that the fixture can make a
 * real ring with the kernel's own io_uring_setup() and register a real file
 * table with io_sqe_files_register(), both fed from user memory the way a
 * system call is. The test thread gets a file table of its own first, so its
 * descriptors never land in the table kernel threads share.
 */
#include <kunit/test.h>
#include <linux/fdtable.h>
#include <linux/mman.h>
#include <linux/shmem_fs.h>

/* The registered table: slot 2 is left empty. */
enum { SLOT_PIPE, SLOT_SHMEM, SLOT_EMPTY, SLOT_PIPE_WRITE, NR_SLOTS };

struct io_get_file_fixture {
	struct file *ring_file;
	struct io_ring_ctx *ctx;
	struct io_kiocb req;
	int pipe_fds[2];
	struct file *pipe_file;		/* read end */
	int shmem_fd;
	struct file *shmem_file;
	int closed_fd;
	int other_ring_fd;
};

static int io_get_file_test_ring(struct kunit *test, unsigned long user_page)
{
	struct io_uring_params __user *uparams = (void __user *)user_page;
	struct io_uring_params params = {};

	if (copy_to_user(uparams, &params, sizeof(params)))
		return -EFAULT;
	return io_uring_setup(4, uparams);
}

static int io_get_file_test_init(struct kunit *test)
{
	struct io_get_file_fixture *fx;
	unsigned long user_page;
	int fds[NR_SLOTS], ring_fd, ret;

	fx = kunit_kzalloc(test, sizeof(*fx), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, fx);
	test->priv = fx;

	KUNIT_ASSERT_EQ(test, unshare_files(), 0);
	user_page = kunit_vm_mmap(test, NULL, 0, PAGE_SIZE,
				  PROT_READ | PROT_WRITE,
				  MAP_ANONYMOUS | MAP_PRIVATE, 0);
	if (IS_ERR_VALUE(user_page) || !user_page)
		kunit_skip(test, "no user memory for the ring parameters");

	ring_fd = io_get_file_test_ring(test, user_page);
	KUNIT_ASSERT_GE_MSG(test, ring_fd, 0, "io_uring_setup: %d", ring_fd);
	fx->ring_file = fget(ring_fd);
	KUNIT_ASSERT_NOT_NULL(test, fx->ring_file);
	fx->ctx = fx->ring_file->private_data;

	fx->other_ring_fd = io_get_file_test_ring(test, user_page);
	KUNIT_ASSERT_GE(test, fx->other_ring_fd, 0);

	KUNIT_ASSERT_EQ(test, do_pipe_flags(fx->pipe_fds, 0), 0);
	fx->pipe_file = fget_raw(fx->pipe_fds[0]);
	KUNIT_ASSERT_NOT_NULL(test, fx->pipe_file);
	fput(fx->pipe_file);	/* the fd table keeps it alive */

	fx->shmem_file = shmem_file_setup("io_get_file_kunit", PAGE_SIZE, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR(fx->shmem_file));
	fx->shmem_fd = get_unused_fd_flags(O_CLOEXEC);
	KUNIT_ASSERT_GE(test, fx->shmem_fd, 0);
	fd_install(fx->shmem_fd, fx->shmem_file);

	fx->closed_fd = get_unused_fd_flags(O_CLOEXEC);
	KUNIT_ASSERT_GE(test, fx->closed_fd, 0);
	put_unused_fd(fx->closed_fd);

	fds[SLOT_PIPE] = fx->pipe_fds[0];
	fds[SLOT_SHMEM] = fx->shmem_fd;
	fds[SLOT_EMPTY] = -1;
	fds[SLOT_PIPE_WRITE] = fx->pipe_fds[1];
	KUNIT_ASSERT_EQ(test, copy_to_user((void __user *)user_page, fds,
					   sizeof(fds)), 0);
	mutex_lock(&fx->ctx->uring_lock);
	ret = io_sqe_files_register(fx->ctx, (void __user *)user_page,
				    NR_SLOTS, NULL);
	mutex_unlock(&fx->ctx->uring_lock);
	KUNIT_ASSERT_EQ(test, ret, 0);

	fx->req.ctx = fx->ctx;
	fx->req.task = current;
	return 0;
}

/*
 * Undo what a lookup attached to the request, as freeing a request would:
 * the rsrc node charge of a registered lookup and the in-flight count of an
 * io_uring file. Runs in the test thread, whose io_uring context it is.
 */
static void io_get_file_test_release_req(struct io_get_file_fixture *fx)
{
	struct io_kiocb *req = &fx->req;

	if (req->flags & REQ_F_INFLIGHT)
		atomic_dec(&current->io_uring->inflight_tracked);
	if (req->rsrc_node) {
		mutex_lock(&fx->ctx->uring_lock);
		io_put_rsrc_node(fx->ctx, req->rsrc_node);
		mutex_unlock(&fx->ctx->uring_lock);
	}
	req->rsrc_node = NULL;
	req->flags = 0;
	req->file = NULL;
}

/*
 * Look up as an inline submission does: with the uring_lock held and no
 * issue flags. io-wq passes IO_URING_F_UNLOCKED instead, see
 * io_get_file_unlocked_test.
 */
static struct file *io_get_file_locked(struct io_get_file_fixture *fx, int fd,
				       bool fixed)
{
	struct file *file;

	mutex_lock(&fx->ctx->uring_lock);
	file = io_get_file(&fx->req, fd, fixed, 0);
	mutex_unlock(&fx->ctx->uring_lock);
	return file;
}

static void io_get_file_test_exit(struct kunit *test)
{
	struct io_get_file_fixture *fx = test->priv;

	if (fx && fx->ring_file)
		fput(fx->ring_file);
}

enum lookup_target {
	TARGET_PIPE_FD, TARGET_SHMEM_FD, TARGET_CLOSED_FD, TARGET_MINUS_ONE,
	TARGET_SLOT_PIPE, TARGET_SLOT_SHMEM, TARGET_SLOT_EMPTY,
	TARGET_SLOT_NR, TARGET_SLOT_HUGE, TARGET_SLOT_NEGATIVE,
};

struct lookup_case {
	const char *desc;
	enum lookup_target target;
	bool fixed;
	bool found;
};

static const struct lookup_case lookup_cases[] = {
	{ "normal fd of a pipe is found", TARGET_PIPE_FD, false, true },
	{ "normal fd of a shmem file is found", TARGET_SHMEM_FD, false, true },
	{ "normal fd that was closed gives NULL", TARGET_CLOSED_FD, false, false },
	{ "normal fd -1 gives NULL", TARGET_MINUS_ONE, false, false },
	{ "registered slot of a pipe is found", TARGET_SLOT_PIPE, true, true },
	{ "registered slot of a shmem file is found", TARGET_SLOT_SHMEM, true, true },
	{ "registered empty slot gives NULL", TARGET_SLOT_EMPTY, true, false },
	{ "registered index == nr gives NULL", TARGET_SLOT_NR, true, false },
	{ "registered index INT_MAX gives NULL", TARGET_SLOT_HUGE, true, false },
	{ "registered index -1 gives NULL", TARGET_SLOT_NEGATIVE, true, false },
};

static void lookup_case_desc(const struct lookup_case *c, char *desc)
{
	strscpy(desc, c->desc, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(lookup, lookup_cases, lookup_case_desc);

/* The fd or index a case looks up, and the file it must find. */
static int lookup_case_fd(struct io_get_file_fixture *fx,
			  enum lookup_target target, struct file **want)
{
	*want = NULL;
	switch (target) {
	case TARGET_PIPE_FD:
		*want = fx->pipe_file;
		return fx->pipe_fds[0];
	case TARGET_SHMEM_FD:
		*want = fx->shmem_file;
		return fx->shmem_fd;
	case TARGET_CLOSED_FD:
		return fx->closed_fd;
	case TARGET_MINUS_ONE:
	case TARGET_SLOT_NEGATIVE:
		return -1;
	case TARGET_SLOT_PIPE:
		*want = fx->pipe_file;
		return SLOT_PIPE;
	case TARGET_SLOT_SHMEM:
		*want = fx->shmem_file;
		return SLOT_SHMEM;
	case TARGET_SLOT_EMPTY:
		return SLOT_EMPTY;
	case TARGET_SLOT_NR:
		return NR_SLOTS;
	case TARGET_SLOT_HUGE:
		return INT_MAX;
	}
	return -1;
}

static void io_get_file_lookup_test(struct kunit *test)
{
	const struct lookup_case *c = test->param_value;
	struct io_get_file_fixture *fx = test->priv;
	struct file *want, *got;
	long count_before = 0;
	int fd;

	fd = lookup_case_fd(fx, c->target, &want);
	if (want)
		count_before = file_count(want);

	got = io_get_file_locked(fx, fd, c->fixed);
	KUNIT_EXPECT_PTR_EQ(test, got, want);
	if (got) {
		/* A normal file is referenced, a registered one is pinned. */
		KUNIT_EXPECT_EQ(test, file_count(got),
				count_before + (c->fixed ? 0 : 1));
		KUNIT_EXPECT_EQ(test, !!fx->req.rsrc_node, c->fixed);
		io_put_file(got, c->fixed);
		KUNIT_EXPECT_EQ(test, file_count(got), count_before);
	}
	KUNIT_EXPECT_FALSE(test, fx->req.flags & REQ_F_INFLIGHT);
	io_get_file_test_release_req(fx);
}

/* A normal io_uring fd is tracked so that cancellation can find it. */
static void io_get_file_uring_fd_inflight_test(struct kunit *test)
{
	struct io_get_file_fixture *fx = test->priv;
	int before = atomic_read(&current->io_uring->inflight_tracked);
	struct file *got;

	got = io_get_file_locked(fx, fx->other_ring_fd, false);
	KUNIT_EXPECT_NOT_NULL(test, got);
	if (got) {
		KUNIT_EXPECT_TRUE(test, io_is_uring_fops(got));
		io_put_file(got, false);
	}
	KUNIT_EXPECT_TRUE(test, fx->req.flags & REQ_F_INFLIGHT);
	KUNIT_EXPECT_EQ(test, atomic_read(&current->io_uring->inflight_tracked),
			before + 1);
	io_get_file_test_release_req(fx);
}

/*
 * The slot caches the flags of the file it holds. They go to the request
 * when the lookup provides req->file, never for a second file: a
 * registered regular file spliced into a pipe must not mark the request
 * REQ_F_ISREG.
 */
static void io_get_file_slot_flags_test(struct kunit *test)
{
	struct io_get_file_fixture *fx = test->priv;
	struct file *got;

	got = io_get_file_locked(fx, SLOT_SHMEM, true);
	KUNIT_EXPECT_PTR_EQ(test, got, fx->shmem_file);
	KUNIT_EXPECT_TRUE_MSG(test, fx->req.flags & REQ_F_ISREG,
			      "the main file's slot flags reach the request");
	io_get_file_test_release_req(fx);

	fx->req.file = fx->pipe_file;
	got = io_get_file_locked(fx, SLOT_SHMEM, true);
	KUNIT_EXPECT_PTR_EQ(test, got, fx->shmem_file);
	KUNIT_EXPECT_FALSE_MSG(test, fx->req.flags & REQ_F_ISREG,
			       "a second file's slot flags leaked into the request");
	io_get_file_test_release_req(fx);
}

/* From io-wq the lookup takes the uring_lock itself and drops it again. */
static void io_get_file_unlocked_test(struct kunit *test)
{
	struct io_get_file_fixture *fx = test->priv;
	struct file *got;

	got = io_get_file(&fx->req, SLOT_PIPE, true, IO_URING_F_UNLOCKED);
	KUNIT_EXPECT_PTR_EQ(test, got, fx->pipe_file);
	KUNIT_EXPECT_FALSE(test, mutex_is_locked(&fx->ctx->uring_lock));
	io_get_file_test_release_req(fx);
}

static struct kunit_case io_get_file_test_cases[] = {
	KUNIT_CASE_PARAM(io_get_file_lookup_test, lookup_gen_params),
	KUNIT_CASE(io_get_file_uring_fd_inflight_test),
	KUNIT_CASE(io_get_file_slot_flags_test),
	KUNIT_CASE(io_get_file_unlocked_test),
	{}
};

static struct kunit_suite io_get_file_test_suite = {
	.name = "io_uring_get_file",
	.init = io_get_file_test_init,
	.exit = io_get_file_test_exit,
	.test_cases = io_get_file_test_cases,
};

kunit_test_suite(io_get_file_test_suite);
