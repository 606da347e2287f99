// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suites for inline splice: io_splice_punt()'s decision over real
 * files of each kind, do_splice()/do_tee() in SPLICE_F_NOWAIT_INTERNAL
 * mode refusing with -EAGAIN, before anything moves, wherever the blocking
 * path would sleep: a pipe mutex held by someone else, an empty input, a
 * full output, no readers, a pending signal, a locked tmpfs folio; and
 * after such a stop, io_splice_stopped_early() (would the blocking splice
 * have gone on?) and io_splice_wait_for() (which end it waits for, if it
 * waits at all); and how a request that already moved bytes ends: no wait
 * on a pipe any more, and io_splice_fail() reporting them when it is
 * cancelled. Which pairs IORING_OP_SPLICE sends as sendfile(2), and which
 * of those its nowait try refuses.
 *
 * Included at the end of io_uring/splice.c to reach its static functions.
 */
#include <kunit/test.h>
#include <linux/falloc.h>
#include <linux/file.h>
#include <linux/pipe_fs_i.h>
#include <linux/sched/signal.h>
#include <linux/shmem_fs.h>

enum io_splice_test_file {
	F_PIPE_READ,		/* read end of pipe A */
	F_PIPE_WRITE,		/* write end of pipe B */
	F_PIPE_NONBLOCK_READ,	/* read end of an O_NONBLOCK pipe */
	F_UNIX_STREAM,
	F_UNIX_STREAM_LOWAT,	/* the same with SO_RCVLOWAT 1000 */
	F_UNIX_DGRAM,
	F_NETLINK,
	F_TCP,
	F_UDP,
	F_SHMEM,
	F_SHMEM_DIRECT,		/* the same with O_DIRECT */
	F_SHMEM_UNFLAGGED,	/* the same, fops without FOP_SPLICE_NOWAIT */
	NR_TEST_FILES,
};

static const char *const io_splice_test_file_names[NR_TEST_FILES] = {
	[F_PIPE_READ]		= "pipe",
	[F_PIPE_WRITE]		= "pipe",
	[F_PIPE_NONBLOCK_READ]	= "O_NONBLOCK pipe",
	[F_UNIX_STREAM]		= "unix stream",
	[F_UNIX_STREAM_LOWAT]	= "unix stream with SO_RCVLOWAT",
	[F_UNIX_DGRAM]		= "unix dgram",
	[F_NETLINK]		= "netlink",
	[F_TCP]			= "tcp",
	[F_UDP]			= "udp",
	[F_SHMEM]		= "shmem file",
	[F_SHMEM_DIRECT]	= "O_DIRECT shmem file",
	[F_SHMEM_UNFLAGGED]	= "shmem file without FOP_SPLICE_NOWAIT",
};

/*
 * shmem's file_operations less FOP_SPLICE_NOWAIT: a file system whose
 * ->splice_read() does not honour the nowait mode. Static, because the
 * last fput() of a kernel thread's file runs later, from a work item.
 */
static struct file_operations io_splice_test_unflagged_fops;

struct io_splice_test_files {
	struct file *f[NR_TEST_FILES];
	struct file *others[4];	/* the unused pipe ends, kept for fput */
};

static struct file *io_splice_test_socket(int family, int type)
{
	struct socket *sock;
	struct file *file;

	if (sock_create_kern(&init_net, family, type, 0, &sock))
		return NULL;
	file = sock_alloc_file(sock, 0, NULL);	/* releases sock on error */
	return IS_ERR(file) ? NULL : file;
}

static int io_splice_test_files_init(struct kunit *test)
{
	struct io_splice_test_files *tf;
	struct file *pipe[2];

	tf = kunit_kzalloc(test, sizeof(*tf), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, tf);
	test->priv = tf;

	KUNIT_ASSERT_EQ(test, create_pipe_files(pipe, 0), 0);
	tf->f[F_PIPE_READ] = pipe[0];
	tf->others[0] = pipe[1];
	KUNIT_ASSERT_EQ(test, create_pipe_files(pipe, 0), 0);
	tf->f[F_PIPE_WRITE] = pipe[1];
	tf->others[1] = pipe[0];
	KUNIT_ASSERT_EQ(test, create_pipe_files(pipe, O_NONBLOCK), 0);
	tf->f[F_PIPE_NONBLOCK_READ] = pipe[0];
	tf->others[2] = pipe[1];
	tf->f[F_UNIX_STREAM] = io_splice_test_socket(AF_UNIX, SOCK_STREAM);
	tf->f[F_UNIX_STREAM_LOWAT] = io_splice_test_socket(AF_UNIX, SOCK_STREAM);
	if (tf->f[F_UNIX_STREAM_LOWAT])	/* what setsockopt() stores */
		WRITE_ONCE(sock_from_file(tf->f[F_UNIX_STREAM_LOWAT])->sk->sk_rcvlowat,
			   1000);
	tf->f[F_UNIX_DGRAM] = io_splice_test_socket(AF_UNIX, SOCK_DGRAM);
	tf->f[F_NETLINK] = io_splice_test_socket(AF_NETLINK, SOCK_RAW);
	/* NULL without CONFIG_INET: those rows skip */
	tf->f[F_TCP] = io_splice_test_socket(AF_INET, SOCK_STREAM);
	tf->f[F_UDP] = io_splice_test_socket(AF_INET, SOCK_DGRAM);
	tf->f[F_SHMEM] = shmem_file_setup("io_splice_kunit", PAGE_SIZE, 0);
	if (IS_ERR(tf->f[F_SHMEM]))
		tf->f[F_SHMEM] = NULL;
	tf->f[F_SHMEM_DIRECT] = shmem_file_setup("io_splice_kunit", PAGE_SIZE, 0);
	if (IS_ERR(tf->f[F_SHMEM_DIRECT]))
		tf->f[F_SHMEM_DIRECT] = NULL;
	else	/* as fcntl(F_SETFL) sets it on tmpfs (FMODE_CAN_ODIRECT) */
		tf->f[F_SHMEM_DIRECT]->f_flags |= O_DIRECT;
	tf->f[F_SHMEM_UNFLAGGED] = shmem_file_setup("io_splice_kunit",
						    PAGE_SIZE, 0);
	if (IS_ERR(tf->f[F_SHMEM_UNFLAGGED])) {
		tf->f[F_SHMEM_UNFLAGGED] = NULL;
	} else {
		io_splice_test_unflagged_fops = *tf->f[F_SHMEM_UNFLAGGED]->f_op;
		io_splice_test_unflagged_fops.fop_flags &= ~FOP_SPLICE_NOWAIT;
		tf->f[F_SHMEM_UNFLAGGED]->f_op = &io_splice_test_unflagged_fops;
	}
	return 0;
}

