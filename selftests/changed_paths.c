// SPDX-License-Identifier: GPL-2.0
/*
 * Paths that patches 0001-0007 (drain), 0008 (io-wq) and 0018 (poll) change and
 * that the splice and ioctl tests do not reach (found by the coverage
 * report, ./run_selftests.sh --coverage):
 *
 *  - a drained request still deferred when its ring is closed, or when its
 *    task exits with the ring open: io_cancel_defer_files() must cancel it
 *    and drop its file, so the pipe it was to write sees its last writer
 *    go (EOF);
 *  - IORING_OP_POLL_ADD, single and multishot, and its removal: the poll
 *    arming that 0018 changed for every opcode;
 *  - io-wq's hashed work: buffered writes to one regular file are hashed
 *    by inode and run one at a time. io-wq starts a second worker for
 *    them only when none is running, so reads on empty pipes make
 *    workers first, which are idle (free) once the reads are fed: each
 *    write's enqueue wakes one, which finds the hash busy (an O_DSYNC
 *    write on the guest's ext4 disk) and waits on it (io_wq_hash_wake()
 *    wakes it). Every read must complete with its byte, every write with
 *    its count, and the file must hold the writes.
 */

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "iou_helpers.h"
#include "../kselftest.h"

#define WAIT_MS		10000
#define UD_READ		1
#define UD_DRAINED	2
#define HASHED_WRITES	64
#define HASHED_LEN	16384
#define HASHED_READERS	4
#define UD_READER	1000

/* Wait until @fd reads EOF: 0, or -ETIME after @ms. */
static int wait_eof(int fd, int ms)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	char c;

	if (poll(&pfd, 1, ms) != 1)
		return -ETIME;
	return read(fd, &c, 1) == 0 ? 0 : -EIO;
}

/*
 * A read waiting on an empty pipe, then a drained write to @target_w,
 * deferred behind the read; @target_w is closed, so the request holds the
 * pipe's last writer. 0 or -errno.
 */
static int submit_deferred(struct iou_ring *ring, int empty[2], int target_w)
{
	struct io_uring_sqe *sqe;
	static char buf[8];
	int ret;

	if (pipe(empty))
		return -errno;
	sqe = iou_get_sqe(ring);
	sqe->opcode = IORING_OP_READ;
	sqe->fd = empty[0];
	sqe->addr = (unsigned long)buf;
	sqe->len = sizeof(buf);
	sqe->user_data = UD_READ;
	sqe = iou_get_sqe(ring);
	sqe->opcode = IORING_OP_WRITE;
	sqe->fd = target_w;
	sqe->addr = (unsigned long)"x";
	sqe->len = 1;
	sqe->flags = IOSQE_IO_DRAIN;
	sqe->user_data = UD_DRAINED;
	ret = iou_submit_and_wait(ring, 0);
	close(target_w);
	if (ret != 2)
		return ret < 0 ? ret : -EIO;
	return 0;
}

/* The ring closed with the drained write deferred: cancelled, file put. */
static bool deferred_at_ring_close(void)
{
	struct iou_ring ring;
	struct iou_cqe cqe;
	int empty[2], target[2], ret;

	if (iou_setup(&ring, 8, 0) || pipe(target))
		return false;
	ret = submit_deferred(&ring, empty, target[1]);
	if (ret) {
		ksft_print_msg("submit: %s\n", strerror(-ret));
		return false;
	}
	ret = iou_wait_cqe_timeout(&ring, &cqe, 300);
	if (ret != -ETIME) {
		ksft_print_msg("a CQE before the pipe was fed: %llu res %d\n",
			       (unsigned long long)cqe.user_data, cqe.res);
		return false;
	}
	iou_exit(&ring);
	ret = wait_eof(target[0], WAIT_MS);
	if (ret)
		ksft_print_msg("the drained write's pipe never saw EOF: %s\n",
			       strerror(-ret));
	close(target[0]);
	close(empty[0]);
	close(empty[1]);
	return !ret;
}

