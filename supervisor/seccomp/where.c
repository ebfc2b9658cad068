// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "lib/clock.h"
#include "where_int.h"

#define MAX_SYMLINKS 40 /* the kernel's own limit */

/*
 * This resolve's proof that its task is alive (lg_where.alive): set when
 * the directory came through a vouched pidfd, cleared by any later read
 * of the task by its pid number. fresh_slot: the pidfd this resolve
 * opened, which lg_where_vouch may vouch for.
 */
static __thread bool proof;
static __thread int fresh_slot = -1;

/* The last component of a path's text; "" for "/", "." and "..". */
static int split(const char *raw, char *parent, size_t psize, char *last)
{
	size_t n = strlen(raw), p;
	const char *base;
	size_t bn;

	while (n > 1 && raw[n - 1] == '/')
		n--; /* "d/" names d */
	for (p = n; p > 0 && raw[p - 1] != '/'; p--)
		;
	base = raw + p;
	bn = n - p;
	if (bn > NAME_MAX)
		return -ENAMETOOLONG;
	if (bn == 0 || (bn == 1 && base[0] == '.') ||
	    (bn == 2 && base[0] == '.' && base[1] == '.')) {
		/* the path names a directory by itself */
		if (n >= psize)
			return -ENAMETOOLONG;
		memcpy(parent, raw, n);
		parent[n] = '\0';
		last[0] = '\0';
		return 0;
	}
	memcpy(last, base, bn);
	last[bn] = '\0';
	if (p == 0) {
		snprintf(parent, psize, ".");
		return 0;
	}
	if (p >= psize)
		return -ENAMETOOLONG;
	memcpy(parent, raw, p); /* with its '/': "/" stays "/" */
	parent[p] = '\0';
	return 0;
}

/* "/proc/self..." and "/proc/thread-self..." as the target means them. */
static bool proc_self(const char *raw, pid_t pid, char *out, size_t size)
{
	static const char self[] = "/proc/self", thr[] = "/proc/thread-self";
	const char *rest;
	int r;

	if (strncmp(raw, self, sizeof(self) - 1) == 0 &&
	    (raw[sizeof(self) - 1] == '/' || !raw[sizeof(self) - 1])) {
		rest = raw + sizeof(self) - 1;
		r = snprintf(out, size, "/proc/%d%s", pid, rest);
	} else if (strncmp(raw, thr, sizeof(thr) - 1) == 0 &&
		   (raw[sizeof(thr) - 1] == '/' || !raw[sizeof(thr) - 1])) {
		rest = raw + sizeof(thr) - 1;
		r = snprintf(out, size, "/proc/%d/task/%d%s", pid, pid, rest);
	} else {
		return false;
	}
	return r > 0 && (size_t)r < size;
}

/*
 * "/dev/fd/N...", "/dev/stdin", "/dev/stdout", "/dev/stderr": the links
 * every system has to /proc/self/fd. Followed by the kernel from lgrun's
 * view they would name lgrun's own descriptors: as /proc/self/fd/... they
 * are the task's (proc_self).
 */
static bool dev_fd(const char *raw, char *out, size_t size)
{
	static const char *const std[] = { "/dev/stdin", "/dev/stdout",
					   "/dev/stderr" };
	int r = -1;

	if (strncmp(raw, "/dev/fd", 7) == 0 && (raw[7] == '/' || !raw[7])) {
		r = snprintf(out, size, "/proc/self/fd%s", raw + 7);
	} else {
		for (int i = 0; i < 3 && r < 0; i++) {
			size_t n = strlen(std[i]);

			if (strncmp(raw, std[i], n) == 0 &&
			    (raw[n] == '/' || !raw[n]))
				r = snprintf(out, size, "/proc/self/fd/%d%s", i,
					     raw + n);
		}
	}
	return r > 0 && (size_t)r < size;
}

static size_t digits(const char *p)
{
	size_t n = 0;

	while (p[n] >= '0' && p[n] <= '9')
		n++;
	return n;
}

/*
 * The length of a magic link at the start of raw, when a path goes on
 * through it: "/proc/N/cwd", "/proc/N/root", "/proc/N/fd/M" (and under
 * /proc/N/task/T/), then "/". 0 when raw does not start with one.
 */
static size_t magic_prefix(const char *raw)
{
	const char *p = raw;
	size_t n;

	if (strncmp(p, "/proc/", 6) != 0 || !(n = digits(p + 6)) ||
	    p[6 + n] != '/')
		return 0;
	p += 6 + n + 1;
	if (strncmp(p, "task/", 5) == 0 && (n = digits(p + 5)) &&
	    p[5 + n] == '/')
		p += 5 + n + 1;
	if (strncmp(p, "cwd/", 4) == 0)
		p += 3;
	else if (strncmp(p, "root/", 5) == 0)
		p += 4;
	else if (strncmp(p, "fd/", 3) == 0 && (n = digits(p + 3)) &&
		 p[3 + n] == '/')
		p += 3 + n;
	else
		return 0;
	return (size_t)(p - raw);
}

