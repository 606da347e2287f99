// SPDX-License-Identifier: GPL-2.0
/*
 * IORING_OP_SPLICE and IORING_OP_TEE behaviour, as of Linux 6.12.
 *
 * SQE layout used by both opcodes:
 *   sqe->fd             output file (a registered index with IOSQE_FIXED_FILE)
 *   sqe->splice_fd_in   input file (a registered index with
 *                       SPLICE_F_FD_IN_FIXED in splice_flags)
 *   sqe->off            output offset, (u64)-1 = none: use f_pos (SPLICE only)
 *   sqe->splice_off_in  input offset, same encoding (SPLICE only)
 *   sqe->len            byte count
 *   sqe->splice_flags   SPLICE_F_* flags
 *
 * Each test runs twice: without ("sync") and with ("async") IOSQE_ASYNC set
 * on every SQE.  Note that in 6.12 the SPLICE/TEE prep handlers always set
 * REQ_F_FORCE_ASYNC, so both variants end up executing in io-wq; the
 * variants guard against that changing without the results changing.
 */

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "iou_helpers.h"
#include "../kselftest_harness.h"
#include "splice_helpers.h"

#define NO_OFF		((__u64)-1)
#define FILE_SIZE	4096
#define RING_ENTRIES	8
/* No single test should take more than a blink; never hang forever. */
#define TEST_ALARM_SEC	5

FIXTURE(splice_tee) {
	struct iou_ring ring;
	__u8 sqe_flags;
	/* FILE_SIZE bytes of self->pattern, f_pos at 0 */
	int file;
	/* two empty pipes, [0] read end, [1] write end */
	int p1[2];
	int p2[2];
	unsigned char pattern[FILE_SIZE];
};

FIXTURE_VARIANT(splice_tee) {
	__u8 sqe_flags;
};

FIXTURE_VARIANT_ADD(splice_tee, sync) {
	.sqe_flags = 0,
};

FIXTURE_VARIANT_ADD(splice_tee, async) {
	.sqe_flags = IOSQE_ASYNC,
};

/* A descriptor number that is not open right now. */
static int closed_fd(struct __test_metadata *_metadata)
{
	int fd = open("/", O_RDONLY | O_DIRECTORY);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, close(fd));
	return fd;
}

/* @len bytes at @off of @fd must equal @want. */
static void expect_file_data(struct __test_metadata *_metadata, int fd,
			     off_t off, const void *want, size_t len)
{
	unsigned char buf[FILE_SIZE];

	ASSERT_GE(sizeof(buf), len);
	ASSERT_EQ((ssize_t)len, pread(fd, buf, len, off));
	ASSERT_EQ(0, memcmp(buf, want, len));
}

static off_t file_size(struct __test_metadata *_metadata, int fd)
{
	struct stat st;

	ASSERT_EQ(0, fstat(fd, &st));
	return st.st_size;
}

FIXTURE_SETUP(splice_tee)
{
	int ret;

	self->ring.fd = -1;
	self->file = -1;
	self->p1[0] = -1;
	self->p1[1] = -1;
	self->p2[0] = -1;
	self->p2[1] = -1;
	alarm(TEST_ALARM_SEC);

	ret = iou_setup(&self->ring, RING_ENTRIES, 0);
	if (ret == -ENOSYS)
		SKIP(return, "io_uring not supported (CONFIG_IO_URING=n?)");
	if (ret == -EPERM)
		SKIP(return, "io_uring disabled (kernel.io_uring_disabled?)");
	ASSERT_EQ(0, ret);
	self->sqe_flags = variant->sqe_flags;

	fill_pattern(self->pattern, FILE_SIZE, 0x12345678);

	self->file = tmp_file(_metadata);
	ASSERT_EQ(FILE_SIZE, write(self->file, self->pattern, FILE_SIZE));
	ASSERT_EQ(0, lseek(self->file, 0, SEEK_SET));
	ASSERT_EQ(0, pipe(self->p1));
	ASSERT_EQ(0, pipe(self->p2));
}

FIXTURE_TEARDOWN(splice_tee)
{
	int *fds[] = { &self->file, &self->p1[0], &self->p1[1],
		       &self->p2[0], &self->p2[1] };
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(fds); i++) {
		if (*fds[i] >= 0)
			close(*fds[i]);
	}
	iou_exit(&self->ring);
}

