// SPDX-License-Identifier: MIT
/*
 * The undo puts one entry back (lgctl restore, lgctl rewind): the kept
 * file opened and checked (unchanged since it was kept, or --force),
 * what is at the path now a conflict unless it is the session's own
 * version, which is set aside into the quarantine first; then the kept
 * file moved back with renameat2(RENAME_NOREPLACE) (never over
 * anything), or copied when it is on another filesystem, with the
 * original's owner, mode and times. A directory is made, its metadata
 * set after its files.
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "lib/cleanup.h"
#include "undo_int.h"

/* The kept file is lgrun's copy of the original (not the original's inode). */
static bool is_copy(const struct lgq_entry *e)
{
	if (e->have & LGQ_HAVE_KEPT)
		return e->kept_ino != e->ino;
	return strcmp(e->op, "truncate") == 0 || strcmp(e->op, "shrink") == 0 ||
	       strcmp(e->op, "open_trunc") == 0 ||
	       strcmp(e->op, "open_write") == 0;
}

/*
 * Has the kept file changed since it was kept (a descriptor held open
 * across the removal writes the kept inode)? What differs, into why.
 * A hard link's change time is not compared: the removal that follows
 * the keeping changes it; its modification time is.
 */
static bool changed(const struct lgq_entry *e, const struct stat *ks,
		    struct lg_error *why)
{
	bool copy = is_copy(e);
	long long ino = (e->have & LGQ_HAVE_KEPT) ? e->kept_ino : e->ino;
	long long size = (e->have & LGQ_HAVE_KEPT) ? e->kept_size : e->size;

	if ((!copy || (e->have & LGQ_HAVE_KEPT)) &&
	    (long long)ks->st_ino != ino)
		lg_error_set(why, 0, "inode %llu, kept as %lld",
			     (unsigned long long)ks->st_ino, ino);
	else if ((long long)ks->st_size != size)
		lg_error_set(why, 0, "%lld bytes, kept with %lld",
			     (long long)ks->st_size, size);
	else if (copy && (e->have & LGQ_HAVE_KEPT) &&
		 st_ns(ks->st_ctim) != e->kept_ctime_ns)
		lg_error_set(why, 0, "changed at %lld, kept at %lld",
			     st_ns(ks->st_ctim), e->kept_ctime_ns);
	else if (!copy && st_ns(ks->st_mtim) != e->mtime_ns)
		lg_error_set(why, 0, "modified since it was kept");
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
	return own && r->end_ns &&
	       (ns_of(cur->stx_ctime) <= r->end_ns || rst_moved_back(r, cur));
}

/*
 * in's bytes from off to end into out at the same offsets. 0 or -errno;
 * a file shorter than it was ends it.
 */
static int copy_extent(int in, int out, off_t off, off_t end, char *buf,
		       size_t size)
{
	while (off < end) {
		size_t want = (size_t)(end - off) < size ? (size_t)(end - off) :
							   size;
		ssize_t n = pread(in, buf, want, off);

		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		if (pwrite(out, buf, (size_t)n, off) != n)
			return -EIO;
		off += n;
	}
	return 0;
}

/*
 * The kept file's content into a new file at pfd/name (--to elsewhere, or
 * across filesystems): its data extent by extent (SEEK_DATA, SEEK_HOLE),
 * its holes left holes and its size set, so a sparse file comes back
 * sparse.
 */
