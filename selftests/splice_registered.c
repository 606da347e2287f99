// SPDX-License-Identifier: GPL-2.0
/*
 * IORING_OP_SPLICE and IORING_OP_TEE with registered (fixed) files, as of
 * Linux 6.12.
 *
 * Where 6.12 looks the files up:
 *   - the output, sqe->fd (a table index with IOSQE_FIXED_FILE), in
 *     io_assign_file() when the request is issued;
 *   - the input, splice_fd_in (a table index with SPLICE_F_FD_IN_FIXED in
 *     splice_flags), in io_splice()/io_tee() themselves, through
 *     io_file_get_fixed() under ->uring_lock, i.e. also at issue time.
 * 6.12 punts both opcodes to io-wq (REQ_F_FORCE_ASYNC); with the inline
 * splice series they are tried in the submitter first and punted when they
 * would wait, and the input is looked up again in the worker. Either way a
 * linked request is issued only once the one before it has completed, so
 * a request queued behind a blocked one sees the table as it is when it
 * finally runs: an emptied slot gives -EBADF and a replaced slot gives the
 * new file, never the one that was there at submission time.
 *
 * Each test runs without ("sync") and with ("async") IOSQE_ASYNC on every
 * SQE.
 */

#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "iou_helpers.h"
#include "../kselftest_harness.h"
#include "splice_helpers.h"

#define NO_OFF		((__u64)-1)
#define FILE_SIZE	4096
#define RING_ENTRIES	8
/* Longest wait for a completion or a file release that must happen. */
#define WAIT_MS		2000
/* How long a request must stay pending to count as blocked. */
#define BLOCKED_MS	50
/* No single test should take more than a blink; never hang forever. */
#define TEST_ALARM_SEC	5

FIXTURE(splice_registered) {
	struct iou_ring ring;
	__u8 sqe_flags;
	/* FILE_SIZE bytes of self->pattern, f_pos at 0 */
	int file;
	/* empty pipes, [0] read end, [1] write end; -1 once closed */
	int pa[2];
	int pb[2];
	int pc[2];
	int px[2];
	unsigned char pattern[FILE_SIZE];
};

FIXTURE_VARIANT(splice_registered) {
	__u8 sqe_flags;
};

FIXTURE_VARIANT_ADD(splice_registered, sync) {
	.sqe_flags = 0,
};

FIXTURE_VARIANT_ADD(splice_registered, async) {
	.sqe_flags = IOSQE_ASYNC,
};

enum op { OP_SPLICE, OP_TEE };

static const char * const op_name[] = {
	[OP_SPLICE] = "splice",
	[OP_TEE] = "tee",
};

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* Entries in /proc/self/fd, or -errno without procfs. */
static int fd_count(void)
{
	struct dirent *de;
	DIR *dir;
	int n = 0;

	dir = opendir("/proc/self/fd");
	if (!dir)
		return -errno;
	while ((de = readdir(dir)))
		if (de->d_name[0] != '.')
			n++;
	closedir(dir);
	return n - 1;	/* not the directory's own descriptor */
}

/*
 * Wait up to @timeout_ms for POLLERR (pipe write end: no reader left) or
 * POLLHUP (read end: no writer left) on @fd; returns the revents, 0 if
 * there was none in time.  Nothing else is reported: no event is asked for.
 */
static int wait_pipe_orphaned(int fd, int timeout_ms)
{
	struct pollfd pfd = { .fd = fd, .events = 0 };
	int ret;

	ret = poll(&pfd, 1, timeout_ms);
	if (ret < 0)
		return -errno;
	return ret ? pfd.revents : 0;
}

