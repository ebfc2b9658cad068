// SPDX-License-Identifier: MIT
/*
 * lgctl restore: what a session's quarantine holds, put back at its
 * paths. A path the session itself left changed (the inode it truncated
 * or rewrote, a file it made) has that version set aside into the
 * quarantine first; anything changed after the session is a conflict and
 * never overwritten.
 *
 * Run as root it writes into a tree an agent controlled, from an index
 * the session's user may have written: it acts with the credentials of
 * the index's owner, opens every path one component at a time from a
 * directory descriptor and never through a symlink, uses a quarantine
 * folder only when nobody else could have swapped it, and takes modes
 * and owners from the kept file, not from the index's text.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <jansson.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "record/audit.h"
#include "lib/cleanup.h"
#include "lib/clock.h"
#include "config/config.h"
#include "lib/json.h"
#include "lgctl.h"
#include "store/state.h"
#include "lib/termtext.h"
#include "lib/text.h"

/* A folder of the session's quarantine (<top>/<session>/<bucket>). */
struct folder {
	char *path; /* the bucket's */
	int fd; /* the bucket, O_PATH, or -errno */
	int sfd; /* <top>/<session>, O_PATH (set-asides go there) */
	char why[PATH_MAX + 160]; /* why it is refused, when fd < 0 */
};

struct restore {
	struct lgq_index x;
	const char *to, *id, *state_dir;
	bool dry, newest, force;
	uid_t owner; /* the index's owner: whose credentials restore uses */
	gid_t owner_gid;
	int top; /* "/" or --to DIR (O_PATH) */
	int qfd; /* <state dir>/quarantine (O_PATH) */
	int ifd; /* the index, opened for appending set-asides, or -1 */
	long long start_ns, end_ns; /* the session's (end: see session_times) */
	struct folder *f;
	size_t nf;
	unsigned restored, conflicts, missing, failed, earlier, refused,
		changed, set_aside;
};

/* Directories first, parents before children; then files, oldest first. */
static int order(const void *a, const void *b)
{
	const struct lgq_entry *x = a, *y = b;

	if (x->dir != y->dir)
		return x->dir ? -1 : 1;
	if (x->dir)
		return strcmp(x->path, y->path);
	return x->n < y->n ? -1 : x->n > y->n;
}

/*
 * Of several entries for one path, the oldest is put back: the path as it
 * was before the session (a later one holds what the session itself wrote
 * there, then replaced or removed). With --newest, the newest: the path as
 * it was just before its last removal. The others are named.
 */
static bool superseded(const struct restore *r, size_t i)
{
	for (size_t k = 0; k < r->x.n; k++)
		if (k != i && r->x.e[k].dir == r->x.e[i].dir &&
		    (r->newest ? r->x.e[k].n > r->x.e[i].n :
				 r->x.e[k].n < r->x.e[i].n) &&
		    strcmp(r->x.e[k].path, r->x.e[i].path) == 0)
			return true;
	return false;
}

static int open2(int dfd, const char *name, int flags, mode_t mode)
{
	struct open_how how = {
		.flags = (uint64_t)(flags | O_CLOEXEC),
		.mode = (flags & O_CREAT) ? mode : 0,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
			   RESOLVE_NO_MAGICLINKS,
	};
	long fd = syscall(SYS_openat2, dfd, name, &how, sizeof(how));

	return fd < 0 ? -errno : (int)fd;
}

static const char *why_of(int err)
{
	if (err == -ELOOP || err == -EXDEV)
		return "a symlink in the way (never followed)";
	if (err == -ENOTDIR)
		return "a component is not a directory";
	return strerror(-err);
}

/* Absolute, no empty, "." or ".." component, no trailing '/'. */
static bool normal(const char *p)
{
	const char *c = p;

	/* deeper than PATH_MAX is fine: it is walked a component at a time */
	if (p[0] != '/' || !p[1] || strlen(p) >= 16 * PATH_MAX)
		return false;
	while (*c) {
		const char *s = c + 1;
		size_t n = strcspn(s, "/");

		if (n == 0 || (n == 1 && s[0] == '.') ||
		    (n == 2 && s[0] == '.' && s[1] == '.'))
			return false;
		c = s + n;
	}
	return true;
}

/*
 * rel (a normal path without its leading '/') opened from at one component
 * at a time, never through a symlink nor above at; missing folders made
 * (0755, as whoever restores) when make. An O_PATH descriptor or -errno.
 */
static int walk(int at, const char *rel, bool make)
{
	LG_AUTOFREE char *copy = strdup(rel);
	LG_AUTOCLOSE int cur = fcntl(at, F_DUPFD_CLOEXEC, 3);
	char *save = NULL;

	if (!copy || cur < 0)
		return -ENOMEM;
	for (char *c = strtok_r(copy, "/", &save); c;
	     c = strtok_r(NULL, "/", &save)) {
		int fd = open2(cur, c, O_PATH | O_DIRECTORY, 0);

		if (fd == -ENOENT && make) {
			if (mkdirat(cur, c, 0755) < 0 && errno != EEXIST)
				return -errno;
			fd = open2(cur, c, O_PATH | O_DIRECTORY, 0);
		}
		if (fd < 0)
			return fd;
		close(cur);
		cur = fd;
	}
	return lg_steal_fd(&cur);
}

/* An absolute path walked from / as walk does. */
static int walk_abs(const char *abs, bool make)
{
	LG_AUTOCLOSE int root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);

	if (root < 0)
		return -errno;
	return walk(root, abs + 1, make);
}

/*
 * A directory the quarantine may use: owned by root or by the index's
 * owner, and writable by group or others not at all (strict), or only
 * with the sticky bit (where another user can make names, but not move
 * ours: what is below is checked in turn).
 */
static bool trusted(const struct restore *r, int fd, bool strict,
		    struct stat *st)
{
	if (fstat(fd, st) < 0 || !S_ISDIR(st->st_mode))
		return false;
	if (st->st_uid != 0 && st->st_uid != r->owner)
		return false;
	if (st->st_mode & 022)
		return !strict && (st->st_mode & S_ISVTX);
	return true;
}

/*
 * abs opened from / and checked all the way down: every folder trusted,
 * the last strict ones (the quarantine's own) strictly. An O_PATH
 * descriptor, or -errno with why.
 */