/* Queue a SPLICE with user_data @ud and extra IOSQE_* @sqe_flags. */
static struct io_uring_sqe *
queue_splice(struct __test_metadata *_metadata, FIXTURE_DATA(splice_tee) *self,
	     __u64 ud, int out, __u64 off_out, int in, __u64 off_in,
	     unsigned int len, unsigned int splice_flags, __u8 sqe_flags)
{
	struct io_uring_sqe *sqe = next_sqe(_metadata, &self->ring, ud);

	iou_prep_splice(sqe, out, off_out, in, off_in, len, splice_flags);
	sqe->flags = self->sqe_flags | sqe_flags;
	return sqe;
}

static struct io_uring_sqe *
queue_tee(struct __test_metadata *_metadata, FIXTURE_DATA(splice_tee) *self,
	  __u64 ud, int out, int in, unsigned int len,
	  unsigned int splice_flags, __u8 sqe_flags)
{
	struct io_uring_sqe *sqe = next_sqe(_metadata, &self->ring, ud);

	iou_prep_tee(sqe, out, in, len, splice_flags);
	sqe->flags = self->sqe_flags | sqe_flags;
	return sqe;
}

static void queue_nop(struct __test_metadata *_metadata,
		      FIXTURE_DATA(splice_tee) *self, __u64 ud)
{
	struct io_uring_sqe *sqe = next_sqe(_metadata, &self->ring, ud);

	iou_prep_nop(sqe);
	sqe->flags = self->sqe_flags;
}

/*
 * Submit everything queued (user_data 1..@nr) and collect exactly @nr
 * completions: res[i] receives the result for user_data i + 1.
 */
static void run_queued(struct __test_metadata *_metadata,
		       FIXTURE_DATA(splice_tee) *self, int nr, int *res)
{
	ASSERT_EQ(nr, iou_submit_and_wait(&self->ring, nr));
	/* no time limit: the test's alarm() catches a hang */
	reap_cqes(_metadata, &self->ring, nr, res, 0);
}

static int run_one(struct __test_metadata *_metadata,
		   FIXTURE_DATA(splice_tee) *self)
{
	int res;

	run_queued(_metadata, self, 1, &res);
	return res;
}

static int do_splice_op(struct __test_metadata *_metadata,
			FIXTURE_DATA(splice_tee) *self,
			int out, __u64 off_out, int in, __u64 off_in,
			unsigned int len, unsigned int splice_flags,
			__u8 sqe_flags)
{
	queue_splice(_metadata, self, 1, out, off_out, in, off_in, len,
		     splice_flags, sqe_flags);
	return run_one(_metadata, self);
}

static int do_tee_op(struct __test_metadata *_metadata,
		     FIXTURE_DATA(splice_tee) *self, int out, int in,
		     unsigned int len, unsigned int splice_flags,
		     __u8 sqe_flags)
{
	queue_tee(_metadata, self, 1, out, in, len, splice_flags, sqe_flags);
	return run_one(_metadata, self);
}

/* An explicit input offset is used as is; the file's f_pos is untouched. */
TEST_F(splice_tee, file_to_pipe_offset)
{
	ASSERT_EQ(10, lseek(self->file, 10, SEEK_SET));

	EXPECT_EQ(300, do_splice_op(_metadata, self, self->p1[1], NO_OFF,
				    self->file, 1000, 300, 0, 0));
	check_pipe(_metadata, self->p1[0], self->pattern + 1000, 300, "p1");
	EXPECT_EQ(10, lseek(self->file, 0, SEEK_CUR));

	/* 0 is a real offset, not "none" */
	EXPECT_EQ(16, do_splice_op(_metadata, self, self->p1[1], NO_OFF,
				   self->file, 0, 16, 0, 0));
	check_pipe(_metadata, self->p1[0], self->pattern, 16, "p1");
	EXPECT_EQ(10, lseek(self->file, 0, SEEK_CUR));
}

/* Input offset -1: read from f_pos and advance it by the count. */
TEST_F(splice_tee, file_to_pipe_fpos)
{
	ASSERT_EQ(100, lseek(self->file, 100, SEEK_SET));

	EXPECT_EQ(500, do_splice_op(_metadata, self, self->p1[1], NO_OFF,
				    self->file, NO_OFF, 500, 0, 0));
	check_pipe(_metadata, self->p1[0], self->pattern + 100, 500, "p1");
	EXPECT_EQ(600, lseek(self->file, 0, SEEK_CUR));

	EXPECT_EQ(50, do_splice_op(_metadata, self, self->p1[1], NO_OFF,
				   self->file, NO_OFF, 50, 0, 0));
	check_pipe(_metadata, self->p1[0], self->pattern + 600, 50, "p1");
	EXPECT_EQ(650, lseek(self->file, 0, SEEK_CUR));
}