FIXTURE_SETUP(splice_registered)
{
	int *fds[] = { &self->pa[0], &self->pb[0], &self->pc[0],
		       &self->px[0] };
	unsigned int i;
	int ret;

	self->ring.fd = -1;
	self->file = -1;
	for (i = 0; i < ARRAY_SIZE(fds); i++) {
		fds[i][0] = -1;
		fds[i][1] = -1;
	}
	alarm(TEST_ALARM_SEC);
	/* writes into a pipe without a reader must fail, not kill */
	signal(SIGPIPE, SIG_IGN);

	ret = iou_setup(&self->ring, RING_ENTRIES, 0);
	if (ret == -ENOSYS)
		SKIP(return, "io_uring not supported (CONFIG_IO_URING=n?)");
	if (ret == -EPERM)
		SKIP(return, "io_uring disabled (kernel.io_uring_disabled?)");
	ASSERT_EQ(0, ret);
	if (!(self->ring.features & IORING_FEAT_EXT_ARG))
		SKIP(return, "no IORING_FEAT_EXT_ARG: cannot wait with a timeout");
	self->sqe_flags = variant->sqe_flags;

	fill_pattern(self->pattern, FILE_SIZE, 0x9e3779b9);

	self->file = tmp_file(_metadata);
	ASSERT_EQ(FILE_SIZE, write(self->file, self->pattern, FILE_SIZE));
	ASSERT_EQ(0, lseek(self->file, 0, SEEK_SET));
	for (i = 0; i < ARRAY_SIZE(fds); i++)
		ASSERT_EQ(0, pipe(fds[i]));
}

FIXTURE_TEARDOWN(splice_registered)
{
	int *fds[] = { &self->file, &self->pa[0], &self->pa[1],
		       &self->pb[0], &self->pb[1], &self->pc[0], &self->pc[1],
		       &self->px[0], &self->px[1] };
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(fds); i++)
		close_fd(fds[i]);
	iou_exit(&self->ring);
}

/*
 * Queue a SPLICE (with offsets @off_out/@off_in) or a TEE (offsets must be
 * NO_OFF and are sent as 0) from @in to @out.  @fixed_in / @fixed_out make
 * @in / @out registered file indexes.
 */
static void queue_op(struct __test_metadata *_metadata,
		     FIXTURE_DATA(splice_registered) *self, __u64 ud,
		     enum op op, int out, __u64 off_out, bool fixed_out,
		     int in, __u64 off_in, bool fixed_in, unsigned int len,
		     __u8 sqe_flags)
{
	struct io_uring_sqe *sqe = next_sqe(_metadata, &self->ring, ud);
	unsigned int splice_flags = fixed_in ? SPLICE_F_FD_IN_FIXED : 0;

	if (op == OP_SPLICE) {
		iou_prep_splice(sqe, out, off_out, in, off_in, len,
				splice_flags);
	} else {
		ASSERT_EQ(NO_OFF, off_out);
		ASSERT_EQ(NO_OFF, off_in);
		iou_prep_tee(sqe, out, in, len, splice_flags);
	}
	sqe->flags = self->sqe_flags | sqe_flags |
		     (fixed_out ? IOSQE_FIXED_FILE : 0);
}

/* Pipe to pipe: no offsets. */
static void queue_pp(struct __test_metadata *_metadata,
		     FIXTURE_DATA(splice_registered) *self, __u64 ud,
		     enum op op, int out, bool fixed_out, int in,
		     bool fixed_in, unsigned int len, __u8 sqe_flags)
{
	queue_op(_metadata, self, ud, op, out, NO_OFF, fixed_out,
		 in, NO_OFF, fixed_in, len, sqe_flags);
}

/* Publish everything queued without waiting for anything. */
static void submit(struct __test_metadata *_metadata,
		   FIXTURE_DATA(splice_registered) *self, int nr)
{
	ASSERT_EQ(nr, iou_submit_and_wait(&self->ring, 0));
}

/*
 * Collect exactly @nr completions, each within WAIT_MS, for user_data
 * 1..@nr: res[i] receives the result for user_data i + 1.
 */
static void reap(struct __test_metadata *_metadata,
		 FIXTURE_DATA(splice_registered) *self, int nr, int *res)
{
	reap_cqes(_metadata, &self->ring, nr, res, WAIT_MS);
}

static int run_one(struct __test_metadata *_metadata,
		   FIXTURE_DATA(splice_registered) *self)
{
	int res;

	submit(_metadata, self, 1);
	reap(_metadata, self, 1, &res);
	return res;
}

