// SPDX-License-Identifier: GPL-2.0
/*
 * IORING_OP_SPLICE from a regular file to a socket: sendfile(2) in one sqe
 * (the series' io_sendfile()), compared with sendfile(2) itself.
 *
 * Every case of the table runs three ways, each in a fresh child process
 * on fresh files and sockets: the ring as is, the ring with IOSQE_ASYNC
 * (io-wq's blocking call) and sendfile(2). The result, the input file's
 * position afterwards and the bytes the peer received (their number and
 * that each is the file's byte at that offset) must be the same for all
 * three. With the series, the plain ring must have had no io-wq worker
 * when the file was cached (whether or not it waited for room in the
 * socket on poll), and a worker when it was not or when the socket is
 * one the inline try refuses (SOCK_SEQPACKET, kTLS); IOSQE_ASYNC always
 * has one. Cases that only the ring has (an output offset, splice flags)
 * compare with the result the series documents.
 *
 * Then what sendfile(2) cannot show the same way: a request cancelled,
 * or ended by a linked timeout, after it sent part of the file, and a
 * file truncated while the request waits for room. The CQE must say
 * exactly what reached the socket, and the file position (off_in -1)
 * must have moved by that and no more. (The linked timeout with the ring
 * as is only: with IOSQE_ASYNC 6.12 arms it once the blocking call is
 * over, so it cannot end it.)
 *
 * The files are created in /mnt/ext4 (SPLICE_FILE_DIR overrides it), an
 * ext4 mount run_selftests.sh gives its guest; elsewhere every case skips,
 * as on a kernel without the series (iou_series_absent()), where the pair
 * gives -EINVAL.
 */

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <unistd.h>
#include <netinet/tcp.h>
#include <linux/tls.h>

#include "iou_helpers.h"
#include "sendfile_helpers.h"
#include "../kselftest_harness.h"

#define EXT4_DIR		"/mnt/ext4"
#define EXT4_SUPER_MAGIC_	0xEF53
#define OFF_POS			(-1LL)
#define NO_OFF			((__u64)-1)
#define WAIT_MS			20000
#define PREFILL_BYTE		0xee
#define SPLICE_F_MORE_		0x04
#define SPLICE_F_FD_IN_FIXED_	(1U << 31)
#ifndef SOL_TLS
#define SOL_TLS			282
#endif
#ifndef TCP_ULP
#define TCP_ULP			31
#endif

enum way { WAY_RING, WAY_ASYNC, WAY_SYSCALL, NR_WAYS };
static const char * const way_name[] = { "ring", "IOSQE_ASYNC", "sendfile(2)" };

enum reader {
	READ_NOW,	/* a thread reads from the start */
	READ_LATE,	/* a thread reads after 300 ms: the socket fills first */
	READ_AFTER,	/* nobody reads until the request completed */
};

struct sf_case {
	const char *name;
	size_t file_size;
	bool uncached;
	long long off;		/* OFF_POS: the file position */
	long long start_pos;	/* the file position before */
	unsigned int len;
	bool tcp;		/* else an AF_UNIX stream pair */
	/* sockets the inline try refuses: io-wq must give sendfile(2)'s result */
	bool seqpacket;		/* an AF_UNIX SOCK_SEQPACKET pair */
	bool ktls;		/* TCP with kTLS: TLS_TX on *out, TLS_RX on *peer */
	bool nonblock;		/* the socket is O_NONBLOCK */
	enum reader reader;
	bool wronly;		/* the input opened O_WRONLY */
	bool shut_wr;		/* shutdown(SHUT_WR) of the socket first */
	bool prefill;		/* the socket filled up first */
	bool reg_in, reg_out;	/* registered files */
	/* ring only: an output offset or splice flags, and what they give */
	__u64 off_out;
	unsigned int sflags;
	bool ring_only;
	int ring_res;
};

/* What one way saw, written by its child. */
struct sf_result {
	bool ran;
	char why[160];
	long long res;
	long long pos;		/* the file position afterwards */
	long long received;	/* bytes from the file the peer got */
	bool content_ok;
	int workers;
};

