// SPDX-License-Identifier: GPL-2.0
/*
 * IORING_OP_SPLICE from a regular file on ext4 (the page cache of a real
 * block file system) into a pipe, compared with splice(2).
 *
 * With the inline splice series, filemap_splice_read() can splice in a
 * nowait mode (only folios that are in the page cache and uptodate, no I/O,
 * no lock waits; -EAGAIN or the short count done so far otherwise) and
 * ext4 opts in: a splice from a cached file completes inline in
 * io_uring_enter(2), with no io-wq worker, and one that needs I/O gets
 * -EAGAIN inline and is then run by io-wq (a regular file does not poll).
 * Linux 6.12 without the series punts every file splice to io-wq.
 *
 * Every case runs the same splices three ways, each in a fresh child
 * process (a task with no io_uring context of its own): the ring as is,
 * the ring with IOSQE_ASYNC (6.12's io-wq path) and splice(2). Each way's
 * results (the CQE's res, or splice(2)'s return), file positions and the
 * bytes that came out of the pipe must be the expected ones, which are
 * splice(2)'s. The page cache state each way starts from (all, none or
 * the first pages of the file cached; readahead marks or not; an access
 * time to update or not) is set before it runs and checked with
 * mincore(2).
 *
 *   file_pipe.*: cached and uncached files, a partly cached one (the
 *     inline try splices what is cached, io-wq the rest), explicit offsets
 *     and off_in = -1 (the file position moves as with splice(2)), at and
 *     across EOF, an empty file, holes, O_DIRECT (copy_splice_read(): always
 *     punted), a 1 MiB file into a 64 KiB pipe, SPLICE_F_NONBLOCK, readahead
 *     marks, an access time relatime must update (which every way must
 *     update, or none). With the series, the plain ring must have had no
 *     io-wq worker when everything it read was cached, and at least one
 *     when something was not (or with O_DIRECT, or an access time to
 *     update): what fails if filemap_splice_read() ignores the nowait mode,
 *     since the inline try would then read from the disk itself.
 *     IOSQE_ASYNC must always have a worker.
 *   chain.file_pipe_tcp: a cached file -> pipe -> TCP socket, linked, 64 KiB
 *     at a time up to EOF; the bytes arrive intact, the splice at EOF
 *     returns 0 and cancels its link.
 *   churn.truncate_rewrite: random splices while another thread truncates
 *     the file, writes it back, rewrites pages with another version of the
 *     data and drops it from the page cache: no error splice(2) does not
 *     give, every byte out of the pipe is A's or B's at that offset (or a
 *     zero, which splice(2) gives too in such a race), short only when
 *     the pipe refuses a truncated page (-ENODATA).
 *
 * The files are created in /mnt/ext4 (SPLICE_FILE_DIR overrides it), which
 * must be an ext4 mount: run_selftests.sh gives its guest a disk made with
 * mkfs.ext4 for it. Elsewhere every case skips. The worker assertions need
 * the series (iou_series_absent(); IOU_SERIES_FORCE=1 forces them).
 * SPLICE_FILE_SEED replays churn's random choices.
 */

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "iou_helpers.h"
#include "../kselftest_harness.h"
#include "splice_helpers.h"

#define EXT4_DIR		"/mnt/ext4"
#define EXT4_SUPER_MAGIC_	0xEF53
#define PAGE_SZ			4096
#define K64			65536
/* Longest wait for a completion or for bytes that must arrive. */
#define WAIT_MS			10000
/* A way's child that takes longer than this is killed (and fails). */
#define WAY_TIMEOUT_S		60
/* splice at, and advance, the file position (off_in NULL, or -1) */
#define OFF_POS			(-1LL)
#define MAX_STEPS		6
#define OUT_MAX			(512 << 10)
/* PART_CACHED: the first PART_BYTES of the file are in the page cache */
#define PART_BYTES		(2 * PAGE_SZ)

enum way { WAY_RING, WAY_ASYNC, WAY_SYSCALL, NR_WAYS };

static const char * const way_name[] = {
	[WAY_RING] = "ring", [WAY_ASYNC] = "IOSQE_ASYNC",
	[WAY_SYSCALL] = "splice(2)",
};

enum cache_state { CACHED, CACHED_RA, UNCACHED, PART_CACHED };

static const char * const cache_name[] = {
	[CACHED] = "cached", [CACHED_RA] = "cached with readahead marks",
	[UNCACHED] = "uncached", [PART_CACHED] = "partly cached",
};

/* Why the cases cannot run here, or NULL. */
static const char *ext4_absent(const char *dir)
{
	static char why[512];
	struct statfs sfs;

	if (statfs(dir, &sfs)) {
		snprintf(why, sizeof(why), "%s: %s (no ext4 disk here)", dir,
			 strerror(errno));
		return why;
	}
	if (sfs.f_type != EXT4_SUPER_MAGIC_) {
		snprintf(why, sizeof(why),
			 "%s is not an ext4 mount (f_type %#lx)", dir,
			 (unsigned long)sfs.f_type);
		return why;
	}
	return NULL;
}

/*
 * What every fixture needs: an ext4 directory and io_uring. Sets @path to
 * a file name of its own there; SKIP()s when something is missing.
 */
static void file_setup(struct __test_metadata *_metadata, char *path,
		       size_t size)
{
	const char *dir = getenv("SPLICE_FILE_DIR") ?: EXT4_DIR;
	const char *absent = ext4_absent(dir);
	struct iou_ring ring;
	int ret;

	path[0] = '\0';
	if (absent)
		SKIP(return, "%s", absent);
	ret = iou_setup(&ring, 1, 0);
	if (ret == -ENOSYS || ret == -EPERM)
		SKIP(return, "io_uring unavailable: %s", strerror(-ret));
	ASSERT_EQ(0, ret);
	ret = ring.features & IORING_FEAT_EXT_ARG;
	iou_exit(&ring);
	if (!ret)
		SKIP(return, "no IORING_FEAT_EXT_ARG: cannot wait with a timeout");
	snprintf(path, size, "%s/splice_file.%d", dir, getpid());
}

static void file_teardown(const char *path)
{
	if (path[0])
		unlink(path);
}

/* A zeroed MAP_SHARED area: what a way's child reports to the parent. */
static void *shared_alloc(struct __test_metadata *_metadata, size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	ASSERT_NE(MAP_FAILED, p);
	return p;
}

/* The first error of a way, for the parent to report. */
static void way_err(char *err, size_t size, const char *fmt, ...)
{
	va_list ap;

	if (err[0])
		return;
	va_start(ap, fmt);
	vsnprintf(err, size, fmt, ap);
	va_end(ap);
}

/*
 * Run @fn for way @w in a fresh child process, @out in shared memory. The
 * child reports through @out only: an ASSERT there would jump back into
 * the harness in the child.
 */