/* Nothing may complete for BLOCKED_MS. */
static void expect_still_blocked(struct __test_metadata *_metadata,
				 FIXTURE_DATA(splice_registered) *self)
{
	struct iou_cqe cqe = { 0 };

	ASSERT_EQ(-ETIME, iou_wait_cqe_timeout(&self->ring, &cqe, BLOCKED_MS)) {
		TH_LOG("unexpected completion: user_data %llu res %d",
		       (unsigned long long)cqe.user_data, cqe.res);
	}
}

static const struct mix {
	const char *name;
	bool fixed_in;
	bool fixed_out;
} mixes[] = {
	{ "normal in, normal out", false, false },
	{ "fixed in, normal out", true, false },
	{ "normal in, fixed out", false, true },
	{ "fixed in, fixed out", true, true },
};

#define NR_MIXES	ARRAY_SIZE(mixes)

/*
 * Pipe to pipe, every combination of normal/registered input and output,
 * for both opcodes.  splice moves the prefix, tee copies it.
 */
TEST_F(splice_registered, pipe_to_pipe_mixes)
{
	/* slot 0: input read end, slot 1: output write end */
	int fds[] = { self->pa[0], self->pb[1] };
	char what[64];
	enum op op;
	unsigned int i;

	ASSERT_EQ(0, iou_register_files(&self->ring, fds, 2));

	for (op = OP_SPLICE; op <= OP_TEE; op++) {
		for (i = 0; i < NR_MIXES; i++) {
			const struct mix *m = &mixes[i];
			unsigned char *src = self->pattern +
					     (op * NR_MIXES + i) * 256;
			int res;

			snprintf(what, sizeof(what), "%s, %s", op_name[op],
				 m->name);
			fill_pipe(_metadata, self->pa[1], src, 200);
			queue_pp(_metadata, self, 1, op,
				 m->fixed_out ? 1 : self->pb[1], m->fixed_out,
				 m->fixed_in ? 0 : self->pa[0], m->fixed_in,
				 120, 0);
			res = run_one(_metadata, self);
			ASSERT_EQ(120, res) {
				TH_LOG("%s: result", what);
			}
			check_pipe(_metadata, self->pb[0], src, 120, what);
			if (op == OP_SPLICE)
				check_pipe(_metadata, self->pa[0], src + 120,
					   80, what);
			else
				check_pipe(_metadata, self->pa[0], src, 200,
					   what);
		}
	}
}

/* A registered regular file as the input, to a normal or registered pipe. */
TEST_F(splice_registered, file_to_pipe_fixed_input)
{
	/* slot 0: the file, slot 1: output write end */
	int fds[] = { self->file, self->pb[1] };
	unsigned int i;

	ASSERT_EQ(0, iou_register_files(&self->ring, fds, 2));

	for (i = 0; i < NR_MIXES; i++) {
		const struct mix *m = &mixes[i];
		int out = m->fixed_out ? 1 : self->pb[1];
		__u64 pos = 100 + i * 700;

		if (!m->fixed_in)
			continue;

		/* explicit offset: f_pos stays where it is */
		ASSERT_EQ(7, lseek(self->file, 7, SEEK_SET));
		queue_op(_metadata, self, 1, OP_SPLICE, out, NO_OFF,
			 m->fixed_out, 0, pos, true, 300, 0);
		EXPECT_EQ(300, run_one(_metadata, self)) {
			TH_LOG("%s: offset %llu", m->name,
			       (unsigned long long)pos);
		}
		check_pipe(_metadata, self->pb[0], self->pattern + pos, 300,
			   m->name);
		EXPECT_EQ(7, lseek(self->file, 0, SEEK_CUR)) {
			TH_LOG("%s: f_pos moved", m->name);
		}

		/*
		 * No offset: the registered struct file is the one the app
		 * still has open, so they share f_pos.
		 */
		ASSERT_EQ(pos, lseek(self->file, pos, SEEK_SET));
		queue_op(_metadata, self, 1, OP_SPLICE, out, NO_OFF,
			 m->fixed_out, 0, NO_OFF, true, 40, 0);
		EXPECT_EQ(40, run_one(_metadata, self)) {
			TH_LOG("%s: f_pos", m->name);
		}
		check_pipe(_metadata, self->pb[0], self->pattern + pos, 40,
			   m->name);
		EXPECT_EQ(pos + 40, lseek(self->file, 0, SEEK_CUR)) {
			TH_LOG("%s: f_pos not advanced", m->name);
		}

		/* short read at EOF */
		queue_op(_metadata, self, 1, OP_SPLICE, out, NO_OFF,
			 m->fixed_out, 0, FILE_SIZE - 10, true, 100, 0);
		EXPECT_EQ(10, run_one(_metadata, self)) {
			TH_LOG("%s: EOF", m->name);
		}
		check_pipe(_metadata, self->pb[0],
			   self->pattern + FILE_SIZE - 10, 10, m->name);

		/* tee wants a pipe on both sides */
		queue_pp(_metadata, self, 1, OP_TEE, out, m->fixed_out,
			 0, true, 100, 0);
		EXPECT_EQ(-EINVAL, run_one(_metadata, self)) {
			TH_LOG("%s: tee from a regular file", m->name);
		}
		EXPECT_EQ(0, pipe_bytes(self->pb[0]));
	}
}