static void io_splice_test_files_exit(struct kunit *test)
{
	struct io_splice_test_files *tf = test->priv;
	int i;

	for (i = 0; i < NR_TEST_FILES; i++)
		if (tf->f[i])
			fput(tf->f[i]);
	for (i = 0; i < ARRAY_SIZE(tf->others); i++)
		if (tf->others[i])
			fput(tf->others[i]);
}

struct io_splice_punt_case {
	enum io_splice_test_file in, out;
	bool punt;
	const char *why;
};

static const struct io_splice_punt_case io_splice_punt_cases[] = {
	{ F_PIPE_READ, F_PIPE_WRITE, false, "trylocks, no waits" },
	{ F_PIPE_NONBLOCK_READ, F_PIPE_WRITE, false, "O_NONBLOCK changes nothing" },
	{ F_PIPE_READ, F_UNIX_STREAM, false, "sendmsg with MSG_DONTWAIT" },
	{ F_PIPE_READ, F_UNIX_DGRAM, true, "datagram: not on the allowlist" },
	{ F_PIPE_READ, F_NETLINK, true, "family not known" },
	{ F_PIPE_READ, F_TCP, false, "tcp_sendmsg with MSG_DONTWAIT" },
	{ F_PIPE_READ, F_UDP, true, "datagram: not on the allowlist" },
	{ F_UNIX_STREAM, F_PIPE_WRITE, false, "honours SPLICE_F_NONBLOCK" },
	{ F_UNIX_STREAM_LOWAT, F_PIPE_WRITE, true,
	  "the blocking read waits for the mark" },
	{ F_PIPE_READ, F_UNIX_STREAM_LOWAT, false, "the mark is the reader's" },
	{ F_UNIX_DGRAM, F_PIPE_WRITE, true, "generic splice_read may wait" },
	{ F_NETLINK, F_PIPE_WRITE, true, "family not known" },
	{ F_TCP, F_PIPE_WRITE, false, "tcp_splice_read honours the nowait mode" },
	{ F_UDP, F_PIPE_WRITE, true, "generic splice_read may wait" },
	{ F_SHMEM, F_PIPE_WRITE, false, "swap-in, locked folio: -EAGAIN" },
	{ F_SHMEM_DIRECT, F_PIPE_WRITE, true, "O_DIRECT: read_iter may block" },
	{ F_SHMEM_UNFLAGGED, F_PIPE_WRITE, true, "no FOP_SPLICE_NOWAIT" },
	{ F_PIPE_READ, F_SHMEM, true, "write_iter may sleep" },
	{ F_SHMEM, F_SHMEM, false, "no pipe: do_splice() fails at once" },
	{ F_UNIX_STREAM, F_UNIX_STREAM, false, "no pipe: do_splice() fails at once" },
};

static void io_splice_punt_desc(const struct io_splice_punt_case *c,
				char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s -> %s: %s (%s)",
		 io_splice_test_file_names[c->in],
		 io_splice_test_file_names[c->out],
		 c->punt ? "punt" : "inline", c->why);
}

KUNIT_ARRAY_PARAM(io_splice_punt, io_splice_punt_cases, io_splice_punt_desc);

static void io_splice_punt_decides(struct kunit *test)
{
	const struct io_splice_punt_case *c = test->param_value;
	struct io_splice_test_files *tf = test->priv;

	if (!tf->f[c->in] || !tf->f[c->out])
		kunit_skip(test, "file kind not available in this kernel");
	KUNIT_EXPECT_EQ(test, io_splice_punt(tf->f[c->in], tf->f[c->out]),
			c->punt);
}