static void run_way(struct __test_metadata *_metadata,
		    void (*fn)(const void *arg, enum way w, void *out),
		    const void *arg, enum way w, void *out)
{
	int status = 0;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		alarm(WAY_TIMEOUT_S);
		fn(arg, w, out);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status)) {
		TH_LOG("%s: the child ended with status %#x", way_name[w],
		       status);
	}
}

static ssize_t pwrite_all(int fd, const void *buf, size_t len, off_t off)
{
	size_t done = 0;
	ssize_t n;

	while (done < len) {
		n = pwrite(fd, (const char *)buf + done, len - done,
			   off + done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		done += n;
	}
	return done;
}

/*
 * Write @model (@size bytes; [@hole_start, @hole_end) left unwritten, a
 * hole that reads as zeros) to a new file @path, on the disk.
 */
static void make_file(struct __test_metadata *_metadata, const char *path,
		      const unsigned char *model, unsigned int size,
		      unsigned int hole_start, unsigned int hole_end)
{
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	ASSERT_LE(0, fd) TH_LOG("%s: %s", path, strerror(errno));
	if (hole_end > hole_start) {
		ASSERT_EQ((ssize_t)hole_start,
			  pwrite_all(fd, model, hole_start, 0));
		ASSERT_EQ((ssize_t)(size - hole_end),
			  pwrite_all(fd, model + hole_end, size - hole_end,
				     hole_end));
	} else {
		ASSERT_EQ((ssize_t)size, pwrite_all(fd, model, size, 0));
	}
	ASSERT_EQ(0, ftruncate(fd, size));
	ASSERT_EQ(0, fsync(fd));
	close(fd);
}

/* mincore(2) of the file's pages into @vec; 0 or -errno. */
static int file_pages_resident(int fd, unsigned int size, unsigned char *vec)
{
	void *map;
	int ret;

	if (!size)
		return 0;
	map = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED)
		return -errno;
	ret = mincore(map, size, vec) ? -errno : 0;
	munmap(map, size);
	return ret;
}

/* posix_fadvise(2) whole file, 0 or -1 with errno set, like the rest. */
static int fadvise(int fd, int advice)
{
	int ret = posix_fadvise(fd, 0, 0, advice);

	if (!ret)
		return 0;
	errno = ret;
	return -1;
}

/* Read [0, @len) of @fd into @buf with pread(2); 0 or -1. */
static int pread_all(int fd, unsigned char *buf, size_t len)
{
	size_t done = 0;
	ssize_t n;

	while (done < len) {
		n = pread(fd, buf + done, len - done, done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		done += n;
	}
	return 0;
}

/*
 * Put the file's @size bytes in page cache state @cache: dropped from the
 * page cache, then read back whole or only its first PART_BYTES, or not at
 * all. Checked page by page with mincore(2); 0, or -1 with @err set.
 *
 * CACHED and PART_CACHED read with readahead off (POSIX_FADV_RANDOM): it
 * reads exactly what was asked and marks no folio PG_readahead. A nowait
 * read (IOCB_NOIO) stops at such a mark, since going on would start the
 * next readahead. CACHED_RA reads the usual way and may leave marks.
 *
 * Then the access time is put an hour ahead, so that relatime has nothing
 * to update (a nowait read does not update it: it stops), or with
 * @stale_atime an hour behind the modification time, so that the first
 * read must update it.
 */
static int set_cache(const char *path, unsigned int size,
		     enum cache_state cache, bool stale_atime, char *err,
		     size_t errlen)
{
	struct timespec times[2] = { { 0 }, { .tv_nsec = UTIME_OMIT } };
	struct stat st;
	unsigned int pages = (size + PAGE_SZ - 1) / PAGE_SZ;
	unsigned char *vec = calloc(pages + 1, 1);
	unsigned char *buf = malloc(size + 1);
	unsigned int i, cached = 0, want_cached;
	int fd, tries, ret = -1;
	bool resident, wanted;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || !vec || !buf) {
		way_err(err, errlen, "cache: %s: %s", path, strerror(errno));
		goto out;
	}
	/* clean pages go; a page still in a per-CPU batch may need a retry */
	for (tries = 0; tries < 5; tries++) {
		if (fdatasync(fd) || fadvise(fd, POSIX_FADV_DONTNEED)) {
			way_err(err, errlen, "cache: dropping: %s",
				strerror(errno));
			goto out;
		}
		if (file_pages_resident(fd, size, vec))
			break;
		for (i = 0, cached = 0; i < pages; i++)
			cached += vec[i] & 1;
		if (!cached)
			break;
		usleep(20000);
	}
	want_cached = 0;
	if (cache == CACHED || cache == CACHED_RA)
		want_cached = pages;
	else if (cache == PART_CACHED)
		want_cached = PART_BYTES / PAGE_SZ;
	if (cache != CACHED_RA && fadvise(fd, POSIX_FADV_RANDOM)) {
		way_err(err, errlen, "cache: POSIX_FADV_RANDOM: %s",
			strerror(errno));
		goto out;
	}
	if (pread_all(fd, buf, want_cached < pages ?
				want_cached * PAGE_SZ : size)) {
		way_err(err, errlen, "cache: read: %s", strerror(errno));
		goto out;
	}
	ret = file_pages_resident(fd, size, vec);
	if (ret) {
		way_err(err, errlen, "cache: mincore: %s", strerror(-ret));
		ret = -1;
		goto out;
	}
	for (i = 0; i < pages; i++) {
		resident = vec[i] & 1;
		wanted = i < want_cached;
		if (resident != wanted) {
			way_err(err, errlen,
				"cache: page %u of %u is %sin the page cache, wanted %s",
				i, pages, resident ? "" : "not ",
				cache_name[cache]);
			ret = -1;
			goto out;
		}
	}
	ret = -1;
	if (fstat(fd, &st)) {
		way_err(err, errlen, "cache: fstat: %s", strerror(errno));
		goto out;
	}
	times[0].tv_sec = st.st_mtim.tv_sec + (stale_atime ? -3600 : 3600);
	if (futimens(fd, times)) {
		way_err(err, errlen, "cache: futimens: %s", strerror(errno));
		goto out;
	}
	ret = 0;
out:
	if (fd >= 0)
		close(fd);
	free(vec);
	free(buf);
	return ret;
}

/*
 * Read what the pipe holds (its read end O_NONBLOCK) into @buf: the bytes
 * read. *@rerr gets the errno of a read that failed with something else
 * than EAGAIN (an empty pipe), 0 if none did.
 */
static long drain_pipe(int rfd, unsigned char *buf, size_t room, int *rerr)
{
	long got = 0;
	ssize_t n;

	*rerr = 0;
	while ((size_t)got < room) {
		n = read(rfd, buf + got, room - got);
		if (n > 0) {
			got += n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno != EAGAIN)
			*rerr = errno;
		break;
	}
	return got;
}

