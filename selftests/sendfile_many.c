// SPDX-License-Identifier: GPL-2.0
/*
 * One ring sends a cached file to 10,000 TCP connections at once, each
 * with one IORING_OP_SPLICE from the file to the socket (the series'
 * sendfile, no pipe), while the readers are slow: one thread reads at most
 * 1 KiB from each connection in turn, so every socket fills and every
 * request waits, most of the time, for its reader.
 *
 * Passes when every request completes with the whole file, every reader
 * got every byte in order (each checked against the file's pattern), no
 * io-wq worker ever ran (the requests wait on poll, not in workers) and
 * the process never held a pipe. It prints how many requests were waiting
 * at once and how much less memory the guest had while they waited
 * (MemAvailable, the sockets' buffers included), per connection, and
 * TCP's memory at its peak. It raises tcp_mem four times for the run, as
 * a server with 10,000 connections would: under TCP memory pressure the
 * requests end in io-wq (see scale_tcp_mem()).
 *
 * SENDFILE_MANY_N (default 10000) and SENDFILE_MANY_KB (file size in KiB,
 * default 16) change the load. The file is made in /mnt/ext4
 * (SPLICE_FILE_DIR overrides it); elsewhere, and on a kernel without the
 * series, the program skips.
 */

#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>

#include "iou_helpers.h"
#include "sendfile_helpers.h"
#include "../kselftest.h"

#define EXT4_SUPER_MAGIC_	0xEF53
#define NO_OFF			((__u64)-1)
#define SLICE			1024	/* what a reader takes per turn */
#define LIMIT_S			240

struct conn {
	int tx, rx;		/* the ring sends on tx, the reader reads rx */
	unsigned int got;	/* bytes the reader got */
	int res;		/* the CQE's, or INT_MIN */
};