/* The flag can't come from user space through io_uring either. */
static void io_splice_prep_refuses_internal_flag(struct kunit *test)
{
	struct io_kiocb *req = kunit_kzalloc(test, sizeof(*req), GFP_KERNEL);
	struct io_uring_sqe sqe = {
		.opcode = IORING_OP_SPLICE,
		.splice_flags = SPLICE_F_NOWAIT_INTERNAL,
		.len = 1,
	};

	KUNIT_ASSERT_NOT_NULL(test, req);
	KUNIT_EXPECT_EQ(test, io_splice_prep(req, &sqe), -EINVAL);
	KUNIT_EXPECT_EQ(test, io_tee_prep(req, &sqe), -EINVAL);
	sqe.splice_flags = SPLICE_F_NONBLOCK;
	KUNIT_EXPECT_EQ(test, io_splice_prep(req, &sqe), 0);
	KUNIT_EXPECT_FALSE(test, req->flags & REQ_F_FORCE_ASYNC);
	KUNIT_EXPECT_EQ(test, SPLICE_F_NOWAIT_INTERNAL &
			(SPLICE_F_ALL | SPLICE_F_FD_IN_FIXED), 0);
}

/*
 * A failed prep leaves no stale state for io_splice_fail() or the
 * cleanup: io_kiocbs are recycled, and a failed request still goes
 * through io_req_defer_failed().
 */
static void io_splice_prep_failure_clears_state(struct kunit *test)
{
	struct io_kiocb *req = kunit_kzalloc(test, sizeof(*req), GFP_KERNEL);
	struct io_uring_sqe sqe = { .len = 1, .off = 1 };
	struct io_splice *sp;

	KUNIT_ASSERT_NOT_NULL(test, req);
	sp = io_kiocb_to_cmd(req, struct io_splice);

	memset(sp, 0xa5, sizeof(*sp));
	KUNIT_EXPECT_EQ(test, io_tee_prep(req, &sqe), -EINVAL);
	KUNIT_EXPECT_EQ(test, sp->done, 0);
	KUNIT_EXPECT_NULL(test, sp->file_in);

	memset(sp, 0xa5, sizeof(*sp));
	sqe.splice_flags = SPLICE_F_NOWAIT_INTERNAL;
	KUNIT_EXPECT_EQ(test, io_splice_prep(req, &sqe), -EINVAL);
	KUNIT_EXPECT_EQ(test, sp->done, 0);
	KUNIT_EXPECT_NULL(test, sp->file_in);

	req->cqe.res = -EINVAL;
	io_splice_fail(req);
	KUNIT_EXPECT_EQ(test, req->cqe.res, -EINVAL);
}

/* Two pipes, A (in) and B (out), with all four ends. */
struct io_splice_pipes {
	struct file *a[2], *b[2];
	struct pipe_inode_info *in, *out;
};

static int io_splice_pipes_init(struct kunit *test)
{
	struct io_splice_pipes *p = kunit_kzalloc(test, sizeof(*p), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, p);
	test->priv = p;
	KUNIT_ASSERT_EQ(test, create_pipe_files(p->a, 0), 0);
	KUNIT_ASSERT_EQ(test, create_pipe_files(p->b, 0), 0);
	p->in = p->a[0]->private_data;
	p->out = p->b[0]->private_data;
	return 0;
}

static void io_splice_pipes_exit(struct kunit *test)
{
	struct io_splice_pipes *p = test->priv;
	struct file *files[] = { p->a[0], p->a[1], p->b[0], p->b[1] };
	int i;

	for (i = 0; i < ARRAY_SIZE(files); i++)
		if (files[i])
			fput(files[i]);
}

static unsigned int io_splice_test_bytes(struct pipe_inode_info *pipe)
{
	unsigned int count = 0, tail;

	for (tail = pipe->tail; tail != pipe->head; tail++)
		count += pipe->bufs[tail & (pipe->ring_size - 1)].len;
	return count;
}

static void io_splice_test_fill(struct kunit *test, struct file *wr,
				size_t len)
{
	static const char page[PAGE_SIZE];
	loff_t pos = 0;

	while (len) {
		size_t n = min(len, sizeof(page));

		KUNIT_ASSERT_EQ(test, kernel_write(wr, page, n, &pos), n);
		len -= n;
	}
}

static ssize_t io_splice_test_nowait(struct io_splice_pipes *p, bool tee,
				     size_t len)
{
	if (tee)
		return do_tee(p->a[0], p->b[1], len, SPLICE_F_NOWAIT_INTERNAL);
	return do_splice(p->a[0], NULL, p->b[1], NULL, len,
			 SPLICE_F_NOWAIT_INTERNAL);
}

enum { HOLD_IN = 1, HOLD_OUT = 2 };

struct io_splice_nowait_case {
	const char *name;
	bool tee;
	unsigned int hold;	/* pipe mutexes the test holds */
};

static const struct io_splice_nowait_case io_splice_nowait_cases[] = {
	{ "splice, input mutex held", false, HOLD_IN },
	{ "splice, output mutex held", false, HOLD_OUT },
	{ "splice, both mutexes held", false, HOLD_IN | HOLD_OUT },
	{ "tee, input mutex held", true, HOLD_IN },
	{ "tee, output mutex held", true, HOLD_OUT },
	{ "tee, both mutexes held", true, HOLD_IN | HOLD_OUT },
};

static void io_splice_nowait_desc(const struct io_splice_nowait_case *c,
				  char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s", c->name);
}

KUNIT_ARRAY_PARAM(io_splice_nowait, io_splice_nowait_cases,
		  io_splice_nowait_desc);

/*
 * A held pipe mutex gives -EAGAIN and moves nothing; once released the same
 * call moves the data. The test thread is the holder: a mutex is not
 * recursive, so its own trylock fails just like anyone else's.
 */