/*
 * IORING_REGISTER_FILES_UPDATE between submissions changes what the input
 * slot refers to for the next request: pipe A, then pipe B, then nothing.
 */
TEST_F(splice_registered, update_input_slot)
{
	int sparse[] = { -1, -1, -1, -1 };
	const int k = 2, empty = -1;
	enum op op;

	ASSERT_EQ(0, iou_register_files(&self->ring, sparse, 4));

	for (op = OP_SPLICE; op <= OP_TEE; op++) {
		unsigned char *a = self->pattern + 1000 + op * 300;
		unsigned char *b = self->pattern + 2000 + op * 300;
		/* what is left in A and B after one op moved/copied 60 */
		int left = op == OP_SPLICE ? 40 : 100;
		int skip = op == OP_SPLICE ? 60 : 0;
		const char *name = op_name[op];

		fill_pipe(_metadata, self->pa[1], a, 100);
		fill_pipe(_metadata, self->pb[1], b, 100);

		/* K -> A */
		ASSERT_EQ(1, iou_update_files(&self->ring, k, &self->pa[0], 1));
		queue_pp(_metadata, self, 1, op, self->px[1], false, k, true,
			 60, 0);
		EXPECT_EQ(60, run_one(_metadata, self)) TH_LOG("%s: A", name);
		check_pipe(_metadata, self->px[0], a, 60, name);
		EXPECT_EQ(left, pipe_bytes(self->pa[0])) TH_LOG("%s", name);
		EXPECT_EQ(100, pipe_bytes(self->pb[0])) TH_LOG("%s", name);

		/* K -> B */
		ASSERT_EQ(1, iou_update_files(&self->ring, k, &self->pb[0], 1));
		queue_pp(_metadata, self, 1, op, self->px[1], false, k, true,
			 60, 0);
		EXPECT_EQ(60, run_one(_metadata, self)) TH_LOG("%s: B", name);
		check_pipe(_metadata, self->px[0], b, 60, name);
		EXPECT_EQ(left, pipe_bytes(self->pa[0])) TH_LOG("%s", name);
		EXPECT_EQ(left, pipe_bytes(self->pb[0])) TH_LOG("%s", name);

		/* K -> empty */
		ASSERT_EQ(1, iou_update_files(&self->ring, k, &empty, 1));
		queue_pp(_metadata, self, 1, op, self->px[1], false, k, true,
			 60, 0);
		EXPECT_EQ(-EBADF, run_one(_metadata, self)) {
			TH_LOG("%s: empty slot", name);
		}
		EXPECT_EQ(0, pipe_bytes(self->px[0])) TH_LOG("%s", name);
		check_pipe(_metadata, self->pa[0], a + skip, left, name);
		check_pipe(_metadata, self->pb[0], b + skip, left, name);
	}
}