/* Pipe into a file at an explicit offset: only that range changes. */
TEST_F(splice_tee, pipe_to_file_offset)
{
	unsigned char *src = self->pattern + 7;

	fill_pipe(_metadata, self->p1[1], src, 256);
	EXPECT_EQ(256, do_splice_op(_metadata, self, self->file, 1024,
				    self->p1[0], NO_OFF, 256, 0, 0));
	EXPECT_EQ(0, pipe_bytes(self->p1[0]));
	expect_file_data(_metadata, self->file, 1024, src, 256);
	expect_file_data(_metadata, self->file, 0, self->pattern, 1024);
	expect_file_data(_metadata, self->file, 1280, self->pattern + 1280,
			 FILE_SIZE - 1280);
	EXPECT_EQ(FILE_SIZE, file_size(_metadata, self->file));
	EXPECT_EQ(0, lseek(self->file, 0, SEEK_CUR));
}

/* Output offset -1: write at f_pos and advance it. */
TEST_F(splice_tee, pipe_to_file_fpos)
{
	unsigned char zero[64] = { 0 };
	int out = tmp_file(_metadata);

	ASSERT_EQ(64, lseek(out, 64, SEEK_SET));
	fill_pipe(_metadata, self->p1[1], self->pattern, 200);
	EXPECT_EQ(200, do_splice_op(_metadata, self, out, NO_OFF,
				    self->p1[0], NO_OFF, 200, 0, 0));
	EXPECT_EQ(264, lseek(out, 0, SEEK_CUR));
	EXPECT_EQ(264, file_size(_metadata, out));
	expect_file_data(_metadata, out, 0, zero, 64);
	expect_file_data(_metadata, out, 64, self->pattern, 200);
	EXPECT_EQ(0, pipe_bytes(self->p1[0]));
	close(out);
}

/* Pipe to pipe moves the requested prefix and leaves the rest. */
TEST_F(splice_tee, pipe_to_pipe)
{
	unsigned char *src = self->pattern + 33;

	fill_pipe(_metadata, self->p1[1], src, 300);
	EXPECT_EQ(120, do_splice_op(_metadata, self, self->p2[1], NO_OFF,
				    self->p1[0], NO_OFF, 120, 0, 0));
	check_pipe(_metadata, self->p2[0], src, 120, "p2");
	check_pipe(_metadata, self->p1[0], src + 120, 180, "p1");
}

/*
 * Zero length completes with 0 and moves nothing; it does not even wait
 * on an empty pipe whose write end is still open.
 */
TEST_F(splice_tee, zero_len)
{
	ASSERT_EQ(5, lseek(self->file, 5, SEEK_SET));

	EXPECT_EQ(0, do_splice_op(_metadata, self, self->p1[1], NO_OFF,
				  self->file, NO_OFF, 0, 0, 0));
	EXPECT_EQ(0, pipe_bytes(self->p1[0]));
	EXPECT_EQ(5, lseek(self->file, 0, SEEK_CUR));

	EXPECT_EQ(0, do_splice_op(_metadata, self, self->p2[1], NO_OFF,
				  self->p1[0], NO_OFF, 0, 0, 0));
	EXPECT_EQ(0, do_splice_op(_metadata, self, self->file, NO_OFF,
				  self->p1[0], NO_OFF, 0, 0, 0));
	EXPECT_EQ(0, do_tee_op(_metadata, self, self->p2[1], self->p1[0],
			       0, 0, 0));
	EXPECT_EQ(0, pipe_bytes(self->p2[0]));
	EXPECT_EQ(5, lseek(self->file, 0, SEEK_CUR));
	EXPECT_EQ(FILE_SIZE, file_size(_metadata, self->file));
}

/*
 * With len == 0, 6.12 never calls do_splice()/do_tee(), so none of their
 * checks run: offsets on pipes, the same pipe at both ends or no pipe at
 * all, each of these "succeeds" with 0.  Checks done at prep time (flags,
 * tee offsets) and the lookup of both files (-EBADF) still apply.
 */
