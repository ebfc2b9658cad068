/* SPDX-License-Identifier: MIT */
/*
 * A file written all or nothing: a temporary file beside it, filled,
 * renamed over it. A reader sees the old content or the new, never a part.
 */
#ifndef LG_ATOMIC_H
#define LG_ATOMIC_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/*
 * Writes path by a temporary file beside it (path.PID.tmp, made with
 * O_EXCL and O_NOFOLLOW; one a dead process of this pid left is removed
 * first), given mode whatever the umask, filled by fill(fd, ctx) (0 or
 * -errno), fsync'd when sync, then renamed over path. On any failure the
 * temporary file is removed and path is untouched. 0 or -errno.
 */
int lg_write_atomic(const char *path, mode_t mode, bool sync,
		    int (*fill)(int fd, void *ctx), void *ctx);
/* The same, of n bytes of data, then a newline when newline. */
int lg_write_atomic_bytes(const char *path, mode_t mode, bool sync,
			  const void *data, size_t n, bool newline);
/* write(2) of all n bytes, through short writes: 0 or -errno (-EIO). */
int lg_write_all(int fd, const void *data, size_t n);

#endif