/* The same for the output slot (IOSQE_FIXED_FILE). */
TEST_F(splice_registered, update_output_slot)
{
	int sparse[] = { -1, -1, -1 };
	const int j = 1, empty = -1;
	enum op op;

	ASSERT_EQ(0, iou_register_files(&self->ring, sparse, 3));

	for (op = OP_SPLICE; op <= OP_TEE; op++) {
		unsigned char *src = self->pattern + 500 + op * 500;
		int left = op == OP_SPLICE ? 0 : 150;
		const char *name = op_name[op];

		fill_pipe(_metadata, self->pa[1], src, 150);

		/* J -> X */
		ASSERT_EQ(1, iou_update_files(&self->ring, j, &self->px[1], 1));
		queue_pp(_metadata, self, 1, op, j, true, self->pa[0], false,
			 op == OP_SPLICE ? 50 : 150, 0);
		EXPECT_EQ(op == OP_SPLICE ? 50 : 150, run_one(_metadata, self)) {
			TH_LOG("%s: X", name);
		}
		check_pipe(_metadata, self->px[0], src,
			   op == OP_SPLICE ? 50 : 150, name);
		EXPECT_EQ(0, pipe_bytes(self->pc[0])) TH_LOG("%s", name);

		/* J -> C */
		ASSERT_EQ(1, iou_update_files(&self->ring, j, &self->pc[1], 1));
		queue_pp(_metadata, self, 1, op, j, true, self->pa[0], false,
			 op == OP_SPLICE ? 50 : 150, 0);
		EXPECT_EQ(op == OP_SPLICE ? 50 : 150, run_one(_metadata, self)) {
			TH_LOG("%s: C", name);
		}
		check_pipe(_metadata, self->pc[0],
			   op == OP_SPLICE ? src + 50 : src,
			   op == OP_SPLICE ? 50 : 150, name);
		EXPECT_EQ(0, pipe_bytes(self->px[0])) TH_LOG("%s", name);

		/* J -> empty: nothing is read from the input either */
		ASSERT_EQ(1, iou_update_files(&self->ring, j, &empty, 1));
		queue_pp(_metadata, self, 1, op, j, true, self->pa[0], false,
			 50, 0);
		EXPECT_EQ(-EBADF, run_one(_metadata, self)) {
			TH_LOG("%s: empty slot", name);
		}
		EXPECT_EQ(0, pipe_bytes(self->px[0])) TH_LOG("%s", name);
		EXPECT_EQ(0, pipe_bytes(self->pc[0])) TH_LOG("%s", name);
		if (op == OP_SPLICE)
			check_pipe(_metadata, self->pa[0], src + 100, 50, name);
		else
			check_pipe(_metadata, self->pa[0], src, left, name);
	}
}

/*
 * Files whose descriptors the application closed after registering them
 * keep working through their slots: input pipe, output pipe and a regular
 * file (whose f_pos now only io_uring can see).
 */
TEST_F(splice_registered, app_fd_closed)
{
	int fds[] = { self->pa[0], self->pb[1], self->file };
	unsigned char *src = self->pattern + 3000;
	unsigned char want[100];

	ASSERT_EQ(0, iou_register_files(&self->ring, fds, 3));
	close_fd(&self->pa[0]);
	close_fd(&self->pb[1]);
	close_fd(&self->file);

	/* the slots keep the pipe ends open */
	EXPECT_EQ(0, wait_pipe_orphaned(self->pa[1], 0));
	EXPECT_EQ(0, wait_pipe_orphaned(self->pb[0], 0));

	fill_pipe(_metadata, self->pa[1], src, 200);

	/* fixed in, fixed out */
	queue_pp(_metadata, self, 1, OP_SPLICE, 1, true, 0, true, 150, 0);
	EXPECT_EQ(150, run_one(_metadata, self));
	check_pipe(_metadata, self->pb[0], src, 150, "splice 0 -> 1");

	/* tee then splice of the same 50 bytes into a normal pipe */
	queue_pp(_metadata, self, 1, OP_TEE, self->px[1], false, 0, true,
		 50, 0);
	EXPECT_EQ(50, run_one(_metadata, self));
	queue_pp(_metadata, self, 1, OP_SPLICE, self->px[1], false, 0, true,
		 50, 0);
	EXPECT_EQ(50, run_one(_metadata, self));
	memcpy(want, src + 150, 50);
	memcpy(want + 50, src + 150, 50);
	check_pipe(_metadata, self->px[0], want, 100, "tee+splice 0 -> X");

	/* the regular file, by offset and by its private f_pos (at 0) */
	queue_op(_metadata, self, 1, OP_SPLICE, 1, NO_OFF, true,
		 2, 1234, true, 64, 0);
	EXPECT_EQ(64, run_one(_metadata, self));
	check_pipe(_metadata, self->pb[0], self->pattern + 1234, 64, "off");
	queue_op(_metadata, self, 1, OP_SPLICE, self->px[1], NO_OFF, false,
		 2, NO_OFF, true, 32, 0);
	EXPECT_EQ(32, run_one(_metadata, self));
	queue_op(_metadata, self, 1, OP_SPLICE, self->px[1], NO_OFF, false,
		 2, NO_OFF, true, 32, 0);
	EXPECT_EQ(32, run_one(_metadata, self));
	check_pipe(_metadata, self->px[0], self->pattern, 64, "f_pos");
}