/*
 * Submit the @nr sqes queued (user_data 1..@nr) and put their results in
 * @res: 0, or -1 with @err set when the ring itself failed.
 */
static int ring_run(struct iou_ring *ring, int nr, int *res, char *err,
		    size_t errlen)
{
	struct iou_cqe cqe;
	int i, ret;

	for (i = 0; i < nr; i++)
		res[i] = INT_MIN;
	ret = iou_submit_and_wait(ring, 0);
	if (ret != nr) {
		way_err(err, errlen, "io_uring_enter(2) submitted %d of %d",
			ret, nr);
		return -1;
	}
	for (i = 0; i < nr; i++) {
		ret = iou_wait_cqe_timeout(ring, &cqe, WAIT_MS);
		if (ret) {
			way_err(err, errlen, "completion %d of %d: %s", i + 1,
				nr, strerror(-ret));
			return -1;
		}
		if (cqe.user_data < 1 || cqe.user_data > (__u64)nr ||
		    res[cqe.user_data - 1] != INT_MIN) {
			way_err(err, errlen, "unexpected completion %llu",
				(unsigned long long)cqe.user_data);
			return -1;
		}
		res[cqe.user_data - 1] = cqe.res;
	}
	return 0;
}

/*
 * One splice of @len bytes from @in at @off (OFF_POS: its position) into
 * the pipe @out, the way @w does it: the result (-errno for an error), or
 * INT_MIN with @err set when the ring failed.
 */
static int way_splice(enum way w, struct iou_ring *ring, int in,
		      long long off, int out, unsigned int len,
		      unsigned int flags, char *err, size_t errlen)
{
	struct io_uring_sqe *sqe;
	loff_t pos = off;
	ssize_t n;
	int res;

	if (w == WAY_SYSCALL) {
		n = splice(in, off == OFF_POS ? NULL : &pos, out, NULL, len,
			   flags);
		return n < 0 ? -errno : (int)n;
	}
	sqe = iou_get_sqe(ring);
	if (!sqe) {
		way_err(err, errlen, "no free sqe");
		return INT_MIN;
	}
	iou_prep_splice(sqe, out, (__u64)-1, in,
			off == OFF_POS ? (__u64)-1 : (__u64)off, len, flags);
	sqe->user_data = 1;
	sqe->flags = w == WAY_ASYNC ? IOSQE_ASYNC : 0;
	if (ring_run(ring, 1, &res, err, errlen))
		return INT_MIN;
	return res;
}

static void note_workers(int *most)
{
	int n = iou_count_io_workers();

	if (n > *most)
		*most = n;
}

/*
 * file_pipe: a file of @size bytes (a hole in [@hole_start, @hole_end)),
 * put in page cache state @cache, opened (with O_DIRECT if @direct) at
 * @start_pos; then each step splices into a pipe of @pipe_size bytes (0:
 * the default 64 KiB), which is drained after each.
 */
struct step {
	long long off;		/* OFF_POS: the file position */
	unsigned int len;
	int want;		/* splice(2)'s result */
};

FIXTURE(file_pipe) {
	char path[PATH_MAX];
	/* the file again, through a bind mount of it */
	char bind_path[PATH_MAX];
	const char *absent;
};

struct file_case {
	unsigned int size;
	unsigned int hole_start, hole_end;
	enum cache_state cache;
	bool stale_atime;	/* the first read updates the access time */
	bool noatime;		/* opened O_NOATIME: no access time update */
	/* opened through a bind mount with these flags (MS_RDONLY, MS_NOATIME) */
	unsigned long bind_flags;
	bool direct;
	unsigned int splice_flags;
	int pipe_size;
	long long start_pos;
	/*
	 * With the series, io-wq workers of the plain ring: 0 none, 1 some,
	 * -1 either (only logged).
	 */
	int workers;
	int nr_steps;
	struct step steps[MAX_STEPS];
};

FIXTURE_VARIANT(file_pipe) {
	struct file_case c;
};

/* written, dropped, read back: all in the page cache */
FIXTURE_VARIANT_ADD(file_pipe, cached) {
	.c = {
		.size = 40000, .cache = CACHED, .workers = 0, .nr_steps = 2,
		.steps = { { 0, 40000, 40000 }, { OFF_POS, 3000, 3000 } },
	},
};

/* relatime has an access time to update: that is left to io-wq */
FIXTURE_VARIANT_ADD(file_pipe, cached_stale_atime) {
	.c = {
		.size = 40000, .cache = CACHED, .stale_atime = true,
		.workers = 1, .nr_steps = 1, .steps = { { 0, 40000, 40000 } },
	},
};

/* a stale access time, but O_NOATIME: nothing to update, inline */
FIXTURE_VARIANT_ADD(file_pipe, cached_stale_atime_o_noatime) {
	.c = {
		.size = 40000, .cache = CACHED, .stale_atime = true,
		.noatime = true, .workers = 0, .nr_steps = 1,
		.steps = { { 0, 40000, 40000 } },
	},
};

/* a stale access time on a read-only mount: nothing to update, inline */
FIXTURE_VARIANT_ADD(file_pipe, cached_stale_atime_ro_mount) {
	.c = {
		.size = 40000, .cache = CACHED, .stale_atime = true,
		.bind_flags = MS_RDONLY, .workers = 0, .nr_steps = 1,
		.steps = { { 0, 40000, 40000 } },
	},
};

/* a stale access time on a noatime mount: nothing to update, inline */
FIXTURE_VARIANT_ADD(file_pipe, cached_stale_atime_noatime_mount) {
	.c = {
		.size = 40000, .cache = CACHED, .stale_atime = true,
		.bind_flags = MS_NOATIME, .workers = 0, .nr_steps = 1,
		.steps = { { 0, 40000, 40000 } },
	},
};

/* on the disk only: -EAGAIN inline, then io-wq reads it */
FIXTURE_VARIANT_ADD(file_pipe, uncached) {
	.c = {
		.size = 40000, .cache = UNCACHED, .workers = 1, .nr_steps = 2,
		.steps = { { 0, 40000, 40000 }, { OFF_POS, 3000, 3000 } },
	},
};

/* SPLICE_F_NONBLOCK is about the pipe: the file is still read */
FIXTURE_VARIANT_ADD(file_pipe, uncached_nonblock) {
	.c = {
		.size = 40000, .cache = UNCACHED,
		.splice_flags = SPLICE_F_NONBLOCK, .workers = 1, .nr_steps = 1,
		.steps = { { 0, 40000, 40000 } },
	},
};

/* 8 KiB inline, the rest of the 64 KiB in io-wq, f_pos moved by both */
FIXTURE_VARIANT_ADD(file_pipe, partly_cached_pos) {
	.c = {
		.size = 4 * K64, .cache = PART_CACHED, .workers = 1,
		.nr_steps = 1, .steps = { { OFF_POS, K64, K64 } },
	},
};

