/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What splice_sendfile and sendfile_many share: the file they send and
 * the pattern that lets a reader check every byte it got.
 */
#ifndef __SENDFILE_HELPERS_H
#define __SENDFILE_HELPERS_H

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/types.h>
#include <unistd.h>

/* The byte at file offset @off: no short period, so a shifted read shows */
static inline unsigned char sendfile_pattern(long long off)
{
	return (unsigned char)((off * 131) ^ (off >> 9));
}

/*
 * Create @path with @size bytes of the pattern, synced, and read once a
 * tick after the write: the access time is then later than the
 * modification time, relatime has nothing to update, and the nowait
 * page-cache read takes the file (it refuses one whose access time is
 * due, an empty file included). Returns an O_RDWR fd, or -1 with errno.
 */
static inline int sendfile_cached_file(const char *path, size_t size)
{
	size_t chunk = size < 65536 ? size : 65536, done, i;
	unsigned char *buf = malloc(chunk ? chunk : 1);
	int fd, err;

	if (!buf)
		return -1;
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		goto fail;
	for (done = 0; done < size; done += chunk) {
		size_t n = size - done < chunk ? size - done : chunk;

		for (i = 0; i < n; i++)
			buf[i] = sendfile_pattern(done + i);
		if (pwrite(fd, buf, n, done) != (ssize_t)n)
			goto fail;
	}
	if (fsync(fd) || usleep(20 * 1000))
		goto fail;
	done = 0;
	do {
		if (pread(fd, buf, chunk ? chunk : 1, done) < 0)
			goto fail;
		done += chunk;
	} while (done < size);
	free(buf);
	return fd;
fail:
	err = errno;
	if (fd >= 0)
		close(fd);
	free(buf);
	errno = err;
	return -1;
}

#endif
