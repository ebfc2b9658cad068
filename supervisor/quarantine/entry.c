// SPDX-License-Identifier: MIT
/*
 * An entry of the quarantine: its spot (lg_quarantine_place: 1024 to a
 * folder), the path it records (lg_quarantine_recorded), made and counted
 * (lg_quarantine_commit) with its record in the session's index
 * (lg_quarantine_index_add): held in the spill before the tree's answer,
 * made into its line after it (lg_quarantine_settle, lg_quarantine_line),
 * written (lg_quarantine_flush). Below the links and directories
 * (quarantine.c) and the copies (copy.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "record/audit.h"
#include "seal.h"
#include "lib/cleanup.h"
#include "lib/clock.h"
#include "lib/json.h"
#include "lib/log.h"
#include "lib/text.h"
#include "quarantine_int.h"
#include "lib/spill.h"

/*
 * One entry of the index as it is held before its line is made (after the
 * tree has its answer: lg_quarantine_settle), a record of the spill
 * (lib/spill.h): what the line says, with its strings after it, by
 * offset (0: none), for the watchdog makes it too when lgrun is gone.
 */
struct qrec {
	char kind[12]; /* "file", "dir", "moved", "made", "appended", "mode" */
	int op; /* enum lg_op */
	unsigned n;
	int64_t time_ns, start_ns;
	unsigned turn; /* the agent's turn it was kept in (0: none) */
	bool own; /* the session's own version (lg_quarantine_set_own) */
	struct statx st, ks; /* the original's, as it was; the kept file's */
	bool has_ks, removed_as;
	uint64_t folder_dev, folder_ino; /* the session's folder kept is in */
	long long copied; /* a copy's new bytes; -1: not a copy */
	pid_t pid;
	uint32_t session, path, tree, kept, xattrs, exe, audit_id;
	char strings[];
};

int lg_quarantine_flush(struct lg_quarantine *q)
{
	/*
	 * Asked first: the spill's lock orders this after the hold that
	 * followed the index's opening (the main thread flushes without the
	 * session's lock).
	 */
	if (!q || !q->spill || !lg_spill_since(q->spill) || q->index_fd < 0)
		return 0;
	return lg_spill_flush(q->spill, q->index_fd);
}

uint64_t lg_quarantine_pending_since(const struct lg_quarantine *q)
{
	return q ? lg_spill_since(q->spill) : 0;
}

bool lg_quarantine_flush_wanted(const struct lg_quarantine *q)
{
	return q && lg_spill_wanted(q->spill);
}

static int index_open(struct lg_quarantine *q)
{
	char p[PATH_MAX + 256];

	if (q->index_fd >= 0)
		return 0;
	snprintf(p, sizeof(p), "%s/quarantine", q->state_dir);
	if (lg_quarantine_mkdir_0700(p) < 0)
		return -errno;
	q->index_fd = open(
		q->index,
		O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0600);
	return q->index_fd < 0 ? -errno : 0;
}

/*
 * A session id run again appends to its index: this run's entries are
 * numbered after the last one there (their kept files are named by their
 * number), read once, at the run's first entry.
 */
void lg_quarantine_seq_start(struct lg_quarantine *q)
{
	LG_AUTOFCLOSE FILE *f = NULL;
	char line[256];
	int fd;

	if (q->seq_known)
		return;
	q->seq_known = true;
	fd = open(q->index, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || !(f = fdopen(fd, "re"))) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		bool whole = strchr(line, '\n') != NULL;

		if (strncmp(line, "{\"n\":", 5) == 0) {
			unsigned long long n = strtoull(line + 5, NULL, 10);

			if (n > q->seq && n < UINT_MAX / 2)
				q->seq = (unsigned)n;
		}
		/* the rest of a long line */
		while (!whole && fgets(line, sizeof(line), f))
			whole = strchr(line, '\n') != NULL;
	}
}