/* 4 KiB inline (page 1), the rest from the offset io-wq was given */
FIXTURE_VARIANT_ADD(file_pipe, partly_cached_off) {
	.c = {
		.size = 4 * K64, .cache = PART_CACHED, .start_pos = 100,
		.workers = 1, .nr_steps = 1,
		.steps = { { PAGE_SZ, K64, K64 } },
	},
};

/* explicit offsets leave f_pos alone; OFF_POS starts at it and moves it */
FIXTURE_VARIANT_ADD(file_pipe, offsets) {
	.c = {
		.size = 100000, .cache = CACHED, .start_pos = 1234,
		.workers = 0, .nr_steps = 5,
		.steps = {
			{ 5000, 7000, 7000 }, { OFF_POS, 3000, 3000 },
			{ OFF_POS, 10000, 10000 }, { 90000, 5000, 5000 },
			{ OFF_POS, 1, 1 },
		},
	},
};

/* across EOF: the short count; at or past it: 0 */
FIXTURE_VARIANT_ADD(file_pipe, at_eof) {
	.c = {
		.size = 10000, .cache = CACHED, .start_pos = 9500,
		.workers = 0, .nr_steps = 6,
		.steps = {
			{ OFF_POS, 3000, 500 }, { OFF_POS, 100, 0 },
			{ 10000, 100, 0 }, { 9000, 3000, 1000 },
			{ 20000, 10, 0 }, { OFF_POS, 0, 0 },
		},
	},
};

FIXTURE_VARIANT_ADD(file_pipe, empty) {
	.c = {
		.size = 0, .cache = CACHED, .workers = 0, .nr_steps = 2,
		.steps = { { OFF_POS, PAGE_SZ, 0 }, { 0, 1, 0 } },
	},
};

/* a sparse file: the hole reads as zeros, also where data meets it */
FIXTURE_VARIANT_ADD(file_pipe, hole) {
	.c = {
		.size = 49 * PAGE_SZ, .hole_start = PAGE_SZ,
		.hole_end = 48 * PAGE_SZ, .cache = CACHED, .workers = 0,
		.nr_steps = 3,
		.steps = {
			{ 2048, 8192, 8192 }, { K64, 16384, 16384 },
			{ 47 * PAGE_SZ + 2048, 12288, 6144 },
		},
	},
};

FIXTURE_VARIANT_ADD(file_pipe, hole_uncached) {
	.c = {
		.size = 49 * PAGE_SZ, .hole_start = PAGE_SZ,
		.hole_end = 48 * PAGE_SZ, .cache = UNCACHED, .workers = 1,
		.nr_steps = 3,
		.steps = {
			{ 2048, 8192, 8192 }, { K64, 16384, 16384 },
			{ 47 * PAGE_SZ + 2048, 12288, 6144 },
		},
	},
};

/* copy_splice_read(): a blocking ->read_iter(), punted though cached */
FIXTURE_VARIANT_ADD(file_pipe, o_direct) {
	.c = {
		.size = K64 + PAGE_SZ, .cache = CACHED, .direct = true,
		.workers = 1, .nr_steps = 3,
		.steps = {
			{ 0, 16384, 16384 }, { OFF_POS, 8192, 8192 },
			{ K64, 8192, PAGE_SZ },
		},
	},
};

/* 1 MiB into a 64 KiB pipe: what fits, as splice(2) */
FIXTURE_VARIANT_ADD(file_pipe, larger_than_pipe) {
	.c = {
		.size = 1 << 20, .cache = CACHED, .pipe_size = K64,
		.workers = 0, .nr_steps = 2,
		.steps = { { 0, 1 << 20, K64 }, { OFF_POS, 1 << 20, K64 } },
	},
};

FIXTURE_VARIANT_ADD(file_pipe, larger_than_pipe_uncached) {
	.c = {
		.size = 1 << 20, .cache = UNCACHED, .pipe_size = K64,
		.workers = 1, .nr_steps = 2,
		.steps = { { 0, 1 << 20, K64 }, { OFF_POS, 1 << 20, K64 } },
	},
};

/*
 * Read the usual way: a nowait splice may stop at a readahead mark, and
 * io-wq go on from there. The data must not tell.
 */
FIXTURE_VARIANT_ADD(file_pipe, cached_readahead) {
	.c = {
		.size = 4 * K64, .cache = CACHED_RA, .pipe_size = 4 * K64,
		.workers = -1, .nr_steps = 1,
		.steps = { { 0, 4 * K64, 4 * K64 } },
	},
};

FIXTURE_VARIANT_ADD(file_pipe, larger_than_pipe_readahead) {
	.c = {
		.size = 1 << 20, .cache = CACHED_RA, .pipe_size = K64,
		.workers = -1, .nr_steps = 2,
		.steps = { { 0, 1 << 20, K64 }, { OFF_POS, 1 << 20, K64 } },
	},
};

FIXTURE_SETUP(file_pipe)
{
	self->bind_path[0] = '\0';
	file_setup(_metadata, self->path, sizeof(self->path));
	self->absent = iou_series_absent();
}

FIXTURE_TEARDOWN(file_pipe)
{
	if (self->bind_path[0]) {
		syscall(__NR_umount2, self->bind_path, 2 /* MNT_DETACH */);
		unlink(self->bind_path);
	}
	file_teardown(self->path);
}

/*
 * @path bind-mounted on a new file @bind_path, then remounted with @flags
 * (needs root). Raw syscalls: <sys/mount.h> clashes with <linux/fs.h>,
 * which has the MS_ flags.
 */