static int copy_into(int in, int pfd, const char *name)
{
	LG_AUTOCLOSE int out = rst_open2(
		pfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0600);
	char buf[65536];
	struct stat st;
	off_t at = 0;

	if (out < 0)
		return out;
	if (fstat(in, &st) < 0)
		return -errno;
	while (at < st.st_size) {
		off_t d = lseek(in, at, SEEK_DATA), h;
		int e;

		if (d < 0 && errno == ENXIO)
			break; /* a hole to the end */
		if (d < 0) { /* not known: all data */
			d = at;
			h = st.st_size;
		} else if ((h = lseek(in, d, SEEK_HOLE)) < 0 ||
			   h > st.st_size) {
			h = st.st_size;
		}
		if (d >= st.st_size)
			break;
		e = copy_extent(in, out, d, h, buf, sizeof(buf));
		if (e)
			return e;
		at = h;
	}
	if (ftruncate(out, st.st_size) < 0)
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
	else if ((bfd = rst_open2(f->sfd, b, O_PATH | O_DIRECTORY, 0)) < 0)
		err = bfd;
	else if (!rst_trusted(r, bfd, true, &st))
		err = -EPERM;
	else
		err = move_aside(pfd, name, bfd, nn, &copied);
	if (err) {
		rst_say(r,
			"failed    %s: the session's version could not be set aside (%s): left as it is\n",
			e->path,
			err == -EXDEV ? strerror(EXDEV) : rst_why_of(err));
		r->failed++;
		return err;
	}
	r->x.max_n = n;
	snprintf(kept, sizeof(kept), "%.*s/%s/%s",
		 (int)(strrchr(f->path, '/') - f->path), f->path, b, nn);
	if (statx(bfd, nn, AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS | STATX_BTIME,
		  &after) < 0)
		after = *cur;
	err = rst_index_set_aside(r, n, e->path, kept, cur, &after);
	rst_say(r,
		"set aside %s: the session's version (%lld bytes) is in the quarantine as %s%s\n",
		e->path, (long long)after.stx_size, kept,
		err ? " (not in its index: move it back by hand)" : "");
	if (!copied && after.stx_ino != cur->stx_ino)
		rst_say(r,
			"note      %s changed while it was set aside: what was moved is what is kept\n",
			e->path);
	r->set_aside++;
	return 0;
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

/* The folder of path (normal) walked from r->top, its last name at *name. */
static int walk_parent(const struct restore *r, const char *path, bool make,
		       const char **name)
{
	LG_AUTOFREE char *rel = strdup(path + 1);
	char *slash;

	*name = strrchr(path, '/') + 1;
	if (!rel)
		return -ENOMEM;
	slash = strrchr(rel, '/');
	if (!slash)
		return fcntl(r->top, F_DUPFD_CLOEXEC, 3);
	*slash = '\0';
	return rst_walk(r->top, rel, make);
}

/* The dest's folder: from --to DIR or /, made when make. */
static int parent_of(const struct restore *r, const struct lgq_entry *e,
		     bool make)
{
	const char *name;

	return walk_parent(r, e->path, make, &name);
}

static void refuse(struct restore *r, const struct lgq_entry *e,
		   const char *why)
{
	rst_say(r, "refused   %s: %s\n", e->path, why);
	r->refused++;
}

/* One file's restore: what rst_put_file's phases share. */
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

#define LG_PUT_AUTO LG_AUTO(put_close)

/*
 * The kept file and the path's folder opened, what is at the path now
 * looked at. False when the entry is refused.
 */
static bool put_open(struct restore *r, struct put *p)
{
	const struct lgq_entry *e = p->e;
	struct lg_error why;

	if (!lg_undo_path_normal(e->path)) {
		refuse(r, e, "its path is not absolute and normal");
		return false;
	}
	p->name = strrchr(e->path, '/') + 1;
	p->f = rst_folder_of(r, e, &why);
	if (!p->f) {
		refuse(r, e, why.msg);
		return false;
	}
	/* a symlink kept is the symlink itself: never followed */
	p->kfd = p->f->fd < 0 ?
			 p->f->fd :
			 rst_open2(p->f->fd, strrchr(e->kept, '/') + 1,
				   (S_ISLNK(e->mode) ? O_PATH :
						       O_RDONLY | O_NONBLOCK) |
					   O_NOFOLLOW,
				   0);
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
	    (S_ISREG(p->cur.stx_mode) || S_ISLNK(p->cur.stx_mode))) {
		rst_say(r,
			"earlier   %s (restored by an earlier lgctl restore)\n",
			e->dest);
		r->earlier++;
		return;
	}
	rst_say(r,
		"missing   %s (no longer in the quarantine: restored or collected)\n",
		e->path);
	r->missing++;
}