/* The task exits with the ring open and the drained write deferred. */
static bool deferred_at_task_exit(void)
{
	int target[2], status, ret = -1;
	pid_t pid;

	if (pipe(target))
		return false;
	pid = fork();
	if (pid < 0)
		return false;
	if (!pid) {
		struct iou_ring ring;
		int empty[2];

		close(target[0]);
		if (iou_setup(&ring, 8, 0))
			_exit(2);
		_exit(submit_deferred(&ring, empty, target[1]) ? 3 : 0);
	}
	close(target[1]);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status)) {
		ksft_print_msg("the child failed to submit (status %#x)\n", status);
	} else {
		ret = wait_eof(target[0], WAIT_MS);
		if (ret)
			ksft_print_msg("the drained write's pipe never saw EOF after the task exited: %s\n",
				       strerror(-ret));
	}
	close(target[0]);
	return !ret;
}

/* POLL_ADD, single and multishot, and POLL_REMOVE. */
static bool poll_add(void)
{
	struct io_uring_sqe *sqe;
	struct iou_ring ring;
	struct iou_cqe cqe;
	int p[2], got = 0, ret;
	bool ok = true;

	if (iou_setup(&ring, 8, 0) || pipe(p))
		return false;
	sqe = iou_get_sqe(&ring);
	sqe->opcode = IORING_OP_POLL_ADD;
	sqe->fd = p[0];
	sqe->poll32_events = POLLIN;
	sqe->user_data = 1;
	sqe = iou_get_sqe(&ring);
	sqe->opcode = IORING_OP_POLL_ADD;
	sqe->fd = p[0];
	sqe->poll32_events = POLLIN;
	sqe->len = IORING_POLL_ADD_MULTI;
	sqe->user_data = 2;
	if (iou_submit_and_wait(&ring, 0) != 2)
		return false;
	if (iou_wait_cqe_timeout(&ring, &cqe, 300) != -ETIME) {
		ksft_print_msg("a poll completed on an empty pipe\n");
		ok = false;
	}
	if (write(p[1], "x", 1) != 1)
		return false;
	/* the single shot once, the multishot once with IORING_CQE_F_MORE */
	while (got < 2 && !iou_wait_cqe_timeout(&ring, &cqe, WAIT_MS)) {
		got++;
		if (!(cqe.res & POLLIN) ||
		    (cqe.user_data == 2) != !!(cqe.flags & IORING_CQE_F_MORE)) {
			ksft_print_msg("poll %llu: res %#x flags %#x\n",
				       (unsigned long long)cqe.user_data, cqe.res, cqe.flags);
			ok = false;
		}
	}
	if (got != 2) {
		ksft_print_msg("%d poll CQEs after the write, not 2\n", got);
		ok = false;
	}
	sqe = iou_get_sqe(&ring);
	sqe->opcode = IORING_OP_POLL_REMOVE;
	sqe->addr = 2;
	sqe->user_data = 3;
	if (iou_submit_and_wait(&ring, 0) != 1)
		return false;
	/* the removal's CQE and the multishot's last, -ECANCELED */
	for (got = 0; got < 2; got++) {
		ret = iou_wait_cqe_timeout(&ring, &cqe, WAIT_MS);
		if (ret || (cqe.user_data == 3 && cqe.res) ||
		    (cqe.user_data == 2 && (cqe.res != -ECANCELED ||
					    (cqe.flags & IORING_CQE_F_MORE)))) {
			ksft_print_msg("removal: ret %d, CQE %llu res %d flags %#x\n", ret,
				       (unsigned long long)cqe.user_data, cqe.res, cqe.flags);
			ok = false;
			break;
		}
	}
	iou_exit(&ring);
	close(p[0]);
	close(p[1]);
	return ok;
}