TEST_F(splice_tee, zero_len_skips_checks)
{
	struct io_uring_sqe *sqe;
	int other = tmp_file(_metadata);
	int bad = closed_fd(_metadata);

	EXPECT_EQ(0, do_splice_op(_metadata, self, self->p1[1], 0,
				  self->file, 0, 0, 0, 0));
	EXPECT_EQ(0, do_splice_op(_metadata, self, self->p1[1], NO_OFF,
				  self->p1[0], NO_OFF, 0, 0, 0));
	EXPECT_EQ(0, do_splice_op(_metadata, self, other, 0,
				  self->file, 0, 0, 0, 0));
	EXPECT_EQ(0, do_tee_op(_metadata, self, self->p1[1], self->p1[0],
			       0, 0, 0));
	EXPECT_EQ(0, do_tee_op(_metadata, self, other, self->file, 0, 0, 0));

	/* still checked */
	EXPECT_EQ(-EINVAL, do_splice_op(_metadata, self, self->p1[1], NO_OFF,
					self->file, 0, 0, 0x100, 0));
	sqe = queue_tee(_metadata, self, 1, self->p2[1], self->p1[0], 0, 0, 0);
	sqe->off = NO_OFF;
	EXPECT_EQ(-EINVAL, run_one(_metadata, self));
	EXPECT_EQ(-EBADF, do_splice_op(_metadata, self, self->p1[1], NO_OFF,
				       bad, NO_OFF, 0, 0, 0));
	EXPECT_EQ(-EBADF, do_splice_op(_metadata, self, bad, NO_OFF,
				       self->file, 0, 0, 0, 0));

	EXPECT_EQ(0, pipe_bytes(self->p1[0]));
	EXPECT_EQ(0, file_size(_metadata, other));
	close(other);
}

/* tee duplicates the data; the source pipe keeps all of it. */
TEST_F(splice_tee, tee_copies)
{
	unsigned char *src = self->pattern + 400;

	fill_pipe(_metadata, self->p1[1], src, 200);
	EXPECT_EQ(200, do_tee_op(_metadata, self, self->p2[1], self->p1[0],
				 200, 0, 0));
	EXPECT_EQ(200, pipe_bytes(self->p1[0]));
	EXPECT_EQ(200, pipe_bytes(self->p2[0]));
	check_pipe(_metadata, self->p2[0], src, 200, "p2");
	check_pipe(_metadata, self->p1[0], src, 200, "p1");
}

/* tee of a prefix: only that prefix is copied, the source is intact. */
TEST_F(splice_tee, tee_partial)
{
	unsigned char *src = self->pattern + 900;

	fill_pipe(_metadata, self->p1[1], src, 200);
	EXPECT_EQ(50, do_tee_op(_metadata, self, self->p2[1], self->p1[0],
				50, 0, 0));
	check_pipe(_metadata, self->p2[0], src, 50, "p2");
	check_pipe(_metadata, self->p1[0], src, 200, "p1");
}

/* SPLICE_F_FD_IN_FIXED: splice_fd_in is a registered file index. */
TEST_F(splice_tee, fixed_input)
{
	int fds[] = { self->file, self->p1[0] };

	ASSERT_EQ(0, iou_register_files(&self->ring, fds, 2));

	EXPECT_EQ(100, do_splice_op(_metadata, self, self->p1[1], NO_OFF,
				    0, 200, 100, SPLICE_F_FD_IN_FIXED, 0));
	EXPECT_EQ(100, pipe_bytes(self->p1[0]));
	EXPECT_EQ(0, lseek(self->file, 0, SEEK_CUR));

	/* registered pipe read end as input */
	EXPECT_EQ(100, do_splice_op(_metadata, self, self->p2[1], NO_OFF,
				    1, NO_OFF, 100, SPLICE_F_FD_IN_FIXED, 0));
	EXPECT_EQ(0, pipe_bytes(self->p1[0]));
	check_pipe(_metadata, self->p2[0], self->pattern + 200, 100, "p2");

	/* registered file with f_pos: the shared file's f_pos moves */
	ASSERT_EQ(3000, lseek(self->file, 3000, SEEK_SET));
	EXPECT_EQ(40, do_splice_op(_metadata, self, self->p1[1], NO_OFF,
				   0, NO_OFF, 40, SPLICE_F_FD_IN_FIXED, 0));
	check_pipe(_metadata, self->p1[0], self->pattern + 3000, 40, "p1");
	EXPECT_EQ(3040, lseek(self->file, 0, SEEK_CUR));
}