static int64_t ns(struct statx_timestamp t)
{
	return (int64_t)t.tv_sec * 1000000000LL + t.tv_nsec;
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
	if (tree && strcmp(e->kind, "moved") == 0) /* where it went */
		lg_json_str(&j, "moved_to", tree);
	else if (tree && (strcmp(e->kind, "appended") == 0 ||
			  strcmp(e->kind, "mode") == 0))
		lg_json_str(&j, "at_path", tree); /* its name then */
	else if (tree) /* removed as; else the tree's own view named it so */
		lg_json_str(&j, e->removed_as ? "removed_as" : "tree_path",
			    tree);
	if ((v = get_str(e, e->kept)))
		lg_json_str(&j,
			    strcmp(e->kind, "moved") ? "kept" : "moved_from",
			    v);
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
	if (e->copied >= 0) /* a reflink's 0: it holds, took nothing */
		lg_json_int(&j, "copied", e->copied);
	if (e->start_ns)
		lg_json_int(&j, "start_ns", e->start_ns);
	if (e->turn)
		lg_json_int(&j, "turn", e->turn);
	if (e->own)
		lg_json_bool(&j, "own", true);
	if (e->folder_ino) { /* restore trusts it by these */
		lg_json_int(&j, "folder_dev", (long long)e->folder_dev);
		lg_json_int(&j, "folder_ino", (long long)e->folder_ino);
	}
	lg_json_int(&j, "pid", e->pid);
	lg_json_str(&j, "exe", get_str(e, e->exe));
	if ((v = get_str(e, e->audit_id)))
		lg_json_str(&j, "audit_id", v);
	if ((v = get_str(e, e->xattrs)))
		lg_json_raw(&j, "xattrs", v);
	lg_json_end(&j);
	if (lg_seal_on() && j.buf && j.len && j.buf[j.len - 1] == '}') {
		/* signed: its bytes before ,"mac" with the run's key (seal.c) */
		char mac[65];

		j.len--;
		lg_seal_mac(j.buf, j.len, mac);
		lg_json_append(&j, ",\"mac\":\"", 8);
		lg_json_append(&j, mac, 64);
		lg_json_append(&j, "\"}", 2);
	}
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
int lg_quarantine_index_add(struct lg_quarantine *q, const char *kind,
			    const char *path, const char *tree,
			    const char *kept, const struct statx *st,
			    const struct statx *ks,
			    const struct lg_quarantine_who *who,
			    const char *xattrs, long long copied)
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
	lg_strtrunc(e->kind, sizeof(e->kind), kind);
	e->op = (int)who->op;
	e->n = q->seq;
	e->time_ns = lg_real_ns();
	if (!q->oldest_ns)
		q->oldest_ns = e->time_ns;
	q->newest_ns = e->time_ns;
	e->start_ns = q->start_ns;
	e->turn = q->turn;
	e->own = q->own;
	e->st = *st;
	e->has_ks = ks != NULL;
	if (ks)
		e->ks = *ks;
	e->copied = copied;
	e->removed_as = tree && who->origin && strcmp(path, who->origin) == 0;
	if (strcmp(kind, "file") == 0) {
		e->folder_dev = q->commit_dev;
		e->folder_ino = q->commit_ino;
	}
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

/*
 * Entries go 1024 to a folder (<session>/<n / 1024>/<n>): a directory
 * with tens of thousands of names makes each link slower on filesystems
 * that search directories linearly. The folder is made (0700) when its
 * first entry comes, and kept open; afresh reopens it and forgets the
 * last directory's descriptor (a retry after a failure).
 */
int lg_quarantine_place(struct lg_quarantine *q, const char *path,
			struct lg_qspot *sp, bool afresh)
{
	return lg_quarantine_place_in(q, lg_quarantine_root_for(q, path), sp,
				      afresh);
}

int lg_quarantine_place_in(struct lg_quarantine *q, struct lg_qroot *r,
			   struct lg_qspot *sp, bool afresh)
{
	unsigned n;
	size_t len;

	lg_quarantine_seq_start(q);
	n = q->seq + 1;
	if (!r)
		return -EXDEV;
	sp->root_dev = r->dev;
	sp->root_ino = r->ino;
	if (r->err)
		return r->err;
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
	/* <root>/<bucket>/<n>, by hand: snprintf was most of this step */
	lg_utoa(sp->name, n);
	len = lg_strtrunc(sp->kept, sizeof(sp->kept) - 24, r->path);
	sp->kept[len++] = '/';
	len += lg_utoa(sp->kept + len, n / 1024);
	sp->kept[len++] = '/';
	memcpy(sp->kept + len, sp->name, strlen(sp->name) + 1);
	return 0;
}

bool lg_quarantine_same_inode(const struct statx *st,
			      const struct lg_quarantine_who *who)
{
	return st->stx_ino == who->ino &&
	       makedev(st->stx_dev_major, st->stx_dev_minor) == who->dev;
}

/*
 * The path an entry records: the path lgrun linked by (PATH_RIGHT), or,
 * when the file was reached from the tree's view, its path in lgrun's
 * view (PATH_VIEW; PATH_CHECK: unless path's directory is the tree's). The
 * tree's own path goes in *tree when it differs.
 */
const char *lg_quarantine_recorded(const char *path,
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

/*
 * An entry made at kept: into the index, and counted (else removed). st:
 * the original's facts; ks: the kept file's (NULL: the same inode, st);
 * copied: the bytes a copy took anew (0: a link or a reflink, which hold
 * the blocks the file had).
 */
int lg_quarantine_commit(struct lg_quarantine *q, const char *path,
			 const struct lg_qspot *sp, const struct statx *st,
			 const struct statx *ks,
			 const struct lg_quarantine_who *who, int how,
			 uint64_t copied)
{
	char view[2 * PATH_MAX];
	const char *tree;
	int e;

	path = lg_quarantine_recorded(path, who, how, view, sizeof(view),
				      &tree);
	if (who->origin && who->origin[0] == '/' && strcmp(who->origin, path)) {
		tree = path; /* removed as: the name it was renamed to */
		path = who->origin;
	}
	q->seq++;
	q->commit_dev = sp->root_dev;
	q->commit_ino = sp->root_ino;
	e = lg_quarantine_index_add(q, "file", path, tree, sp->kept, st,
				    ks ? ks : st, who, NULL,
				    ks ? (long long)copied : -1);
	q->commit_dev = q->commit_ino = 0;
	if (e) {
		unlinkat(sp->dirfd, sp->name, 0);
		q->seq--;
		return e;
	}
	q->files++;
	q->bytes += st->stx_size;
	q->held += (uint64_t)(ks ? ks : st)->stx_blocks * 512;
	q->copied += copied;
	return 0;
}