static long mem_available_kb(void)
{
	char line[128];
	long kb = -1;
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "MemAvailable: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

/*
 * TCP's memory: the pages its sockets use now (/proc/net/sockstat "mem")
 * and whether TCP is under memory pressure (/proc/net/protocols), when
 * it refuses to queue more although poll says a socket is writable.
 */
static void tcp_memory(long *pages, bool *pressure)
{
	char line[512], name[32], press[8];
	FILE *f = fopen("/proc/net/sockstat", "r");

	*pages = -1;
	*pressure = false;
	if (f) {
		while (fgets(line, sizeof(line), f)) {
			char *m = strstr(line, " mem ");

			if (!strncmp(line, "TCP:", 4) && m)
				*pages = atol(m + 5);
		}
		fclose(f);
	}
	f = fopen("/proc/net/protocols", "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		/* protocol size sockets memory press ... */
		if (sscanf(line, "%31s %*s %*s %*s %7s", name, press) == 2 &&
		    !strcmp(name, "TCP"))
			*pressure = !strcmp(press, "yes");
	}
	fclose(f);
}

/*
 * tcp_mem times @factor, as a server with this many connections would
 * set it: a 2 GiB guest's default hard limit (about 47000 pages) is below
 * what 10,000 connections' queues take at their peak (each socket holds
 * whole pages). Past it TCP refuses to queue while poll still reports
 * the socket writable, and the requests go to io-wq after their tries,
 * as IORING_OP_SEND's do. @old receives the setting to restore.
 */
static bool scale_tcp_mem(double factor, char *old, size_t len)
{
	long v[3];
	FILE *f = fopen("/proc/sys/net/ipv4/tcp_mem", "r");
	bool ok;

	if (!f)
		return false;
	ok = fscanf(f, "%ld %ld %ld", &v[0], &v[1], &v[2]) == 3;
	fclose(f);
	if (!ok)
		return false;
	snprintf(old, len, "%ld %ld %ld", v[0], v[1], v[2]);
	f = fopen("/proc/sys/net/ipv4/tcp_mem", "w");
	if (!f)
		return false;
	ok = fprintf(f, "%ld %ld %ld\n", (long)(v[0] * factor),
		     (long)(v[1] * factor), (long)(v[2] * factor)) > 0;
	return !fclose(f) && ok;
}

static void restore_tcp_mem(const char *old)
{
	FILE *f = fopen("/proc/sys/net/ipv4/tcp_mem", "w");

	if (f) {
		fprintf(f, "%s\n", old);
		fclose(f);
	}
}

/* pipes among this process's open files */
static int count_pipes(void)
{
	char path[300], target[64];
	struct dirent *de;
	int n = 0;
	DIR *dir = opendir("/proc/self/fd");

	if (!dir)
		return -1;
	while ((de = readdir(dir))) {
		ssize_t len;

		snprintf(path, sizeof(path), "/proc/self/fd/%s", de->d_name);
		len = readlink(path, target, sizeof(target) - 1);
		if (len <= 0)
			continue;
		target[len] = 0;
		if (!strncmp(target, "pipe:", 5))
			n++;
	}
	closedir(dir);
	return n;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* n connections over IPv4 loopback with small buffers on both ends */
static int connect_all(struct conn *c, int n)
{
	struct sockaddr_in sa = {
		.sin_family = AF_INET,
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
	};
	socklen_t sl = sizeof(sa);
	int l, i, small = 4096, one = 1;

	l = socket(AF_INET, SOCK_STREAM, 0);
	if (l < 0 || setsockopt(l, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small)) ||
	    bind(l, (struct sockaddr *)&sa, sizeof(sa)) || listen(l, 128) ||
	    getsockname(l, (struct sockaddr *)&sa, &sl))
		return -1;
	for (i = 0; i < n; i++) {
		c[i].tx = socket(AF_INET, SOCK_STREAM, 0);
		if (c[i].tx < 0 ||
		    setsockopt(c[i].tx, SOL_SOCKET, SO_SNDBUF, &small, sizeof(small)) ||
		    connect(c[i].tx, (struct sockaddr *)&sa, sizeof(sa)))
			return -1;
		c[i].rx = accept4(l, NULL, NULL, SOCK_NONBLOCK);
		if (c[i].rx < 0)
			return -1;
		setsockopt(c[i].tx, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		c[i].res = INT_MIN;
	}
	close(l);
	return 0;
}

int main(void)
{
	const char *dir = getenv("SPLICE_FILE_DIR") ?: "/mnt/ext4";
	const char *absent = iou_series_absent();
	int n = getenv("SENDFILE_MANY_N") ? atoi(getenv("SENDFILE_MANY_N")) : 10000;
	unsigned int size = (getenv("SENDFILE_MANY_KB") ?
			     atoi(getenv("SENDFILE_MANY_KB")) : 16) * 1024;
	int i, ret, file, done = 0, queued = 0, waiting_max = 0, workers_max = 0;
	int bad_res = 0, bad_bytes = 0, pipes, pipes_before, pressured = 0;
	long tcp_pages, tcp_pages_max = 0;
	bool pressure, scaled;
	char tcp_mem_old[128];
	long mem_before, mem_waiting = -1;
	unsigned char buf[SLICE];
	struct rlimit rl;
	struct iou_ring ring;
	struct iou_cqe cqe;
	struct statfs sfs;
	char path[PATH_MAX];
	struct conn *c;
	double start;

	ksft_print_header();
	ksft_set_plan(1);
	if (absent)
		ksft_exit_skip("%s: a regular file to a socket gives -EINVAL\n",
			       absent);
	if (statfs(dir, &sfs) || sfs.f_type != EXT4_SUPER_MAGIC_)
		ksft_exit_skip("%s is not an ext4 mount\n", dir);
	if (n < 1 || !size)
		ksft_exit_fail_msg("bad SENDFILE_MANY_N or SENDFILE_MANY_KB\n");
	rl.rlim_cur = rl.rlim_max = 2 * n + 64;
	if (setrlimit(RLIMIT_NOFILE, &rl))
		ksft_exit_fail_msg("RLIMIT_NOFILE %d: %s\n", 2 * n + 64,
				   strerror(errno));

	scaled = scale_tcp_mem(4, tcp_mem_old, sizeof(tcp_mem_old));
	if (!scaled)
		ksft_print_msg("tcp_mem left as it is: %s\n", strerror(errno));
	snprintf(path, sizeof(path), "%s/sendfile_many.%d", dir, getpid());
	file = sendfile_cached_file(path, size);
	unlink(path);
	/* the unlink changed the file's ctime: an access time due again */
	if (file >= 0 && (usleep(20 * 1000) || pread(file, &ret, 1, 0) != 1))
		file = -1;
	if (file < 0)
		ksft_exit_fail_msg("the file: %s\n", strerror(errno));
	/* the runner's pipes (stdout, ...) are there before */
	pipes_before = count_pipes();
	c = calloc(n, sizeof(*c));
	mem_before = mem_available_kb();
	start = now_s();
	if (!c || connect_all(c, n))
		ksft_exit_fail_msg("%d connections: %s\n", n, strerror(errno));
	ksft_print_msg("%d connections in %.1f s, file %u KiB\n", n,
		       now_s() - start, size >> 10);
	ret = iou_setup(&ring, 8192, 0);
	if (ret)
		ksft_exit_fail_msg("io_uring_setup: %s\n", strerror(-ret));

	start = now_s();
	while (done < n) {
		int waiting, w;

		while (queued < n) {
			struct io_uring_sqe *sqe = iou_get_sqe(&ring);

			if (!sqe)
				break;
			iou_prep_splice(sqe, c[queued].tx, NO_OFF, file, 0, size, 0);
			sqe->user_data = queued++;
		}
		ret = iou_submit_and_wait(&ring, 0);
		if (ret < 0 && ret != -EINTR && ret != -EBUSY)
			ksft_exit_fail_msg("io_uring_enter: %s\n", strerror(-ret));
		while (!iou_peek_cqe(&ring, &cqe)) {
			c[cqe.user_data].res = cqe.res;
			if (cqe.res != (int)size && bad_res++ < 5)
				ksft_print_msg("connection %llu: res %d, not %u\n",
					       cqe.user_data, cqe.res, size);
			done++;
		}
		waiting = queued - done;
		if (waiting > waiting_max) {
			waiting_max = waiting;
			mem_waiting = mem_available_kb();
		}
		w = iou_count_io_workers();
		if (w > workers_max)
			workers_max = w;
		tcp_memory(&tcp_pages, &pressure);
		if (tcp_pages > tcp_pages_max)
			tcp_pages_max = tcp_pages;
		pressured += pressure;
		/* each reader a little, in turn */
		for (i = 0; i < n; i++) {
			ssize_t got = c[i].got < size ?
				      read(c[i].rx, buf, sizeof(buf)) : 0;
			ssize_t j;

			for (j = 0; j < got; j++)
				if (buf[j] != sendfile_pattern(c[i].got + j) &&
				    bad_bytes++ < 5)
					ksft_print_msg("connection %d: byte %u wrong\n",
						       i, (unsigned int)(c[i].got + j));
			if (got > 0)
				c[i].got += got;
		}
		if (now_s() - start > LIMIT_S) {
			ksft_print_msg("%d of %d done after %d s\n", done, n,
				       LIMIT_S);
			iou_dump_threads();
			break;
		}
	}
	/*
	 * What is still on its way: a CQE says the socket took the bytes,
	 * not that the peer has them yet.
	 */
	for (i = 0; i < n; i++) {
		while (c[i].got < size) {
			struct pollfd pfd = { .fd = c[i].rx, .events = POLLIN };
			ssize_t got, j;

			if (poll(&pfd, 1, 5000) != 1)
				break;
			got = read(c[i].rx, buf, sizeof(buf));
			if (got <= 0)
				break;
			for (j = 0; j < got; j++)
				if (buf[j] != sendfile_pattern(c[i].got + j))
					bad_bytes++;
			c[i].got += got;
		}
		if (c[i].got != size && bad_bytes++ < 5)
			ksft_print_msg("connection %d: %u bytes of %u\n", i,
				       c[i].got, size);
	}
	pipes = count_pipes() - pipes_before;
	{
		char mem[128] = "?";
		FILE *f = fopen("/proc/sys/net/ipv4/tcp_mem", "r");

		if (f) {
			if (!fgets(mem, sizeof(mem), f))
				snprintf(mem, sizeof(mem), "?");
			fclose(f);
			mem[strcspn(mem, "\n")] = 0;
		}
		ksft_print_msg("TCP memory at most %ld pages (tcp_mem %s); under pressure in %d sweeps\n",
			       tcp_pages_max, mem, pressured);
	}
	ksft_print_msg("%d sendfiles of %u KiB in %.1f s; at most %d waiting at once, MemAvailable then %ld KiB less than before the connections (%.1f KiB per connection); io-wq workers at most %d; pipes opened %d\n",
		       done, size >> 10, now_s() - start, waiting_max,
		       mem_before - mem_waiting,
		       (double)(mem_before - mem_waiting) / n, workers_max,
		       pipes);
	iou_exit(&ring);
	if (scaled)
		restore_tcp_mem(tcp_mem_old);
	ksft_print_msg("%d connections, one sqe each: %s\n", n,
		       done == n && !bad_res && !bad_bytes ? "every byte" :
		       "bytes or requests missing");
	ksft_test_result(done == n && !bad_res && !bad_bytes &&
			 !workers_max && !pipes, "one_ring_many_connections\n");
	ksft_finished();
}