/* IOSQE_FIXED_FILE: sqe->fd (the output) is a registered file index. */
TEST_F(splice_tee, fixed_output)
{
	int fds[] = { self->p1[1], self->file };
	unsigned char *src = self->pattern + 2048;

	ASSERT_EQ(0, iou_register_files(&self->ring, fds, 2));

	EXPECT_EQ(64, do_splice_op(_metadata, self, 0, NO_OFF, self->file,
				   300, 64, 0, IOSQE_FIXED_FILE));
	check_pipe(_metadata, self->p1[0], self->pattern + 300, 64, "p1");

	fill_pipe(_metadata, self->p2[1], src, 32);
	EXPECT_EQ(32, do_splice_op(_metadata, self, 1, 10, self->p2[0],
				   NO_OFF, 32, 0, IOSQE_FIXED_FILE));
	EXPECT_EQ(0, pipe_bytes(self->p2[0]));
	expect_file_data(_metadata, self->file, 10, src, 32);
	expect_file_data(_metadata, self->file, 0, self->pattern, 10);
	expect_file_data(_metadata, self->file, 42, self->pattern + 42, 100);
}

/* Both ends registered; slots filled and replaced via FILES_UPDATE. */
TEST_F(splice_tee, fixed_both)
{
	int sparse[] = { -1, -1, -1, -1 };
	int upd[] = { self->file, self->p1[1] };

	ASSERT_EQ(0, iou_register_files(&self->ring, sparse, 4));
	ASSERT_EQ(2, iou_update_files(&self->ring, 2, upd, 2));

	EXPECT_EQ(96, do_splice_op(_metadata, self, 3, NO_OFF, 2,
				   FILE_SIZE - 96, 96, SPLICE_F_FD_IN_FIXED,
				   IOSQE_FIXED_FILE));
	check_pipe(_metadata, self->p1[0], self->pattern + FILE_SIZE - 96,
		   96, "p1");

	/* point slot 3 at the other pipe */
	ASSERT_EQ(1, iou_update_files(&self->ring, 3, &self->p2[1], 1));
	EXPECT_EQ(8, do_splice_op(_metadata, self, 3, NO_OFF, 2, 0, 8,
				  SPLICE_F_FD_IN_FIXED, IOSQE_FIXED_FILE));
	EXPECT_EQ(0, pipe_bytes(self->p1[0]));
	check_pipe(_metadata, self->p2[0], self->pattern, 8, "p2");
	EXPECT_EQ(0, lseek(self->file, 0, SEEK_CUR));
}

/* tee with a registered input, a registered output, and both. */
TEST_F(splice_tee, tee_fixed)
{
	unsigned char want[3 * 128];
	unsigned char *src = self->pattern + 50;
	int fds[] = { self->p1[0], self->p2[1] };
	int i;

	ASSERT_EQ(0, iou_register_files(&self->ring, fds, 2));
	fill_pipe(_metadata, self->p1[1], src, 128);

	EXPECT_EQ(128, do_tee_op(_metadata, self, self->p2[1], 0, 128,
				 SPLICE_F_FD_IN_FIXED, 0));
	EXPECT_EQ(128, do_tee_op(_metadata, self, 1, self->p1[0], 128,
				 0, IOSQE_FIXED_FILE));
	EXPECT_EQ(128, do_tee_op(_metadata, self, 1, 0, 128,
				 SPLICE_F_FD_IN_FIXED, IOSQE_FIXED_FILE));

	for (i = 0; i < 3; i++)
		memcpy(want + i * 128, src, 128);
	check_pipe(_metadata, self->p2[0], want, sizeof(want), "p2");
	check_pipe(_metadata, self->p1[0], src, 128, "p1");
}

/* A complete splice/tee lets the linked request run normally. */
TEST_F(splice_tee, full_count_keeps_link)
{
	int res[2];

	queue_splice(_metadata, self, 1, self->p1[1], NO_OFF, self->file, 0,
		     100, 0, IOSQE_IO_LINK);
	queue_nop(_metadata, self, 2);
	run_queued(_metadata, self, 2, res);
	EXPECT_EQ(100, res[0]);
	EXPECT_EQ(0, res[1]);

	queue_tee(_metadata, self, 1, self->p2[1], self->p1[0], 100, 0,
		  IOSQE_IO_LINK);
	queue_nop(_metadata, self, 2);
	run_queued(_metadata, self, 2, res);
	EXPECT_EQ(100, res[0]);
	EXPECT_EQ(0, res[1]);

	check_pipe(_metadata, self->p2[0], self->pattern, 100, "p2");
	check_pipe(_metadata, self->p1[0], self->pattern, 100, "p1");
}

