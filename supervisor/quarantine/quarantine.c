// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "record/audit.h"
#include "lib/cleanup.h"
#include "lib/clock.h"
#include "lib/json.h"
#include "lib/log.h"
#include "quarantine_int.h"
#include "lib/spill.h"

/*
 * One entry of the index as it is held before its line is made (after the
 * tree has its answer: lg_quarantine_settle), a record of the spill
 * (lib/spill.h): what the line says, with its strings after it, by
 * offset (0: none), for the watchdog makes it too when lgrun is gone.
 */
struct qrec {
	char kind[8]; /* "file", "dir" */
	int op; /* enum lg_op */
	unsigned n;
	int64_t time_ns, start_ns;
	struct statx st, ks; /* the original's, as it was; the kept file's */
	bool has_ks, removed_as;
	pid_t pid;
	uint32_t session, path, tree, kept, xattrs, exe, audit_id;
	char strings[];
};

/* "DIR, DIR": each trimmed, without a trailing '/'. */
static int set_folders(struct lg_quarantine *q, const char *list)
{
	const char *p = list;

	while (p && *p && q->nfolders < MAX_FOLDERS) {
		size_t n;

		p += strspn(p, " \t");
		n = strcspn(p, ",");
		while (n > 1 &&
		       (p[n - 1] == ' ' || p[n - 1] == '\t' || p[n - 1] == '/'))
			n--;
		if (n && p[0] == '/') {
			q->folders[q->nfolders] = strndup(p, n);
			if (!q->folders[q->nfolders++])
				return -ENOMEM;
		}
		p = strchr(p, ',');
		p = p ? p + 1 : NULL;
	}
	return 0;
}

struct lg_quarantine *lg_quarantine_new(const char *state_dir,
					const char *session, uint64_t max_bytes,
					const char *folders)
{
	struct lg_quarantine *q = calloc(1, sizeof(*q));

	if (!q)
		return NULL;
	snprintf(q->state_dir, sizeof(q->state_dir), "%s", state_dir);
	snprintf(q->session, sizeof(q->session), "%s", session);
	snprintf(q->index, sizeof(q->index), "%s/quarantine/%s.jsonl",
		 state_dir, session);
	q->index_fd = -1;
	q->last_dir_fd = -1;
	q->others = -1;
	q->max_bytes = max_bytes;
	if (set_folders(q, folders) < 0) {
		lg_quarantine_free(q);
		return NULL;
	}
	return q;
}

void lg_quarantine_set_limits(struct lg_quarantine *q,
			      const struct lg_quarantine_limits *l)
{
	q->lim = *l;
}

void lg_quarantine_set_start(struct lg_quarantine *q, int64_t start_ns)
{
	q->start_ns = start_ns;
}

void lg_quarantine_set_spill(struct lg_quarantine *q, struct lg_spill *sp)
{
	q->spill = sp;
}

int lg_quarantine_flush(struct lg_quarantine *q)
{
	if (!q || !q->spill || q->index_fd < 0)
		return 0;
	return lg_spill_flush(q->spill, q->index_fd);
}

uint64_t lg_quarantine_pending_since(const struct lg_quarantine *q)
{
	return q ? lg_spill_since(q->spill) : 0;
}

void lg_quarantine_free(struct lg_quarantine *q)
{
	if (!q)
		return;
	lg_quarantine_flush(q);
	lg_closep(&q->index_fd);
	lg_closep(&q->last_dir_fd);
	for (size_t i = 0; i < q->nroots; i++) {
		lg_closep(&q->roots[i].bucket_fd);
		lg_closep(&q->roots[i].fd);
	}
	for (size_t i = 0; i < q->nfolders; i++)
		free(q->folders[i]);
	free(q);
}