/*
 * The kept file there, a regular file, and unchanged since it was kept
 * (or --force). False, said, when the entry stops here.
 */
static bool put_kept_ok(struct restore *r, struct put *p)
{
	const struct lgq_entry *e = p->e;
	struct lg_error why;

	if (p->kfd == -ENOENT) {
		put_gone(r, p);
		return false;
	}
	if (p->kfd < 0) {
		lg_error_set(&why, -p->kfd, "its kept file %s: %s", e->kept,
			     rst_why_of(p->kfd));
		refuse(r, e, why.msg);
		return false;
	}
	if (fstat(p->kfd, &p->ks) < 0 ||
	    !(S_ISLNK(e->mode) ? S_ISLNK(p->ks.st_mode) :
				 S_ISREG(p->ks.st_mode))) {
		lg_error_set(&why, 0, "its kept file %s is not a %s", e->kept,
			     S_ISLNK(e->mode) ? "symlink" : "regular file");
		refuse(r, e, why.msg);
		return false;
	}
	if (changed(e, &p->ks, &why)) {
		rst_say(r,
			"changed   %s: its kept file %s changed since it was kept (%s)%s\n",
			e->path, e->kept, why.msg,
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
		if (r->rewind) /* --to is restore's: say where the version is */
			rst_say(r,
				"conflict  %s exists: left as it is (changed since the session; what it held when turn %lld began is kept as %s)\n",
				p->e->dest, r->turn,
				p->e->kept ? p->e->kept : "?");
		else
			rst_say(r,
				"conflict  %s exists: left as it is (changed since the session; restore it elsewhere with --to DIR)\n",
				p->e->dest);
		r->conflicts++;
		return false;
	}
	if (r->dry) {
		rst_say(r,
			"would set aside %s (the session's version, %lld bytes)\n",
			p->e->dest, (long long)p->cur.stx_size);
		return true;
	}
	return set_aside(r, p->e, p->f, p->pfd, p->name, &p->cur) == 0;
}

/* A kept symlink (an O_PATH fd of it) made again at pfd/name. */
static int copy_symlink(int kfd, int pfd, const char *name)
{
	char target[PATH_MAX + 1];
	ssize_t n = readlinkat(kfd, "", target, sizeof(target) - 1);

	if (n < 0)
		return -errno;
	target[n] = '\0';
	return symlinkat(target, pfd, name) < 0 ? -errno : 0;
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
		if (err == -EXDEV && S_ISLNK(p->e->mode)) {
			err = copy_symlink(p->kfd, p->pfd, p->name);
		} else if (err == -EXDEV) {
			p->out = copy_into(p->kfd, p->pfd, p->name);
			err = p->out < 0 ? p->out : 0;
		} else if (err == -EEXIST) {
			rst_say(r, "conflict  %s exists: left as it is\n",
				p->e->dest);
			r->conflicts++;
			return false;
		}
	}
	if (err) {
		rst_say(r, "failed    %s: %s\n", p->e->dest, rst_why_of(err));
		r->failed++;
		return false;
	}
	return true;
}

void rst_put_file(struct restore *r, struct lgq_entry *e)
{
	LG_PUT_AUTO struct put p = { .e = e, .kfd = -1, .pfd = -1, .out = -1 };
	int fd;

	if (!put_open(r, &p) || !put_kept_ok(r, &p))
		return;
	if (p.pfd < 0 && p.pfd != -ENOENT) {
		rst_say(r, "failed    %s: its folder: %s\n", e->dest,
			rst_why_of(p.pfd));
		r->failed++;
		return;
	}
	if (p.here && !put_clear(r, &p))
		return;
	if (r->dry && S_ISLNK(e->mode)) {
		rst_say(r, "would restore %s (a symlink)\n", e->dest);
		r->restored++;
		e->would = true;
		return;
	}
	if (r->dry) {
		rst_say(r, "would restore %s (%lld bytes)\n", e->dest,
			(long long)p.ks.st_size);
		r->restored++;
		e->would = true;
		return;
	}
	if (!put_back(r, &p))
		return;
	e->back = true; /* its change time is this restore's from now */
	if (S_ISLNK(e->mode)) {
		char target[PATH_MAX + 1];
		ssize_t n = readlinkat(p.kfd, "", target, sizeof(target) - 1);

		target[n < 0 ? 0 : n] = '\0';
		rst_say(r, "restored  %s (a symlink to %s)\n", e->dest, target);
		r->restored++;
		return;
	}
	fd = p.out >= 0 ? p.out : p.kfd;
	set_meta_fd(fd, e, &p.ks);
	if (fstat(fd, &p.ks) < 0)
		p.ks.st_size = 0;
	rst_say(r, "restored  %s (%lld bytes)\n", e->dest,
		(long long)p.ks.st_size);
	r->restored++;
}