/* Hashed writes to one file, all at once on io-wq. */
static bool hashed_writes(void)
{
	static unsigned char buf[HASHED_WRITES][HASHED_LEN];
	static unsigned char back[HASHED_LEN];
	static char rbuf[HASHED_READERS];
	struct io_uring_sqe *sqe;
	char path[64];
	struct iou_ring ring;
	struct iou_cqe cqe;
	int fd, i, got = 0, p[HASHED_READERS][2];
	bool ok = true;

	/*
	 * O_DSYNC on the guest's ext4 disk (run_selftests.sh mounts one),
	 * so that each write holds the hash long enough for the others to
	 * find it busy; /tmp without it.
	 */
	snprintf(path, sizeof(path), "%s/changed_paths.XXXXXX",
		 access("/mnt/ext4/lost+found", F_OK) ? "/tmp" : "/mnt/ext4");
	fd = mkostemp(path, O_DSYNC);
	if (fd < 0 || iou_setup(&ring, HASHED_WRITES + HASHED_READERS, 0))
		return false;
	unlink(path);
	/* workers of their own, blocked in read(2) until fed below */
	for (i = 0; i < HASHED_READERS; i++) {
		if (pipe(p[i]))
			return false;
		sqe = iou_get_sqe(&ring);
		sqe->opcode = IORING_OP_READ;
		sqe->fd = p[i][0];
		sqe->addr = (unsigned long)&rbuf[i];
		sqe->len = 1;
		sqe->flags = IOSQE_ASYNC;
		sqe->user_data = UD_READER + i;
	}
	if (iou_submit_and_wait(&ring, 0) != HASHED_READERS)
		return false;
	usleep(100000);
	for (i = 0; i < HASHED_READERS; i++) {
		if (write(p[i][1], "r", 1) != 1)
			return false;
	}
	while (got < HASHED_READERS && !iou_wait_cqe_timeout(&ring, &cqe, WAIT_MS)) {
		got++;
		if (cqe.user_data < UD_READER || cqe.res != 1) {
			ksft_print_msg("read %llu: %d\n", (unsigned long long)cqe.user_data,
				       cqe.res);
			ok = false;
		}
	}
	for (i = 0; i < HASHED_WRITES; i++) {
		memset(buf[i], 'a' + i % 26, HASHED_LEN);
		sqe = iou_get_sqe(&ring);
		sqe->opcode = IORING_OP_WRITE;
		sqe->fd = fd;
		sqe->off = (__u64)i * HASHED_LEN;
		sqe->addr = (unsigned long)buf[i];
		sqe->len = HASHED_LEN;
		sqe->flags = IOSQE_ASYNC;
		sqe->user_data = i;
	}
	if (iou_submit_and_wait(&ring, 0) != HASHED_WRITES)
		return false;
	while (got < HASHED_WRITES + HASHED_READERS &&
	       !iou_wait_cqe_timeout(&ring, &cqe, WAIT_MS)) {
		got++;
		if (cqe.res != HASHED_LEN) {
			ksft_print_msg("write %llu: %d\n", (unsigned long long)cqe.user_data,
				       cqe.res);
			ok = false;
		}
	}
	if (got != HASHED_WRITES + HASHED_READERS) {
		ksft_print_msg("%d of %d writes and reads completed\n", got,
			       HASHED_WRITES + HASHED_READERS);
		ok = false;
	}
	for (i = 0; ok && i < HASHED_WRITES; i++) {
		if (pread(fd, back, HASHED_LEN, (off_t)i * HASHED_LEN) != HASHED_LEN ||
		    memcmp(back, buf[i], HASHED_LEN)) {
			ksft_print_msg("the file's block %d is not what was written\n", i);
			ok = false;
		}
	}
	iou_exit(&ring);
	close(fd);
	for (i = 0; i < HASHED_READERS; i++) {
		close(p[i][0]);
		close(p[i][1]);
	}
	return ok;
}

int main(void)
{
	static const struct {
		const char *name;
		bool (*run)(void);
	} cases[] = {
		{ "drained request deferred at ring close: cancelled, file put", deferred_at_ring_close },
		{ "drained request deferred at task exit: cancelled, file put", deferred_at_task_exit },
		{ "POLL_ADD single and multishot, POLL_REMOVE", poll_add },
		{ "hashed writes to one file on io-wq", hashed_writes },
	};
	struct iou_ring probe;
	unsigned int i;

	ksft_print_header();
	if (iou_setup(&probe, 1, 0))
		ksft_exit_skip("io_uring unavailable\n");
	if (!(probe.features & IORING_FEAT_EXT_ARG))
		ksft_exit_skip("no IORING_FEAT_EXT_ARG to wait with a timeout\n");
	iou_exit(&probe);
	ksft_set_plan(ARRAY_SIZE(cases));
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		if (cases[i].run())
			ksft_test_result_pass("%s\n", cases[i].name);
		else
			ksft_test_result_fail("%s\n", cases[i].name);
	}
	ksft_finished();
}