static struct statx our_root;
static bool have_root;

static void read_our_root(void)
{
	have_root = statx(AT_FDCWD, "/", 0, STATX_INO | STATX_MNT_ID,
			  &our_root) == 0;
}

/* Does the task see "/" where lgrun does (no chroot, same mounts)? */
static bool same_root(pid_t pid)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	const struct statx *ours = &our_root;
	struct statx st;
	char p[40];

	pthread_once(&once, read_our_root);
	if (!have_root)
		return true;
	proof = false; /* the task read by its pid number */
	snprintf(p, sizeof(p), "/proc/%d/root", pid);
	if (statx(AT_FDCWD, p, 0, STATX_INO | STATX_MNT_ID, &st) < 0)
		return true; /* gone: nothing to resolve anyway */
	return st.stx_ino == ours->stx_ino &&
	       st.stx_dev_major == ours->stx_dev_major &&
	       st.stx_dev_minor == ours->stx_dev_minor &&
	       (!(st.stx_mask & STATX_MNT_ID) ||
		st.stx_mnt_id == ours->stx_mnt_id);
}

static int open_dir(int base, const char *path, bool in_root)
{
	struct open_how how = {
		.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
		.resolve = in_root ? RESOLVE_IN_ROOT : 0,
	};
	long fd = syscall(SYS_openat2, base, path, &how, sizeof(how));

	if (fd < 0 && (errno == EXDEV || errno == ELOOP) && in_root) {
		/*
		 * RESOLVE_IN_ROOT refuses a magic link (/proc/N/fd/M/...)
		 * with EXDEV (ELOOP before Linux 5.x): one that step() did
		 * not see in the text (through a symlink). Walked again
		 * from the task's root, relative: its components are the
		 * task's, only an absolute link among them means lgrun's
		 * root then.
		 */
		while (*path == '/')
			path++;
		how.resolve = 0;
		fd = syscall(SYS_openat2, base, *path ? path : ".", &how,
			     sizeof(how));
	}
	if (fd < 0 && errno == ENOSYS) /* before Linux 5.6 */
		fd = openat(base, path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	return fd < 0 ? -errno : (int)fd;
}

/*
 * The task's own descriptor dirfd, duplicated into ours through a pidfd
 * (pidfd_getfd: the very open directory, no walk of /proc/PID/fd/N, the
 * costliest step of a notified unlinkat(dirfd, name) as rm -r makes them).
 * Each notify thread keeps the pidfds of the last tasks it served. -errno
 * when the way is closed (ENOSYS, EPERM: the caller opens /proc/PID/fd/N
 * as before); a task that is gone or a pid reused is caught by the
 * notification's ID_VALID check after, as with /proc.
 */
#define PIDFDS 16
static __thread struct {
	pid_t pid;
	int fd;
	/*
	 * Its task was the one a notification came from: the pidfd was
	 * opened after that notification arrived, and the notification was
	 * found valid after that (lg_where_vouch).
	 */
	bool vouched;
} pidfds[PIDFDS];
static __thread unsigned pidfds_next;
static atomic_bool getfd_off;

static int getfd_of(pid_t pid, int dirfd, struct statx *st)
{
	int slot = -1, fd;

	if (atomic_load_explicit(&getfd_off, memory_order_relaxed))
		return -ENOSYS;
	for (int i = 0; i < PIDFDS; i++)
		if (pidfds[i].pid == pid && pidfds[i].fd > 0)
			slot = i;
	for (int tries = 0; tries < 2; tries++) {
		if (slot < 0) {
			int pfd = (int)syscall(SYS_pidfd_open, pid, 0);

			if (pfd < 0)
				return -errno;
			slot = (int)(pidfds_next++ % PIDFDS);
			if (pidfds[slot].fd > 0)
				close(pidfds[slot].fd);
			pidfds[slot].pid = pid;
			pidfds[slot].fd = pfd;
			pidfds[slot].vouched = false;
			fresh_slot = slot;
		}
		fd = (int)syscall(SYS_pidfd_getfd, pidfds[slot].fd, dirfd, 0);
		if (fd >= 0) {
			/*
			 * Its task held its files just now, so it has not
			 * ended, and it still holds pid: the bytes read by
			 * that number before were its own.
			 */
			proof = pidfds[slot].vouched;
			break;
		}
		if (errno == EBADF) /* not an open fd of the task, or our
				       pidfd gone: /proc says which */
			return -ENOSYS;
		if (errno == ENOSYS) { /* before Linux 5.6 */
			atomic_store(&getfd_off, true);
			return -ENOSYS;
		}
		if (errno == EPERM) /* this task is not ours to look into
				       (not dumpable): /proc says why */
			return -ENOSYS;
		/* ESRCH: a pidfd of an earlier task with this pid */
		close(pidfds[slot].fd);
		pidfds[slot].fd = 0;
		pidfds[slot].pid = 0;
		slot = -1;
	}
	if (fd < 0)
		return -ENOSYS;
	/*
	 * What open(O_DIRECTORY) of /proc/PID/fd/N would have refused; the
	 * same statx says which directory it is (the display path's cache).
	 */
	if (statx(fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, DIR_ID_MASK,
		  st) < 0 ||
	    !S_ISDIR(st->stx_mode)) {
		close(fd);
		return -ENOTDIR;
	}
	return fd;
}

/*
 * The directory a base names for the task: its root, its working
 * directory or one of its fds. -errno as the kernel would fail the call.
 */
static int open_base(pid_t pid, int dirfd, bool absolute, struct statx *st)
{
	char p[64];
	int fd;

	st->stx_mask = 0;
	if (!absolute && dirfd >= 0) {
		fd = getfd_of(pid, dirfd, st);
		if (fd >= 0 || fd == -ENOTDIR)
			return fd;
		st->stx_mask = 0;
	}
	proof = false; /* the task read by its pid number */
	if (absolute)
		snprintf(p, sizeof(p), "/proc/%d/root", pid);
	else if (dirfd == AT_FDCWD)
		snprintf(p, sizeof(p), "/proc/%d/cwd", pid);
	else if (dirfd < 0)
		return -EBADF;
	else
		snprintf(p, sizeof(p), "/proc/%d/fd/%d", pid, dirfd);
	fd = open(p, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0)
		return fd;
	if (errno == ENOENT && !absolute && dirfd != AT_FDCWD)
		return -EBADF; /* not an open fd of the task */
	return -errno;
}

static void display(struct lg_where *w, struct statx *st)
{
	size_t n, ln = strlen(w->last);
	ssize_t r;

	r = where_dir_path(w, st);
	if (st->stx_mask & STATX_INO) {
		w->dir_dev = makedev(st->stx_dev_major, st->stx_dev_minor);
		w->dir_ino = st->stx_ino;
	}
	if (r > 0) {
		n = (size_t)r;
		if (!ln)
			return;
		if (n + 1 + ln < sizeof(w->path)) {
			if (n > 1)
				w->path[n++] = '/';
			memcpy(w->path + n, w->last, ln + 1);
			return;
		}
	}
	/* Longer than the kernel prints: named by the directory's inode. */
	if (!(st->stx_mask & STATX_INO) &&
	    statx(w->dirfd, "", AT_EMPTY_PATH, STATX_INO, st) < 0)
		memset(st, 0, sizeof(*st));
	snprintf(w->path, sizeof(w->path), "\u2026/[dir %u:%u %llu]%s%s",
		 st->stx_dev_major, st->stx_dev_minor,
		 (unsigned long long)st->stx_ino, w->last[0] ? "/" : "",
		 w->last);
}

/*
 * One step: raw from base (an fd the caller keeps, or -1 to open the
 * task's own), into w (dirfd, last).
 */
static int step(pid_t pid, int base, int dirfd, const char *raw,
		struct lg_where *w, struct statx *st)
{
	char parent[PATH_MAX + 1], proc[PATH_MAX + 1], devfd[PATH_MAX + 1];
	struct statx own_st = { 0 };
	bool in_root = false, in_proc = false;
	size_t magic;
	int own = -1, r;

	st->stx_mask = 0; /* which directory w->dirfd is: not known yet */
	if (!raw[0])
		return -ENOENT;
	if (raw[0] == '/' && dev_fd(raw, devfd, sizeof(devfd)))
		raw = devfd;
	if (raw[0] == '/' && magic_prefix(raw))
		proof = false; /* a task's magic link, read by its pid */
	if (raw[0] == '/' && proc_self(raw, pid, proc, sizeof(proc))) {
		proof = false;
		raw = proc; /* in lgrun's /proc, where pid means the task */
		base = AT_FDCWD;
		in_proc = true;
	}
	magic = raw[0] == '/' ? magic_prefix(raw) : 0;
	if (magic) {
		/*
		 * A magic link (a task's cwd, root or open directory) is
		 * the very directory it names, whatever the view: opened
		 * in lgrun's /proc, the rest of the path is walked from it.
		 */
		char link[64];

		if (magic >= sizeof(link))
			return -ENAMETOOLONG;
		memcpy(link, raw, magic);
		link[magic] = '\0';
		own = open(link, O_PATH | O_CLOEXEC);
		if (own < 0) {
			w->err = errno; /* the call will fail as well */
			return 0;
		}
		for (raw += magic; *raw == '/'; raw++)
			;
		if (!*raw)
			raw = ".";
		base = own;
	} else if (in_proc) {
		/* from lgrun's root: the /proc it reads */
	} else if (raw[0] == '/' && same_root(pid)) {
		base = AT_FDCWD;
	} else if (base < 0 || raw[0] == '/') {
		own = open_base(pid, dirfd, raw[0] == '/', &own_st);
		if (own < 0)
			return own;
		base = own;
		in_root = raw[0] == '/';
	}
	r = split(raw, parent, sizeof(parent), w->last);
	if (r < 0)
		goto out;
	if (strcmp(parent, ".") == 0 && own >= 0) {
		r = own; /* the base itself: handed over */
		own = -1;
		*st = own_st;
	} else if (strcmp(parent, ".") == 0 && base != AT_FDCWD) {
		r = fcntl(base, F_DUPFD_CLOEXEC, 0);
		r = r < 0 ? -errno : r;
	} else {
		r = open_dir(base, parent, in_root);
	}
	if (r >= 0) {
		w->dirfd = r;
		r = 0;
	} else if (r != -ENAMETOOLONG) {
		w->err = -r; /* the call will fail as well */
		r = 0;
	}
out:
	if (own >= 0)
		close(own);
	return r;
}

int lg_where_resolve(pid_t pid, int dirfd, const char *raw, bool follow,
		     struct lg_where *w)
{
	char link[PATH_MAX + 1];
	struct statx dir_st;
	int r;

	w->dirfd = -1;
	w->err = 0;
	w->alive = false;
	w->dir_dev = w->dir_ino = 0;
	w->last[0] = '\0';
	w->path[0] = '\0';
	proof = false;
	fresh_slot = -1;
	r = step(pid, -1, dirfd, raw, w, &dir_st);
	for (int hops = 0; r == 0 && follow && w->dirfd >= 0 && w->last[0];
	     hops++) {
		struct statx st;
		ssize_t n;
		int dfd;

		if (statx(w->dirfd, w->last, AT_SYMLINK_NOFOLLOW, STATX_TYPE,
			  &st) < 0 ||
		    !S_ISLNK(st.stx_mode))
			break;
		if (hops == MAX_SYMLINKS) {
			close(w->dirfd);
			w->dirfd = -1;
			w->err = ELOOP;
			break;
		}
		n = readlinkat(w->dirfd, w->last, link, sizeof(link) - 1);
		if (n <= 0 || (size_t)n >= sizeof(link) - 1)
			break;
		link[n] = '\0';
		/* a relative link is read from the link's own directory */
		dfd = w->dirfd;
		w->dirfd = -1;
		r = step(pid, dfd, AT_FDCWD, link, w, &dir_st);
		close(dfd);
	}
	if (r < 0) {
		if (w->dirfd >= 0)
			close(w->dirfd);
		w->dirfd = -1;
		return r;
	}
	if (w->dirfd >= 0)
		display(w, &dir_st);
	w->alive = proof;
	return 0;
}

void lg_where_vouch(void)
{
	if (fresh_slot >= 0 && pidfds[fresh_slot].fd > 0)
		pidfds[fresh_slot].vouched = true;
	fresh_slot = -1;
}

void lg_where_done(struct lg_where *w)
{
	if (w->dirfd >= 0)
		close(w->dirfd);
	w->dirfd = -1;
}

int lg_where_statx(const struct lg_where *w, bool follow, unsigned mask,
		   struct statx *st)
{
	int flags = w->last[0] ? 0 : AT_EMPTY_PATH;

	if (w->dirfd < 0)
		return -(w->err ? w->err : ENOENT);
	if (!follow)
		flags |= AT_SYMLINK_NOFOLLOW;
	if (statx(w->dirfd, w->last, flags, mask, st) < 0)
		return -errno;
	return 0;
}

int lg_where_statx_dir(const struct lg_where *w, unsigned mask,
		       struct statx *st)
{
	if (w->dirfd < 0)
		return -(w->err ? w->err : ENOENT);
	if (statx(w->dirfd, "", AT_EMPTY_PATH, mask, st) < 0)
		return -errno;
	return 0;
}

int lg_where_opendir(const struct lg_where *w)
{
	int fd;

	if (w->dirfd < 0)
		return -(w->err ? w->err : ENOENT);
	fd = openat(w->dirfd, w->last[0] ? w->last : ".",
		    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

int lg_where_open(const struct lg_where *w, int flags)
{
	int fd;

	if (w->dirfd < 0)
		return -(w->err ? w->err : ENOENT);
	if (!w->last[0])
		return -EISDIR; /* the path names the directory itself */
	fd = openat(w->dirfd, w->last, flags | O_NOFOLLOW | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}