static void io_splice_nowait_lock_held(struct kunit *test)
{
	const struct io_splice_nowait_case *c = test->param_value;
	struct io_splice_pipes *p = test->priv;

	io_splice_test_fill(test, p->a[1], 3000);
	if (c->hold & HOLD_IN)
		mutex_lock(&p->in->mutex);
	if (c->hold & HOLD_OUT)
		mutex_lock(&p->out->mutex);
	KUNIT_EXPECT_EQ(test, io_splice_test_nowait(p, c->tee, 1000), -EAGAIN);
	if (c->hold & HOLD_OUT)
		mutex_unlock(&p->out->mutex);
	if (c->hold & HOLD_IN)
		mutex_unlock(&p->in->mutex);
	KUNIT_EXPECT_EQ(test, io_splice_test_bytes(p->in), 3000);
	KUNIT_EXPECT_EQ(test, io_splice_test_bytes(p->out), 0);

	KUNIT_EXPECT_EQ(test, io_splice_test_nowait(p, c->tee, 1000), 1000);
	KUNIT_EXPECT_EQ(test, io_splice_test_bytes(p->in), c->tee ? 3000 : 2000);
	KUNIT_EXPECT_EQ(test, io_splice_test_bytes(p->out), 1000);
}

/* An empty input with a writer would wait: -EAGAIN, also for tee. */
static void io_splice_nowait_empty_input(struct kunit *test)
{
	struct io_splice_pipes *p = test->priv;

	KUNIT_EXPECT_EQ(test, io_splice_test_nowait(p, false, 100), -EAGAIN);
	KUNIT_EXPECT_EQ(test, io_splice_test_nowait(p, true, 100), -EAGAIN);
	KUNIT_EXPECT_EQ(test, io_splice_test_bytes(p->out), 0);

	/* without writers it is EOF, as for the blocking call */
	__fput_sync(p->a[1]);
	p->a[1] = NULL;
	KUNIT_EXPECT_EQ(test, io_splice_test_nowait(p, false, 100), 0);
}

/* A full output would wait for room: -EAGAIN and both pipes unchanged. */
static void io_splice_nowait_full_output(struct kunit *test)
{
	struct io_splice_pipes *p = test->priv;
	size_t full = p->out->max_usage * PAGE_SIZE;

	io_splice_test_fill(test, p->a[1], 100);
	io_splice_test_fill(test, p->b[1], full);
	KUNIT_ASSERT_TRUE(test, pipe_full(p->out->head, p->out->tail,
					  p->out->max_usage));
	KUNIT_EXPECT_EQ(test, io_splice_test_nowait(p, false, 100), -EAGAIN);
	KUNIT_EXPECT_EQ(test, io_splice_test_nowait(p, true, 100), -EAGAIN);
	KUNIT_EXPECT_EQ(test, io_splice_test_bytes(p->in), 100);
	KUNIT_EXPECT_EQ(test, io_splice_test_bytes(p->out), full);
}

/* No readers: -EAGAIN for the blocking retry, and no SIGPIPE here. */
static void io_splice_nowait_no_readers(struct kunit *test)
{
	struct io_splice_pipes *p = test->priv;

	io_splice_test_fill(test, p->a[1], 100);
	__fput_sync(p->b[0]);
	p->b[0] = NULL;
	KUNIT_EXPECT_EQ(test, io_splice_test_nowait(p, false, 100), -EAGAIN);
	KUNIT_EXPECT_EQ(test, io_splice_test_nowait(p, true, 100), -EAGAIN);
	KUNIT_EXPECT_FALSE(test, sigismember(&current->pending.signal, SIGPIPE));
	KUNIT_EXPECT_EQ(test, io_splice_test_bytes(p->in), 100);
}

/*
 * A pending signal (io_uring's own task_work notification, here) must not
 * turn into -ERESTARTSYS: nothing waits, so data moves and an empty input
 * says -EAGAIN.
 */
static void io_splice_nowait_signal_pending(struct kunit *test)
{
	struct io_splice_pipes *p = test->priv;
	ssize_t empty, moved;

	set_notify_signal(current);
	empty = io_splice_test_nowait(p, false, 100);
	io_splice_test_fill(test, p->a[1], 100);
	moved = io_splice_test_nowait(p, false, 100);
	clear_notify_signal();
	KUNIT_EXPECT_EQ(test, empty, -EAGAIN);
	KUNIT_EXPECT_EQ(test, moved, 100);
}

/* Three buffers in, room for one out: one buffer moves, then -EAGAIN. */
static void io_splice_nowait_partial(struct kunit *test)
{
	struct io_splice_pipes *p = test->priv;
	size_t room = PAGE_SIZE;
	size_t prefill = (p->out->max_usage - 1) * PAGE_SIZE;

	io_splice_test_fill(test, p->a[1], 3 * PAGE_SIZE);
	io_splice_test_fill(test, p->b[1], prefill);
	KUNIT_EXPECT_EQ(test, io_splice_test_nowait(p, false, 3 * PAGE_SIZE),
			room);
	KUNIT_EXPECT_EQ(test, io_splice_test_nowait(p, false, 3 * PAGE_SIZE),
			-EAGAIN);
	KUNIT_EXPECT_EQ(test, io_splice_test_bytes(p->in), 2 * PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, io_splice_test_bytes(p->out), prefill + room);
}

/*
 * A tmpfs file in memory goes into the pipe in nowait mode. A folio whose
 * lock someone holds (the test) gives -EAGAIN, moves nothing and leaves
 * f_pos alone; once unlocked the same call moves it. A hole, and a folio
 * fallocated but never written, read as zeroes without waiting; O_DIRECT
 * gives -EAGAIN before anything runs.
 */