static void bind_file(struct __test_metadata *_metadata, const char *path,
		      unsigned long flags, char *bind_path, size_t size)
{
	int fd;

	ASSERT_GT((int)size, snprintf(bind_path, size, "%s.bind", path));
	fd = open(bind_path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	ASSERT_LE(0, fd) {
		TH_LOG("%s: %s", bind_path, strerror(errno));
	}
	close(fd);
	ASSERT_EQ(0, syscall(__NR_mount, path, bind_path, NULL, MS_BIND, NULL)) {
		TH_LOG("bind mount on %s: %s", bind_path, strerror(errno));
	}
	ASSERT_EQ(0, syscall(__NR_mount, NULL, bind_path, NULL,
			     MS_REMOUNT | MS_BIND | flags, NULL)) {
		TH_LOG("remount of %s with %#lx: %s", bind_path, flags,
		       strerror(errno));
	}
}

/* What one way of a file_pipe case gave. */
struct file_out {
	char err[256];
	int res[MAX_STEPS];
	long long pos[MAX_STEPS];	/* the file position after each step */
	int workers;			/* most io-wq workers after a step */
	bool atime_moved;		/* the splices updated the access time */
	unsigned int out_len;
	unsigned char out[OUT_MAX];	/* what came out of the pipe */
};

struct file_arg {
	const struct file_case *c;
	const char *path;
	/* where the splices open it: @path, or a bind mount of it */
	const char *open_path;
};

static void file_way(const void *arg, enum way w, void *outp)
{
	const struct file_arg *a = arg;
	const struct file_case *v = a->c;
	struct file_out *o = outp;
	struct iou_ring ring = { .fd = -1 };
	struct stat before, after;
	int fd, p[2], i, ret, rerr;
	long got;

	if (set_cache(a->path, v->size, v->cache, v->stale_atime, o->err,
		      sizeof(o->err)))
		return;
	fd = open(a->open_path, O_RDONLY | O_CLOEXEC |
		  (v->direct ? O_DIRECT : 0) | (v->noatime ? O_NOATIME : 0));
	if (fd < 0 || fstat(fd, &before) ||
	    lseek(fd, v->start_pos, SEEK_SET) != v->start_pos ||
	    pipe(p) || fcntl(p[0], F_SETFL, O_NONBLOCK) ||
	    (v->pipe_size && fcntl(p[1], F_SETPIPE_SZ, v->pipe_size) < 0)) {
		way_err(o->err, sizeof(o->err), "files: %s", strerror(errno));
		return;
	}
	if (w != WAY_SYSCALL) {
		ret = iou_setup(&ring, 8, 0);
		if (ret) {
			way_err(o->err, sizeof(o->err), "ring: %s",
				strerror(-ret));
			return;
		}
	}
	for (i = 0; i < v->nr_steps; i++) {
		const struct step *s = &v->steps[i];

		o->res[i] = way_splice(w, &ring, fd, s->off, p[1], s->len,
				       v->splice_flags, o->err,
				       sizeof(o->err));
		if (o->err[0])
			return;
		o->pos[i] = lseek(fd, 0, SEEK_CUR);
		note_workers(&o->workers);
		got = drain_pipe(p[0], o->out + o->out_len,
				 OUT_MAX - o->out_len, &rerr);
		o->out_len += got;
		if (rerr || pipe_bytes(p[0])) {
			way_err(o->err, sizeof(o->err),
				"step %d: the pipe: %s, %d bytes left", i,
				strerror(rerr), pipe_bytes(p[0]));
			return;
		}
	}
	if (fstat(fd, &after))
		way_err(o->err, sizeof(o->err), "fstat: %s", strerror(errno));
	o->atime_moved = after.st_atim.tv_sec != before.st_atim.tv_sec ||
			 after.st_atim.tv_nsec != before.st_atim.tv_nsec;
	if (w != WAY_SYSCALL)
		iou_exit(&ring);
}

/* Where the first difference is, for the log. */
static long first_diff(const unsigned char *a, const unsigned char *b,
		       size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (a[i] != b[i])
			return i;
	return -1;
}

TEST_F_TIMEOUT(file_pipe, three_ways, 180)
{
	const struct file_case *v = &variant->c;
	unsigned char *model = calloc(v->size + 1, 1);
	unsigned char *want = malloc(OUT_MAX);
	long long pos = v->start_pos, at, want_pos[MAX_STEPS];
	struct file_arg arg = { .c = v, .path = self->path,
				.open_path = self->path };
	bool atime_due = v->stale_atime && !v->noatime && !v->bind_flags;
	struct file_out *out[NR_WAYS];
	unsigned int want_len = 0;
	int w, i;

	ASSERT_NE(NULL, model);
	ASSERT_NE(NULL, want);
	fill_pattern(model, v->size, 0xf11e ^ v->size);
	if (v->hole_end > v->hole_start)
		memset(model + v->hole_start, 0, v->hole_end - v->hole_start);
	make_file(_metadata, self->path, model, v->size, v->hole_start,
		  v->hole_end);
	if (v->bind_flags) {
		bind_file(_metadata, self->path, v->bind_flags, self->bind_path,
			  sizeof(self->bind_path));
		arg.open_path = self->bind_path;
	}

	/* what splice(2) gives: the steps' results, positions and bytes */
	for (i = 0; i < v->nr_steps; i++) {
		const struct step *s = &v->steps[i];

		at = s->off == OFF_POS ? pos : s->off;
		if (s->want > 0) {
			ASSERT_GE(v->size, at + s->want);
			ASSERT_GE(OUT_MAX, want_len + s->want);
			memcpy(want + want_len, model + at, s->want);
			want_len += s->want;
		}
		if (s->off == OFF_POS)
			pos += s->want;
		want_pos[i] = pos;
	}

	for (w = 0; w < NR_WAYS; w++) {
		out[w] = shared_alloc(_metadata, sizeof(*out[w]));
		run_way(_metadata, file_way, &arg, w, out[w]);
		ASSERT_STREQ("", out[w]->err) {
			TH_LOG("%s: %s", way_name[w], out[w]->err);
		}
	}

	TH_LOG("%u bytes, %s%s%s%s%s%s, %d step(s); io-wq workers: ring %d, IOSQE_ASYNC %d",
	       v->size, cache_name[v->cache],
	       v->stale_atime ? ", stale atime" : "",
	       v->noatime ? ", O_NOATIME" : "",
	       v->bind_flags & MS_RDONLY ? ", read-only mount" : "",
	       v->bind_flags & MS_NOATIME ? ", noatime mount" : "",
	       v->direct ? ", O_DIRECT" : "", v->nr_steps,
	       out[WAY_RING]->workers, out[WAY_ASYNC]->workers);
	for (w = 0; w < NR_WAYS; w++) {
		for (i = 0; i < v->nr_steps; i++) {
			EXPECT_EQ(v->steps[i].want, out[w]->res[i]) {
				TH_LOG("%s, step %d: result", way_name[w], i);
			}
			EXPECT_EQ(want_pos[i], out[w]->pos[i]) {
				TH_LOG("%s, step %d: file position",
				       way_name[w], i);
			}
			EXPECT_EQ(out[WAY_SYSCALL]->res[i], out[w]->res[i]) {
				TH_LOG("%s, step %d: not splice(2)'s result",
				       way_name[w], i);
			}
		}
		EXPECT_EQ(out[WAY_SYSCALL]->atime_moved, out[w]->atime_moved) {
			TH_LOG("%s: the access time %s, unlike with splice(2)",
			       way_name[w], out[w]->atime_moved ?
			       "moved" : "did not move");
		}
		EXPECT_EQ(want_len, out[w]->out_len) {
			TH_LOG("%s: bytes out of the pipe", way_name[w]);
		}
		if (want_len == out[w]->out_len) {
			EXPECT_EQ(-1, first_diff(want, out[w]->out, want_len)) {
				TH_LOG("%s: wrong data out of the pipe",
				       way_name[w]);
			}
		}
	}

	/* relatime: only a stale access time is updated, if it may be */
	EXPECT_EQ(atime_due, out[WAY_SYSCALL]->atime_moved);

	/* 6.12's path, whatever the kernel */
	EXPECT_LE(1, out[WAY_ASYNC]->workers);
	if (self->absent) {
		TH_LOG("no worker check for the ring: %s", self->absent);
	} else if (v->workers > 0) {
		EXPECT_LE(1, out[WAY_RING]->workers) {
			TH_LOG("I/O or an atime to update, yet no io-wq worker: inline?");
		}
	} else if (!v->workers) {
		EXPECT_EQ(0, out[WAY_RING]->workers) {
			TH_LOG("all in the page cache, yet an io-wq worker");
		}
	}

	for (w = 0; w < NR_WAYS; w++)
		munmap(out[w], sizeof(*out[w]));
	free(model);
	free(want);
}

/*
 * chain: a cached file sent to a TCP socket through a pipe, the way
 * sendfile(2) does it: file -> pipe linked to pipe -> socket, 64 KiB at a
 * time, the last round at EOF. splice(2) does the pair as two calls, the
 * second only if the first moved all it was asked to (as a link).
 */
#define CHAIN_SIZE	(3 * K64 + 1000)
#define CHAIN_ROUNDS	5

struct chain_out {
	char err[256];
	int res[CHAIN_ROUNDS][2];
	long long pos;
	int workers;
	unsigned int out_len;
	unsigned char out[CHAIN_SIZE + K64];
};

/* Reads a socket into a chain_out's buffer until told to stop. */
struct receiver {
	pthread_t thr;
	int fd;
	struct chain_out *o;
	int stop;
};

static void *receiver_fn(void *arg)
{
	struct receiver *r = arg;
	struct chain_out *o = r->o;
	size_t room;
	ssize_t n;

	for (;;) {
		room = sizeof(o->out) - __atomic_load_n(&o->out_len,
							__ATOMIC_RELAXED);
		if (!room)
			break;
		n = recv(r->fd, o->out + o->out_len, room, MSG_DONTWAIT);
		if (n > 0) {
			__atomic_store_n(&o->out_len, o->out_len + n,
					 __ATOMIC_RELEASE);
			continue;
		}
		if (n == 0 || (errno != EAGAIN && errno != EINTR))
			break;
		if (__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE))
			break;
		usleep(1000);
	}
	return NULL;
}