/* A short splice counts as a failure for IOSQE_IO_LINK. */
TEST_F(splice_tee, short_splice_breaks_link)
{
	unsigned char *src = self->pattern + 123;
	int res[2];

	/* pipe input: 100 bytes then EOF (write end closed) */
	fill_pipe(_metadata, self->p1[1], src, 100);
	ASSERT_EQ(0, close(self->p1[1]));
	self->p1[1] = -1;

	queue_splice(_metadata, self, 1, self->p2[1], NO_OFF, self->p1[0],
		     NO_OFF, 200, 0, IOSQE_IO_LINK);
	queue_nop(_metadata, self, 2);
	run_queued(_metadata, self, 2, res);
	EXPECT_EQ(100, res[0]);
	EXPECT_EQ(-ECANCELED, res[1]);
	check_pipe(_metadata, self->p2[0], src, 100, "p2");

	/* file input: only 96 bytes left before EOF */
	queue_splice(_metadata, self, 1, self->p2[1], NO_OFF, self->file,
		     FILE_SIZE - 96, 200, 0, IOSQE_IO_LINK);
	queue_nop(_metadata, self, 2);
	run_queued(_metadata, self, 2, res);
	EXPECT_EQ(96, res[0]);
	EXPECT_EQ(-ECANCELED, res[1]);
	check_pipe(_metadata, self->p2[0], self->pattern + FILE_SIZE - 96,
		   96, "p2");

	/* at EOF: 0 bytes is short too */
	queue_splice(_metadata, self, 1, self->p2[1], NO_OFF, self->file,
		     FILE_SIZE, 200, 0, IOSQE_IO_LINK);
	queue_nop(_metadata, self, 2);
	run_queued(_metadata, self, 2, res);
	EXPECT_EQ(0, res[0]);
	EXPECT_EQ(-ECANCELED, res[1]);
	EXPECT_EQ(0, pipe_bytes(self->p2[0]));
}

/* Same for tee: fewer bytes than asked fails the link. */
TEST_F(splice_tee, short_tee_breaks_link)
{
	unsigned char *src = self->pattern + 321;
	int res[2];

	fill_pipe(_metadata, self->p1[1], src, 100);
	ASSERT_EQ(0, close(self->p1[1]));
	self->p1[1] = -1;

	queue_tee(_metadata, self, 1, self->p2[1], self->p1[0], 200, 0,
		  IOSQE_IO_LINK);
	queue_nop(_metadata, self, 2);
	run_queued(_metadata, self, 2, res);
	EXPECT_EQ(100, res[0]);
	EXPECT_EQ(-ECANCELED, res[1]);
	check_pipe(_metadata, self->p2[0], src, 100, "p2");
	check_pipe(_metadata, self->p1[0], src, 100, "p1");
}

/* A descriptor that is not open, as input or as output. */
TEST_F(splice_tee, bad_fd)
{
	int bad = closed_fd(_metadata);

	fill_pipe(_metadata, self->p1[1], self->pattern, 10);

	EXPECT_EQ(-EBADF, do_splice_op(_metadata, self, self->p2[1], NO_OFF,
				       bad, NO_OFF, 10, 0, 0));
	EXPECT_EQ(-EBADF, do_splice_op(_metadata, self, bad, NO_OFF,
				       self->p1[0], NO_OFF, 10, 0, 0));
	EXPECT_EQ(-EBADF, do_tee_op(_metadata, self, self->p2[1], bad,
				    10, 0, 0));
	EXPECT_EQ(-EBADF, do_tee_op(_metadata, self, bad, self->p1[0],
				    10, 0, 0));

	EXPECT_EQ(0, pipe_bytes(self->p2[0]));
	check_pipe(_metadata, self->p1[0], self->pattern, 10, "p1");
}