static void io_splice_nowait_shmem(struct kunit *test)
{
	struct io_splice_pipes *p = test->priv;
	static const char data[PAGE_SIZE] = { 1, 2, 3 };
	struct file *file;
	struct folio *folio;
	loff_t pos = 0;

	if (!IS_ENABLED(CONFIG_TMPFS))
		kunit_skip(test, "shmem has no ->splice_read() without CONFIG_TMPFS");
	/* three pages: written, a hole, fallocated (a folio, not uptodate) */
	file = shmem_file_setup("io_splice_kunit", 3 * PAGE_SIZE, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR(file));
	KUNIT_ASSERT_EQ(test, kernel_write(file, data, PAGE_SIZE, &pos),
			PAGE_SIZE);
	KUNIT_ASSERT_EQ(test, vfs_fallocate(file, FALLOC_FL_KEEP_SIZE,
					    2 * PAGE_SIZE, PAGE_SIZE), 0);
	folio = shmem_read_folio(file->f_mapping, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR(folio));

	folio_lock(folio);
	KUNIT_EXPECT_EQ(test, do_splice(file, NULL, p->b[1], NULL, PAGE_SIZE,
					SPLICE_F_NOWAIT_INTERNAL), -EAGAIN);
	folio_unlock(folio);
	folio_put(folio);
	KUNIT_EXPECT_EQ(test, file->f_pos, 0);
	KUNIT_EXPECT_EQ(test, io_splice_test_bytes(p->out), 0);

	KUNIT_EXPECT_EQ(test, do_splice(file, NULL, p->b[1], NULL, PAGE_SIZE,
					SPLICE_F_NOWAIT_INTERNAL), PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, do_splice(file, NULL, p->b[1], NULL, PAGE_SIZE,
					SPLICE_F_NOWAIT_INTERNAL), PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, do_splice(file, NULL, p->b[1], NULL, PAGE_SIZE,
					SPLICE_F_NOWAIT_INTERNAL), PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, file->f_pos, 3 * PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, io_splice_test_bytes(p->out), 3 * PAGE_SIZE);

	file->f_pos = 0;
	file->f_flags |= O_DIRECT;
	KUNIT_EXPECT_EQ(test, do_splice(file, NULL, p->b[1], NULL, PAGE_SIZE,
					SPLICE_F_NOWAIT_INTERNAL), -EAGAIN);
	KUNIT_EXPECT_EQ(test, io_splice_test_bytes(p->out), 3 * PAGE_SIZE);
	fput(file);
}

/*
 * Pipe to pipe and tee never sleep in nowait mode: with preemption off,
 * CONFIG_DEBUG_ATOMIC_SLEEP reports any might_sleep() on the way as a
 * splat, which the runner counts as a failure.
 */
static void io_splice_nowait_atomic(struct kunit *test)
{
	struct io_splice_pipes *p = test->priv;
	ssize_t tee, splice;

	io_splice_test_fill(test, p->a[1], 2000);
	preempt_disable();
	tee = io_splice_test_nowait(p, true, 500);
	splice = io_splice_test_nowait(p, false, 1000);
	preempt_enable();
	KUNIT_EXPECT_EQ(test, tee, 500);
	KUNIT_EXPECT_EQ(test, splice, 1000);
	KUNIT_EXPECT_EQ(test, io_splice_test_bytes(p->out), 1500);
}

/* io_splice_stopped_early(): would the blocking splice have gone on? */
struct io_splice_early_case {
	enum io_splice_test_file in, out;
	bool in_data, out_full;
	loff_t pos;
	bool early;
	const char *why;
};

static const struct io_splice_early_case io_splice_early_cases[] = {
	{ F_PIPE_READ, F_UNIX_STREAM, true, false, 0, true,
	  "data left: a nowait send stopped at a full socket" },
	{ F_PIPE_READ, F_UNIX_STREAM, false, false, 0, false,
	  "the pipe ran empty: the blocking splice returns too" },
	{ F_PIPE_READ, F_PIPE_WRITE, true, false, 0, false,
	  "pipe to pipe stops alike in both modes" },
	{ F_SHMEM, F_PIPE_WRITE, false, false, 0, true,
	  "room and file left: stopped at a folio in swap" },
	{ F_SHMEM, F_PIPE_WRITE, false, false, PAGE_SIZE, false,
	  "end of the file" },
	{ F_SHMEM, F_PIPE_WRITE, false, true, 0, false, "the pipe is full" },
	{ F_SHMEM_UNFLAGGED, F_PIPE_WRITE, false, false, 0, false,
	  "no FOP_SPLICE_NOWAIT: no nowait try to continue" },
};

static void io_splice_early_desc(const struct io_splice_early_case *c,
				 char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s -> %s: %s",
		 io_splice_test_file_names[c->in],
		 io_splice_test_file_names[c->out], c->why);
}

KUNIT_ARRAY_PARAM(io_splice_early, io_splice_early_cases, io_splice_early_desc);