FIXTURE(chain) {
	char path[PATH_MAX];
	const char *absent;
};

FIXTURE_SETUP(chain)
{
	int c, s, ret;

	file_setup(_metadata, self->path, sizeof(self->path));
	if (_metadata->exit_code)
		return;
	ret = iou_tcp_pair(&c, &s, 0);
	if (ret)
		SKIP(return, "no TCP over loopback: %s", strerror(-ret));
	close(c);
	close(s);
	self->absent = iou_series_absent();
}

FIXTURE_TEARDOWN(chain)
{
	file_teardown(self->path);
}

/* One round, the way @w does it: file -> pipe, then pipe -> socket. */
static void chain_round(enum way w, struct iou_ring *ring, int file,
			const int p[2], int sock, unsigned int len, int *res,
			struct chain_out *o)
{
	__u8 async = w == WAY_ASYNC ? IOSQE_ASYNC : 0;
	struct io_uring_sqe *sqe;
	ssize_t n;

	if (w == WAY_SYSCALL) {
		n = splice(file, NULL, p[1], NULL, len, 0);
		res[0] = n < 0 ? -errno : (int)n;
		res[1] = -ECANCELED;
		if (res[0] == (int)len) {
			n = splice(p[0], NULL, sock, NULL, len, 0);
			res[1] = n < 0 ? -errno : (int)n;
		}
		return;
	}
	sqe = iou_get_sqe(ring);
	iou_prep_splice(sqe, p[1], (__u64)-1, file, (__u64)-1, len, 0);
	sqe->user_data = 1;
	sqe->flags = IOSQE_IO_LINK | async;
	sqe = iou_get_sqe(ring);
	iou_prep_splice(sqe, sock, (__u64)-1, p[0], (__u64)-1, len, 0);
	sqe->user_data = 2;
	sqe->flags = async;
	ring_run(ring, 2, res, o->err, sizeof(o->err));
}

struct chain_arg {
	const char *path;
};

static void chain_way(const void *arg, enum way w, void *outp)
{
	const struct chain_arg *a = arg;
	struct chain_out *o = outp;
	struct receiver r = { .o = o };
	struct iou_ring ring = { .fd = -1 };
	unsigned int len, pos = 0;
	int fd, p[2], c, round, ret;
	long long end;

	if (set_cache(a->path, CHAIN_SIZE, CACHED, false, o->err,
		      sizeof(o->err)))
		return;
	fd = open(a->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || pipe(p) || fcntl(p[1], F_SETPIPE_SZ, K64) < 0) {
		way_err(o->err, sizeof(o->err), "files: %s", strerror(errno));
		return;
	}
	/* room for a round or two: the send need not wait for the reader */
	ret = iou_tcp_pair(&c, &r.fd, 4 * K64);
	if (!ret && w != WAY_SYSCALL)
		ret = iou_setup(&ring, 8, 0);
	if (ret) {
		way_err(o->err, sizeof(o->err), "socket or ring: %s",
			strerror(-ret));
		return;
	}
	if (pthread_create(&r.thr, NULL, receiver_fn, &r)) {
		way_err(o->err, sizeof(o->err), "pthread_create failed");
		return;
	}
	for (round = 0; round < CHAIN_ROUNDS && !o->err[0]; round++) {
		len = pos < CHAIN_SIZE ? CHAIN_SIZE - pos : K64;
		if (len > K64)
			len = K64;
		chain_round(w, &ring, fd, p, c, len, o->res[round], o);
		note_workers(&o->workers);
		if (o->res[round][0] > 0)
			pos += o->res[round][0];
	}
	o->pos = lseek(fd, 0, SEEK_CUR);

	/* all of it arrives, then nothing more */
	end = iou_now_ms() + WAIT_MS;
	while (__atomic_load_n(&o->out_len, __ATOMIC_ACQUIRE) < CHAIN_SIZE &&
	       iou_now_ms() < end)
		usleep(1000);
	usleep(50000);
	__atomic_store_n(&r.stop, 1, __ATOMIC_RELEASE);
	pthread_join(r.thr, NULL);
	if (w != WAY_SYSCALL)
		iou_exit(&ring);
}