/*
 * A slot holding the last reference releases the file when it is cleared
 * and when the ring goes away; until then the file stays open.
 */
TEST_F(splice_registered, slot_holds_last_ref)
{
	int fds[] = { self->pa[0], self->pb[1] };
	const int empty = -1;
	char c;

	ASSERT_EQ(0, iou_register_files(&self->ring, fds, 2));
	close_fd(&self->pa[0]);
	close_fd(&self->pb[1]);

	fill_pipe(_metadata, self->pa[1], self->pattern, 16);
	queue_pp(_metadata, self, 1, OP_SPLICE, 1, true, 0, true, 16, 0);
	EXPECT_EQ(16, run_one(_metadata, self));
	check_pipe(_metadata, self->pb[0], self->pattern, 16, "splice");

	EXPECT_EQ(0, wait_pipe_orphaned(self->pa[1], 0));
	ASSERT_EQ(1, iou_update_files(&self->ring, 0, &empty, 1));
	EXPECT_EQ(POLLERR, wait_pipe_orphaned(self->pa[1], WAIT_MS));
	EXPECT_EQ(-1, write(self->pa[1], "x", 1));
	EXPECT_EQ(EPIPE, errno);

	/* ring teardown releases what is still registered */
	EXPECT_EQ(0, wait_pipe_orphaned(self->pb[0], 0));
	iou_exit(&self->ring);
	EXPECT_EQ(POLLHUP, wait_pipe_orphaned(self->pb[0], WAIT_MS));
	EXPECT_EQ(0, pipe_bytes(self->pb[0]));
	EXPECT_EQ(0, read(self->pb[0], &c, 1));
}

enum slot_change { SLOT_CLEAR, SLOT_REPLACE };

/*
 * #1: SPLICE from the empty pipe A (write end open, so it blocks in io-wq)
 *     to X, with IOSQE_IO_LINK;
 * #2: @op from registered slot K (pipe B, 100 bytes) to X.
 * While #1 is blocked, K is cleared or pointed at pipe C (150 bytes); then
 * A gets 300 bytes.  #2 only looks K up when it is issued, after #1 is
 * done, so it must fail with -EBADF or use C; B must stay untouched.
 * There is no race: #2 cannot be issued before A has data, and A only gets
 * data after the update returned.
 */
static void queued_behind_blocked(struct __test_metadata *_metadata,
				  FIXTURE_DATA(splice_registered) *self,
				  enum op op, enum slot_change change)
{
	int sparse[] = { -1, -1, -1, -1 };
	unsigned char *d1 = self->pattern + 100;
	unsigned char *d2 = self->pattern + 1000;
	unsigned char *d3 = self->pattern + 2000;
	int repl = change == SLOT_CLEAR ? -1 : self->pc[0];
	unsigned char want[400];
	const int k = 3;
	int res[2];

	ASSERT_EQ(0, iou_register_files(&self->ring, sparse, 4));
	ASSERT_EQ(1, iou_update_files(&self->ring, k, &self->pb[0], 1));
	fill_pipe(_metadata, self->pb[1], d2, 100);
	fill_pipe(_metadata, self->pc[1], d3, 150);

	queue_pp(_metadata, self, 1, OP_SPLICE, self->px[1], false,
		 self->pa[0], false, 300, IOSQE_IO_LINK);
	queue_pp(_metadata, self, 2, op, self->px[1], false, k, true, 100, 0);
	submit(_metadata, self, 2);

	expect_still_blocked(_metadata, self);
	ASSERT_EQ(100, pipe_bytes(self->pb[0]));
	ASSERT_EQ(0, pipe_bytes(self->px[0]));