static int walk_trusted(const struct restore *r, const char *abs,
			unsigned strict_last, char *why, size_t wsize)
{
	LG_AUTOFREE char *copy = strdup(abs);
	LG_AUTOCLOSE int cur = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	unsigned total = 0, depth = 0;
	char *save = NULL, done[PATH_MAX] = "";
	struct stat st;

	if (!copy || cur < 0)
		return -ENOMEM;
	for (const char *c = abs; *c; c++)
		total += *c == '/';
	if (!trusted(r, cur, total < strict_last, &st)) {
		snprintf(why, wsize, "/ is writable by others");
		return -EPERM;
	}
	for (char *c = strtok_r(copy, "/", &save); c;
	     c = strtok_r(NULL, "/", &save)) {
		int fd = open2(cur, c, O_PATH | O_DIRECTORY, 0);
		size_t n = strlen(done);

		snprintf(done + n, sizeof(done) - n, "/%s", c);
		if (fd < 0) {
			snprintf(why, wsize, "%s: %s", lgq_show(done),
				 why_of(fd));
			return fd;
		}
		close(cur);
		cur = fd;
		depth++;
		if (!trusted(r, cur, depth + strict_last > total, &st)) {
			snprintf(
				why, wsize,
				"the quarantine's folder %s is %s (uid %u, mode %04o): not used",
				lgq_show(done),
				S_ISDIR(st.st_mode) && st.st_uid != 0 &&
						st.st_uid != r->owner ?
					"another user's" :
					"writable by others",
				(unsigned)st.st_uid,
				(unsigned)st.st_mode & 07777);
			return -EPERM;
		}
	}
	return lg_steal_fd(&cur);
}