void rst_put_dir(struct restore *r, struct lgq_entry *e)
{
	const char *name = strrchr(e->path, '/') + 1;
	LG_AUTOCLOSE int pfd = -1;
	struct stat st;

	if (!lg_undo_path_normal(e->path)) {
		refuse(r, e, "its path is not absolute and normal");
		return;
	}
	pfd = parent_of(r, e, false);
	if (pfd >= 0 && fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		if (!S_ISDIR(st.st_mode)) {
			rst_say(r,
				"conflict  %s exists and is not a directory\n",
				e->dest);
			r->conflicts++;
		}
		return; /* there again: its files go into it */
	}
	if (r->dry) {
		rst_say(r, "would make %s/\n", e->dest);
		return;
	}
	if (pfd < 0)
		pfd = parent_of(r, e, true);
	if (pfd < 0 || mkdirat(pfd, name, 0700) < 0) {
		rst_say(r, "failed    %s/: %s\n", e->dest,
			rst_why_of(pfd < 0 ? pfd : -errno));
		r->failed++;
		return;
	}
	e->made = true;
}

/* A made directory's recorded owner, mode, attributes and times. */
void rst_set_dir_meta(const struct restore *r, const struct lgq_entry *e)
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
	fd = rst_open2(pfd, strrchr(e->path, '/') + 1, O_RDONLY | O_DIRECTORY,
		       0);
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

static bool same_file(const struct lgq_entry *e, const struct statx *st)
{
	return e->ino && (long long)st->stx_ino == e->ino &&
	       (!(e->have & LGQ_HAVE_DEV) ||
		(long long)makedev(st->stx_dev_major, st->stx_dev_minor) ==
			e->dev);
}

/* The rename not looked at yet of the inode st is (the newest), or NULL. */
static struct lgq_entry *pending_of(struct restore *r, const struct statx *st)
{
	for (size_t i = 0; i < r->x.n; i++)
		if (r->x.e[i].moved && !r->x.e[i].done &&
		    same_file(&r->x.e[i], st))
			return &r->x.e[i];
	return NULL;
}

/* A newer rename of the same inode was looked at: this one is history. */
static bool moved_since(const struct restore *r, const struct lgq_entry *e)
{
	for (size_t i = 0; i < r->x.n; i++) {
		const struct lgq_entry *k = &r->x.e[i];

		if (k != e && k->moved && k->done && k->n > e->n &&
		    k->ino == e->ino && k->dev == e->dev)
			return true;
	}
	return false;
}

static size_t under(const char *p, const char *dir)
{
	size_t n = dir ? strlen(dir) : 0;

	return n && strncmp(p, dir, n) == 0 && p[n] == '/' ? n : 0;
}

/*
 * A directory e moved back: what an older rename left below it (below
 * the name it had then, or below where it was) lies below its name now.
 */
static void moved_below(struct restore *r, const struct lgq_entry *e)
{
	for (size_t i = 0; i < r->x.n; i++) {
		struct lgq_entry *k = &r->x.e[i];
		size_t n;
		char *p;

		if (!k->moved || k->done || !k->moved_to)
			continue;
		n = under(k->moved_to, e->moved_to);
		if (!n)
			n = under(k->moved_to, e->moved_from);
		if (!n || asprintf(&p, "%s%s", e->path, k->moved_to + n) < 0)
			continue;
		free(k->moved_to);
		k->moved_to = p;
	}
}