static int index_open(struct lg_quarantine *q)
{
	char p[PATH_MAX + 256];

	if (q->index_fd >= 0)
		return 0;
	snprintf(p, sizeof(p), "%s/quarantine", q->state_dir);
	if (lg_quarantine_mkdir_0700(p) < 0)
		return -errno;
	q->index_fd =
		open(q->index, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	return q->index_fd < 0 ? -errno : 0;
}

static int64_t ns(struct statx_timestamp t)
{
	return (int64_t)t.tv_sec * 1000000000LL + t.tv_nsec;
}

#define XATTR_MAX 65536 /* names or values of one inode kept at most */

/* in's extended attributes onto out (what may be set: user.* at least). */
static void copy_xattrs(int in, int out)
{
	char names[XATTR_MAX], *value = malloc(XATTR_MAX);
	ssize_t n = flistxattr(in, names, sizeof(names));

	for (ssize_t o = 0; value && n > 0 && o < n;
	     o += (ssize_t)strlen(names + o) + 1) {
		ssize_t v = fgetxattr(in, names + o, value, XATTR_MAX);

		if (v >= 0 &&
		    fsetxattr(out, names + o, value, (size_t)v, 0) < 0) {
			/* security.* without the right: the rest still goes */
		}
	}
	free(value);
}

/* A directory's extended attributes as {"name":"hex value",...}, or "". */
static void xattrs_json(const char *path, struct lg_json *out)
{
	char names[XATTR_MAX];
	unsigned char *value = malloc(XATTR_MAX);
	ssize_t n = llistxattr(path, names, sizeof(names));
	bool any = false;

	for (ssize_t o = 0; value && n > 0 && o < n;
	     o += (ssize_t)strlen(names + o) + 1) {
		ssize_t v = lgetxattr(path, names + o, value, XATTR_MAX);
		char hex[3];

		if (v < 0)
			continue;
		lg_json_append(out, any ? "," : "{", 1);
		lg_json_quote(out, names + o);
		lg_json_append(out, ":\"", 2);
		for (ssize_t k = 0; k < v; k++) {
			snprintf(hex, sizeof(hex), "%02x", value[k]);
			lg_json_append(out, hex, 2);
		}
		lg_json_append(out, "\"", 1);
		any = true;
	}
	if (any)
		lg_json_append(out, "}", 1);
	free(value);
}

/* s into the record's strings at *at: its offset, or 0 for none. */
static uint32_t put_str(struct qrec *r, size_t *at, const char *s)
{
	size_t n, off = *at;

	if (!s)
		return 0;
	n = strlen(s) + 1;
	memcpy(r->strings + off, s, n);
	*at += n;
	return (uint32_t)(off + 1);
}

static const char *get_str(const struct qrec *r, uint32_t off)
{
	return off ? r->strings + off - 1 : NULL;
}

/* A record's line of the index (with its newline), allocated: the spill's
 * line function, also the watchdog's when lgrun is gone. */
char *lg_quarantine_line(const void *rec, size_t len, size_t *n)
{
	const struct qrec *e = rec;
	const struct statx *st = &e->st;
	struct lg_json j = { 0 };
	const char *tree = get_str(e, e->tree), *v;
	char t[40];

	if (len < sizeof(*e))
		return NULL;
	lg_time_iso(e->time_ns, t, sizeof(t));
	lg_json_begin(&j);
	lg_json_int(&j, "n", e->n);
	lg_json_str(&j, "time", t);
	lg_json_int(&j, "time_ns", e->time_ns);
	lg_json_str(&j, "session", get_str(e, e->session));
	lg_json_str(&j, "kind", e->kind);
	lg_json_str(&j, "op", lg_op_name((enum lg_op)e->op));
	lg_json_str(&j, "path", get_str(e, e->path));
	if (tree) /* removed as; else the tree's own view named it so */
		lg_json_str(&j, e->removed_as ? "removed_as" : "tree_path",
			    tree);
	if ((v = get_str(e, e->kept)))
		lg_json_str(&j, "kept", v);
	lg_json_int(&j, "mode", st->stx_mode);
	lg_json_int(&j, "uid", st->stx_uid);
	lg_json_int(&j, "gid", st->stx_gid);
	lg_json_int(&j, "size", (long long)st->stx_size);
	lg_json_int(&j, "ino", (long long)st->stx_ino);
	lg_json_int(&j, "atime_ns", ns(st->stx_atime));
	lg_json_int(&j, "mtime_ns", ns(st->stx_mtime));
	lg_json_int(&j, "ctime_ns", ns(st->stx_ctime));
	lg_json_int(&j, "dev",
		    (long long)makedev(st->stx_dev_major, st->stx_dev_minor));
	if (e->has_ks) {
		lg_json_int(&j, "kept_ino", (long long)e->ks.stx_ino);
		lg_json_int(&j, "kept_size", (long long)e->ks.stx_size);
		lg_json_int(&j, "kept_ctime_ns", ns(e->ks.stx_ctime));
	}
	if (e->start_ns)
		lg_json_int(&j, "start_ns", e->start_ns);
	lg_json_int(&j, "pid", e->pid);
	lg_json_str(&j, "exe", get_str(e, e->exe));
	if ((v = get_str(e, e->audit_id)))
		lg_json_str(&j, "audit_id", v);
	if ((v = get_str(e, e->xattrs)))
		lg_json_raw(&j, "xattrs", v);
	lg_json_end(&j);
	lg_json_append(&j, "\n", 1);
	*n = j.len;
	return j.buf; /* NULL when out of memory: the line is lost */
}

/*
 * The entry, its inode's facts (st: the original's, as it was), the kept
 * file's own (ks: what a restore checks it against), who and when: held
 * for the index (its line made once the tree has its answer), else
 * written now. 0 or -errno.
 */
static int index_add(struct lg_quarantine *q, const char *kind,
		     const char *path, const char *tree, const char *kept,
		     const struct statx *st, const struct statx *ks,
		     const struct lg_quarantine_who *who, const char *xattrs)
{
	size_t n = sizeof(struct qrec) + strlen(path) + 1 + strlen(q->session) +
		   1 + (tree ? strlen(tree) + 1 : 0) +
		   (kept ? strlen(kept) + 1 : 0) +
		   (xattrs && *xattrs ? strlen(xattrs) + 1 : 0) +
		   (who->exe ? strlen(who->exe) : 0) + 1 +
		   (who->audit_id ? strlen(who->audit_id) + 1 : 0);
	LG_AUTOFREE struct qrec *e = calloc(1, n);
	size_t at = 0;
	int r;

	if (!e)
		return -ENOMEM;
	if (index_open(q) < 0)
		return -EIO;
	snprintf(e->kind, sizeof(e->kind), "%s", kind);
	e->op = (int)who->op;
	e->n = q->seq;
	e->time_ns = lg_real_ns();
	e->start_ns = q->start_ns;
	e->st = *st;
	e->has_ks = ks != NULL;
	if (ks)
		e->ks = *ks;
	e->removed_as = tree && who->origin && strcmp(path, who->origin) == 0;
	e->pid = who->pid;
	e->session = put_str(e, &at, q->session);
	e->path = put_str(e, &at, path);
	e->tree = put_str(e, &at, tree);
	e->kept = put_str(e, &at, kept);
	e->xattrs = put_str(e, &at, xattrs && *xattrs ? xattrs : NULL);
	e->exe = put_str(e, &at, who->exe ? who->exe : "");
	e->audit_id = put_str(
		e, &at, who->audit_id && *who->audit_id ? who->audit_id : NULL);
	if (q->spill) {
		r = lg_spill_hold(q->spill, q->index, e, n);
		if (r == -ENOSPC) { /* records enough: their lines, then it */
			r = lg_spill_settle(q->spill, q->index_fd);
			if (!r)
				r = lg_spill_hold(q->spill, q->index, e, n);
		}
		return r < 0 ? -EIO : 0;
	}
	{
		size_t len = 0;
		LG_AUTOFREE char *line = lg_quarantine_line(e, n, &len);

		/* one write (dprintf would stat and seek the file each time) */
		if (!line || write(q->index_fd, line, len) != (ssize_t)len)
			return -EIO;
	}
	return 0;
}

int lg_quarantine_settle(struct lg_quarantine *q)
{
	if (!q || !q->spill || q->index_fd < 0)
		return 0;
	return lg_spill_settle(q->spill, q->index_fd);
}

/* Where the next entry goes: its folder (open), its name there, its path. */
struct spot {
	int dirfd;
	char name[16];
	char kept[PATH_MAX + 32];
};

/*
 * Entries go 1024 to a folder (<session>/<n / 1024>/<n>): a directory
 * with tens of thousands of names makes each link slower on filesystems
 * that search directories linearly. The folder is made (0700) when its
 * first entry comes, and kept open; afresh reopens it and forgets the
 * last directory's descriptor (a retry after a failure).
 */
static int place_in(struct lg_quarantine *q, struct lg_qroot *r,
		    struct spot *sp, bool afresh);

static int place(struct lg_quarantine *q, const char *path, struct spot *sp,
		 bool afresh)
{
	return place_in(q, lg_quarantine_root_for(q, path), sp, afresh);
}

static int place_in(struct lg_quarantine *q, struct lg_qroot *r,
		    struct spot *sp, bool afresh)
{
	unsigned n = q->seq + 1;
	char dir[PATH_MAX + 16];

	if (!r)
		return -EXDEV;
	if (r->err)
		return r->err;
	snprintf(dir, sizeof(dir), "%s/%u", r->path, n / 1024);
	if (afresh)
		lg_closep(&q->last_dir_fd);
	if (afresh || r->bucket_fd < 0 || r->bucket != n / 1024) {
		char name[16];

		lg_closep(&r->bucket_fd);
		snprintf(name, sizeof(name), "%u", n / 1024);
		/* from the checked folder's fd: never through a swapped path */
		if (mkdirat(r->fd, name, 0700) < 0 && errno != EEXIST)
			return -errno;
		r->bucket_fd =
			openat(r->fd, name,
			       O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (r->bucket_fd < 0)
			return -errno;
		r->bucket = n / 1024;
	}
	sp->dirfd = r->bucket_fd;
	snprintf(sp->name, sizeof(sp->name), "%u", n);
	snprintf(sp->kept, sizeof(sp->kept), "%s/%s", dir, sp->name);
	return 0;
}

static bool same_inode(const struct statx *st,
		       const struct lg_quarantine_who *who)
{
	return st->stx_ino == who->ino &&
	       makedev(st->stx_dev_major, st->stx_dev_minor) == who->dev;
}

/*
 * An entry made at kept: into the index, and counted (else removed). st:
 * the original's facts; ks: the kept file's (NULL: the same inode, st).
 */
enum { PATH_RIGHT, PATH_CHECK, PATH_VIEW };

/*
 * The path an entry records: the path lgrun linked by (PATH_RIGHT), or,
 * when the file was reached from the tree's view, its path in lgrun's
 * view (PATH_VIEW; PATH_CHECK: unless path's directory is the tree's). The
 * tree's own path goes in *tree when it differs.
 */
static const char *recorded(const char *path,
			    const struct lg_quarantine_who *who, int how,
			    char *buf, size_t size, const char **tree)
{
	int e;

	*tree = NULL;
	if (how == PATH_RIGHT || who->at_dirfd < 0)
		return path;
	if (how == PATH_CHECK && path[0] == '/') {
		char dir[PATH_MAX];
		struct stat a, b;

		snprintf(dir, sizeof(dir), "%s", path);
		*strrchr(dir, '/') = '\0';
		if (stat(dir[0] ? dir : "/", &a) == 0 &&
		    fstat(who->at_dirfd, &b) == 0 && a.st_ino == b.st_ino &&
		    a.st_dev == b.st_dev)
			return path;
	}
	e = lg_quarantine_view_path(who->at_dirfd, who->at_name, buf, size);
	if (e < 0) {
		lg_dbg("quarantine: no path in lgrun's view for %s: %s", path,
		       strerror(-e));
		return path; /* lgrun's view has no name for it: the tree's */
	}
	if (strcmp(buf, path) == 0)
		return path;
	*tree = path;
	return buf;
}

static int commit(struct lg_quarantine *q, const char *path,
		  const struct spot *sp, const struct statx *st,
		  const struct statx *ks, const struct lg_quarantine_who *who,
		  int how)
{
	char view[2 * PATH_MAX];
	const char *tree;
	int e;

	path = recorded(path, who, how, view, sizeof(view), &tree);
	if (who->origin && who->origin[0] == '/' && strcmp(who->origin, path)) {
		tree = path; /* removed as: the name it was renamed to */
		path = who->origin;
	}
	q->seq++;
	e = index_add(q, "file", path, tree, sp->kept, st, ks ? ks : st, who,
		      NULL);
	if (e) {
		unlinkat(sp->dirfd, sp->name, 0);
		q->seq--;
		return e;
	}
	q->files++;
	q->bytes += st->stx_size;
	return 0;
}

/*
 * path linked to the spot: from the descriptor of its directory, opened
 * once for the files of one directory in a row (rm -r), which saves the
 * walks of the whole path; by the whole path when by_path.
 */
static int link_to(struct lg_quarantine *q, const char *path,
		   const struct spot *sp, bool by_path)
{
	if (!by_path && q->last_dir_fd < 0)
		q->last_dir_fd = open(q->last_dir[0] ? q->last_dir : "/",
				      O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (!by_path && q->last_dir_fd >= 0) {
		if (linkat(q->last_dir_fd, strrchr(path, '/') + 1, sp->dirfd,
			   sp->name, 0) < 0)
			return -errno;
		return 0;
	}
	if (linkat(AT_FDCWD, path, sp->dirfd, sp->name, 0) < 0)
		return -errno;
	return 0;
}

/*
 * The target linked from its directory as the tree sees it: a path past
 * PATH_MAX, or one lgrun's view does not reach, on a mount lgrun has too.
 */
static int link_at(struct lg_quarantine *q, const struct lg_quarantine_who *who,
		   struct spot *sp, struct statx *st)
{
	char top[PATH_MAX];
	struct statx d;
	struct lg_qroot *r;
	int e;

	/* a mount of the tree's own namespace is none of lgrun's */
	if (statx(who->at_dirfd, "", AT_EMPTY_PATH, STATX_MNT_ID, &d) < 0 ||
	    !(d.stx_mask & STATX_MNT_ID) ||
	    lg_quarantine_mount_top(d.stx_mnt_id, top, sizeof(top)) < 0)
		return -EXDEV;
	r = lg_quarantine_root_of_mount(q, d.stx_mnt_id,
					"(a directory of the tree)");
	if (!r)
		return -EXDEV;
	q->last_root = r;
	q->last_dir[0] = '\0';
	lg_closep(&q->last_dir_fd);
	e = place_in(q, r, sp, false);
	if (e)
		return e;
	if (linkat(who->at_dirfd, who->at_name, sp->dirfd, sp->name, 0) < 0)
		return -errno;
	if (statx(sp->dirfd, sp->name, AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS,
		  st) == 0 &&
	    same_inode(st, who))
		return 0;
	unlinkat(sp->dirfd, sp->name, 0);
	return -ESTALE;
}

/* A failure a copy from the tree's view can still make up for. */
static bool copy_instead(int e)
{
	return e != -ENOSPC && e != -EDQUOT && e != -EOVERFLOW && e != -EIO &&
	       e != -EFBIG && e != -EINVAL;
}

static int link_by_path(struct lg_quarantine *q, const char *path,
			const struct lg_quarantine_who *who);

int lg_quarantine_link(struct lg_quarantine *q, const char *path,
		       const struct lg_quarantine_who *who)
{
	int e = link_by_path(q, path, who);

	/*
	 * Not reachable as a link (another mount namespace, a bind mount, a
	 * refused folder, a path past PATH_MAX): a link from the tree's own
	 * view, else a copy of it, bounded like a truncation's.
	 */
	if (e && who->at_dirfd >= 0 && copy_instead(e)) {
		int c = lg_quarantine_copy(q, path, who, q->lim.max_copy);

		/* too large to copy (or no copies): why no link was made */
		if (c != -EFBIG)
			e = c;
	}
	return e;
}

static int link_by_path(struct lg_quarantine *q, const char *path,
			const struct lg_quarantine_who *who)
{
	struct spot sp;
	struct statx st;
	bool at = false;
	int e = 0;

	if (path[0] != '/' && who->at_dirfd < 0)
		return -EINVAL;
	/*
	 * Linked by its path in lgrun's view (the tree's mounts may be
	 * copies of lgrun's, which a link cannot cross), then checked to be
	 * the inode the tree is about to remove. A failure by the cached
	 * descriptors (the directory moved, the folder went) is tried again
	 * by the whole path.
	 */
	for (int by_path = 0; by_path < 2; by_path++) {
		e = path[0] == '/' ? place(q, path, &sp, by_path) : -EXDEV;
		if (e && who->at_dirfd >= 0 && copy_instead(e)) {
			int l = link_at(q, who, &sp, &st);

			at = !l;
			if (at)
				break; /* linked from the tree's view */
			if (l != -EXDEV)
				e = l; /* else: why lgrun's own view failed */
		}
		if (e)
			return e;
		e = link_to(q, path, &sp, by_path);
		if (e)
			continue;
		if (statx(sp.dirfd, sp.name, AT_SYMLINK_NOFOLLOW,
			  STATX_BASIC_STATS, &st) == 0 &&
		    same_inode(&st, who))
			break;
		unlinkat(sp.dirfd, sp.name, 0);
		e = -ESTALE;
	}
	if (e)
		return e;
	if (q->max_bytes && q->bytes + st.stx_size > q->max_bytes)
		e = -ENOSPC;
	else if (st.stx_nlink <= 2) /* the removal would free it */
		e = lg_quarantine_room(q, q->last_root, st.stx_size);
	if (!e)
		e = commit(q, path, &sp, &st, NULL, who,
			   at ? PATH_VIEW : PATH_RIGHT);
	if (e) {
		if (e != -EIO) /* commit removed it */
			unlinkat(sp.dirfd, sp.name, 0);
		return e;
	}
	if (st.stx_nlink <= 2)
		lg_quarantine_account(q, st.stx_size, true);
	return 0;
}

/* in's content into out: a reflink, else copied (copy_file_range). */
static int clone_or_copy(int in, int out, uint64_t size)
{
	uint64_t done = 0;

	if (ioctl(out, FICLONE, in) == 0)
		return 0;
	while (done < size) {
		ssize_t n = copy_file_range(in, NULL, out, NULL,
					    (size_t)(size - done), 0);

		/* across filesystems (the state dir's folder): sendfile */
		if (n < 0 && (errno == EXDEV || errno == EOPNOTSUPP ||
			      errno == EINVAL || errno == ENOSYS))
			n = sendfile(out, in, NULL, (size_t)(size - done));
		if (n < 0)
			return -errno;
		if (n == 0)
			break; /* shorter than it was: what there is */
		done += (uint64_t)n;
	}
	return 0;
}

int lg_quarantine_copy(struct lg_quarantine *q, const char *path,
		       const struct lg_quarantine_who *who, uint64_t max_copy)
{
	LG_AUTOCLOSE int in = -1;
	LG_AUTOCLOSE int out = -1;
	struct spot sp;
	struct statx st, ks;
	int e;

	if (path[0] != '/' && who->at_dirfd < 0)
		return -EINVAL;
	/*
	 * From the tree's view when the edge gave it (its mount namespace,
	 * a path past PATH_MAX), else by the path in lgrun's. A regular file
	 * only: opening a device or a fifo is not harmless.
	 */
	if (who->at_dirfd >= 0 ?
		    statx(who->at_dirfd, who->at_name, AT_SYMLINK_NOFOLLOW,
			  STATX_TYPE, &st) < 0 :
		    statx(AT_FDCWD, path, AT_SYMLINK_NOFOLLOW, STATX_TYPE,
			  &st) < 0)
		return -errno;
	if (!S_ISREG(st.stx_mode))
		return -ESTALE;
	in = who->at_dirfd >= 0 ?
		     openat(who->at_dirfd, who->at_name,
			    O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK) :
		     open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (in < 0)
		return -errno;
	if (statx(in, "", AT_EMPTY_PATH, STATX_BASIC_STATS, &st) < 0)
		return -errno;
	if (!same_inode(&st, who) || !S_ISREG(st.stx_mode))
		return -ESTALE;
	if (st.stx_size > max_copy)
		return -EFBIG;
	if (q->max_bytes && q->bytes + st.stx_size > q->max_bytes)
		return -ENOSPC;
	for (int afresh = 0; out < 0 && afresh < 2; afresh++) {
		e = path[0] == '/' ? place(q, path, &sp, afresh) : -EXDEV;
		if (e) {
			/*
			 * No folder of ours on its mount (refused, read-only,
			 * none can be made): a copy can go to the state dir's.
			 */
			char alt[PATH_MAX + 32];

			snprintf(alt, sizeof(alt), "%s/-", q->state_dir);
			e = place(q, alt, &sp, afresh);
		}
		if (!e && !afresh)
			e = lg_quarantine_room(q, q->last_root, st.stx_size);
		if (e)
			return e;
		out = openat(sp.dirfd, sp.name,
			     O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	}
	if (out < 0)
		return -errno;
	e = clone_or_copy(in, out, st.stx_size);
	if (!e) {
		struct timespec t[2] = {
			{ st.stx_atime.tv_sec, st.stx_atime.tv_nsec },
			{ st.stx_mtime.tv_sec, st.stx_mtime.tv_nsec }
		};

		copy_xattrs(in, out);
		/*
		 * The copy carries the original's owner, mode and times, so a
		 * restore takes them from the file, never from the index's text
		 * (its folder is 0700: a setuid copy is out of anyone's reach).
		 */
		if (geteuid() == 0 && fchown(out, st.stx_uid, st.stx_gid) < 0) {
			/* kept all the same; the index says the owner */
		}
		fchmod(out, st.stx_mode & 07777);
		futimens(out, t);
		/* the copy's own identity, for the restore's check */
		if (statx(out, "", AT_EMPTY_PATH, STATX_BASIC_STATS, &ks) < 0)
			e = -errno;
	}
	if (e) {
		unlinkat(sp.dirfd, sp.name, 0);
		return e;
	}
	e = commit(q, path, &sp, &st, &ks, who, PATH_CHECK);
	if (!e)
		lg_quarantine_account(q, st.stx_size, false);
	return e;
}

int lg_quarantine_dir(struct lg_quarantine *q, const char *path,
		      const struct lg_quarantine_who *who)
{
	char at[64 + NAME_MAX], view[2 * PATH_MAX];
	const char *from = path, *tree = NULL;
	struct statx st;
	int e;

	/* by path in lgrun's view, else from the tree's (past PATH_MAX...) */
	e = path[0] == '/' ? statx(AT_FDCWD, path, AT_SYMLINK_NOFOLLOW,
				   STATX_BASIC_STATS, &st) :
			     -1;
	if ((e < 0 || !same_inode(&st, who)) && who->at_dirfd >= 0) {
		snprintf(at, sizeof(at), "/proc/self/fd/%d/%s", who->at_dirfd,
			 who->at_name);
		from = at;
		e = statx(AT_FDCWD, at, AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS,
			  &st);
		path = recorded(path, who, PATH_VIEW, view, sizeof(view),
				&tree);
	}
	if (e < 0)
		return path[0] == '/' ? -errno : -EINVAL;
	if (!same_inode(&st, who))
		return -ESTALE;
	{
		struct lg_json x = { 0 };

		xattrs_json(from, &x);
		q->seq++;
		e = index_add(q, "dir", path, tree, NULL, &st, NULL, who,
			      x.buf ? x.buf : "");
		lg_json_free(&x);
	}
	if (e) {
		q->seq--;
		return e;
	}
	q->dirs++;
	return 0;
}

const char *lg_quarantine_index(const struct lg_quarantine *q)
{
	return q->index;
}

void lg_quarantine_totals(const struct lg_quarantine *q, unsigned *files,
			  unsigned *dirs, uint64_t *bytes)
{
	*files = q ? q->files : 0;
	*dirs = q ? q->dirs : 0;
	*bytes = q ? q->bytes : 0;
}
