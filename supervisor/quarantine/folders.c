// SPDX-License-Identifier: MIT
/*
 * The quarantine's folders: one per mount, made 0700 and checked from fds
 * (quarantine_int.h); the path of a target in lgrun's view.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "lib/cleanup.h"
#include "lib/error.h"
#include "lib/log.h"
#include "lib/text.h"
#include "quarantine_int.h"

static bool under(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	return strncmp(path, dir, n) == 0 && (path[n] == '/' || !path[n]);
}

bool lg_quarantine_path(const struct lg_quarantine *q, const char *path)
{
	const char *p = strstr(path, "/" LG_QUARANTINE_DIR);

	for (; p; p = strstr(p + 1, "/" LG_QUARANTINE_DIR)) {
		char end = p[1 + sizeof(LG_QUARANTINE_DIR) - 1];

		if (end == '/' || end == '\0')
			return true;
	}
	for (size_t i = 0; q && i < q->nfolders; i++)
		if (under(path, q->folders[i]))
			return true;
	return false;
}

static uint64_t mount_of(const char *path)
{
	struct statx st;

	if (statx(AT_FDCWD, path, AT_SYMLINK_NOFOLLOW, STATX_MNT_ID, &st) < 0 ||
	    !(st.stx_mask & STATX_MNT_ID))
		return 0;
	return st.stx_mnt_id;
}

/* The configured folder on mount mnt (it may not exist yet: its parent's). */
static bool configured(const struct lg_quarantine *q, uint64_t mnt, char *out,
		       size_t size)
{
	for (size_t i = 0; i < q->nfolders; i++) {
		char parent[PATH_MAX];
		uint64_t m = mount_of(q->folders[i]);

		if (!m) {
			snprintf(parent, sizeof(parent), "%s", q->folders[i]);
			*strrchr(parent, '/') = '\0';
			m = mount_of(parent[0] ? parent : "/");
		}
		if (m == mnt) {
			snprintf(out, size, "%s", q->folders[i]);
			return true;
		}
	}
	return false;
}

/* mountinfo's octal escapes (\040 for a space) undone in place. */
static void unescape(char *s)
{
	char *w = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' &&
		    s[2] <= '7' && s[3] >= '0' && s[3] <= '7') {
			*w++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 +
				      (s[3] - '0'));
			s += 3;
		} else {
			*w++ = *s;
		}
	}
	*w = '\0';
}

/* Where mount mnt_id is mounted, in lgrun's view. */
int lg_quarantine_mount_top(uint64_t mnt_id, char *out, size_t size)
{
	LG_AUTOFCLOSE FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[PATH_MAX * 2];

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long id;
		char mnt[PATH_MAX];

		if (sscanf(line, "%llu %*u %*s %*s %4095s", &id, mnt) != 2 ||
		    id != mnt_id)
			continue;
		unescape(mnt);
		snprintf(out, size, "%s", mnt);
		return 0;
	}
	return -ENOENT;
}