bool rst_moved_back(const struct restore *r, const struct statx *st)
{
	for (size_t i = 0; i < r->x.n; i++) {
		const struct lgq_entry *e = &r->x.e[i];

		/* moved back, or put back: the original, or its kept copy */
		if (e->back && (same_file(e, st) ||
				((e->have & LGQ_HAVE_KEPT) &&
				 (long long)st->stx_ino == e->kept_ino)))
			return true;
	}
	return false;
}

/* A folder of the session's quarantine, for a set-aside; or NULL. */
static struct folder *any_folder(struct restore *r)
{
	struct lg_error why;

	for (size_t i = 0; i < r->x.n; i++) {
		struct folder *f;

		if (!r->x.e[i].kept || r->x.e[i].moved)
			continue;
		f = rst_folder_of(r, &r->x.e[i], &why);
		if (f && f->fd >= 0)
			return f;
	}
	return NULL;
}

/*
 * What holds the name e goes back to is moved out of the way when it is
 * itself to go back elsewhere (a swap, a chain of renames): to a name of
 * its own beside it, where its rename finds it. False when it is not.
 */
static bool out_of_the_way(struct restore *r, int pfd, const char *name,
			   const struct statx *cur, const struct lgq_entry *e)
{
	struct lgq_entry *k = pending_of(r, cur);
	char tmp[64], *p;

	if (!k || k == e)
		return false;
	snprintf(tmp, sizeof(tmp), ".lgrun-restore.%lld", k->n);
	if (renameat2(pfd, name, pfd, tmp, RENAME_NOREPLACE) < 0)
		return false;
	if (asprintf(&p, "%.*s%s", (int)(strrchr(e->path, '/') + 1 - e->path),
		     e->path, tmp) < 0) {
		renameat2(pfd, tmp, pfd, name, RENAME_NOREPLACE);
		return false;
	}
	free(k->moved_to);
	k->moved_to = p;
	k->back = true; /* moved by this restore: its change time is ours */
	return true;
}

/*
 * A rewind undoes the newest first: what is at path now, put there by
 * this rewind or an earlier one (a folder made again, a file's kept copy:
 * other inodes) or left so by the session, is what an older entry of
 * path changed (renamed there, appended to, chmodded), as it was after.
 */
static bool rewound_there(const struct restore *r, const char *path,
			  const struct statx *cur)
{
	return r->rewind && (rst_put_here(r, path, cur) ||
			     (r->end_ns && ns_of(cur->stx_ctime) <= r->end_ns));
}

bool rst_put_here(const struct restore *r, const char *path,
		  const struct statx *cur)
{
	if (rst_moved_back(r, cur))
		return true;
	for (size_t i = 0; i < r->x.n; i++) /* a folder this restore made */
		if (r->x.e[i].made && r->x.e[i].dir && r->x.e[i].dest &&
		    S_ISDIR(cur->stx_mode) && strcmp(r->x.e[i].dest, path) == 0)
			return true;
	return false;
}

/*
 * A pre-existing file or directory the session renamed, moved back to its
 * name from before the session (renameat2(RENAME_NOREPLACE): never over
 * anything), if it is still where the session left it and unchanged since
 * the session's end. Newest renames first (rst's order): a chain goes back
 * in one move; a directory's contents follow it.
 */