static void io_splice_stopped_early_decides(struct kunit *test)
{
	const struct io_splice_early_case *c = test->param_value;
	struct io_splice_test_files *tf = test->priv;
	struct pipe_inode_info *opipe;
	loff_t pos = c->pos;

	if (!tf->f[c->in] || !tf->f[c->out])
		kunit_skip(test, "file kind not available in this kernel");
	if (c->in_data)
		io_splice_test_fill(test, tf->others[0], 100);
	if (c->out_full) {
		opipe = tf->f[c->out]->private_data;
		io_splice_test_fill(test, tf->f[c->out],
				    opipe->max_usage * PAGE_SIZE);
	}
	KUNIT_EXPECT_EQ(test, io_splice_stopped_early(tf->f[c->in], &pos,
						      tf->f[c->out]),
			c->early);
}

/* io_splice_wait_for(): what a splice that could not go on waits for. */
struct io_splice_wait_case {
	const char *desc;
	bool in_shmem, in_data, out_full, no_readers;
	bool in_nonblock, out_nonblock;
	unsigned int flags;
	enum io_splice_wait want;
};

static const struct io_splice_wait_case io_splice_wait_cases[] = {
	{ "empty input pipe: poll it", .want = IO_SPLICE_WAIT_IN },
	{ "empty input, SPLICE_F_NONBLOCK: -EAGAIN now",
	  .flags = SPLICE_F_NONBLOCK, .want = IO_SPLICE_WAIT_NONE },
	{ "empty input, O_NONBLOCK output pipe: -EAGAIN now",
	  .out_nonblock = true, .want = IO_SPLICE_WAIT_NONE },
	{ "full output pipe: poll it", .in_data = true, .out_full = true,
	  .want = IO_SPLICE_WAIT_OUT },
	{ "full output, O_NONBLOCK input pipe: -EAGAIN now", .in_data = true,
	  .out_full = true, .in_nonblock = true,
	  .want = IO_SPLICE_WAIT_NONE },
	{ "empty input and full output: the input first", .out_full = true,
	  .want = IO_SPLICE_WAIT_IN },
	{ "both ready (a contended mutex): try again", .in_data = true,
	  .want = IO_SPLICE_WAIT_READY },
	{ "no readers: io-wq gives -EPIPE", .in_data = true,
	  .no_readers = true, .want = IO_SPLICE_WAIT_WORKER },
	{ "tmpfs into a full pipe: poll the pipe", .in_shmem = true,
	  .out_full = true, .want = IO_SPLICE_WAIT_OUT },
	{ "tmpfs into a full O_NONBLOCK pipe: -EAGAIN now", .in_shmem = true,
	  .out_full = true, .out_nonblock = true,
	  .want = IO_SPLICE_WAIT_NONE },
	{ "tmpfs into a pipe with room (swap): io-wq", .in_shmem = true,
	  .want = IO_SPLICE_WAIT_WORKER },
};