	ASSERT_EQ(1, iou_update_files(&self->ring, k, &repl, 1));
	/* #2 still waits for #1 */
	expect_still_blocked(_metadata, self);

	fill_pipe(_metadata, self->pa[1], d1, 300);
	reap(_metadata, self, 2, res);
	EXPECT_EQ(300, res[0]);

	memcpy(want, d1, 300);
	if (change == SLOT_CLEAR) {
		EXPECT_EQ(-EBADF, res[1]);
		check_pipe(_metadata, self->px[0], want, 300, "X");
		check_pipe(_metadata, self->pc[0], d3, 150, "C");
	} else {
		EXPECT_EQ(100, res[1]);
		memcpy(want + 300, d3, 100);
		check_pipe(_metadata, self->px[0], want, 400, "X");
		if (op == OP_SPLICE)
			check_pipe(_metadata, self->pc[0], d3 + 100, 50, "C");
		else
			check_pipe(_metadata, self->pc[0], d3, 150, "C");
	}
	check_pipe(_metadata, self->pb[0], d2, 100, "B");
	EXPECT_EQ(0, pipe_bytes(self->pa[0]));
}

TEST_F(splice_registered, queued_splice_slot_cleared)
{
	queued_behind_blocked(_metadata, self, OP_SPLICE, SLOT_CLEAR);
}

TEST_F(splice_registered, queued_splice_slot_replaced)
{
	queued_behind_blocked(_metadata, self, OP_SPLICE, SLOT_REPLACE);
}

TEST_F(splice_registered, queued_tee_slot_cleared)
{
	queued_behind_blocked(_metadata, self, OP_TEE, SLOT_CLEAR);
}

TEST_F(splice_registered, queued_tee_slot_replaced)
{
	queued_behind_blocked(_metadata, self, OP_TEE, SLOT_REPLACE);
}

/* Close every fixture descriptor but the ring's; returns how many. */
static int close_all_but_ring(FIXTURE_DATA(splice_registered) *self)
{
	int *fds[] = { &self->file, &self->pa[0], &self->pa[1],
		       &self->pb[0], &self->pb[1], &self->pc[0], &self->pc[1],
		       &self->px[0], &self->px[1] };
	unsigned int i;
	int n = 0;

	for (i = 0; i < ARRAY_SIZE(fds); i++) {
		if (*fds[i] >= 0)
			n++;
		close_fd(fds[i]);
	}
	return n;
}

/*
 * IORING_UNREGISTER_FILES while a splice that uses slot 0 is queued behind
 * a blocked one.  No request holds the table (#1 uses normal descriptors,
 * #2 has not been issued), so 6.12 drops it at once; #2 then finds no
 * table and fails with -EBADF.  Slot 1 held the only reference to C's read
 * end, which is released by the time the call returns.
 */