void rst_put_moved(struct restore *r, struct lgq_entry *e)
{
	LG_AUTOCLOSE int fpfd = -1, tpfd = -1;
	const char *from, *to;
	struct statx cur, there;
	bool occupied;

	e->done = true;
	/* a rewind undoes each rename, one step back (undo/rewind.h) */
	if (r->to || (!r->rewind && moved_since(r, e)))
		return; /* only in place; an older rename of a moved inode */
	if (!e->moved_to || !lg_undo_path_normal(e->moved_to) ||
	    !lg_undo_path_normal(e->path)) {
		refuse(r, e, "its paths are not absolute and normal");
		return;
	}
	if (strcmp(e->moved_to, e->path) == 0)
		return; /* renamed back to its name by the session itself */
	fpfd = walk_parent(r, e->moved_to, false, &from);
	if (fpfd < 0 ||
	    statx(fpfd, from, AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS, &cur) <
		    0 ||
	    (!same_file(e, &cur) &&
	     ((cur.stx_mode & S_IFMT) != (e->mode & S_IFMT) ||
	      !rewound_there(r, e->moved_to, &cur))))
		return; /* not there: removed since (its kept entry), or gone */
	if (r->end_ns && ns_of(cur.stx_ctime) > r->end_ns &&
	    !rst_moved_back(r, &cur)) {
		rst_say(r,
			"conflict  %s: renamed to %s by the session, changed there since: left as it is\n",
			e->path, e->moved_to);
		r->conflicts++;
		return;
	}
	tpfd = walk_parent(r, e->path, !r->dry, &to);
	if (tpfd < 0 && !(r->dry && tpfd == -ENOENT)) {
		rst_say(r, "failed    %s: its folder: %s\n", e->path,
			rst_why_of(tpfd));
		r->failed++;
		return;
	}
	occupied = tpfd >= 0 &&
		   statx(tpfd, to, AT_SYMLINK_NOFOLLOW,
			 STATX_BASIC_STATS | STATX_BTIME, &there) == 0;
	if (occupied && same_file(e, &there))
		return; /* a hard link of it holds its name already */
	if (occupied && (r->dry || !out_of_the_way(r, tpfd, to, &there, e))) {
		struct folder *f = NULL;

		/* the session's own file at that name: set aside first */
		if (!r->dry && !S_ISDIR(there.stx_mode) &&
		    session_version(r, e, &there))
			f = any_folder(r);
		if (!f || set_aside(r, e, f, tpfd, to, &there) != 0) {
			rst_say(r,
				"conflict  %s exists: left as it is; what it held before the session is at %s\n",
				e->path, e->moved_to);
			r->conflicts++;
			return;
		}
	}
	if (r->dry) {
		rst_say(r, "would move back %s (from %s)\n", e->path,
			e->moved_to);
		r->moved++;
		return;
	}
	if (renameat2(fpfd, from, tpfd, to, RENAME_NOREPLACE) < 0) {
		rst_say(r, "failed    %s: moving it back from %s: %s\n",
			e->path, e->moved_to, rst_why_of(-errno));
		r->failed++;
		return;
	}
	rst_say(r, "moved back %s (from %s)\n", e->path, e->moved_to);
	r->moved++;
	e->back = true;
	/* what moved (a rewind's: maybe another inode), this restore's now */
	e->ino = (long long)cur.stx_ino;
	e->dev = (long long)makedev(cur.stx_dev_major, cur.stx_dev_minor);
	e->have |= LGQ_HAVE_DEV;
	if (S_ISDIR(e->mode))
		moved_below(r, e);
}

/*
 * A folder for what is set aside when the session kept nothing: its own
 * in the state dir's quarantine, made now (0700, as the index's owner).
 */
static struct folder *own_folder(struct restore *r)
{
	struct folder *f = any_folder(r), *v;
	char *path;
	int sfd;

	if (f || r->qfd < 0)
		return f;
	if (mkdirat(r->qfd, r->id, 0700) < 0 && errno != EEXIST)
		return NULL;
	sfd = rst_open2(r->qfd, r->id, O_PATH | O_DIRECTORY, 0);
	if (sfd < 0)
		return NULL;
	if (asprintf(&path, "%s/quarantine/%s/0", r->state_dir, r->id) < 0) {
		close(sfd);
		return NULL;
	}
	v = realloc(r->f, (r->nf + 1) * sizeof(*v));
	if (!v) {
		free(path);
		close(sfd);
		return NULL;
	}
	r->f = v;
	f = &r->f[r->nf++];
	memset(f, 0, sizeof(*f));
	f->path = path;
	f->fd = -ENOENT; /* no kept file is read from it */
	f->sfd = sfd;
	return f;
}