int lg_quarantine_mkdir_0700(const char *path)
{
	if (mkdir(path, 0700) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

/*
 * A folder lgrun may keep files in: a directory, not a symlink, owned by
 * root or by lgrun's user, writable by no one else (another local user
 * could otherwise swap what it holds before a restore). Checked on the
 * folder opened without following a symlink; *fd is that folder. 0, or
 * -EPERM with err (or another -errno).
 */
static int trusted_at(int at, const char *name, const char *shown, int *fd,
		      struct lg_error *err)
{
	struct stat st;
	int d = openat(at, name,
		       O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (d < 0) {
		if (errno == ELOOP || errno == ENOTDIR)
			lg_error_set(err, errno,
				     "%s is not a directory (a symlink?)",
				     shown);
		return errno == ELOOP ? -EPERM : -errno;
	}
	if (fstat(d, &st) < 0) {
		close(d);
		return -errno;
	}
	if ((st.st_uid != 0 && st.st_uid != geteuid()) || (st.st_mode & 022)) {
		close(d);
		return lg_error_set(
			err, EPERM,
			"%s is owned by uid %u with mode %04o (it must be root's or lgrun's own, writable by no one else)",
			shown, (unsigned)st.st_uid,
			(unsigned)(st.st_mode & 07777));
	}
	lg_closep(fd);
	*fd = d;
	return 0;
}

static int trusted(const char *path, int *fd, struct lg_error *err)
{
	return trusted_at(AT_FDCWD, path, path, fd, err);
}

/* <top>/<session>, made 0700 from top's fd (r->fd), then r->fd. */
static int session_folder(struct lg_quarantine *q, struct lg_qroot *r,
			  struct lg_error *err)
{
	if (mkdirat(r->fd, q->session, 0700) < 0 && errno != EEXIST)
		return -errno;
	return trusted_at(r->fd, q->session, r->path, &r->fd, err);
}

/*
 * This session's folder on the mount that holds path: under the state dir
 * when it is that mount, else .lgrun-quarantine at the mount's top.
 */
static struct lg_qroot *find_root(struct lg_quarantine *q, const char *path,
				  char *dir, size_t dirsize)
{
	uint64_t mnt;

	lg_strtrunc(dir, dirsize, path); /* at every removal: no printf */
	*strrchr(dir, '/') = '\0';
	if (q->last_root && strcmp(dir, q->last_dir) == 0)
		return q->last_root;
	mnt = mount_of(dir[0] ? dir : "/");
	if (!mnt)
		return NULL;
	return lg_quarantine_root_of_mount(q, mnt, dir);
}

/* This session's folder on mount mnt (dir: a directory there, for words). */
struct lg_qroot *lg_quarantine_root_of_mount(struct lg_quarantine *q,
					     uint64_t mnt, const char *dir)
{
	char top[PATH_MAX];
	struct lg_error why = { "" };
	struct lg_qroot *r;
	int e;

	for (size_t i = 0; i < q->nroots; i++)
		if (q->roots[i].mnt_id == mnt)
			return &q->roots[i];
	if (q->nroots == MAX_ROOTS)
		return NULL;
	r = &q->roots[q->nroots++];
	r->mnt_id = mnt;
	r->bucket_fd = -1;
	r->fd = -1;
	if (configured(q, mnt, top, sizeof(top))) {
		e = lg_quarantine_mkdir_0700(
			top); /* its parent is the user's to make */
	} else if (mount_of(q->state_dir) == mnt) {
		snprintf(top, sizeof(top), "%s/quarantine", q->state_dir);
		e = lg_quarantine_mkdir_0700(top);
	} else {
		e = lg_quarantine_mount_top(mnt, top, sizeof(top));
		if (!e) {
			size_t n = strlen(top);

			snprintf(top + n, sizeof(top) - n, "%s%s",
				 top[n - 1] == '/' ? "" : "/",
				 LG_QUARANTINE_DIR);
			e = lg_quarantine_mkdir_0700(top);
		}
	}
	if ((size_t)snprintf(r->path, sizeof(r->path), "%s/%s", top,
			     q->session) >= sizeof(r->path))
		e = e ? e : -ENAMETOOLONG;
	if (!e)
		e = trusted(top, &r->fd, &why);
	if (!e)
		e = session_folder(q, r, &why);
	if (!e) {
		struct stat st;

		if (fstat(r->fd, &st) == 0) {
			r->dev = st.st_dev;
			r->ino = st.st_ino;
		}
	}
	r->err = e;
	if (e && why.msg[0])
		lg_warn("quarantine: %s: refused; what is removed or changed on the mount of %s is copied to the state dir's folder instead (up to max_copy)",
			why.msg, dir[0] ? dir : "/");
	else if (e)
		lg_warn("quarantine: no folder on the mount of %s (%s): what is removed there is not kept",
			dir[0] ? dir : "/", strerror(-e));
	return r;
}

struct lg_qroot *lg_quarantine_root_for(struct lg_quarantine *q,
					const char *path)
{
	char dir[PATH_MAX];
	struct lg_qroot *r = find_root(q, path, dir, sizeof(dir));

	if (r && (r != q->last_root || strcmp(dir, q->last_dir) != 0)) {
		snprintf(q->last_dir, sizeof(q->last_dir), "%s", dir);
		lg_closep(&q->last_dir_fd);
		q->last_root = r;
	}
	return r;
}

/*
 * at_dirfd opened again on lgrun's own mount of its filesystem, by a file
 * handle: a directory of the tree's own mount namespace (a bind mount, a
 * copy of lgrun's mounts) has no name in lgrun's view otherwise. Needs
 * CAP_DAC_READ_SEARCH (lgrun as root); -errno without it.
 */
static int reopen_here(int at_dirfd)
{
	struct {
		struct file_handle h;
		unsigned char bytes[MAX_HANDLE_SZ];
	} fh;
	LG_AUTOFCLOSE FILE *f = NULL;
	LG_AUTOCLOSE int m = -1;
	char line[PATH_MAX * 2], want[32];
	struct stat st;
	int mid;

	if (fstat(at_dirfd, &st) < 0)
		return -errno;
	fh.h.handle_bytes = MAX_HANDLE_SZ;
	if (name_to_handle_at(at_dirfd, "", &fh.h, &mid, AT_EMPTY_PATH) < 0)
		return -errno;
	snprintf(want, sizeof(want), "%u:%u", major(st.st_dev),
		 minor(st.st_dev));
	f = fopen("/proc/self/mountinfo", "re");
	if (!f)
		return -errno;
	/* a mount of the same filesystem from its top ("/"), in lgrun's view */
	while (m < 0 && fgets(line, sizeof(line), f)) {
		char dev[32], root[PATH_MAX], mnt[PATH_MAX];

		if (sscanf(line, "%*u %*u %31s %4095s %4095s", dev, root,
			   mnt) != 3 ||
		    strcmp(dev, want) || strcmp(root, "/"))
			continue;
		unescape(mnt);
		m = open(mnt,
			 O_RDONLY | O_DIRECTORY | O_CLOEXEC); /* not O_PATH */
	}
	if (m < 0)
		return -EXDEV;
	mid = open_by_handle_at(m, &fh.h, O_PATH | O_DIRECTORY | O_CLOEXEC);
	return mid < 0 ? -errno : mid;
}

/* name prepended to the right-aligned string ending at out + size - 1. */
static int prepend(char *out, size_t *pos, const char *name, size_t n)
{
	if (n + 1 > *pos)
		return -ENAMETOOLONG;
	*pos -= n;
	memcpy(out + *pos, name, n);
	out[--*pos] = '/';
	return 0;
}

/*
 * dirfd's absolute path in lgrun's view: what the kernel prints for it,
 * or, past PATH_MAX, the names found walking up until it prints one.
 */
static int dir_path(int dirfd, char *out, size_t size)
{
	char link[64], tmp[PATH_MAX];
	size_t pos = size - 1;
	LG_AUTOCLOSE int cur = fcntl(dirfd, F_DUPFD_CLOEXEC, 3);

	if (cur < 0)
		return -errno;
	out[pos] = '\0';
	for (int depth = 0; depth < 4096; depth++) {
		LG_AUTOCLOSE int parent = -1;
		struct stat cs, ps;
		struct dirent *d;
		ssize_t n;
		DIR *dd;
		int e = -ENOENT;

		snprintf(link, sizeof(link), "/proc/self/fd/%d", cur);
		n = readlink(link, tmp, sizeof(tmp) - 1);
		if (n > 0 && tmp[0] == '/') {
			if (n == 1) /* "/" */
				n = 0;
			if ((size_t)n + 1 > pos)
				return -ENAMETOOLONG;
			pos -= (size_t)n;
			memcpy(out + pos, tmp, (size_t)n);
			if (!out[pos]) /* the root itself */
				out[--pos] = '/';
			memmove(out, out + pos, size - pos);
			return 0;
		}
		parent = openat(cur, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (parent < 0 || fstat(cur, &cs) < 0 || fstat(parent, &ps) < 0)
			return -errno;
		if (cs.st_ino == ps.st_ino && cs.st_dev == ps.st_dev)
			return -ENOENT; /* a root lgrun's view does not print */
		dd = fdopendir(fcntl(parent, F_DUPFD_CLOEXEC, 3));
		while (dd && (d = readdir(dd)))
			if (d->d_ino == cs.st_ino && strcmp(d->d_name, ".") &&
			    strcmp(d->d_name, "..")) {
				e = prepend(out, &pos, d->d_name,
					    strlen(d->d_name));
				break;
			}
		if (dd)
			closedir(dd);
		if (e)
			return e;
		lg_closep(&cur);
		cur = lg_steal_fd(&parent);
	}
	return -ELOOP;
}

int lg_quarantine_view_path(int at_dirfd, const char *name, char *out,
			    size_t size)
{
	LG_AUTOCLOSE int here = -1;
	struct statx st;
	char top[PATH_MAX];
	size_t n;
	int e;

	if (statx(at_dirfd, "", AT_EMPTY_PATH, STATX_MNT_ID, &st) < 0)
		return -errno;
	if (!(st.stx_mask & STATX_MNT_ID) ||
	    lg_quarantine_mount_top(st.stx_mnt_id, top, sizeof(top)) < 0) {
		here = reopen_here(at_dirfd);
		if (here < 0)
			return here;
	}
	e = dir_path(here >= 0 ? here : at_dirfd, out, size);
	if (e)
		return e;
	n = strlen(out);
	if (n + 1 + strlen(name) + 1 > size)
		return -ENAMETOOLONG;
	snprintf(out + n, size - n, "%s%s", out[n - 1] == '/' ? "" : "/", name);
	return 0;
}