TEST_F_TIMEOUT(chain, file_pipe_tcp, 120)
{
	const int want[CHAIN_ROUNDS][2] = {
		{ K64, K64 }, { K64, K64 }, { K64, K64 }, { 1000, 1000 },
		{ 0, -ECANCELED },
	};
	unsigned char *model = malloc(CHAIN_SIZE);
	struct chain_arg arg = { .path = self->path };
	struct chain_out *out[NR_WAYS];
	int w, i;

	ASSERT_NE(NULL, model);
	fill_pattern(model, CHAIN_SIZE, 0xc4a1);
	make_file(_metadata, self->path, model, CHAIN_SIZE, 0, 0);

	for (w = 0; w < NR_WAYS; w++) {
		out[w] = shared_alloc(_metadata, sizeof(*out[w]));
		run_way(_metadata, chain_way, &arg, w, out[w]);
		ASSERT_STREQ("", out[w]->err) {
			TH_LOG("%s: %s", way_name[w], out[w]->err);
		}
	}
	TH_LOG("io-wq workers: ring %d, IOSQE_ASYNC %d",
	       out[WAY_RING]->workers, out[WAY_ASYNC]->workers);
	for (w = 0; w < NR_WAYS; w++) {
		for (i = 0; i < CHAIN_ROUNDS; i++) {
			EXPECT_EQ(want[i][0], out[w]->res[i][0]) {
				TH_LOG("%s, round %d: file -> pipe",
				       way_name[w], i);
			}
			EXPECT_EQ(want[i][1], out[w]->res[i][1]) {
				TH_LOG("%s, round %d: pipe -> socket",
				       way_name[w], i);
			}
		}
		EXPECT_EQ(CHAIN_SIZE, out[w]->pos) {
			TH_LOG("%s: file position", way_name[w]);
		}
		EXPECT_EQ(CHAIN_SIZE, out[w]->out_len) {
			TH_LOG("%s: bytes received", way_name[w]);
		}
		if (out[w]->out_len == CHAIN_SIZE) {
			EXPECT_EQ(-1, first_diff(model, out[w]->out,
						 CHAIN_SIZE)) {
				TH_LOG("%s: wrong data received", way_name[w]);
			}
		}
	}
	EXPECT_LE(1, out[WAY_ASYNC]->workers);
	if (self->absent)
		TH_LOG("no worker check for the ring: %s", self->absent);
	else
		EXPECT_EQ(0, out[WAY_RING]->workers);

	for (w = 0; w < NR_WAYS; w++)
		munmap(out[w], sizeof(*out[w]));
	free(model);
}

/*
 * churn: splices of random length from random offsets (explicit or the
 * file position) while a thread changes the file under them. The file's
 * size stays a multiple of the page (and block) size and it never has a
 * hole, so every byte below its size is that offset's byte of version A
 * or of version B (A inverted), whatever the timing; truncating to a page
 * boundary zeroes nothing. A splice may still pass on zeros where a
 * truncation and a write raced with it (churn_bad_byte()). A page the
 * pipe holds may be truncated before it is read: the read fails with
 * ENODATA, and what came before it is what arrives. Each way must give
 * no error splice(2) did not give, a result within what was asked and
 * what the file can have, the file position moved by the result, and
 * what it spliced, or a prefix of it, out of the pipe.
 */
#define CHURN_SIZE	(64 * PAGE_SZ)
#define CHURN_MS	1000
#define CHURN_MAX	300

struct churn_out {
	char err[384];
	unsigned long long errnos;	/* bit e: a splice gave -e (63: more) */
	unsigned int splices, short_count, enodata;
	unsigned long long bytes, zeros;
	int workers;
};

struct churn_arg {
	const char *path;
	const unsigned char *ver[2];
	unsigned long long seed;
};

struct mutator {
	pthread_t thr;
	const struct churn_arg *a;
	int fd;
	int stop;
	char err[128];
};