/*
 * A name the session made (a file, a symlink, a folder, a hard link),
 * when it is still what the session left (its inode when recorded, else
 * born in the session's run; unchanged since its end): a file set aside
 * into the quarantine, never destroyed; an empty folder removed. Newest
 * first: a folder's contents go before it. --keep-new leaves them.
 */
void rst_put_made(struct restore *r, struct lgq_entry *e)
{
	LG_AUTOCLOSE int pfd = -1;
	struct folder *f;
	struct statx cur;
	const char *name;
	bool born;

	e->done = true;
	if (r->keep_new || r->to || !lg_undo_path_normal(e->path))
		return;
	pfd = walk_parent(r, e->path, false, &name);
	if (pfd < 0 || statx(pfd, name, AT_SYMLINK_NOFOLLOW,
			     STATX_BASIC_STATS | STATX_BTIME, &cur) < 0)
		return; /* gone: removed by the session, or since */
	if (e->ino) /* a hard link or a renamed file: that inode */
		born = same_file(e, &cur);
	else
		born = (cur.stx_mask & STATX_BTIME) && r->start_ns &&
		       ns_of(cur.stx_btime) >= r->start_ns &&
		       (!r->end_ns || ns_of(cur.stx_btime) <= r->end_ns);
	/* a rewind put back what a later turn removed: the same, made again */
	if (!born && r->rewind)
		born = rst_put_here(r, e->path, &cur);
	if (!born)
		return; /* not the session's: another file took the name */
	/* a folder's change time is its entries' (set aside just now) */
	if (!S_ISDIR(cur.stx_mode) && r->end_ns &&
	    ns_of(cur.stx_ctime) > r->end_ns && !rst_moved_back(r, &cur)) {
		rst_say(r,
			"conflict  %s: made by the session, changed since: left as it is\n",
			e->path);
		r->conflicts++;
		return;
	}
	if (S_ISDIR(cur.stx_mode)) {
		if (r->dry) {
			rst_say(r,
				"would remove %s (a folder the session made, when empty)\n",
				e->path);
			return;
		}
		if (unlinkat(pfd, name, AT_REMOVEDIR) == 0) {
			rst_say(r,
				"removed   %s (a folder the session made, empty)\n",
				e->path);
			r->made_gone++;
		} else {
			rst_say(r,
				"left      %s: a folder the session made, not empty (%s)\n",
				e->path, strerror(errno));
		}
		return;
	}
	if (e->ino && !S_ISDIR(cur.stx_mode) && cur.stx_nlink > 1) {
		/* a name more of a file that keeps its own: no data goes */
		if (r->dry) {
			rst_say(r,
				"would remove %s (a hard link the session made)\n",
				e->path);
		} else if (unlinkat(pfd, name, 0) == 0) {
			rst_say(r,
				"removed   %s (a hard link the session made; the file stays under its other name)\n",
				e->path);
		} else {
			rst_say(r, "failed    %s: %s\n", e->path,
				strerror(errno));
			r->failed++;
			return;
		}
		r->made_gone++;
		return;
	}
	if (r->dry) {
		rst_say(r, "would set aside %s (made by the session)\n",
			e->path);
		r->made_gone++;
		return;
	}
	f = own_folder(r);
	if (!f) {
		rst_say(r,
			"failed    %s: made by the session, and no quarantine folder to set it aside in: left as it is\n",
			e->path);
		r->failed++;
		return;
	}
	if (set_aside(r, e, f, pfd, name, &cur) == 0)
		r->made_gone++;
}

/* A dry run would put a version back at path first. */
static bool would_put(const struct restore *r, const char *path)
{
	for (size_t i = 0; i < r->x.n; i++)
		if (r->x.e[i].would && r->x.e[i].dest &&
		    strcmp(r->x.e[i].dest, path) == 0)
			return true;
	return false;
}