static bool digits(const char *s, size_t n)
{
	if (!n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return true;
}

/*
 * The folder an entry's kept file is in, when it is one of this session's:
 * <top>/<session>/<bucket>/<n>, opened and checked from / (cached).
 */
static struct folder *folder_of(struct restore *r, const struct lgq_entry *e,
				char *why, size_t wsize)
{
	const char *k = e->kept, *name, *b, *sess;
	size_t len;
	struct folder *f;

	if (!k || !normal(k)) {
		snprintf(why, wsize,
			 "its kept file's path is not absolute and normal");
		return NULL;
	}
	name = strrchr(k, '/');
	for (b = name - 1; b > k && *b != '/'; b--)
		;
	for (sess = b - 1; sess > k && *sess != '/'; sess--)
		;
	len = strlen(r->id);
	if (sess <= k || !digits(name + 1, strlen(name + 1)) ||
	    !digits(b + 1, (size_t)(name - b - 1)) ||
	    (size_t)(b - sess - 1) != len || memcmp(sess + 1, r->id, len)) {
		snprintf(
			why, wsize,
			"its kept file %s is not in a quarantine folder of session %s",
			lgq_show(k), lgq_show(r->id));
		return NULL;
	}
	len = (size_t)(name - k);
	for (size_t i = 0; i < r->nf; i++) {
		f = &r->f[i];
		if (strlen(f->path) == len && memcmp(f->path, k, len) == 0)
			goto found;
	}
	f = realloc(r->f, (r->nf + 1) * sizeof(*f));
	if (!f)
		return NULL;
	r->f = f;
	f = &r->f[r->nf++];
	memset(f, 0, sizeof(*f));
	f->path = strndup(k, len);
	f->fd = f->sfd = -ENOMEM;
	if (f->path) {
		/* the session's folder and its bucket: strictly */
		char *sp = strndup(k, (size_t)(b - k));

		f->sfd = sp ? walk_trusted(r, sp, 2, f->why, sizeof(f->why)) :
			      -ENOMEM;
		free(sp);
		if (f->sfd >= 0) {
			f->fd = open2(f->sfd, strrchr(f->path, '/') + 1,
				      O_PATH | O_DIRECTORY, 0);
			{
				struct stat st;

				if (f->fd >= 0 &&
				    !trusted(r, f->fd, true, &st)) {
					close(f->fd);
					f->fd = -EPERM;
					snprintf(
						f->why, sizeof(f->why),
						"the quarantine's folder %s is another user's or writable by others",
						lgq_show(f->path));
				} else if (f->fd < 0) {
					snprintf(f->why, sizeof(f->why),
						 "%s: %s", lgq_show(f->path),
						 why_of(f->fd));
				}
			}
		}
	}
found:
	if (f->fd < 0 && f->fd != -ENOENT) {
		snprintf(why, wsize, "%s", f->why);
		return NULL;
	}
	return f;
}

static long long ns_of(struct statx_timestamp t)
{
	return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static long long st_ns(struct timespec t)
{
	return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

/* The kept file is lgrun's copy of the original (not the original's inode). */
static bool is_copy(const struct lgq_entry *e)
{
	if (e->have & LGQ_HAVE_KEPT)
		return e->kept_ino != e->ino;
	return strcmp(e->op, "truncate") == 0 ||
	       strcmp(e->op, "open_trunc") == 0 ||
	       strcmp(e->op, "open_write") == 0;
}

/*
 * Has the kept file changed since it was kept (a descriptor held open
 * across the removal writes the kept inode)? What differs, into why.
 * A hard link's change time is not compared: the removal that follows
 * the keeping changes it; its modification time is.
 */
static bool changed(const struct lgq_entry *e, const struct stat *ks, char *why,
		    size_t wsize)
{
	bool copy = is_copy(e);
	long long ino = (e->have & LGQ_HAVE_KEPT) ? e->kept_ino : e->ino;
	long long size = (e->have & LGQ_HAVE_KEPT) ? e->kept_size : e->size;

	if ((!copy || (e->have & LGQ_HAVE_KEPT)) &&
	    (long long)ks->st_ino != ino)
		snprintf(why, wsize, "inode %llu, kept as %lld",
			 (unsigned long long)ks->st_ino, ino);
	else if ((long long)ks->st_size != size)
		snprintf(why, wsize, "%lld bytes, kept with %lld",
			 (long long)ks->st_size, size);
	else if (copy && (e->have & LGQ_HAVE_KEPT) &&
		 st_ns(ks->st_ctim) != e->kept_ctime_ns)
		snprintf(why, wsize, "changed at %lld, kept at %lld",
			 st_ns(ks->st_ctim), e->kept_ctime_ns);
	else if (!copy && st_ns(ks->st_mtim) != e->mtime_ns)
		snprintf(why, wsize, "modified since it was kept");
	else
		return false;
	return true;
}

/*
 * Is what is at the path now the session's own version, left as the
 * session left it: the inode it truncated or rewrote, a file born during
 * it, or one changed during it (renamed there), and not changed since its
 * end?
 */
static bool session_version(const struct restore *r, const struct lgq_entry *e,
			    const struct statx *cur)
{
	bool own = false;

	if (!S_ISREG(cur->stx_mode) && !S_ISLNK(cur->stx_mode))
		return false;
	if (is_copy(e) && (long long)cur->stx_ino == e->ino &&
	    (!(e->have & LGQ_HAVE_DEV) ||
	     (long long)makedev(cur->stx_dev_major, cur->stx_dev_minor) ==
		     e->dev))
		own = true;
	if (r->start_ns && (cur->stx_mask & STATX_BTIME) &&
	    ns_of(cur->stx_btime) >= r->start_ns)
		own = true;
	/* changed during it: another file renamed over it (mv -f) */
	if (r->start_ns && ns_of(cur->stx_ctime) >= r->start_ns)
		own = true;
	return own && r->end_ns && ns_of(cur->stx_ctime) <= r->end_ns;
}

/* The index, opened once for appending (as its owner). */
static int index_fd(struct restore *r)
{
	char name[PATH_MAX];

	if (r->ifd >= 0)
		return r->ifd;
	snprintf(name, sizeof(name), "%s.jsonl", r->id);
	r->ifd = open2(r->qfd, name, O_WRONLY | O_APPEND, 0);
	return r->ifd;
}

/* A set-aside's line: restorable as any other entry (op set_aside). */
static int index_set_aside(struct restore *r, long long n, const char *path,
			   const char *kept, const struct statx *before,
			   const struct statx *after)
{
	struct lg_json j = { 0 };
	long long now = lg_real_ns();
	char t[40];
	const char *line;
	int fd = index_fd(r), e = 0;

	if (fd < 0)
		return fd;
	lg_time_iso(now, t, sizeof(t));
	lg_json_begin(&j);
	lg_json_int(&j, "n", n);
	lg_json_str(&j, "time", t);
	lg_json_int(&j, "time_ns", now);
	lg_json_str(&j, "session", r->id);
	lg_json_str(&j, "kind", "file");
	lg_json_str(&j, "op", "set_aside");
	lg_json_str(&j, "path", path);
	lg_json_str(&j, "kept", kept);
	lg_json_int(&j, "mode", after->stx_mode);
	lg_json_int(&j, "uid", after->stx_uid);
	lg_json_int(&j, "gid", after->stx_gid);
	lg_json_int(&j, "size", (long long)after->stx_size);
	lg_json_int(&j, "ino", (long long)after->stx_ino);
	lg_json_int(&j, "dev",
		    (long long)makedev(after->stx_dev_major,
				       after->stx_dev_minor));
	lg_json_int(&j, "atime_ns", ns_of(after->stx_atime));
	lg_json_int(&j, "mtime_ns", ns_of(after->stx_mtime));
	lg_json_int(&j, "ctime_ns", ns_of(before->stx_ctime));
	lg_json_int(&j, "kept_ino", (long long)after->stx_ino);
	lg_json_int(&j, "kept_size", (long long)after->stx_size);
	lg_json_int(&j, "kept_ctime_ns", ns_of(after->stx_ctime));
	if (r->start_ns)
		lg_json_int(&j, "start_ns", r->start_ns);
	lg_json_int(&j, "pid", getpid());
	lg_json_str(&j, "exe", "lgctl restore");
	line = lg_json_end(&j);
	if (line)
		lg_json_append(&j, "\n", 1);
	if (!line || !j.buf || write(fd, j.buf, j.len) != (ssize_t)j.len)
		e = -EIO;
	lg_json_free(&j);
	return e;
}

/*
 * The session's version at pfd/name moved into the session's folder on
 * its mount (f), as a new entry. 0 or -errno (why said).
 */
static int copy_into(int in, int pfd, const char *name);

/*
 * The session's version moved into the folder of its kept file: renamed,
 * or, when the kept file is on another filesystem (a copy kept in the
 * state dir's folder), copied there and then removed from its path.
 */
static int move_aside(int pfd, const char *name, int bfd, const char *nn,
		      bool *copied)
{
	LG_AUTOCLOSE int in = -1;
	int err;

	*copied = false;
	if (renameat2(pfd, name, bfd, nn, RENAME_NOREPLACE) == 0)
		return 0;
	if (errno != EXDEV)
		return -errno;
	in = openat(pfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (in < 0)
		return -errno;
	err = copy_into(in, bfd, nn); /* the copy's fd, or -errno */
	if (err >= 0) {
		close(err);
		err = 0;
	}
	if (!err && unlinkat(pfd, name, 0) < 0) {
		err = -errno;
		unlinkat(bfd, nn, 0);
	}
	*copied = !err;
	return err;
}

static int set_aside(struct restore *r, const struct lgq_entry *e,
		     const struct folder *f, int pfd, const char *name,
		     const struct statx *cur)
{
	long long n = r->x.max_n + 1;
	char b[32], nn[32], kept[PATH_MAX + 64];
	LG_AUTOCLOSE int bfd = -1;
	struct statx after;
	struct stat st;
	bool copied = false;
	int err;

	snprintf(b, sizeof(b), "%lld", n / 1024);
	snprintf(nn, sizeof(nn), "%lld", n);
	if (mkdirat(f->sfd, b, 0700) < 0 && errno != EEXIST)
		err = -errno;
	else if ((bfd = open2(f->sfd, b, O_PATH | O_DIRECTORY, 0)) < 0)
		err = bfd;
	else if (!trusted(r, bfd, true, &st))
		err = -EPERM;
	else
		err = move_aside(pfd, name, bfd, nn, &copied);
	if (err) {
		printf("failed    %s: the session's version could not be set aside (%s): left as it is\n",
		       lgq_show(e->path),
		       err == -EXDEV ? strerror(EXDEV) : why_of(err));
		r->failed++;
		return err;
	}
	r->x.max_n = n;
	snprintf(kept, sizeof(kept), "%.*s/%s/%s",
		 (int)(strrchr(f->path, '/') - f->path), f->path, b, nn);
	if (statx(bfd, nn, AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS | STATX_BTIME,
		  &after) < 0)
		after = *cur;
	err = index_set_aside(r, n, e->path, kept, cur, &after);
	printf("set aside %s: the session's version (%lld bytes) is in the quarantine as %s%s\n",
	       lgq_show(e->path), (long long)after.stx_size, lgq_show(kept),
	       err ? " (not in its index: move it back by hand)" : "");
	if (!copied && after.stx_ino != cur->stx_ino)
		printf("note      %s changed while it was set aside: what was moved is what is kept\n",
		       lgq_show(e->path));
	r->set_aside++;
	return 0;
}

/* The kept file's content into a new file at pfd/name (--to elsewhere). */
static int copy_into(int in, int pfd, const char *name)
{
	LG_AUTOCLOSE int out = open2(
		pfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0600);
	char buf[65536];
	ssize_t n;

	if (out < 0)
		return out;
	if (lseek(in, 0, SEEK_SET) < 0)
		return -errno;
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n)
			return -EIO;
	if (n < 0)
		return -errno;
	{ /* the extended attributes go with the content */
		char names[65536];
		ssize_t ln = flistxattr(in, names, sizeof(names));

		for (ssize_t o = 0; ln > 0 && o < ln;
		     o += (ssize_t)strlen(names + o) + 1) {
			ssize_t v = fgetxattr(in, names + o, buf, sizeof(buf));

			if (v >= 0 &&
			    fsetxattr(out, names + o, buf, (size_t)v, 0) < 0) {
				/* not settable here: the rest goes */
			}
		}
	}
	return lg_steal_fd(&out);
}

/*
 * The original's owner, mode and times on fd. A hard link is the
 * original's inode: its owner and mode are its own. A copy is lgrun's:
 * the owner and permissions come from the index, setuid and setgid only
 * when the kept file carries them too; whoever restores can give no more
 * than the session's user could.
 */
static void set_meta_fd(int fd, const struct lgq_entry *e,
			const struct stat *ks)
{
	struct timespec ts[2] = {
		{ e->atime_ns / 1000000000LL, e->atime_ns % 1000000000LL },
		{ e->mtime_ns / 1000000000LL, e->mtime_ns % 1000000000LL }
	};
	uid_t uid = ks->st_uid;
	gid_t gid = ks->st_gid;
	mode_t mode = ks->st_mode & 07777;
	struct stat now;

	if (is_copy(e)) {
		uid = e->uid;
		gid = e->gid;
		mode = (e->mode & 01777) | (e->mode & ks->st_mode & 06000);
	}
	if (fstat(fd, &now) == 0 && (now.st_uid != uid || now.st_gid != gid) &&
	    fchown(fd, uid, gid) < 0) {
		/* not the session's to give: the mode and times still go */
	}
	if (fchmod(fd, mode) < 0) {
		/* as above */
	}
	futimens(fd, ts);
}

/* The dest's folder: from --to DIR or /, made when make. */
static int parent_of(const struct restore *r, const struct lgq_entry *e,
		     bool make)
{
	LG_AUTOFREE char *rel = strdup(e->path + 1);
	char *slash;

	if (!rel)
		return -ENOMEM;
	slash = strrchr(rel, '/');
	if (!slash)
		return fcntl(r->top, F_DUPFD_CLOEXEC, 3);
	*slash = '\0';
	return walk(r->top, rel, make);
}

static void refuse(struct restore *r, const struct lgq_entry *e,
		   const char *why)
{
	printf("refused   %s: %s\n", lgq_show(e->path), why);
	r->refused++;
}

/* One file's restore: what put_file's phases share. */
struct put {
	struct lgq_entry *e;
	const char *name; /* the path's last component */
	struct folder *f; /* the kept file's */
	int kfd; /* the kept file, or -errno */
	int pfd; /* the path's folder, or -errno */
	int out; /* the copy made at the path (--to elsewhere), or -1 */
	bool here; /* something is at the path: cur */
	struct statx cur;
	struct stat ks; /* the kept file's */
};

static void put_close(struct put *p)
{
	lg_closep(&p->kfd);
	lg_closep(&p->pfd);
	lg_closep(&p->out);
}

#define LG_PUT_AUTO __attribute__((cleanup(put_close)))

/*
 * The kept file and the path's folder opened, what is at the path now
 * looked at. False when the entry is refused.
 */
static bool put_open(struct restore *r, struct put *p)
{
	const struct lgq_entry *e = p->e;
	char why[PATH_MAX + 200];

	if (!normal(e->path)) {
		refuse(r, e, "its path is not absolute and normal");
		return false;
	}
	p->name = strrchr(e->path, '/') + 1;
	p->f = folder_of(r, e, why, sizeof(why));
	if (!p->f) {
		refuse(r, e, why);
		return false;
	}
	p->kfd = p->f->fd < 0 ? p->f->fd :
				open2(p->f->fd, strrchr(e->kept, '/') + 1,
				      O_RDONLY | O_NOFOLLOW | O_NONBLOCK, 0);
	p->pfd = parent_of(r, e, false);
	if (p->pfd >= 0)
		p->here = statx(p->pfd, p->name, AT_SYMLINK_NOFOLLOW,
				STATX_BASIC_STATS | STATX_BTIME, &p->cur) == 0;
	return true;
}

/* The kept file is gone: moved back by an earlier restore, or missing. */
static void put_gone(struct restore *r, const struct put *p)
{
	const struct lgq_entry *e = p->e;
	long long ino = (e->have & LGQ_HAVE_KEPT) ? e->kept_ino : e->ino;

	/* moved back by an earlier restore: the same inode is there */
	if (p->here && ino && (long long)p->cur.stx_ino == ino &&
	    S_ISREG(p->cur.stx_mode)) {
		printf("earlier   %s (restored by an earlier lgctl restore)\n",
		       lgq_show(e->dest));
		r->earlier++;
		return;
	}
	printf("missing   %s (no longer in the quarantine: restored or collected)\n",
	       lgq_show(e->path));
	r->missing++;
}

/*
 * The kept file there, a regular file, and unchanged since it was kept
 * (or --force). False, said, when the entry stops here.
 */
static bool put_kept_ok(struct restore *r, struct put *p)
{
	const struct lgq_entry *e = p->e;
	char why[PATH_MAX + 200];

	if (p->kfd == -ENOENT) {
		put_gone(r, p);
		return false;
	}
	if (p->kfd < 0) {
		snprintf(why, sizeof(why), "its kept file %s: %s",
			 lgq_show(e->kept), why_of(p->kfd));
		refuse(r, e, why);
		return false;
	}
	if (fstat(p->kfd, &p->ks) < 0 || !S_ISREG(p->ks.st_mode)) {
		snprintf(why, sizeof(why),
			 "its kept file %s is not a regular file",
			 lgq_show(e->kept));
		refuse(r, e, why);
		return false;
	}
	if (changed(e, &p->ks, why, sizeof(why))) {
		printf("changed   %s: its kept file %s changed since it was kept (%s)%s\n",
		       lgq_show(e->path), lgq_show(e->kept), why,
		       r->force ? ": restored anyway (--force)" :
				  "; restore it with --force");
		if (!r->force) {
			r->changed++;
			return false;
		}
	}
	return true;
}

/*
 * What is at the path: a conflict, unless it is the session's own
 * version, which is set aside first. False, said, when the entry stops
 * here.
 */
static bool put_clear(struct restore *r, struct put *p)
{
	if (r->to || !session_version(r, p->e, &p->cur)) {
		printf("conflict  %s exists: left as it is (changed since the session; restore it elsewhere with --to DIR)\n",
		       lgq_show(p->e->dest));
		r->conflicts++;
		return false;
	}
	if (r->dry) {
		printf("would set aside %s (the session's version, %lld bytes)\n",
		       lgq_show(p->e->dest), (long long)p->cur.stx_size);
		return true;
	}
	return set_aside(r, p->e, p->f, p->pfd, p->name, &p->cur) == 0;
}

/*
 * The kept file moved back (never over anything), or copied to --to
 * elsewhere. False, said, when it is not.
 */
static bool put_back(struct restore *r, struct put *p)
{
	int err = 0;

	if (p->pfd < 0)
		p->pfd = parent_of(r, p->e, true);
	if (p->pfd < 0)
		err = p->pfd;
	else if (renameat2(p->f->fd, strrchr(p->e->kept, '/') + 1, p->pfd,
			   p->name, RENAME_NOREPLACE) < 0) {
		err = -errno;
		if (err == -EXDEV) {
			p->out = copy_into(p->kfd, p->pfd, p->name);
			err = p->out < 0 ? p->out : 0;
		} else if (err == -EEXIST) {
			printf("conflict  %s exists: left as it is\n",
			       lgq_show(p->e->dest));
			r->conflicts++;
			return false;
		}
	}
	if (err) {
		printf("failed    %s: %s\n", lgq_show(p->e->dest), why_of(err));
		r->failed++;
		return false;
	}
	return true;
}

static void put_file(struct restore *r, struct lgq_entry *e)
{
	LG_PUT_AUTO struct put p = { .e = e, .kfd = -1, .pfd = -1, .out = -1 };
	int fd;

	if (!put_open(r, &p) || !put_kept_ok(r, &p))
		return;
	if (p.pfd < 0 && p.pfd != -ENOENT) {
		printf("failed    %s: its folder: %s\n", lgq_show(e->dest),
		       why_of(p.pfd));
		r->failed++;
		return;
	}
	if (p.here && !put_clear(r, &p))
		return;
	if (r->dry) {
		printf("would restore %s (%lld bytes)\n", lgq_show(e->dest),
		       (long long)p.ks.st_size);
		r->restored++;
		return;
	}
	if (!put_back(r, &p))
		return;
	fd = p.out >= 0 ? p.out : p.kfd;
	set_meta_fd(fd, e, &p.ks);
	if (fstat(fd, &p.ks) < 0)
		p.ks.st_size = 0;
	printf("restored  %s (%lld bytes)\n", lgq_show(e->dest),
	       (long long)p.ks.st_size);
	r->restored++;
}

static void put_dir(struct restore *r, struct lgq_entry *e)
{
	const char *name = strrchr(e->path, '/') + 1;
	LG_AUTOCLOSE int pfd = -1;
	struct stat st;

	if (!normal(e->path)) {
		refuse(r, e, "its path is not absolute and normal");
		return;
	}
	pfd = parent_of(r, e, false);
	if (pfd >= 0 && fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		if (!S_ISDIR(st.st_mode)) {
			printf("conflict  %s exists and is not a directory\n",
			       lgq_show(e->dest));
			r->conflicts++;
		}
		return; /* there again: its files go into it */
	}
	if (r->dry) {
		printf("would make %s/\n", lgq_show(e->dest));
		return;
	}
	if (pfd < 0)
		pfd = parent_of(r, e, true);
	if (pfd < 0 || mkdirat(pfd, name, 0700) < 0) {
		printf("failed    %s/: %s\n", lgq_show(e->dest),
		       why_of(pfd < 0 ? pfd : -errno));
		r->failed++;
		return;
	}
	e->made = true;
}

/* A made directory's recorded owner, mode, attributes and times. */
static void set_dir_meta(const struct restore *r, const struct lgq_entry *e)
{
	struct timespec ts[2] = {
		{ e->atime_ns / 1000000000LL, e->atime_ns % 1000000000LL },
		{ e->mtime_ns / 1000000000LL, e->mtime_ns % 1000000000LL }
	};
	LG_AUTOCLOSE int pfd = parent_of(r, e, false);
	LG_AUTOCLOSE int fd = -1;
	const char *name;
	json_t *v;

	if (pfd < 0)
		return;
	fd = open2(pfd, strrchr(e->path, '/') + 1, O_RDONLY | O_DIRECTORY, 0);
	if (fd < 0)
		return;
	if (fchown(fd, e->uid, e->gid) < 0) {
		/* not the session's to give: the rest goes */
	}
	/* no kept file carries setuid or setgid for a directory */
	if (fchmod(fd, e->mode & 01777) < 0) {
		/* as above */
	}
	json_object_foreach(e->xattrs, name, v)
	{
		const char *hex = json_string_value(v);
		size_t n = hex ? strlen(hex) / 2 : 0;
		unsigned char *b = malloc(n + 1);

		for (size_t k = 0; b && k < n; k++)
			sscanf(hex + 2 * k, "%2hhx", &b[k]);
		if (b && fsetxattr(fd, name, b, n, 0) < 0) {
			/* security.* without the right: the rest goes */
		}
		free(b);
	}
	futimens(fd, ts);
}

/* "2026-11-26T10:11:12.345Z" as ns, or 0. */
static long long iso_ns(const char *s)
{
	struct tm tm = { 0 };
	const char *p = s ? strptime(s, "%Y-%m-%dT%H:%M:%S", &tm) : NULL;
	long long ms = 0;

	if (!p)
		return 0;
	if (*p == '.')
		ms = strtoll(p + 1, NULL, 10);
	return (long long)timegm(&tm) * 1000000000LL + ms * 1000000LL;
}

/*
 * When the session started and ended, from its state record
 * (<state dir>/sessions/<id>.json, written by session_record.c): the start
 * from its "started" (unless the index says start_ns); the end is the
 * record's last write once it says anything but "running" (lgrun writes
 * it after the tree is gone), or the recording's last write when later.
 * Unknown (no record, or still running): the newest entry of the index,
 * so that nothing changed after the session's last removal is taken for
 * its work.
 */
static void session_times(struct restore *r, int sdir)
{
	char name[PATH_MAX], line[8192], last[8192] = "";
	LG_AUTOCLOSE int sess =
		open2(sdir, "sessions", O_PATH | O_DIRECTORY, 0);
	LG_AUTOCLOSE int fd = -1;
	LG_AUTOFCLOSE FILE *f = NULL;
	json_t *o = NULL;
	struct stat st;

	r->start_ns = r->x.start_ns;
	r->end_ns = 0;
	snprintf(name, sizeof(name), "%s.json", r->id);
	if (sess >= 0)
		fd = open2(sess, name, O_RDONLY, 0);
	if (fd >= 0 && fstat(fd, &st) == 0 && (f = fdopen(fd, "re"))) {
		fd = -1; /* f's now */
		while (fgets(line, sizeof(line), f))
			if (line[0] == '{')
				snprintf(last, sizeof(last), "%s", line);
		o = json_loads(last, 0, NULL);
	}
	if (o) {
		const char *state =
			json_string_value(json_object_get(o, "state"));

		if (!r->start_ns)
			r->start_ns = iso_ns(json_string_value(
				json_object_get(o, "started")));
		if (state && strcmp(state, "running") != 0) {
			LG_AUTOCLOSE int ev = -1;
			struct stat es;

			r->end_ns = st_ns(st.st_mtim);
			snprintf(name, sizeof(name), "%s.events.jsonl", r->id);
			ev = open2(sess, name, O_RDONLY, 0);
			if (ev >= 0 && fstat(ev, &es) == 0 &&
			    st_ns(es.st_mtim) > r->end_ns)
				r->end_ns = st_ns(es.st_mtim);
		}
		json_decref(o);
	}
	if (!r->end_ns)
		r->end_ns = r->x.newest_ns;
}

/*
 * Whose credentials the restore uses: the index's owner's (who could have
 * written every line of it). Root drops to them before touching any path.
 */
static int become_owner(const struct restore *r)
{
	if (geteuid() != 0 || r->owner == 0)
		return 0;
	if (setgroups(0, NULL) < 0 ||
	    setresgid(r->owner_gid, r->owner_gid, r->owner_gid) < 0 ||
	    setresuid(r->owner, r->owner, r->owner) < 0)
		return -errno;
	return 0;
}

static int audit_restore(const char *dir, const char *id,
			 const struct restore *r)
{
	struct lg_json j = { 0 };
	char audit[PATH_MAX + 16], sum[256];
	int e;

	snprintf(
		sum, sizeof(sum),
		"restore by operator: %u restored, %u conflicts, %u missing, %u failed",
		r->restored, r->conflicts, r->missing, r->failed);
	lg_audit_begin(&j, lg_real_ns(), id, NULL, NULL, 0);
	lg_json_str(&j, "event", "restore");
	lg_json_str(&j, "by", lgctl_operator());
	if (r->to)
		lg_json_str(&j, "to", r->to);
	lg_json_int(&j, "restored", r->restored);
	lg_json_int(&j, "conflicts", r->conflicts);
	lg_json_int(&j, "missing", r->missing);
	lg_json_int(&j, "failed", r->failed);
	if (r->set_aside)
		lg_json_int(&j, "set_aside", r->set_aside);
	if (r->refused)
		lg_json_int(&j, "refused", r->refused);
	if (r->changed)
		lg_json_int(&j, "changed", r->changed);
	lg_json_str(&j, "summary", sum);
	lg_audit_falco(&j, id, NULL, "restore",
		       &(struct lg_falco){ .priority = "Notice",
					   .output = sum });
	snprintf(audit, sizeof(audit), "%s/audit.jsonl", dir);
	e = lg_audit_append(audit, lg_json_end(&j), true);
	lg_json_free(&j);
	return e;
}

static void restore_usage(FILE *f)
{
	fprintf(f,
		"Usage: lgctl restore SESSION [--dry-run] [--since DUR] [--to DIR] [--newest] [--force] [PATH...]\n"
		"Puts back what the session changed of pre-existing data (its quarantine), in\n"
		"place: only PATHs (and what is under them) when given, only what was kept in\n"
		"the last DUR with --since, under DIR instead with --to.\n"
		"Where the path holds the session's own version (the file it truncated or\n"
		"rewrote, a file it made) and nothing changed it since, that version is set\n"
		"aside into the quarantine (named; restorable like any entry) and the\n"
		"original put back. Anything changed after the session is a conflict and is\n"
		"never overwritten.\n"
		"Of several versions of one path, the oldest (as it was before the session)\n"
		"is put back; with --newest, the last one (as it was just before its last\n"
		"change, or a version restore set aside). The others stay and are named.\n"
		"A kept file that changed since it was kept is reported and restored only\n"
		"with --force. As root, restore acts as the owner of the session's index.\n");
}

/*
 * A phase of lgctl_restore answers GO_ON when the restore goes on; any
 * other answer is lgctl's exit status, the reason said.
 */
enum { GO_ON = -1 };

/* What the command line asks, and the index it names. */
struct request {
	char *to; /* --to DIR as given (r->to once checked) */
	long long since_ns;
	char **paths; /* PATH...: only these */
	size_t npaths;
	char index[PATH_MAX + 300]; /* as messages name it */
	char qdir[PATH_MAX + 16]; /* <state dir>/quarantine, absolute */
	int ifd; /* the index, read */
	struct stat ist; /* the index, as first opened */
};

static void request_free(struct request *q)
{
	free(q->to);
	lg_closep(&q->ifd);
}

#define LG_REQUEST_AUTO __attribute__((cleanup(request_free)))

/* Every folder, descriptor and entry the restore holds, released. */
static void restore_free(struct restore *r)
{
	for (size_t i = 0; i < r->nf; i++) {
		free(r->f[i].path);
		lg_closep(&r->f[i].fd);
		lg_closep(&r->f[i].sfd);
	}
	free(r->f);
	lg_closep(&r->top);
	lg_closep(&r->qfd);
	lg_closep(&r->ifd);
	lgq_free(&r->x);
}

#define LG_RESTORE_AUTO __attribute__((cleanup(restore_free)))

static int parse_options(struct restore *r, struct request *q, int argc,
			 char **argv)
{
	static const struct option lo[] = {
		{ "dry-run", no_argument, NULL, 'n' },
		{ "since", required_argument, NULL, 's' },
		{ "to", required_argument, NULL, 't' },
		{ "newest", no_argument, NULL, 'N' },
		{ "force", no_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	optind = 0; /* getopt starts again (lgctl's own options were read) */
	while ((c = getopt_long(argc, argv, "ns:t:Nfh", lo, NULL)) != -1) {
		unsigned long ms;

		switch (c) {
		case 'n':
			r->dry = true;
			break;
		case 's':
			if (lg_parse_duration_ms(optarg, &ms) < 0) {
				fprintf(stderr,
					"lgctl restore: --since '%s' is not a duration (e.g. 10m, 2h)\n",
					optarg);
				return 2;
			}
			q->since_ns = lg_real_ns() - (long long)ms * 1000000LL;
			break;
		case 't':
			free(q->to);
			q->to = strdup(optarg);
			break;
		case 'N':
			r->newest = true;
			break;
		case 'f':
			r->force = true;
			break;
		case 'h':
			restore_usage(stdout);
			return 0;
		default:
			restore_usage(stderr);
			return 2;
		}
	}
	return GO_ON;
}

/* The options, then SESSION [PATH...]; --to DIR checked. */
static int parse_args(struct restore *r, struct request *q, int argc,
		      char **argv)
{
	int rc = parse_options(r, q, argc, argv);

	if (rc != GO_ON)
		return rc;
	if (optind >= argc) {
		restore_usage(stderr);
		return 2;
	}
	r->id = argv[optind++];
	if (!lg_session_id_valid(r->id)) {
		fprintf(stderr, "lgctl: '%s' is not a valid session id\n",
			r->id);
		return 2;
	}
	q->paths = argv + optind;
	q->npaths = (size_t)(argc - optind);
	if (q->to) {
		size_t n = strlen(q->to);

		while (n > 1 && q->to[n - 1] == '/')
			q->to[--n] = '\0';
		if (!normal(q->to)) {
			fprintf(stderr,
				"lgctl restore: --to needs an absolute directory, without '.' or '..'\n");
			return 2;
		}
		r->to = q->to;
	}
	return GO_ON;
}

/* The index's name for messages, and its folder as an absolute path. */
static int name_index(const struct restore *r, struct request *q)
{
	const char *dir = r->state_dir;

	snprintf(q->index, sizeof(q->index), "%s/quarantine/%s.jsonl", dir,
		 r->id);
	if (dir[0] == '/') {
		size_t n = strlen(dir);

		while (n > 1 && dir[n - 1] == '/')
			n--;
		snprintf(q->qdir, sizeof(q->qdir), "%.*s/quarantine", (int)n,
			 dir);
	} else { /* relative: from the working directory, as given */
		char cwd[PATH_MAX];

		if (!getcwd(cwd, sizeof(cwd)))
			return 2;
		snprintf(q->qdir, sizeof(q->qdir), "%s/%s/quarantine",
			 strcmp(cwd, "/") ? cwd : "", dir);
	}
	return GO_ON;
}

/*
 * The index's owner first (from the open file), then its folder
 * checked from / with that owner known (open_quarantine): trusted, and
 * the index found there the same file.
 */
static int open_index(struct restore *r, struct request *q)
{
	LG_AUTOCLOSE int qd = -1;
	char name[PATH_MAX];
	int e;

	e = normal(q->qdir) ? walk_abs(q->qdir, false) : -EINVAL;
	if (e >= 0) {
		qd = e;
		snprintf(name, sizeof(name), "%s.jsonl", r->id);
		e = open2(qd, name, O_RDONLY, 0);
	}
	if (e == -ENOENT) {
		fprintf(stderr,
			"lgctl: session '%s' has nothing in the quarantine (no %s)\n",
			r->id, lgq_show(q->index));
		return 1;
	}
	if (e >= 0)
		q->ifd = e;
	if (e < 0 || fstat(e, &q->ist) < 0 || !S_ISREG(q->ist.st_mode)) {
		fprintf(stderr, "lgctl: cannot read %s: %s\n",
			lgq_show(q->index),
			e < 0 ? why_of(e) : "not a regular file");
		return 2;
	}
	r->owner = q->ist.st_uid;
	r->owner_gid = q->ist.st_gid;
	return GO_ON;
}

/* The index in the quarantine now is the file open_index opened. */
static bool same_index(const struct restore *r, const struct request *q)
{
	LG_AUTOCLOSE int fd = -1;
	char name[PATH_MAX];
	struct stat again;

	snprintf(name, sizeof(name), "%s.jsonl", r->id);
	fd = open2(r->qfd, name, O_RDONLY, 0);
	return fd >= 0 && fstat(fd, &again) == 0 &&
	       again.st_ino == q->ist.st_ino && again.st_dev == q->ist.st_dev;
}

/*
 * The quarantine, checked from / as walk_trusted does, root's when its
 * index is, and holding that index still; else the restore is refused.
 */
static int open_quarantine(struct restore *r, const struct request *q)
{
	char why[PATH_MAX + 200];
	struct stat qst;

	r->qfd = walk_trusted(r, q->qdir, 1, why, sizeof(why));
	if (r->qfd >= 0 &&
	    (fstat(r->qfd, &qst) < 0 || (r->owner == 0 && qst.st_uid != 0))) {
		snprintf(why, sizeof(why), "%s is not root's, its index is",
			 lgq_show(q->qdir));
		lg_closep(&r->qfd);
		r->qfd = -EPERM;
	}
	if (r->qfd >= 0 && !same_index(r, q)) {
		snprintf(why, sizeof(why), "%s was replaced while read",
			 lgq_show(q->index));
		lg_closep(&r->qfd);
		r->qfd = -EPERM;
	}
	if (r->qfd < 0) {
		fprintf(stderr,
			"lgctl restore: refused: %s (a quarantine is used only when it is root's or its index's owner's, not writable by others, and reached without a symlink)\n",
			why);
		return 2;
	}
	return GO_ON;
}

/* As whoever could have written the index, before touching any path. */
static int load_as_owner(struct restore *r, const struct request *q)
{
	int e = become_owner(r);

	if (e < 0) {
		fprintf(stderr,
			"lgctl restore: cannot act as the index's owner (uid %u): %s\n",
			(unsigned)r->owner, strerror(-e));
		return 2;
	}
	e = lgq_load_fd(&r->x, q->ifd, q->paths, q->npaths, q->since_ns);
	if (e < 0) {
		fprintf(stderr, "lgctl: cannot read %s: %s\n",
			lgq_show(q->index), strerror(-e));
		return 2;
	}
	return GO_ON;
}

/* The session's times, from the state dir: the quarantine's parent. */
static void times_from_state_dir(struct restore *r, const char *qdir)
{
	LG_AUTOCLOSE int qd = walk_abs(qdir, false);
	LG_AUTOCLOSE int sdir = -1;

	if (qd >= 0)
		sdir = openat(qd, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (sdir >= 0)
		session_times(r, sdir);
	else
		r->end_ns = r->x.newest_ns;
}

/* Where paths go: / or --to DIR (made unless a dry run). */
static int open_top(struct restore *r)
{
	r->top = r->to ? walk_abs(r->to, !r->dry) :
			 open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (r->top < 0 && !(r->dry && r->top == -ENOENT)) {
		fprintf(stderr, "lgctl restore: --to %s: %s\n", lgq_show(r->to),
			why_of(r->top));
		return 2;
	}
	return GO_ON;
}

/* The entries in the order they are put back, each with where it goes. */
static int plan(struct restore *r)
{
	qsort(r->x.e, r->x.n, sizeof(*r->x.e), order);
	for (size_t i = 0; i < r->x.n; i++) {
		struct lgq_entry *e = &r->x.e[i];
		char *dest;

		if (asprintf(&dest, "%s%s", r->to ? r->to : "", e->path) < 0)
			return 2;
		e->dest = dest;
	}
	return GO_ON;
}

static void put_all(struct restore *r)
{
	for (size_t i = 0; i < r->x.n; i++) {
		struct lgq_entry *e = &r->x.e[i];

		if (superseded(r, i)) {
			printf("%s %s: %s version stays in the quarantine (%s); the %s is restored\n",
			       r->newest ? "earlier  " : "later    ",
			       lgq_show(e->path),
			       r->newest ? "an earlier" : "a later",
			       lgq_show(e->kept ? e->kept : "metadata"),
			       r->newest ? "newest" : "oldest");
			continue;
		}
		if (r->top < 0) { /* a dry run into a --to DIR not made yet */
			printf("would restore %s\n", lgq_show(e->dest));
			r->restored += !e->dir;
			continue;
		}
		if (e->dir)
			put_dir(r, e);
		else
			put_file(r, e);
	}
	/* the directories' own metadata last, deepest first */
	for (size_t i = r->x.n; i-- > 0;)
		if (r->x.e[i].made)
			set_dir_meta(r, &r->x.e[i]);
}

static void print_summary(const struct restore *r)
{
	printf("%s%u file(s) %srestored, %u conflict(s), %u missing, %u failed",
	       r->dry ? "dry run: " : "", r->restored,
	       r->dry ? "would be " : "", r->conflicts, r->missing, r->failed);
	if (r->earlier)
		printf("; %u restored earlier", r->earlier);
	if (r->set_aside)
		printf("; %u set aside", r->set_aside);
	if (r->refused)
		printf("; %u refused", r->refused);
	if (r->changed)
		printf("; %u changed since kept (--force)", r->changed);
	printf("\n");
}

/*
 * The order is the safety: the index opened and its owner known, its
 * quarantine checked with that owner, the owner's credentials taken,
 * and only then the index read and any path touched.
 */
int lgctl_restore(const char *dir, int argc, char **argv)
{
	LG_RESTORE_AUTO struct restore r = {
		.state_dir = dir, .top = -1, .qfd = -1, .ifd = -1
	};
	LG_REQUEST_AUTO struct request q = { .ifd = -1 };
	int rc;

	rc = parse_args(&r, &q, argc, argv);
	if (rc != GO_ON)
		return rc;
	rc = name_index(&r, &q);
	if (rc != GO_ON)
		return rc;
	rc = open_index(&r, &q);
	if (rc != GO_ON)
		return rc;
	rc = open_quarantine(&r, &q);
	if (rc != GO_ON)
		return rc;
	rc = load_as_owner(&r, &q);
	if (rc != GO_ON)
		return rc;
	times_from_state_dir(&r, q.qdir);
	rc = open_top(&r);
	if (rc != GO_ON)
		return rc;
	rc = plan(&r);
	if (rc != GO_ON)
		return rc;
	put_all(&r);
	print_summary(&r);
	if (!r.dry && r.x.n)
		audit_restore(dir, r.id, &r);
	return r.conflicts || r.missing || r.failed || r.refused || r.changed ?
		       1 :
		       0;
}