static unsigned long long xorshift64(unsigned long long *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

static void *mutator_fn(void *arg)
{
	struct mutator *m = arg;
	unsigned long long x = m->a->seed ^ 0x5a5a5a5aULL;
	unsigned int pages = CHURN_SIZE / PAGE_SZ, size = CHURN_SIZE, s, n;
	const unsigned char *v;
	int ret = 0;

	while (!ret && !__atomic_load_n(&m->stop, __ATOMIC_ACQUIRE)) {
		xorshift64(&x);
		v = m->a->ver[x & 1];
		switch ((x >> 1) % 4) {
		case 0:	/* cut, then write the rest back */
			s = (x >> 8) % (size / PAGE_SZ + 1) * PAGE_SZ;
			ret = ftruncate(m->fd, s);
			if (!ret &&
			    pwrite_all(m->fd, v + s, CHURN_SIZE - s, s) < 0)
				ret = -1;
			size = CHURN_SIZE;
			break;
		case 1:	/* cut, and leave it short for a while */
			s = (x >> 8) % (size / PAGE_SZ + 1) * PAGE_SZ;
			ret = ftruncate(m->fd, s);
			size = s;
			break;
		case 2:	/* rewrite some pages below the size */
			if (!size) {
				s = 0;
				n = pages;
			} else {
				s = (x >> 8) % (size / PAGE_SZ);
				n = 1 + (x >> 24) % (size / PAGE_SZ - s);
			}
			if (pwrite_all(m->fd, v + s * PAGE_SZ, n * PAGE_SZ,
				       s * PAGE_SZ) < 0)
				ret = -1;
			if (!size)
				size = CHURN_SIZE;
			break;
		default: /* out of the page cache: the next splice reads */
			ret = fdatasync(m->fd);
			if (!ret)
				ret = fadvise(m->fd, POSIX_FADV_DONTNEED);
			break;
		}
		if ((x >> 40) % 4 == 0)
			usleep((x >> 44) % 2000);
	}
	if (ret)
		snprintf(m->err, sizeof(m->err), "the mutator: %s",
			 strerror(errno));
	return NULL;
}

/*
 * Each byte of @buf is A's or B's at its file offset @off + i, or zero:
 * the first other byte, or -1. *@zeros counts the zeros where A and B
 * have none. A page that a truncation cut off and a write then extended
 * the file over again can be seen zero-filled, wholly or in part, as
 * read(2) can see it: filemap_splice_read() takes the folios, then checks
 * i_size; a folio filled with zeros past EOF may be the one written into.
 * splice(2) on ext4 gives such zeros too.
 */
static long churn_bad_byte(const struct churn_arg *a, long long off,
			   const unsigned char *buf, long len,
			   unsigned long long *zeros)
{
	long i;

	for (i = 0; i < len; i++) {
		if (buf[i] == a->ver[0][off + i] ||
		    buf[i] == a->ver[1][off + i])
			continue;
		if (buf[i])
			return i;
		(*zeros)++;
	}
	return -1;
}

/* The checks of one splice of @len bytes at @off that gave @res. */
static void churn_check(const struct churn_arg *a, struct churn_out *o,
			int p[2], long long off, unsigned int len, int res,
			unsigned char *buf)
{
	long got, bad;
	int rerr;

	if (res < 0) {
		o->errnos |= 1ULL << (-res < 63 ? -res : 63);
		return;
	}
	if ((unsigned int)res > len || (res && off + res > CHURN_SIZE)) {
		way_err(o->err, sizeof(o->err),
			"%d bytes at %lld, asked for %u, the file has %d at most",
			res, off, len, CHURN_SIZE);
		return;
	}
	if ((unsigned int)res < len)
		o->short_count++;
	got = drain_pipe(p[0], buf, K64 + PAGE_SZ, &rerr);
	bad = churn_bad_byte(a, off, buf, got < res ? got : res,
			     &o->zeros);
	if (got > res || bad >= 0) {
		way_err(o->err, sizeof(o->err),
			"splice at %lld of %u gave %d, %ld bytes came out, byte %ld wrong",
			off, len, res, got, bad);
		return;
	}
	o->bytes += got;
	if (got == res && !rerr)
		return;
	if (rerr != ENODATA) {
		way_err(o->err, sizeof(o->err),
			"splice at %lld gave %d, %ld bytes came out of the pipe: %s",
			off, res, got, rerr ? strerror(rerr) : "nothing more");
		return;
	}
	/* the truncated page stays in the pipe: a new pipe */
	o->enodata++;
	close(p[0]);
	close(p[1]);
	if (pipe(p) || fcntl(p[0], F_SETFL, O_NONBLOCK))
		way_err(o->err, sizeof(o->err), "pipe: %s", strerror(errno));
}

static void churn_way(const void *arg, enum way w, void *outp)
{
	const struct churn_arg *a = arg;
	struct churn_out *o = outp;
	struct mutator m = { .a = a };
	struct iou_ring ring = { .fd = -1 };
	unsigned long long x = a->seed;
	unsigned char *buf = malloc(K64 + PAGE_SZ);
	long long off, end;
	unsigned int len;
	bool at_pos;
	int fd, p[2], res, ret;

	m.fd = open(a->path, O_RDWR | O_CLOEXEC);
	fd = open(a->path, O_RDONLY | O_CLOEXEC);
	if (!buf || m.fd < 0 || fd < 0 || pipe(p) ||
	    fcntl(p[0], F_SETFL, O_NONBLOCK)) {
		way_err(o->err, sizeof(o->err), "files: %s", strerror(errno));
		return;
	}
	if (w != WAY_SYSCALL) {
		ret = iou_setup(&ring, 8, 0);
		if (ret) {
			way_err(o->err, sizeof(o->err), "ring: %s",
				strerror(-ret));
			return;
		}
	}
	if (pthread_create(&m.thr, NULL, mutator_fn, &m)) {
		way_err(o->err, sizeof(o->err), "pthread_create failed");
		return;
	}
	end = iou_now_ms() + CHURN_MS;
	while (!o->err[0] && o->splices < CHURN_MAX && iou_now_ms() < end) {
		xorshift64(&x);
		off = (x >> 8) % (CHURN_SIZE + 2 * PAGE_SZ);
		len = 1 + (x >> 32) % K64;
		at_pos = x & 1;
		if (at_pos && lseek(fd, off, SEEK_SET) != off) {
			way_err(o->err, sizeof(o->err), "lseek: %s",
				strerror(errno));
			break;
		}
		res = way_splice(w, &ring, fd, at_pos ? OFF_POS : off, p[1],
				 len, 0, o->err, sizeof(o->err));
		if (o->err[0])
			break;
		o->splices++;
		note_workers(&o->workers);
		if (at_pos &&
		    lseek(fd, 0, SEEK_CUR) != off + (res > 0 ? res : 0)) {
			way_err(o->err, sizeof(o->err),
				"splice at f_pos %lld gave %d, f_pos now %lld",
				off, res, (long long)lseek(fd, 0, SEEK_CUR));
			break;
		}
		churn_check(a, o, p, off, len, res, buf);
	}
	__atomic_store_n(&m.stop, 1, __ATOMIC_RELEASE);
	pthread_join(m.thr, NULL);
	if (m.err[0])
		way_err(o->err, sizeof(o->err), "%s", m.err);
	if (w != WAY_SYSCALL)
		iou_exit(&ring);
	free(buf);
}

FIXTURE(churn) {
	char path[PATH_MAX];
};

FIXTURE_SETUP(churn)
{
	file_setup(_metadata, self->path, sizeof(self->path));
}

FIXTURE_TEARDOWN(churn)
{
	file_teardown(self->path);
}

TEST_F_TIMEOUT(churn, truncate_rewrite, 120)
{
	unsigned char *ver[2] = { malloc(CHURN_SIZE), malloc(CHURN_SIZE) };
	const char *seed_env = getenv("SPLICE_FILE_SEED");
	struct churn_arg arg = { .path = self->path };
	struct churn_out *out[NR_WAYS];
	unsigned long long other;
	int w, i;

	ASSERT_NE(NULL, ver[0]);
	ASSERT_NE(NULL, ver[1]);
	arg.seed = seed_env ? strtoull(seed_env, NULL, 0) :
		   (unsigned long long)iou_now_ms() * 2654435761ULL;
	arg.seed |= 1;
	TH_LOG("seed %#llx (SPLICE_FILE_SEED replays it)", arg.seed);
	fill_pattern(ver[0], CHURN_SIZE, 0xc0de);
	for (i = 0; i < CHURN_SIZE; i++)
		ver[1][i] = ~ver[0][i];
	arg.ver[0] = ver[0];
	arg.ver[1] = ver[1];
	make_file(_metadata, self->path, ver[0], CHURN_SIZE, 0, 0);

	for (w = 0; w < NR_WAYS; w++) {
		out[w] = shared_alloc(_metadata, sizeof(*out[w]));
		run_way(_metadata, churn_way, &arg, w, out[w]);
		TH_LOG("%s: %u splices, %u short, %llu bytes out, %llu of them zeros,",
		       way_name[w], out[w]->splices, out[w]->short_count,
		       out[w]->bytes, out[w]->zeros);
		TH_LOG("  %u pipe reads refused (ENODATA), errors %#llx, %d io-wq workers",
		       out[w]->enodata, out[w]->errnos, out[w]->workers);
		EXPECT_STREQ("", out[w]->err) {
			TH_LOG("%s: %s", way_name[w], out[w]->err);
		}
		EXPECT_LT(0, out[w]->splices);
		EXPECT_LT(0, out[w]->bytes);
	}
	/* errors (bit e: -e) that splice(2) did not give */
	for (w = WAY_RING; w <= WAY_ASYNC; w++) {
		other = out[w]->errnos & ~out[WAY_SYSCALL]->errnos;
		EXPECT_EQ(0, other) {
			TH_LOG("%s gave errors splice(2) did not: %#llx",
			       way_name[w], other);
		}
	}

	for (w = 0; w < NR_WAYS; w++)
		munmap(out[w], sizeof(*out[w]));
	free(ver[0]);
	free(ver[1]);
}

TEST_HARNESS_MAIN
