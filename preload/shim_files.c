// SPDX-License-Identifier: MIT
#include "shim_int.h"

/* --- file operations: results only --------------------------------- */

/*
 * Failures that say something about the agent's work: not devices and
 * pseudo-files (a shell probing /dev/tty), not lock contention (EEXIST from
 * O_EXCL), not would-block or interrupted calls.
 */
static bool telling(const char *path, int err)
{
	if (!strncmp(path, "/dev/", 5) || !strncmp(path, "/proc/", 6) ||
	    !strncmp(path, "/sys/", 5))
		return false;
	switch (err) {
	case EEXIST:
	case EAGAIN:
	case EINTR:
	case ENXIO:
	case ENODEV:
	case ETXTBSY:
		return false;
	default:
		return true;
	}
}

static void report_op(int op, int dirfd, const char *path, int ret, int err)
{
	char abs[4096];
	struct lg_wire_buf w;

	if (!path || (ret != 0 && !telling(path, err)))
		return;
	if (ret == 0 && !atomic_load(&had_failure))
		return; /* a success only matters to a path that failed */
	if (ret != 0)
		atomic_store(&had_failure, true);
	if (path[0] != '/') {
		char base[4096];
		ssize_t n;

		if (dirfd == AT_FDCWD) {
			if (!getcwd(base, sizeof(base)))
				return;
		} else {
			char l[64];

			snprintf(l, sizeof(l), "/proc/self/fd/%d", dirfd);
			n = readlink(l, base, sizeof(base) - 1);
			if (n <= 0)
				return;
			base[n] = '\0';
		}
		if (snprintf(abs, sizeof(abs), "%s/%s", base, path) >=
		    (int)sizeof(abs))
			return;
		path = abs;
	}
	lg_wire_start(&w, LG_W_OP_RESULT, 0);
	lg_wire_put_u32(&w, LG_T_OP, (uint32_t)op);
	lg_wire_put_str(&w, LG_T_PATH, path);
	lg_wire_put_u32(&w, LG_T_RESULT, ret == 0 ? 0u : (uint32_t)err);
	emit(&w);
}

#define FILE_HOOK(ret_t, name, params, call, op, dirfd, path)           \
	LG_EXPORT ret_t name params                                     \
	{                                                               \
		ret_t r;                                                \
		int e;                                                  \
		bool on = enter();                                      \
                                                                        \
		if (!real.name) {                                       \
			if (on)                                         \
				leave();                                \
			errno = ENOSYS;                                 \
			return -1;                                      \
		}                                                       \
		r = real.call;                                          \
		e = errno;                                              \
		if (on) {                                               \
			report_op(op, dirfd, path, r == 0 ? 0 : -1, e); \
			leave();                                        \
		}                                                       \
		errno = e;                                              \
		return r;                                               \
	}

FILE_HOOK(int, unlink, (const char *p), unlink(p), OP_UNLINK, AT_FDCWD, p)
FILE_HOOK(int, rmdir, (const char *p), rmdir(p), OP_RMDIR, AT_FDCWD, p)
FILE_HOOK(int, remove, (const char *p), remove(p), OP_UNLINK, AT_FDCWD, p)
FILE_HOOK(int, unlinkat, (int d, const char *p, int f), unlinkat(d, p, f),
	  (f & AT_REMOVEDIR) ? OP_RMDIR : OP_UNLINK, d, p)
FILE_HOOK(int, rename, (const char *a, const char *b), rename(a, b), OP_RENAME,
	  AT_FDCWD, a)
FILE_HOOK(int, renameat, (int da, const char *a, int db, const char *b),
	  renameat(da, a, db, b), OP_RENAME, da, a)
FILE_HOOK(int, renameat2,
	  (int da, const char *a, int db, const char *b, unsigned f),
	  renameat2(da, a, db, b, f), OP_RENAME, da, a)
FILE_HOOK(int, truncate, (const char *p, off_t l), truncate(p, l), OP_TRUNCATE,
	  AT_FDCWD, p)

LG_EXPORT int truncate64(const char *p, off_t l)
	__attribute__((alias("truncate")));

static bool writes(int flags)
{
	return (flags & O_ACCMODE) != O_RDONLY || (flags & (O_CREAT | O_TRUNC));
}

static void report_open(int dirfd, const char *path, int flags, int r, int e)
{
	/*
	 * ENOENT without O_CREAT: "write to it if it is there" (git appends
	 * to a reflog only where one exists): a probe, not a failed write
	 */
	if (r < 0 && e == ENOENT && !(flags & (O_CREAT | O_TMPFILE)))
		return;
	if (writes(flags))
		report_op(OP_WRITE, dirfd, path, r >= 0 ? 0 : -1, e);
}