/* Registered index beyond the table, an empty slot, or no table at all. */
TEST_F(splice_tee, fixed_index_invalid)
{
	int fds[] = { self->file, self->p1[1] };
	int empty = -1;

	ASSERT_EQ(0, iou_register_files(&self->ring, fds, 2));

	EXPECT_EQ(-EBADF, do_splice_op(_metadata, self, self->p1[1], NO_OFF,
				       2, 0, 16, SPLICE_F_FD_IN_FIXED, 0));
	EXPECT_EQ(-EBADF, do_splice_op(_metadata, self, self->p1[1], NO_OFF,
				       1000, 0, 16, SPLICE_F_FD_IN_FIXED, 0));
	EXPECT_EQ(-EBADF, do_splice_op(_metadata, self, 2, NO_OFF,
				       self->file, 0, 16, 0,
				       IOSQE_FIXED_FILE));
	EXPECT_EQ(-EBADF, do_tee_op(_metadata, self, self->p2[1], 2, 16,
				    SPLICE_F_FD_IN_FIXED, 0));
	EXPECT_EQ(-EBADF, do_tee_op(_metadata, self, 5, self->p1[0], 16,
				    0, IOSQE_FIXED_FILE));

	/* emptied slot */
	ASSERT_EQ(1, iou_update_files(&self->ring, 1, &empty, 1));
	EXPECT_EQ(-EBADF, do_splice_op(_metadata, self, 1, NO_OFF,
				       0, 0, 16, SPLICE_F_FD_IN_FIXED,
				       IOSQE_FIXED_FILE));

	/* no table */
	ASSERT_EQ(0, iou_unregister_files(&self->ring));
	EXPECT_EQ(-EBADF, do_splice_op(_metadata, self, self->p1[1], NO_OFF,
				       0, 0, 16, SPLICE_F_FD_IN_FIXED, 0));

	EXPECT_EQ(0, pipe_bytes(self->p1[0]));
	EXPECT_EQ(0, pipe_bytes(self->p2[0]));
	EXPECT_EQ(0, lseek(self->file, 0, SEEK_CUR));
}

/* Any offset other than -1 on a pipe end, even 0, is -ESPIPE. */
TEST_F(splice_tee, offset_on_pipe)
{
	fill_pipe(_metadata, self->p1[1], self->pattern, 10);

	/* file -> pipe, offset on the output pipe */
	EXPECT_EQ(-ESPIPE, do_splice_op(_metadata, self, self->p2[1], 0,
					self->file, 0, 10, 0, 0));
	/* pipe -> file, offset on the input pipe */
	EXPECT_EQ(-ESPIPE, do_splice_op(_metadata, self, self->file, 0,
					self->p1[0], 0, 10, 0, 0));
	EXPECT_EQ(-ESPIPE, do_splice_op(_metadata, self, self->file, NO_OFF,
					self->p1[0], 5, 10, 0, 0));
	/* pipe -> pipe, either side */
	EXPECT_EQ(-ESPIPE, do_splice_op(_metadata, self, self->p2[1], NO_OFF,
					self->p1[0], 0, 10, 0, 0));
	EXPECT_EQ(-ESPIPE, do_splice_op(_metadata, self, self->p2[1], 0,
					self->p1[0], NO_OFF, 10, 0, 0));

	EXPECT_EQ(0, pipe_bytes(self->p2[0]));
	check_pipe(_metadata, self->p1[0], self->pattern, 10, "p1");
	expect_file_data(_metadata, self->file, 0, self->pattern, FILE_SIZE);
	EXPECT_EQ(0, lseek(self->file, 0, SEEK_CUR));
}

/* Only SPLICE_F_{MOVE,NONBLOCK,MORE,GIFT} and SPLICE_F_FD_IN_FIXED. */
TEST_F(splice_tee, unknown_flags)
{
	EXPECT_EQ(-EINVAL, do_splice_op(_metadata, self, self->p1[1], NO_OFF,
					self->file, 0, 32, 0x100, 0));
	EXPECT_EQ(-EINVAL, do_splice_op(_metadata, self, self->p1[1], NO_OFF,
					self->file, 0, 32, 0x10, 0));
	EXPECT_EQ(0, pipe_bytes(self->p1[0]));

	/* the known ones are accepted */
	EXPECT_EQ(32, do_splice_op(_metadata, self, self->p1[1], NO_OFF,
				   self->file, 0, 32,
				   SPLICE_F_MOVE | SPLICE_F_MORE |
				   SPLICE_F_NONBLOCK | SPLICE_F_GIFT, 0));
	EXPECT_EQ(32, pipe_bytes(self->p1[0]));

	EXPECT_EQ(-EINVAL, do_tee_op(_metadata, self, self->p2[1],
				     self->p1[0], 32, 0x100, 0));
	EXPECT_EQ(0, pipe_bytes(self->p2[0]));
	check_pipe(_metadata, self->p1[0], self->pattern, 32, "p1");
}

/*
 * io_tee_prep() wants both offset fields to be 0: unlike SPLICE, -1
 * ("no offset") is rejected too.
 */
