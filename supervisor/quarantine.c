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
#include <sys/statvfs.h>
#include <sys/xattr.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "audit.h"
#include "cleanup.h"
#include "clock.h"
#include "log.h"
#include "quarantine.h"
#include "quarantine_index.h"

#define MAX_ROOTS 16
#define MAX_FOLDERS 16

/* A folder of this session on one mount (in lgrun's view). */
struct root {
	uint64_t mnt_id;
	char path[PATH_MAX];
	int err; /* it could not be made: -errno, said once */
	int fd; /* the session's folder there, checked (trusted_at), or -1 */
	int bucket_fd; /* the open entries' folder (O_PATH), or -1 */
	unsigned bucket;
	/* its filesystem's space: read at most every SPACE_MS */
	uint64_t linked; /* bytes this session holds there by links */
	uint64_t avail, floor, since; /* free, the floor, kept since read */
	uint64_t read_ms;
};

struct lg_quarantine {
	char state_dir[PATH_MAX], session[200], index[PATH_MAX + 256];
	int index_fd; /* <state_dir>/quarantine/<session>.jsonl, or -1 */
	struct root roots[MAX_ROOTS];
	size_t nroots;
	/* the last directory's root: rm -r removes a folder's files in a row */
	char last_dir[PATH_MAX];
	struct root *last_root;
	int last_dir_fd; /* last_dir, opened O_PATH when a link needs it */
	unsigned seq, files, dirs;
	uint64_t bytes, max_bytes;
	int64_t start_ns;
	struct lg_quarantine_limits lim;
	/* what the other sessions of the state dir hold (-1: not read yet) */
	int64_t others;
	uint64_t evicted_ms; /* the last time older sessions were dropped */
	/* [quarantine] folders: configured, used on their own mounts */
	char *folders[MAX_FOLDERS];
	size_t nfolders;
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

void lg_quarantine_free(struct lg_quarantine *q)
{
	if (!q)
		return;
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
static int mount_top(uint64_t mnt_id, char *out, size_t size)
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

static int mkdir_0700(const char *path)
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
 * -EPERM with why (or another -errno).
 */
static int trusted_at(int at, const char *name, const char *shown, int *fd,
		      char *why, size_t size)
{
	struct stat st;
	int d = openat(at, name,
		       O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (d < 0) {
		if (errno == ELOOP || errno == ENOTDIR)
			snprintf(why, size,
				 "%s is not a directory (a symlink?)", shown);
		return errno == ELOOP ? -EPERM : -errno;
	}
	if (fstat(d, &st) < 0) {
		close(d);
		return -errno;
	}
	if ((st.st_uid != 0 && st.st_uid != geteuid()) || (st.st_mode & 022)) {
		snprintf(
			why, size,
			"%s is owned by uid %u with mode %04o (it must be root's or lgrun's own, writable by no one else)",
			shown, (unsigned)st.st_uid,
			(unsigned)(st.st_mode & 07777));
		close(d);
		return -EPERM;
	}
	lg_closep(fd);
	*fd = d;
	return 0;
}

static int trusted(const char *path, int *fd, char *why, size_t size)
{
	return trusted_at(AT_FDCWD, path, path, fd, why, size);
}

/* <top>/<session>, made 0700 from top's fd (r->fd), then r->fd. */
static int session_folder(struct lg_quarantine *q, struct root *r, char *why,
			  size_t size)
{
	if (mkdirat(r->fd, q->session, 0700) < 0 && errno != EEXIST)
		return -errno;
	return trusted_at(r->fd, q->session, r->path, &r->fd, why, size);
}

/*
 * This session's folder on the mount that holds path: under the state dir
 * when it is that mount, else .lgrun-quarantine at the mount's top.
 */
static struct root *root_of_mount(struct lg_quarantine *q, uint64_t mnt,
				  const char *dir);

static struct root *find_root(struct lg_quarantine *q, const char *path,
			      char *dir, size_t dirsize)
{
	uint64_t mnt;

	snprintf(dir, dirsize, "%s", path);
	*strrchr(dir, '/') = '\0';
	if (q->last_root && strcmp(dir, q->last_dir) == 0)
		return q->last_root;
	mnt = mount_of(dir[0] ? dir : "/");
	if (!mnt)
		return NULL;
	return root_of_mount(q, mnt, dir);
}

/* This session's folder on mount mnt (dir: a directory there, for words). */
static struct root *root_of_mount(struct lg_quarantine *q, uint64_t mnt,
				  const char *dir)
{
	char top[PATH_MAX], why[PATH_MAX + 100] = "";
	struct root *r;
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
		e = mkdir_0700(top); /* its parent is the user's to make */
	} else if (mount_of(q->state_dir) == mnt) {
		snprintf(top, sizeof(top), "%s/quarantine", q->state_dir);
		e = mkdir_0700(top);
	} else {
		e = mount_top(mnt, top, sizeof(top));
		if (!e) {
			size_t n = strlen(top);

			snprintf(top + n, sizeof(top) - n, "%s%s",
				 top[n - 1] == '/' ? "" : "/",
				 LG_QUARANTINE_DIR);
			e = mkdir_0700(top);
		}
	}
	if ((size_t)snprintf(r->path, sizeof(r->path), "%s/%s", top,
			     q->session) >= sizeof(r->path))
		e = e ? e : -ENAMETOOLONG;
	if (!e)
		e = trusted(top, &r->fd, why, sizeof(why));
	if (!e)
		e = session_folder(q, r, why, sizeof(why));
	r->err = e;
	if (e && why[0])
		lg_warn("quarantine: %s: refused; what is removed or changed on the mount of %s is copied to the state dir's folder instead (up to max_copy)",
			why, dir[0] ? dir : "/");
	else if (e)
		lg_warn("quarantine: no folder on the mount of %s (%s): what is removed there is not kept",
			dir[0] ? dir : "/", strerror(-e));
	return r;
}

static struct root *root_for(struct lg_quarantine *q, const char *path)
{
	char dir[PATH_MAX];
	struct root *r = find_root(q, path, dir, sizeof(dir));

	if (r && (r != q->last_root || strcmp(dir, q->last_dir) != 0)) {
		snprintf(q->last_dir, sizeof(q->last_dir), "%s", dir);
		lg_closep(&q->last_dir_fd);
		q->last_root = r;
	}
	return r;
}

static int index_open(struct lg_quarantine *q)
{
	char p[PATH_MAX + 256];

	if (q->index_fd >= 0)
		return 0;
	snprintf(p, sizeof(p), "%s/quarantine", q->state_dir);
	if (mkdir_0700(p) < 0)
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

/*
 * One line of the index: the entry, its inode's facts (st: the original's,
 * as it was), the kept file's own (ks: what a restore checks it against),
 * who and when.
 */
static int index_add(struct lg_quarantine *q, const char *kind,
		     const char *path, const char *kept, const struct statx *st,
		     const struct statx *ks,
		     const struct lg_quarantine_who *who, const char *xattrs)
{
	struct lg_json j = { 0 };
	int64_t now = lg_real_ns();
	char t[40];
	const char *line;
	int r = 0;

	if (index_open(q) < 0)
		return -EIO;
	lg_time_iso(now, t, sizeof(t));
	lg_json_begin(&j);
	lg_json_int(&j, "n", q->seq);
	lg_json_str(&j, "time", t);
	lg_json_int(&j, "time_ns", now);
	lg_json_str(&j, "session", q->session);
	lg_json_str(&j, "kind", kind);
	lg_json_str(&j, "op", lg_op_name(who->op));
	lg_json_str(&j, "path", path);
	if (kept)
		lg_json_str(&j, "kept", kept);
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
	if (ks) {
		lg_json_int(&j, "kept_ino", (long long)ks->stx_ino);
		lg_json_int(&j, "kept_size", (long long)ks->stx_size);
		lg_json_int(&j, "kept_ctime_ns", ns(ks->stx_ctime));
	}
	if (q->start_ns)
		lg_json_int(&j, "start_ns", q->start_ns);
	lg_json_int(&j, "pid", who->pid);
	lg_json_str(&j, "exe", who->exe ? who->exe : "");
	if (who->audit_id && *who->audit_id)
		lg_json_str(&j, "audit_id", who->audit_id);
	if (xattrs && *xattrs)
		lg_json_raw(&j, "xattrs", xattrs);
	line = lg_json_end(&j);
	if (line)
		lg_json_append(&j, "\n", 1);
	/* one write (dprintf would stat and seek the file each time) */
	if (!line || !j.buf ||
	    write(q->index_fd, j.buf, j.len) != (ssize_t)j.len)
		r = -EIO;
	lg_json_free(&j);
	return r;
}

#define SPACE_MS 100 /* a filesystem's free space is read this often */
#define EVICT_EVERY_MS 10000 /* older sessions are looked at this often */
#define EVICT_MIN_AGE_NS (600LL * 1000000000LL) /* surely ended by then */

/* r's filesystem read again: free space and the floor. */
static int read_space(struct lg_quarantine *q, struct root *r, uint64_t now)
{
	struct statvfs v;
	uint64_t total, floor;

	if (statvfs(r->path, &v) < 0)
		return -errno;
	total = (uint64_t)v.f_blocks * v.f_frsize;
	floor = (uint64_t)((double)total * q->lim.min_free_fraction);
	if (q->lim.min_free < floor)
		floor = q->lim.min_free;
	r->avail = (uint64_t)v.f_bavail * v.f_frsize;
	r->floor = floor;
	r->since = 0;
	r->read_ms = now;
	return 0;
}

/* What the other sessions of the state dir hold, read once. */
static uint64_t others(struct lg_quarantine *q)
{
	struct lgq_held *h = NULL;
	size_t n;
	uint64_t sum = 0;

	if (q->others >= 0)
		return (uint64_t)q->others;
	n = lgq_sessions(q->state_dir, &h);
	for (size_t i = 0; i < n; i++)
		if (strcmp(h[i].id, q->session) != 0)
			sum += h[i].bytes;
	free(h);
	q->others = (int64_t)sum;
	return sum;
}

/*
 * Older sessions' entries dropped to make room, oldest first: never a
 * blocked session's (its trip is what an operator restores), never one
 * that may still run (an entry in the last EVICT_MIN_AGE_NS), never this
 * one's. At most every EVICT_EVERY_MS. True when something went.
 */
static bool evict(struct lg_quarantine *q, uint64_t now)
{
	struct lgq_held *h = NULL;
	int64_t cut = lg_real_ns() - EVICT_MIN_AGE_NS;
	bool any = false;
	size_t n;

	if (q->evicted_ms && now - q->evicted_ms < EVICT_EVERY_MS)
		return false;
	q->evicted_ms = now;
	n = lgq_sessions(q->state_dir, &h);
	for (size_t i = 0; i < n; i++) {
		uint64_t freed = 0;

		if (h[i].blocked || h[i].newest_ns > cut ||
		    strcmp(h[i].id, q->session) == 0)
			continue;
		if (lgq_drop(q->state_dir, h[i].id, &freed) == 0) {
			lg_warn("quarantine: dropped what session %s kept (%llu bytes) to stay above the free-space floor",
				h[i].id, (unsigned long long)freed);
			any = true;
		}
	}
	free(h);
	if (any)
		q->others = -1;
	return any;
}

/*
 * Is there room on r's filesystem for size more bytes (a link: space the
 * removal would have freed)? 0, or -EDQUOT below the floor, -EOVERFLOW
 * past max_total, once older sessions' entries are dropped.
 */
static int room(struct lg_quarantine *q, struct root *r, uint64_t size)
{
	uint64_t now = lg_mono_ms();

	for (int pass = 0; pass < 2; pass++) {
		bool floor_ok, total_ok;

		if ((!r->read_ms || now - r->read_ms >= SPACE_MS || pass) &&
		    read_space(q, r, now) < 0)
			return 0; /* not known: kept, as before */
		floor_ok = r->avail >= r->since &&
			   r->avail - r->since >= r->floor &&
			   r->avail - r->since - r->floor >= r->linked + size;
		total_ok = !q->lim.max_total ||
			   others(q) + q->bytes + size <= q->lim.max_total;
		if (floor_ok && total_ok)
			return 0;
		if (pass || !evict(q, now))
			return floor_ok ? -EOVERFLOW : -EDQUOT;
	}
	return -EDQUOT;
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
static int place_in(struct lg_quarantine *q, struct root *r, struct spot *sp,
		    bool afresh);

static int place(struct lg_quarantine *q, const char *path, struct spot *sp,
		 bool afresh)
{
	return place_in(q, root_for(q, path), sp, afresh);
}

static int place_in(struct lg_quarantine *q, struct root *r, struct spot *sp,
		    bool afresh)
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
static int commit(struct lg_quarantine *q, const char *path,
		  const struct spot *sp, const struct statx *st,
		  const struct statx *ks, const struct lg_quarantine_who *who)
{
	int e;

	q->seq++;
	e = index_add(q, "file", path, sp->kept, st, ks ? ks : st, who, NULL);
	if (e) {
		unlinkat(sp->dirfd, sp->name, 0);
		q->seq--;
		return e;
	}
	q->files++;
	q->bytes += st->stx_size;
	return 0;
}

/* What an entry of size bytes takes of its root's filesystem. */
static void account(struct lg_quarantine *q, uint64_t size, bool link)
{
	struct root *r = q->last_root;

	if (!r)
		return;
	if (link)
		r->linked += size;
	else
		r->since += size;
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
	struct root *r;
	int e;

	/* a mount of the tree's own namespace is none of lgrun's */
	if (statx(who->at_dirfd, "", AT_EMPTY_PATH, STATX_MNT_ID, &d) < 0 ||
	    !(d.stx_mask & STATX_MNT_ID) ||
	    mount_top(d.stx_mnt_id, top, sizeof(top)) < 0)
		return -EXDEV;
	r = root_of_mount(q, d.stx_mnt_id, "(a directory of the tree)");
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
	int e = 0;

	if (path[0] != '/')
		return -EINVAL;
	/*
	 * Linked by its path in lgrun's view (the tree's mounts may be
	 * copies of lgrun's, which a link cannot cross), then checked to be
	 * the inode the tree is about to remove. A failure by the cached
	 * descriptors (the directory moved, the folder went) is tried again
	 * by the whole path.
	 */
	for (int by_path = 0; by_path < 2; by_path++) {
		e = place(q, path, &sp, by_path);
		if (e && who->at_dirfd >= 0 && copy_instead(e)) {
			int l = link_at(q, who, &sp, &st);

			if (!l)
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
		e = room(q, q->last_root, st.stx_size);
	if (!e)
		e = commit(q, path, &sp, &st, NULL, who);
	if (e) {
		if (e != -EIO) /* commit removed it */
			unlinkat(sp.dirfd, sp.name, 0);
		return e;
	}
	if (st.stx_nlink <= 2)
		account(q, st.stx_size, true);
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

	if (path[0] != '/')
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
		e = place(q, path, &sp, afresh);
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
			e = room(q, q->last_root, st.stx_size);
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
	e = commit(q, path, &sp, &st, &ks, who);
	if (!e)
		account(q, st.stx_size, false);
	return e;
}

int lg_quarantine_dir(struct lg_quarantine *q, const char *path,
		      const struct lg_quarantine_who *who)
{
	struct statx st;
	int e;

	if (statx(AT_FDCWD, path, AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS, &st) <
	    0)
		return -errno;
	if (!same_inode(&st, who))
		return -ESTALE;
	{
		struct lg_json x = { 0 };

		xattrs_json(path, &x);
		q->seq++;
		e = index_add(q, "dir", path, NULL, &st, NULL, who,
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
