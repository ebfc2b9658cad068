// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atomic.h"

int lg_write_all(int fd, const void *data, size_t n)
{
	const char *p = data;

	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -EIO;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

int lg_write_atomic(const char *path, mode_t mode, bool sync,
		    int (*fill)(int fd, void *ctx), void *ctx)
{
	char tmp[4200];
	int fd, r;

	if (snprintf(tmp, sizeof(tmp), "%s.%d.tmp", path, getpid()) >=
	    (int)sizeof(tmp))
		return -ENAMETOOLONG;
	unlink(tmp); /* one a dead process of this pid left */
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		  mode);
	if (fd < 0)
		return -errno;
	r = fchmod(fd, mode) < 0 ? -errno : 0;
	if (!r)
		r = fill(fd, ctx);
	if (!r && sync && fsync(fd) < 0)
		r = -errno;
	if (close(fd) < 0 && !r)
		r = -errno;
	if (!r && rename(tmp, path) < 0)
		r = -errno;
	if (r)
		unlink(tmp);
	return r;
}

struct bytes {
	const void *data;
	size_t n;
	bool newline;
};

static int fill_bytes(int fd, void *ctx)
{
	const struct bytes *b = ctx;
	int r = lg_write_all(fd, b->data, b->n);

	return r || !b->newline ? r : lg_write_all(fd, "\n", 1);
}

int lg_write_atomic_bytes(const char *path, mode_t mode, bool sync,
			  const void *data, size_t n, bool newline)
{
	struct bytes b = { data, n, newline };

	return lg_write_atomic(path, mode, sync, fill_bytes, &b);
}