static char file_path[PATH_MAX];

static const char *sendfile_absent(void)
{
	const char *dir = getenv("SPLICE_FILE_DIR") ?: EXT4_DIR;
	static char why[256];
	struct statfs sfs;
	const char *absent;

	if (statfs(dir, &sfs) || sfs.f_type != EXT4_SUPER_MAGIC_) {
		snprintf(why, sizeof(why), "%s is not an ext4 mount", dir);
		return why;
	}
	absent = iou_series_absent();
	if (absent) {
		snprintf(why, sizeof(why),
			 "%s: a regular file to a socket gives -EINVAL", absent);
		return why;
	}
	snprintf(file_path, sizeof(file_path), "%s/splice_sendfile.%d", dir,
		 getpid());
	return NULL;
}

/* The file, as sendfile_cached_file() leaves it */
static int make_file(size_t size)
{
	int fd = sendfile_cached_file(file_path, size);

	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

struct reader_arg {
	int fd;
	enum reader mode;
	long long prefill;	/* bytes of PREFILL_BYTE first */
	long long start;	/* the file offset of the first file byte */
	long long got;
	bool ok;
};

static void read_peer(struct reader_arg *r)
{
	static __thread unsigned char buf[65536];
	long long seen = 0;

	r->got = 0;
	r->ok = true;
	for (;;) {
		ssize_t n = read(r->fd, buf, sizeof(buf));
		ssize_t i;

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		for (i = 0; i < n; i++, seen++) {
			if (seen < r->prefill) {
				if (buf[i] != PREFILL_BYTE)
					r->ok = false;
				continue;
			}
			if (buf[i] != sendfile_pattern(r->start + r->got))
				r->ok = false;
			r->got++;
		}
	}
}

static void *reader_thread(void *p)
{
	struct reader_arg *r = p;

	if (r->mode == READ_LATE)
		usleep(300 * 1000);
	read_peer(r);
	return NULL;
}

/*
 * kTLS on a connected TCP pair: @out encrypts (TLS_TX), @peer decrypts
 * (TLS_RX) with the same fixed AES-GCM-128 key, so the reader sees the
 * file's bytes. tls_sw_sendmsg() is not tcp_sendmsg(), so the inline try
 * refuses the socket.
 */
static int ktls_pair(int out, int peer)
{
	struct tls12_crypto_info_aes_gcm_128 ci = {
		.info.version = TLS_1_2_VERSION,
		.info.cipher_type = TLS_CIPHER_AES_GCM_128,
	};

	memset(ci.key, 0x11, sizeof(ci.key));
	memset(ci.iv, 0x22, sizeof(ci.iv));
	memset(ci.salt, 0x33, sizeof(ci.salt));
	if (setsockopt(out, SOL_TCP, TCP_ULP, "tls", sizeof("tls")) ||
	    setsockopt(peer, SOL_TCP, TCP_ULP, "tls", sizeof("tls")) ||
	    setsockopt(out, SOL_TLS, TLS_TX, &ci, sizeof(ci)) ||
	    setsockopt(peer, SOL_TLS, TLS_RX, &ci, sizeof(ci)))
		return -errno;
	return 0;
}

/* The inline try refuses these sockets (splice_nowait_file()): io-wq sends */
static bool inline_refuses_socket(const struct sf_case *c)
{
	return c->seqpacket || c->ktls;
}

/* A socket pair: *out the end sendfile writes to, *peer the other. */
static int make_sockets(const struct sf_case *c, int *out, int *peer)
{
	int sv[2], ret;

	if (c->tcp || c->ktls) {
		ret = iou_tcp_pair(out, peer, 65536);
		if (!ret && c->ktls)
			ret = ktls_pair(*out, *peer);
		return ret;
	}
	if (socketpair(AF_UNIX, c->seqpacket ? SOCK_SEQPACKET : SOCK_STREAM,
		       0, sv))
		return -errno;
	*out = sv[0];
	*peer = sv[1];
	return 0;
}

/* Fill @fd (made non-blocking for it) until it takes no more. */
static long long prefill(int fd)
{
	static unsigned char buf[4096];
	int fl = fcntl(fd, F_GETFL);
	long long total = 0;
	ssize_t n;

	memset(buf, PREFILL_BYTE, sizeof(buf));
	fcntl(fd, F_SETFL, fl | O_NONBLOCK);
	while ((n = write(fd, buf, sizeof(buf))) > 0)
		total += n;
	fcntl(fd, F_SETFL, fl);
	return total;
}

static long long ring_sendfile(struct sf_result *r, int in, int out,
			       const struct sf_case *c, bool async)
{
	struct io_uring_sqe *sqe;
	struct iou_ring ring;
	struct iou_cqe cqe;
	int fds[2] = { in, out }, ret;
	unsigned int sflags = c->sflags;
	int fd_in = in, fd_out = out;

	ret = iou_setup(&ring, 4, 0);
	if (ret) {
		snprintf(r->why, sizeof(r->why), "io_uring_setup: %d", ret);
		return LLONG_MIN;
	}
	if (c->reg_in || c->reg_out) {
		ret = iou_register_files(&ring, fds, 2);
		if (ret) {
			snprintf(r->why, sizeof(r->why), "register files: %d", ret);
			return LLONG_MIN;
		}
		if (c->reg_in) {
			fd_in = 0;
			sflags |= SPLICE_F_FD_IN_FIXED_;
		}
		if (c->reg_out)
			fd_out = 1;
	}
	sqe = iou_get_sqe(&ring);
	if (!sqe) {
		snprintf(r->why, sizeof(r->why), "no sqe");
		return LLONG_MIN;
	}
	iou_prep_splice(sqe, fd_out, c->off_out ?: NO_OFF, fd_in,
			c->off == OFF_POS ? NO_OFF : (__u64)c->off, c->len, sflags);
	if (c->reg_out)
		sqe->flags |= IOSQE_FIXED_FILE;
	if (async)
		sqe->flags |= IOSQE_ASYNC;
	sqe->user_data = 1;
	ret = iou_submit_and_wait(&ring, 0);
	if (ret != 1) {
		snprintf(r->why, sizeof(r->why), "submit: %d", ret);
		return LLONG_MIN;
	}
	ret = iou_wait_cqe_timeout(&ring, &cqe, WAIT_MS);
	if (ret) {
		snprintf(r->why, sizeof(r->why), "no CQE in %d ms", WAIT_MS);
		iou_dump_threads();
		return LLONG_MIN;
	}
	r->workers = iou_count_io_workers();
	iou_exit(&ring);
	return cqe.res;
}

/* One way of case @c, in the calling (child) process. */
static void run_way(const struct sf_case *c, enum way way, struct sf_result *r)
{
	struct reader_arg ra = { .mode = c->reader };
	pthread_t thread;
	bool threaded = c->reader != READ_AFTER;
	int in, out, peer;
	long long res;

	signal(SIGPIPE, SIG_IGN);
	in = open(file_path, c->wronly ? O_WRONLY : O_RDONLY);
	if (in < 0 || make_sockets(c, &out, &peer)) {
		snprintf(r->why, sizeof(r->why), "setup: %s", strerror(errno));
		return;
	}
	if (c->start_pos)
		lseek(in, c->start_pos, SEEK_SET);
	if (c->uncached)
		posix_fadvise(in, 0, 0, POSIX_FADV_DONTNEED);
	ra.fd = peer;
	ra.start = c->off == OFF_POS ? c->start_pos : c->off;
	if (c->prefill)
		ra.prefill = prefill(out);
	if (c->nonblock)
		fcntl(out, F_SETFL, fcntl(out, F_GETFL) | O_NONBLOCK);
	if (c->shut_wr)
		shutdown(out, SHUT_WR);
	if (threaded && pthread_create(&thread, NULL, reader_thread, &ra)) {
		snprintf(r->why, sizeof(r->why), "pthread_create failed");
		return;
	}

	r->workers = -1;
	if (way == WAY_SYSCALL) {
		off_t off = c->off;

		res = sendfile(out, in, c->off == OFF_POS ? NULL : &off, c->len);
		if (res < 0)
			res = -errno;
	} else {
		res = ring_sendfile(r, in, out, c, way == WAY_ASYNC);
		if (res == LLONG_MIN)
			return;
	}
	r->res = res;
	r->pos = lseek(in, 0, SEEK_CUR);
	shutdown(out, SHUT_WR);
	if (threaded) {
		pthread_join(thread, NULL);
	} else {
		fcntl(peer, F_SETFL, fcntl(peer, F_GETFL) | O_NONBLOCK);
		read_peer(&ra);
	}
	r->received = ra.got;
	r->content_ok = ra.ok;
	r->ran = true;
	close(in);
	close(out);
	close(peer);
}

static const struct sf_case cases[] = {
	{ "cached_16k_unix", 16384, .len = 16384 },
	{ "cached_16k_tcp", 16384, .len = 16384, .tcp = true },
	{ "cached_1m_tcp", 1 << 20, .len = 1 << 20, .tcp = true },
	{ "cached_1m_tcp_reader_late", 1 << 20, .len = 1 << 20, .tcp = true,
	  .reader = READ_LATE },
	{ "cached_1m_unix_reader_late", 1 << 20, .len = 1 << 20,
	  .reader = READ_LATE },
	{ "file_position", 65536, .off = OFF_POS, .start_pos = 1000,
	  .len = 5000 },
	{ "file_position_to_eof", 65536, .off = OFF_POS, .start_pos = 4096,
	  .len = 1 << 20, .tcp = true },
	{ "explicit_offset", 65536, .off = 4096, .start_pos = 100, .len = 8192 },
	{ "across_eof", 16384, .off = 4096, .len = 1 << 20 },
	{ "at_eof", 16384, .off = 16384, .len = 4096 },
	{ "past_eof", 16384, .off = 100000, .len = 4096 },
	{ "length_zero", 16384, .len = 0 },
	{ "empty_file", 0, .len = 4096 },
	{ "negative_offset", 16384, .off = -2, .len = 4096 },
	{ "uncached_256k", 256 << 10, .uncached = true, .len = 256 << 10,
	  .tcp = true },
	{ "uncached_1m_reader_late", 1 << 20, .uncached = true, .len = 1 << 20,
	  .reader = READ_LATE },
	{ "nonblock_full_after_some", 1 << 20, .len = 1 << 20, .nonblock = true,
	  .reader = READ_AFTER },
	{ "nonblock_full_at_once", 65536, .len = 65536, .nonblock = true,
	  .prefill = true, .reader = READ_AFTER },
	{ "input_write_only", 16384, .len = 4096, .wronly = true },
	{ "output_shut_down", 16384, .len = 4096, .shut_wr = true },
	{ "registered_input", 65536, .len = 65536, .reg_in = true },
	{ "registered_output", 65536, .len = 65536, .reg_out = true,
	  .tcp = true },
	{ "registered_both", 65536, .off = OFF_POS, .start_pos = 7,
	  .len = 65536, .reg_in = true, .reg_out = true },
	{ "unix_seqpacket", 65536, .len = 65536, .seqpacket = true },
	{ "ktls_1m", 1 << 20, .len = 1 << 20, .ktls = true },
	{ "ktls_reader_late", 1 << 20, .len = 1 << 20, .ktls = true,
	  .reader = READ_LATE },
	{ "ktls_file_position", 65536, .off = OFF_POS, .start_pos = 1000,
	  .len = 5000, .ktls = true },
	{ "output_offset", 16384, .len = 4096, .off_out = 0x1000,
	  .ring_only = true, .ring_res = -EINVAL },
	{ "splice_flag", 16384, .len = 4096, .sflags = SPLICE_F_MORE_,
	  .ring_only = true, .ring_res = -EINVAL },
};

FIXTURE(sendfile) {
	struct sf_result *res;
};

FIXTURE_VARIANT(sendfile) {
	int idx;
};

FIXTURE_VARIANT_ADD(sendfile, cached_16k_unix) {
	.idx = 0,
};

FIXTURE_VARIANT_ADD(sendfile, cached_16k_tcp) {
	.idx = 1,
};

FIXTURE_VARIANT_ADD(sendfile, cached_1m_tcp) {
	.idx = 2,
};

FIXTURE_VARIANT_ADD(sendfile, cached_1m_tcp_reader_late) {
	.idx = 3,
};

FIXTURE_VARIANT_ADD(sendfile, cached_1m_unix_reader_late) {
	.idx = 4,
};

FIXTURE_VARIANT_ADD(sendfile, file_position) {
	.idx = 5,
};

FIXTURE_VARIANT_ADD(sendfile, file_position_to_eof) {
	.idx = 6,
};

FIXTURE_VARIANT_ADD(sendfile, explicit_offset) {
	.idx = 7,
};

FIXTURE_VARIANT_ADD(sendfile, across_eof) {
	.idx = 8,
};

FIXTURE_VARIANT_ADD(sendfile, at_eof) {
	.idx = 9,
};

FIXTURE_VARIANT_ADD(sendfile, past_eof) {
	.idx = 10,
};

FIXTURE_VARIANT_ADD(sendfile, length_zero) {
	.idx = 11,
};

FIXTURE_VARIANT_ADD(sendfile, empty_file) {
	.idx = 12,
};

FIXTURE_VARIANT_ADD(sendfile, negative_offset) {
	.idx = 13,
};

FIXTURE_VARIANT_ADD(sendfile, uncached_256k) {
	.idx = 14,
};

FIXTURE_VARIANT_ADD(sendfile, uncached_1m_reader_late) {
	.idx = 15,
};

FIXTURE_VARIANT_ADD(sendfile, nonblock_full_after_some) {
	.idx = 16,
};

FIXTURE_VARIANT_ADD(sendfile, nonblock_full_at_once) {
	.idx = 17,
};

FIXTURE_VARIANT_ADD(sendfile, input_write_only) {
	.idx = 18,
};

FIXTURE_VARIANT_ADD(sendfile, output_shut_down) {
	.idx = 19,
};

FIXTURE_VARIANT_ADD(sendfile, registered_input) {
	.idx = 20,
};

FIXTURE_VARIANT_ADD(sendfile, registered_output) {
	.idx = 21,
};

FIXTURE_VARIANT_ADD(sendfile, registered_both) {
	.idx = 22,
};

FIXTURE_VARIANT_ADD(sendfile, unix_seqpacket) {
	.idx = 23,
};

FIXTURE_VARIANT_ADD(sendfile, ktls_1m) {
	.idx = 24,
};

FIXTURE_VARIANT_ADD(sendfile, ktls_reader_late) {
	.idx = 25,
};

FIXTURE_VARIANT_ADD(sendfile, ktls_file_position) {
	.idx = 26,
};

FIXTURE_VARIANT_ADD(sendfile, output_offset) {
	.idx = 27,
};

FIXTURE_VARIANT_ADD(sendfile, splice_flag) {
	.idx = 28,
};

FIXTURE_SETUP(sendfile)
{
	const char *absent = sendfile_absent();

	self->res = MAP_FAILED;
	if (absent)
		SKIP(return, "%s", absent);
	self->res = mmap(NULL, NR_WAYS * sizeof(*self->res),
			 PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
			 -1, 0);
	ASSERT_NE(MAP_FAILED, self->res);
	memset(self->res, 0, NR_WAYS * sizeof(*self->res));
}

FIXTURE_TEARDOWN(sendfile)
{
	if (self->res != MAP_FAILED)
		munmap(self->res, NR_WAYS * sizeof(*self->res));
	if (file_path[0])
		unlink(file_path);
}

TEST_F_TIMEOUT(sendfile, same_as_sendfile, 300)
{
	const struct sf_case *c = &cases[variant->idx];
	struct sf_result *r = self->res;
	int w;

	ASSERT_EQ(0, make_file(c->file_size));
	for (w = 0; w < NR_WAYS; w++) {
		pid_t pid;
		int status;

		if (c->ring_only && w == WAY_SYSCALL)
			continue;
		pid = fork();
		ASSERT_LE(0, pid);
		if (!pid) {
			run_way(c, w, &r[w]);
			_exit(0);
		}
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		ASSERT_TRUE(r[w].ran) {
			TH_LOG("%s: %s", way_name[w], r[w].why);
		}
		TH_LOG("%s: res %lld, position %lld, %lld bytes received, %d workers",
		       way_name[w], r[w].res, r[w].pos, r[w].received,
		       r[w].workers);
		EXPECT_TRUE(r[w].content_ok) {
			TH_LOG("%s: the peer got bytes that are not the file's", way_name[w]);
		}
		EXPECT_EQ(r[w].res > 0 ? r[w].res : 0, r[w].received) {
			TH_LOG("%s: the result is not what reached the peer", way_name[w]);
		}
	}
	for (w = WAY_RING; w <= WAY_ASYNC; w++) {
		long long want = c->ring_only ? c->ring_res : r[WAY_SYSCALL].res;

		EXPECT_EQ(want, r[w].res) {
			TH_LOG("%s gave %lld where %s gives %lld", way_name[w],
			       r[w].res, c->ring_only ? "the series" : "sendfile(2)",
			       want);
		}
		if (!c->ring_only)
			EXPECT_EQ(r[WAY_SYSCALL].pos, r[w].pos) {
				TH_LOG("%s left the file position at %lld, sendfile(2) at %lld",
				       way_name[w], r[w].pos, r[WAY_SYSCALL].pos);
			}
	}
	EXPECT_LE(1, r[WAY_ASYNC].workers);
	if (c->uncached && r[WAY_RING].res > 0)
		EXPECT_LE(1, r[WAY_RING].workers) {
			TH_LOG("an uncached file read without a worker: the inline try did I/O");
		}
	if (inline_refuses_socket(c))
		EXPECT_LE(1, r[WAY_RING].workers) {
			TH_LOG("a socket the inline try refuses was sent to without a worker");
		}
	if (!c->uncached && !c->wronly && !c->shut_wr && !c->ring_only &&
	    !inline_refuses_socket(c))
		EXPECT_EQ(0, r[WAY_RING].workers) {
			TH_LOG("a cached file needed an io-wq worker");
		}
}

/*
 * Endings that sendfile(2) has no twin for: the request sends part of a
 * 1 MiB file into a socket nobody reads, then is cancelled (by user_data)
 * or its linked timeout fires, or the file is truncated under it. The CQE
 * must count exactly the bytes the peer then reads, and the file position
 * (off_in -1) must have moved by them. Plain and IOSQE_ASYNC.
 */
enum ending { END_CANCEL, END_LINK_TIMEOUT, END_TRUNCATE };

static void ending_way(struct __test_metadata *_metadata, enum ending e,
		       bool async)
{
	struct reader_arg ra = { 0 };
	struct io_uring_sqe *sqe;
	struct iou_ring ring;
	struct iou_cqe cqe;
	int in, out, peer, i, res = INT_MIN, sent = 0, prev = -1;
	struct __kernel_timespec ts = { .tv_nsec = 200 * 1000 * 1000 };
	long long pos;

	ASSERT_EQ(0, make_file(1 << 20));
	in = open(file_path, O_RDWR);
	ASSERT_LE(0, in);
	ASSERT_EQ(0, make_sockets(&(struct sf_case){ .tcp = false }, &out, &peer));
	ASSERT_EQ(0, iou_setup(&ring, 8, 0));

	sqe = iou_get_sqe(&ring);
	ASSERT_NE(NULL, sqe);
	iou_prep_splice(sqe, out, NO_OFF, in, NO_OFF, 1 << 20, 0);
	sqe->user_data = 1;
	if (async)
		sqe->flags |= IOSQE_ASYNC;
	if (e == END_LINK_TIMEOUT) {
		sqe->flags |= IOSQE_IO_LINK;
		sqe = iou_get_sqe(&ring);
		ASSERT_NE(NULL, sqe);
		sqe->opcode = IORING_OP_LINK_TIMEOUT;
		sqe->addr = (unsigned long)&ts;
		sqe->len = 1;
		sqe->user_data = 2;
	}
	ASSERT_LE(1, iou_submit_and_wait(&ring, 0));

	/* until the peer holds all the socket takes: the request waits */
	for (i = 0; i < 200; i++) {
		usleep(10 * 1000);
		ASSERT_EQ(0, ioctl(peer, FIONREAD, &sent));
		if (sent > 0 && sent == prev)
			break;
		prev = sent;
	}
	ASSERT_LT(0, sent);

	if (e == END_CANCEL) {
		sqe = iou_get_sqe(&ring);
		ASSERT_NE(NULL, sqe);
		sqe->opcode = IORING_OP_ASYNC_CANCEL;
		sqe->addr = 1;
		sqe->user_data = 3;
		ASSERT_EQ(1, iou_submit_and_wait(&ring, 0));
	} else if (e == END_TRUNCATE) {
		/*
		 * 64 KiB past what was sent: the request goes on to the new
		 * end once the peer reads (a worker's pipe holds no page
		 * beyond it: it read at most 64 KiB from below what it sent)
		 */
		struct reader_arg drain = { .fd = peer };
		pthread_t t;

		ASSERT_EQ(0, ftruncate(in, sent + 65536));
		ASSERT_EQ(0, pthread_create(&t, NULL, reader_thread, &drain));
		for (i = 0; i < 3; i++) {
			ASSERT_EQ(0, iou_wait_cqe_timeout(&ring, &cqe, WAIT_MS));
			if (cqe.user_data == 1)
				break;
		}
		ASSERT_EQ(1, cqe.user_data);
		res = cqe.res;
		pos = lseek(in, 0, SEEK_CUR);
		shutdown(out, SHUT_WR);
		pthread_join(t, NULL);
		EXPECT_TRUE(drain.ok);
		EXPECT_EQ(res, drain.got);
		EXPECT_EQ(res, pos);
		EXPECT_EQ(sent + 65536, res);
		goto out;
	}
	for (i = 0; i < 3; i++) {
		if (iou_wait_cqe_timeout(&ring, &cqe, 1000))
			break;
		if (cqe.user_data == 1)
			res = cqe.res;
	}
	ASSERT_NE(INT_MIN, res);
	pos = lseek(in, 0, SEEK_CUR);
	shutdown(out, SHUT_WR);
	ra.fd = peer;
	fcntl(peer, F_SETFL, fcntl(peer, F_GETFL) | O_NONBLOCK);
	read_peer(&ra);
	TH_LOG("%s: res %d, position %lld, %lld received", async ? "IOSQE_ASYNC" : "ring",
	       res, pos, ra.got);
	EXPECT_LT(0, res) {
		TH_LOG("the bytes sent before the end are not in the CQE");
	}
	EXPECT_TRUE(ra.ok);
	EXPECT_EQ(res, ra.got);
	EXPECT_EQ(res, pos);
out:
	iou_exit(&ring);
	close(in);
	close(out);
	close(peer);
}

FIXTURE(ending) {
	bool ready;
};

FIXTURE_SETUP(ending)
{
	const char *absent = sendfile_absent();

	self->ready = false;
	signal(SIGPIPE, SIG_IGN);
	if (absent)
		SKIP(return, "%s", absent);
	self->ready = true;
}

FIXTURE_TEARDOWN(ending)
{
	if (file_path[0])
		unlink(file_path);
}

TEST_F(ending, cancel_after_partial_progress)
{
	ending_way(_metadata, END_CANCEL, false);
	ending_way(_metadata, END_CANCEL, true);
}

/*
 * The ring as is only: with IOSQE_ASYNC the timeout is armed when the
 * issue returns (6.12's order), so it never ends io-wq's blocking call.
 */
TEST_F(ending, link_timeout_after_partial_progress)
{
	ending_way(_metadata, END_LINK_TIMEOUT, false);
}

TEST_F(ending, truncated_while_waiting)
{
	ending_way(_metadata, END_TRUNCATE, false);
	ending_way(_metadata, END_TRUNCATE, true);
}

TEST_HARNESS_MAIN