TEST_F(splice_tee, tee_offsets_rejected)
{
	struct io_uring_sqe *sqe;

	fill_pipe(_metadata, self->p1[1], self->pattern, 64);

	sqe = queue_tee(_metadata, self, 1, self->p2[1], self->p1[0], 64, 0, 0);
	sqe->off = NO_OFF;
	EXPECT_EQ(-EINVAL, run_one(_metadata, self));

	sqe = queue_tee(_metadata, self, 1, self->p2[1], self->p1[0], 64, 0, 0);
	sqe->splice_off_in = NO_OFF;
	EXPECT_EQ(-EINVAL, run_one(_metadata, self));

	sqe = queue_tee(_metadata, self, 1, self->p2[1], self->p1[0], 64, 0, 0);
	sqe->off = 1;
	EXPECT_EQ(-EINVAL, run_one(_metadata, self));

	sqe = queue_tee(_metadata, self, 1, self->p2[1], self->p1[0], 64, 0, 0);
	sqe->splice_off_in = 1;
	EXPECT_EQ(-EINVAL, run_one(_metadata, self));

	EXPECT_EQ(0, pipe_bytes(self->p2[0]));
	EXPECT_EQ(64, pipe_bytes(self->p1[0]));

	/* both 0: fine */
	EXPECT_EQ(64, do_tee_op(_metadata, self, self->p2[1], self->p1[0],
				64, 0, 0));
	check_pipe(_metadata, self->p2[0], self->pattern, 64, "p2");
	check_pipe(_metadata, self->p1[0], self->pattern, 64, "p1");
}

/* The same pipe as input and output. */
TEST_F(splice_tee, same_pipe)
{
	fill_pipe(_metadata, self->p1[1], self->pattern, 64);

	EXPECT_EQ(-EINVAL, do_splice_op(_metadata, self, self->p1[1], NO_OFF,
					self->p1[0], NO_OFF, 64, 0, 0));
	EXPECT_EQ(-EINVAL, do_tee_op(_metadata, self, self->p1[1],
				     self->p1[0], 64, 0, 0));

	check_pipe(_metadata, self->p1[0], self->pattern, 64, "p1");
}

/* Splicing into an O_APPEND file is refused, with or without offset. */
TEST_F(splice_tee, append_output)
{
	int out = tmp_file(_metadata);

	ASSERT_EQ(0, fcntl(out, F_SETFL, O_APPEND));
	fill_pipe(_metadata, self->p1[1], self->pattern, 64);

	EXPECT_EQ(-EINVAL, do_splice_op(_metadata, self, out, NO_OFF,
					self->p1[0], NO_OFF, 64, 0, 0));
	EXPECT_EQ(-EINVAL, do_splice_op(_metadata, self, out, 0,
					self->p1[0], NO_OFF, 64, 0, 0));

	EXPECT_EQ(0, file_size(_metadata, out));
	check_pipe(_metadata, self->p1[0], self->pattern, 64, "p1");
	close(out);
}

/* Input must be readable and output writable. */
TEST_F(splice_tee, wrong_direction)
{
	fill_pipe(_metadata, self->p1[1], self->pattern, 16);

	/* write end as input */
	EXPECT_EQ(-EBADF, do_splice_op(_metadata, self, self->p2[1], NO_OFF,
				       self->p1[1], NO_OFF, 16, 0, 0));
	/* read end as output */
	EXPECT_EQ(-EBADF, do_splice_op(_metadata, self, self->p2[0], NO_OFF,
				       self->p1[0], NO_OFF, 16, 0, 0));
	EXPECT_EQ(-EBADF, do_tee_op(_metadata, self, self->p2[1],
				    self->p1[1], 16, 0, 0));
	EXPECT_EQ(-EBADF, do_tee_op(_metadata, self, self->p2[0],
				    self->p1[0], 16, 0, 0));

	EXPECT_EQ(0, pipe_bytes(self->p2[0]));
	check_pipe(_metadata, self->p1[0], self->pattern, 16, "p1");
}

/* SPLICE needs a pipe on at least one side, TEE on both. */
TEST_F(splice_tee, no_pipe)
{
	int out = tmp_file(_metadata);

	EXPECT_EQ(-EINVAL, do_splice_op(_metadata, self, out, 0,
					self->file, 0, 16, 0, 0));
	EXPECT_EQ(0, file_size(_metadata, out));

	EXPECT_EQ(-EINVAL, do_tee_op(_metadata, self, self->p1[1],
				     self->file, 16, 0, 0));
	EXPECT_EQ(0, pipe_bytes(self->p1[0]));

	fill_pipe(_metadata, self->p1[1], self->pattern, 16);
	EXPECT_EQ(-EINVAL, do_tee_op(_metadata, self, out, self->p1[0],
				     16, 0, 0));
	EXPECT_EQ(0, file_size(_metadata, out));
	check_pipe(_metadata, self->p1[0], self->pattern, 16, "p1");
	close(out);
}

TEST_HARNESS_MAIN