TEST_F(splice_registered, unregister_while_queued)
{
	int fds[] = { self->pb[0], self->pc[0] };
	unsigned char *d1 = self->pattern + 100;
	unsigned char *d2 = self->pattern + 1000;
	int res[2], n0, n1 = -1, n2, closed;

	n0 = fd_count();
	if (n0 < 0)
		TH_LOG("no /proc/self/fd (%d), not counting descriptors", n0);

	ASSERT_EQ(0, iou_register_files(&self->ring, fds, 2));
	close_fd(&self->pc[0]);
	fill_pipe(_metadata, self->pb[1], d2, 100);

	queue_pp(_metadata, self, 1, OP_SPLICE, self->px[1], false,
		 self->pa[0], false, 300, IOSQE_IO_LINK);
	queue_pp(_metadata, self, 2, OP_SPLICE, self->px[1], false, 0, true,
		 100, 0);
	submit(_metadata, self, 2);
	expect_still_blocked(_metadata, self);
	EXPECT_EQ(0, wait_pipe_orphaned(self->pc[1], 0));

	ASSERT_EQ(0, iou_unregister_files(&self->ring));
	EXPECT_EQ(POLLERR, wait_pipe_orphaned(self->pc[1], 0));
	EXPECT_EQ(-ENXIO, iou_unregister_files(&self->ring));
	expect_still_blocked(_metadata, self);
	EXPECT_EQ(100, pipe_bytes(self->pb[0]));

	fill_pipe(_metadata, self->pa[1], d1, 300);
	reap(_metadata, self, 2, res);
	EXPECT_EQ(300, res[0]);
	EXPECT_EQ(-EBADF, res[1]);
	check_pipe(_metadata, self->px[0], d1, 300, "X");
	check_pipe(_metadata, self->pb[0], d2, 100, "B");
	EXPECT_EQ(0, pipe_bytes(self->pa[0]));

	/* the ring is still fine: a new table works */
	ASSERT_EQ(0, iou_register_files(&self->ring, &self->pb[0], 1));
	fill_pipe(_metadata, self->pb[1], d2, 50);
	queue_pp(_metadata, self, 1, OP_SPLICE, self->px[1], false, 0, true,
		 50, 0);
	EXPECT_EQ(50, run_one(_metadata, self));
	check_pipe(_metadata, self->px[0], d2, 50, "X again");

	/* only the ring's own descriptor goes away with the ring */
	closed = close_all_but_ring(self);
	if (n0 >= 0) {
		n1 = fd_count();
		EXPECT_EQ(n0 - 1 - closed, n1);
	}
	iou_exit(&self->ring);
	if (n0 >= 0) {
		n2 = fd_count();
		EXPECT_EQ(n1 - 1, n2);
	}
}

/*
 * IORING_UNREGISTER_FILES while a splice whose input is a registered file
 * is blocked in io-wq; the application closed its own descriptor, so only
 * the table and the request keep that pipe read end open.  A linked splice
 * with normal descriptors waits behind it.
 *
 * This is where kernels differ legitimately.  6.12 quiesces: the call
 * only returns once the request holding the rsrc node is done, hence the
 * child process that supplies the data after PROVIDER_MS.  Since the
 * 6.13 rsrc rework the table goes at once and the request keeps its own
 * reference to the slot's node.  What must hold either way: the call
 * returns 0, the splice gets all the data, the link goes on, and the file
 * is released once the request is done.
 */
#define PROVIDER_MS	200

TEST_F(splice_registered, unregister_while_fixed_input_blocked)
{
	unsigned char *d1 = self->pattern + 300;
	unsigned char *d2 = self->pattern + 700;
	unsigned char want[400];
	long long t0, waited;
	int res[2], status;
	pid_t pid;

	ASSERT_EQ(0, iou_register_files(&self->ring, &self->pa[0], 1));
	close_fd(&self->pa[0]);
	fill_pipe(_metadata, self->pb[1], d2, 100);

	queue_pp(_metadata, self, 1, OP_SPLICE, self->px[1], false, 0, true,
		 300, IOSQE_IO_LINK);
	queue_pp(_metadata, self, 2, OP_SPLICE, self->px[1], false,
		 self->pb[0], false, 100, 0);
	submit(_metadata, self, 2);
	expect_still_blocked(_metadata, self);

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		usleep(PROVIDER_MS * 1000);
		_exit(write(self->pa[1], d1, 300) == 300 ? 0 : 1);
	}

	t0 = iou_now_ms();
	EXPECT_EQ(0, iou_unregister_files(&self->ring));
	waited = iou_now_ms() - t0;
	ksft_print_msg("%s: IORING_UNREGISTER_FILES took %lld ms: %s\n",
		       _metadata->name, waited,
		       waited >= PROVIDER_MS / 2 ?
		       "waited for the request (6.12 quiesce)" :
		       "did not wait (6.13+ per-node references)");

	reap(_metadata, self, 2, res);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));
	EXPECT_EQ(300, res[0]);
	EXPECT_EQ(100, res[1]);
	memcpy(want, d1, 300);
	memcpy(want + 300, d2, 100);
	check_pipe(_metadata, self->px[0], want, 400, "X");
	EXPECT_EQ(0, pipe_bytes(self->pb[0]));

	/* nothing holds A's read end any more */
	EXPECT_EQ(POLLERR, wait_pipe_orphaned(self->pa[1], WAIT_MS));
	EXPECT_EQ(-ENXIO, iou_unregister_files(&self->ring));
}

TEST_HARNESS_MAIN