/*
 * A pre-existing file the session appended to, cut back to the size it
 * had (kind "appended"), or whose mode it changed, given its mode back
 * ("mode"): when it is the same inode and unchanged since the session's
 * end (or this restore's own work on it). Else a conflict, left as is.
 */
void rst_put_note(struct restore *r, struct lgq_entry *e)
{
	LG_AUTOCLOSE int pfd = -1, fd = -1;
	struct statx cur;
	const char *name;

	e->done = true;
	if (r->to || !lg_undo_path_normal(e->path))
		return;
	if (r->dry && r->rewind && would_put(r, e->path)) {
		/* the version a dry run did not put back decides nothing */
		if (e->mode_only)
			rst_say(r, "would set back %s's mode to %04o\n",
				e->path, e->mode & 07777);
		else
			rst_say(r, "would cut back %s to %lld bytes\n", e->path,
				e->size);
		r->noted++;
		return;
	}
	pfd = walk_parent(r, e->path, false, &name);
	if (pfd < 0 || statx(pfd, name, AT_SYMLINK_NOFOLLOW,
			     STATX_BASIC_STATS | STATX_BTIME, &cur) < 0)
		return; /* gone: its kept entry, if any */
	/* another file: its kept entry, if any (a rewind: rewound_there) */
	if (!same_file(e, &cur) &&
	    !((S_ISREG(cur.stx_mode) ||
	       (e->mode_only && S_ISDIR(cur.stx_mode))) &&
	      rewound_there(r, e->path, &cur)))
		return;
	/* a folder's change time is its entries' too (this restore's) */
	if (!S_ISDIR(cur.stx_mode) && r->end_ns &&
	    ns_of(cur.stx_ctime) > r->end_ns && !rst_moved_back(r, &cur)) {
		rst_say(r,
			"conflict  %s: %s by the session, changed since: left as it is\n",
			e->path,
			e->appended ? "appended to" : "its mode changed");
		r->conflicts++;
		return;
	}
	if (e->mode_only) {
		/* a folder made again gets its metadata last: this mode then */
		for (size_t i = 0; r->rewind && i < r->x.n; i++) {
			struct lgq_entry *d = &r->x.e[i];

			if (d->made && d->dir && d->dest &&
			    strcmp(d->dest, e->path) == 0)
				d->mode = (d->mode & ~07777u) |
					  (e->mode & 07777);
		}
		if ((cur.stx_mode & 07777) == (e->mode & 07777))
			return;
		if (r->dry) {
			rst_say(r, "would set back %s's mode to %04o\n",
				e->path, e->mode & 07777);
		} else if (fchmodat(pfd, name, e->mode & 07777, 0) < 0) {
			rst_say(r, "failed    %s: its mode: %s\n", e->path,
				strerror(errno));
			r->failed++;
			return;
		} else {
			rst_say(r, "mode      %s set back to %04o (was %04o)\n",
				e->path, e->mode & 07777, cur.stx_mode & 07777);
		}
		r->noted++;
		return;
	}
	if ((long long)cur.stx_size == e->size)
		return;
	if ((long long)cur.stx_size < e->size || !S_ISREG(cur.stx_mode)) {
		rst_say(r,
			"conflict  %s: appended to by the session, now shorter than before it (%lld bytes, was %lld): left as it is\n",
			e->path, (long long)cur.stx_size, e->size);
		r->conflicts++;
		return;
	}
	if (r->dry) {
		rst_say(r,
			"would cut back %s to %lld bytes (the session appended %lld)\n",
			e->path, e->size, (long long)cur.stx_size - e->size);
		r->noted++;
		return;
	}
	fd = rst_open2(pfd, name, O_WRONLY | O_NOFOLLOW | O_NONBLOCK, 0);
	if (fd < 0 || ftruncate(fd, e->size) < 0) {
		rst_say(r, "failed    %s: cutting it back: %s\n", e->path,
			strerror(fd < 0 ? -fd : errno));
		r->failed++;
		return;
	}
	rst_say(r, "cut back  %s to %lld bytes (the session appended %lld)\n",
		e->path, e->size, (long long)cur.stx_size - e->size);
	r->noted++;
}