static void io_splice_wait_desc(const struct io_splice_wait_case *c,
				char *desc)
{
	strscpy(desc, c->desc, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(io_splice_wait, io_splice_wait_cases, io_splice_wait_desc);

static void io_splice_wait_decides(struct kunit *test)
{
	const struct io_splice_wait_case *c = test->param_value;
	struct io_splice_pipes *p = test->priv;
	struct file *in = p->a[0], *shmem = NULL;

	if (c->in_shmem) {
		shmem = shmem_file_setup("io_splice_kunit", PAGE_SIZE, 0);
		if (IS_ERR(shmem))
			kunit_skip(test, "no shmem files in this kernel");
		in = shmem;
	}
	if (c->in_data)
		io_splice_test_fill(test, p->a[1], 100);
	if (c->out_full)
		io_splice_test_fill(test, p->b[1],
				    p->out->max_usage * PAGE_SIZE);
	if (c->no_readers) {
		__fput_sync(p->b[0]);
		p->b[0] = NULL;
	}
	/* what fcntl(F_SETFL) would do */
	if (c->in_nonblock)
		in->f_flags |= O_NONBLOCK;
	if (c->out_nonblock)
		p->b[1]->f_flags |= O_NONBLOCK;
	KUNIT_EXPECT_EQ(test, io_splice_wait_for(in, p->b[1], c->flags),
			c->want);
	if (shmem)
		fput(shmem);
}

/*
 * Both ends ready: a few tries again through poll, then io-wq; a real
 * wait in between starts the count again.
 */
static void io_splice_ready_retries_capped(struct kunit *test)
{
	struct io_kiocb *req = kunit_kzalloc(test, sizeof(*req), GFP_KERNEL);
	struct io_splice_pipes *p = test->priv;
	struct io_splice *sp;
	__poll_t events = 0;
	int i;

	KUNIT_ASSERT_NOT_NULL(test, req);
	sp = io_kiocb_to_cmd(req, struct io_splice);
	sp->file_in = p->a[0];
	io_splice_test_fill(test, p->a[1], 100);
	for (i = 0; i < IO_SPLICE_READY_RETRIES; i++) {
		KUNIT_EXPECT_TRUE(test, io_splice_must_wait(req, p->a[0], p->b[1]));
		KUNIT_EXPECT_EQ(test, sp->wait, IO_SPLICE_WAIT_READY);
	}
	/* the ready end is what poll is armed on: it re-issues at once */
	KUNIT_EXPECT_PTR_EQ(test, io_splice_poll_file(req, &events), p->a[0]);
	KUNIT_EXPECT_TRUE(test, events & EPOLLIN);
	KUNIT_EXPECT_TRUE(test, io_splice_must_wait(req, p->a[0], p->b[1]));
	KUNIT_EXPECT_EQ(test, sp->wait, IO_SPLICE_WAIT_WORKER);
	KUNIT_EXPECT_NULL(test, io_splice_poll_file(req, &events));

	/* an empty input (B) is a real wait: the count starts again */
	KUNIT_EXPECT_TRUE(test, io_splice_must_wait(req, p->b[0], p->a[1]));
	KUNIT_EXPECT_EQ(test, sp->wait, IO_SPLICE_WAIT_IN);
	KUNIT_EXPECT_EQ(test, sp->ready_retries, 0);
}

/*
 * Once a request has moved bytes it waits no more on a pipe: the blocking
 * splice returns what it moved at an empty input pipe (splice_to_socket())
 * or a full output pipe (splice_file_to_pipe()).
 */
static void io_splice_moved_bytes_no_pipe_wait(struct kunit *test)
{
	struct io_kiocb *req = kunit_kzalloc(test, sizeof(*req), GFP_KERNEL);
	struct io_splice_pipes *p = test->priv;
	struct io_splice *sp;

	KUNIT_ASSERT_NOT_NULL(test, req);
	sp = io_kiocb_to_cmd(req, struct io_splice);

	/* A empty */
	KUNIT_EXPECT_TRUE(test, io_splice_must_wait(req, p->a[0], p->b[1]));
	KUNIT_EXPECT_EQ(test, sp->wait, IO_SPLICE_WAIT_IN);
	sp->done = 100;
	KUNIT_EXPECT_FALSE(test, io_splice_must_wait(req, p->a[0], p->b[1]));
	KUNIT_EXPECT_EQ(test, sp->wait, IO_SPLICE_WAIT_NONE);

	/* B full, A with data */
	io_splice_test_fill(test, p->a[1], 100);
	io_splice_test_fill(test, p->b[1], p->out->max_usage * PAGE_SIZE);
	sp->done = 0;
	KUNIT_EXPECT_TRUE(test, io_splice_must_wait(req, p->a[0], p->b[1]));
	KUNIT_EXPECT_EQ(test, sp->wait, IO_SPLICE_WAIT_OUT);
	sp->done = 100;
	KUNIT_EXPECT_FALSE(test, io_splice_must_wait(req, p->a[0], p->b[1]));
	KUNIT_EXPECT_EQ(test, sp->wait, IO_SPLICE_WAIT_NONE);
}

/*
 * A request cancelled or failed while it waits reports the bytes inline
 * tries moved, as 6.12's signalled worker returns them; with none moved
 * the error stays.
 */
static void io_splice_fail_reports_moved(struct kunit *test)
{
	struct io_kiocb *req = kunit_kzalloc(test, sizeof(*req), GFP_KERNEL);
	struct io_splice_pipes *p = test->priv;
	struct io_splice *sp;

	KUNIT_ASSERT_NOT_NULL(test, req);
	sp = io_kiocb_to_cmd(req, struct io_splice);
	req->opcode = IORING_OP_SPLICE;
	sp->file_in = p->a[0];
	sp->file_out = p->b[1];
	sp->len = 65536;

	req->cqe.res = -ECANCELED;
	io_splice_fail(req);
	KUNIT_EXPECT_EQ(test, req->cqe.res, -ECANCELED);

	sp->done = 4096;
	io_splice_fail(req);
	KUNIT_EXPECT_EQ(test, req->cqe.res, 4096);
}

/* The rows of io_splice_punt_cases[] that io_splice_punt() punts. */
static const void *io_splice_refused_gen_params(const void *prev, char *desc)
{
	const struct io_splice_punt_case *c = prev;
	const struct io_splice_punt_case *end =
		io_splice_punt_cases + ARRAY_SIZE(io_splice_punt_cases);

	for (c = c ? c + 1 : io_splice_punt_cases; c < end; c++) {
		if (c->punt) {
			io_splice_punt_desc(c, desc);
			return c;
		}
	}
	return NULL;
}

/*
 * What io_splice_punt() punts, do_splice() refuses on its own in nowait
 * mode, before anything moves: -EAGAIN with the data still in the input
 * pipe, whatever io_uring would have done. (A UDP input would otherwise
 * block in sock_read_iter(), an unconnected UDP output fail with
 * -EDESTADDRREQ.)
 */
static void io_splice_nowait_refuses_punted(struct kunit *test)
{
	const struct io_splice_punt_case *c = test->param_value;
	struct io_splice_test_files *tf = test->priv;
	struct file *in = tf->f[c->in], *out = tf->f[c->out];
	bool in_pipe = c->in == F_PIPE_READ;

	if (!in || !out)
		kunit_skip(test, "file kind not available in this kernel");
	/* data waiting in the input pipe: only the other file can refuse */
	if (in_pipe)
		io_splice_test_fill(test, tf->others[0], 100);
	KUNIT_EXPECT_EQ(test, do_splice(in, NULL, out, NULL, 100,
					SPLICE_F_NOWAIT_INTERNAL), -EAGAIN);
	if (in_pipe)
		KUNIT_EXPECT_EQ(test, io_splice_test_bytes(in->private_data), 100);
}

struct io_sendfile_case {
	enum io_splice_test_file in, out;
	bool sendfile;		/* io_splice_is_sendfile() */
	bool refused;		/* vfs_sendfile() in nowait mode: -EAGAIN */
	const char *why;
};

static const struct io_sendfile_case io_sendfile_cases[] = {
	{ F_SHMEM, F_UNIX_STREAM, true, false, "tmpfs to AF_UNIX stream" },
	{ F_SHMEM, F_TCP, true, false, "tmpfs to TCP without a ULP" },
	{ F_SHMEM, F_UDP, true, true, "datagram: not on the allowlist" },
	{ F_SHMEM, F_UNIX_DGRAM, true, true, "datagram: not on the allowlist" },
	{ F_SHMEM, F_NETLINK, true, true, "family not known" },
	{ F_SHMEM_DIRECT, F_UNIX_STREAM, true, true, "O_DIRECT: read_iter may block" },
	{ F_SHMEM_UNFLAGGED, F_TCP, true, true, "no FOP_SPLICE_NOWAIT" },
	{ F_PIPE_READ, F_UNIX_STREAM, false, false, "a pipe: splice" },
	{ F_SHMEM, F_PIPE_WRITE, false, false, "a pipe: splice" },
	{ F_UNIX_STREAM, F_TCP, false, false, "not a regular file" },
	{ F_SHMEM, F_SHMEM, false, false, "not a socket" },
};

static void io_sendfile_desc(const struct io_sendfile_case *c, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s -> %s: %s (%s)",
		 io_splice_test_file_names[c->in],
		 io_splice_test_file_names[c->out],
		 !c->sendfile ? "no sendfile" : c->refused ? "io-wq" : "inline",
		 c->why);
}

KUNIT_ARRAY_PARAM(io_sendfile, io_sendfile_cases, io_sendfile_desc);

/*
 * Which pairs IORING_OP_SPLICE sends as sendfile(2) (a regular file to a
 * socket), and of those which the nowait try refuses before anything
 * moves: those go to io-wq (io_sendfile_wait_for()), where the blocking
 * call gives sendfile(2)'s result (0 for a count of 0). Pairs that are no
 * sendfile keep do_splice(): vfs_sendfile() refuses them with -EINVAL.
 */
static void io_sendfile_decides(struct kunit *test)
{
	const struct io_sendfile_case *c = test->param_value;
	struct io_splice_test_files *tf = test->priv;
	struct file *in = tf->f[c->in], *out = tf->f[c->out];

	if (!in || !out)
		kunit_skip(test, "file kind not available in this kernel");
	KUNIT_EXPECT_EQ(test, io_splice_is_sendfile(in, out), c->sendfile);
	if (!c->sendfile) {
		KUNIT_EXPECT_EQ(test, vfs_sendfile(in, NULL, out, 0, 0), -EINVAL);
		return;
	}
	KUNIT_EXPECT_EQ(test, vfs_sendfile(in, NULL, out, 0,
					   SPLICE_F_NOWAIT_INTERNAL),
			c->refused ? -EAGAIN : 0);
	KUNIT_EXPECT_EQ(test, vfs_sendfile(in, NULL, out, 0, 0), 0);
	if (c->refused)
		KUNIT_EXPECT_EQ(test, io_sendfile_wait_for(in, out),
				IO_SPLICE_WAIT_WORKER);
}

static struct kunit_case io_splice_punt_test_cases[] = {
	KUNIT_CASE_PARAM(io_sendfile_decides, io_sendfile_gen_params),
	KUNIT_CASE_PARAM(io_splice_punt_decides, io_splice_punt_gen_params),
	KUNIT_CASE_PARAM(io_splice_nowait_refuses_punted,
			 io_splice_refused_gen_params),
	KUNIT_CASE_PARAM(io_splice_stopped_early_decides,
			 io_splice_early_gen_params),
	KUNIT_CASE(io_splice_prep_refuses_internal_flag),
	KUNIT_CASE(io_splice_prep_failure_clears_state),
	{}
};

static struct kunit_suite io_splice_punt_suite = {
	.name = "io_uring_splice_punt",
	.init = io_splice_test_files_init,
	.exit = io_splice_test_files_exit,
	.test_cases = io_splice_punt_test_cases,
};

static struct kunit_case io_splice_nowait_test_cases[] = {
	KUNIT_CASE_PARAM(io_splice_nowait_lock_held, io_splice_nowait_gen_params),
	KUNIT_CASE(io_splice_nowait_empty_input),
	KUNIT_CASE(io_splice_nowait_full_output),
	KUNIT_CASE(io_splice_nowait_no_readers),
	KUNIT_CASE(io_splice_nowait_signal_pending),
	KUNIT_CASE(io_splice_nowait_partial),
	KUNIT_CASE(io_splice_nowait_shmem),
	KUNIT_CASE(io_splice_nowait_atomic),
	{}
};

static struct kunit_suite io_splice_nowait_suite = {
	.name = "io_uring_splice_nowait",
	.init = io_splice_pipes_init,
	.exit = io_splice_pipes_exit,
	.test_cases = io_splice_nowait_test_cases,
};

static struct kunit_case io_splice_wait_test_cases[] = {
	KUNIT_CASE_PARAM(io_splice_wait_decides, io_splice_wait_gen_params),
	KUNIT_CASE(io_splice_ready_retries_capped),
	KUNIT_CASE(io_splice_moved_bytes_no_pipe_wait),
	KUNIT_CASE(io_splice_fail_reports_moved),
	{}
};

static struct kunit_suite io_splice_wait_suite = {
	.name = "io_uring_splice_wait",
	.init = io_splice_pipes_init,
	.exit = io_splice_pipes_exit,
	.test_cases = io_splice_wait_test_cases,
};

kunit_test_suites(&io_splice_punt_suite, &io_splice_nowait_suite,
		  &io_splice_wait_suite);