#define OPEN_MODE(flags, mode)                         \
	do {                                           \
		if ((flags) & (O_CREAT | O_TMPFILE)) { \
			va_list ap;                    \
			va_start(ap, flags);           \
			mode = va_arg(ap, int);        \
			va_end(ap);                    \
		}                                      \
	} while (0)

/* After any open: report it, forget what the fd number was, errno kept. */
static int after_open(bool on, int d, const char *p, int flags, int r)
{
	int e = errno;

	if (on) {
		report_open(d, p, flags, r, e);
		leave();
	}
	if (r >= 0 && r < FD_TRACK)
		fd_kind[r] = 0;
	errno = e;
	return r;
}

LG_EXPORT int open(const char *p, int flags, ...)
{
	bool on = enter();
	int mode = 0, r;

	OPEN_MODE(flags, mode);
	r = real.open ? real.open(p, flags, mode) : (errno = ENOSYS, -1);
	return after_open(on, AT_FDCWD, p, flags, r);
}

LG_EXPORT int open64(const char *p, int flags, ...)
	__attribute__((alias("open")));

LG_EXPORT int openat(int d, const char *p, int flags, ...)
{
	bool on = enter();
	int mode = 0, r;

	OPEN_MODE(flags, mode);
	r = real.openat ? real.openat(d, p, flags, mode) : (errno = ENOSYS, -1);
	return after_open(on, d, p, flags, r);
}

LG_EXPORT int openat64(int d, const char *p, int flags, ...)
	__attribute__((alias("openat")));

LG_EXPORT int creat(const char *p, mode_t m)
{
	bool on = enter();
	int r, e;

	r = real.creat ? real.creat(p, m) : (errno = ENOSYS, -1);
	e = errno;
	if (on) {
		report_open(AT_FDCWD, p, O_WRONLY | O_CREAT | O_TRUNC, r, e);
		leave();
	}
	errno = e;
	return r;
}

LG_EXPORT int creat64(const char *p, mode_t m) __attribute__((alias("creat")));

LG_EXPORT FILE *fopen(const char *p, const char *mode)
{
	bool on = enter();
	FILE *f;
	int e;

	f = real.fopen ? real.fopen(p, mode) : (errno = ENOSYS, NULL);
	e = errno;
	if (on) {
		if (mode && (strchr(mode, 'w') || strchr(mode, 'a') ||
			     strchr(mode, '+')))
			report_op(OP_WRITE, AT_FDCWD, p, f ? 0 : -1, e);
		leave();
	}
	errno = e;
	return f;
}

LG_EXPORT FILE *fopen64(const char *p, const char *mode)
	__attribute__((alias("fopen")));

LG_EXPORT int ftruncate(int fd, off_t len)
{
	int r, e;

	ensure();
	r = real.ftruncate ? real.ftruncate(fd, len) : (errno = ENOSYS, -1);
	e = errno;
	if (r != 0 && active && !in_shim) {
		char l[64], path[4096];
		ssize_t n;

		in_shim = 1;
		snprintf(l, sizeof(l), "/proc/self/fd/%d", fd);
		n = readlink(l, path, sizeof(path) - 1);
		if (n > 0) {
			path[n] = '\0';
			report_op(OP_TRUNCATE, AT_FDCWD, path, -1, e);
		}
		in_shim = 0;
	}
	errno = e;
	return r;
}

LG_EXPORT int ftruncate64(int fd, off_t len)
	__attribute__((alias("ftruncate")));

/* _FORTIFY_SOURCE builds call these for opens without a mode. */
LG_EXPORT int __open_2(const char *p, int flags)
{
	bool on = enter();
	int r;

	r = real.__open_2 ? real.__open_2(p, flags) : (errno = ENOSYS, -1);
	return after_open(on, AT_FDCWD, p, flags, r);
}

LG_EXPORT int __open64_2(const char *p, int flags)
	__attribute__((alias("__open_2")));

LG_EXPORT int __openat_2(int d, const char *p, int flags)
{
	bool on = enter();
	int r;

	r = real.__openat_2 ? real.__openat_2(d, p, flags) :
			      (errno = ENOSYS, -1);
	return after_open(on, d, p, flags, r);
}

LG_EXPORT int __openat64_2(int d, const char *p, int flags)
	__attribute__((alias("__openat_2")));
