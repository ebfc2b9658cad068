// SPDX-License-Identifier: MIT
/*
 * The undo's index and quarantine (lgctl restore, lgctl rewind): the
 * index opened and its owner known, its quarantine checked from / with
 * that owner (root's or the owner's, writable by no one else, reached
 * without a symlink, holding that index still), the owner's credentials
 * taken before the index is read; each line's kept file in a trusted
 * folder of this session; the session's start and end from the state
 * dir; a set-aside's line appended to the index.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "lib/cleanup.h"
#include "lib/clock.h"
#include "lib/json.h"
#include "record/audit.h"
#include "quarantine/seal.h"
#include "undo_int.h"

/*
 * A directory the quarantine may use: owned by root or by the index's
 * owner, and writable by group or others not at all (strict), or only
 * with the sticky bit (where another user can make names, but not move
 * ours: what is below is checked in turn).
 */
bool rst_trusted(const struct restore *r, int fd, bool strict, struct stat *st)
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
 * descriptor, or -errno with err.
 */
static int walk_trusted(const struct restore *r, const char *abs,
			unsigned strict_last, struct lg_error *err)
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
	if (!rst_trusted(r, cur, total < strict_last, &st))
		return lg_error_set(err, EPERM, "/ is writable by others");
	for (char *c = strtok_r(copy, "/", &save); c;
	     c = strtok_r(NULL, "/", &save)) {
		int fd = rst_open2(cur, c, O_PATH | O_DIRECTORY, 0);
		size_t n = strlen(done);

		snprintf(done + n, sizeof(done) - n, "/%s", c);
		if (fd < 0)
			return lg_error_set(err, -fd, "%s: %s", done,
					    rst_why_of(fd));
		close(cur);
		cur = fd;
		depth++;
		if (!rst_trusted(r, cur, depth + strict_last > total, &st))
			return lg_error_set(
				err, EPERM,
				"the quarantine's folder %s is %s (uid %u, mode %04o): not used",
				done,
				S_ISDIR(st.st_mode) && st.st_uid != 0 &&
						st.st_uid != r->owner ?
					"another user's" :
					"writable by others",
				(unsigned)st.st_uid,
				(unsigned)st.st_mode & 07777);
	}
	return lg_steal_fd(&cur);
}

/*
 * The session's folder on a mount whose top is another user's (lgrun kept
 * there in M/.lgrun-quarantine: issue 39 item 13): walked without
 * following a symlink, and trusted as the very folder lgrun made and
 * recorded (its device and inode), root's or the index owner's, writable
 * by no one else. What is below it is opened from that descriptor: a
 * swap of a folder above it later changes nothing. Else err (-EPERM).
 */
static int made_by_lgrun(const struct restore *r, const struct lgq_entry *e,
			 const char *sp, int err)
{
	struct stat st;
	int fd;

	if (!e->folder_ino)
		return err; /* an index of an older lgrun: no record to match */
	fd = rst_walk_abs(sp, false);
	if (fd < 0)
		return err;
	if (!rst_trusted(r, fd, true, &st) ||
	    (long long)st.st_dev != e->folder_dev ||
	    (long long)st.st_ino != e->folder_ino) {
		close(fd);
		return err;
	}
	return fd;
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
struct folder *rst_folder_of(struct restore *r, const struct lgq_entry *e,
			     struct lg_error *err)
{
	const char *k = e->kept, *name, *b, *sess;
	size_t len;
	struct folder *f;

	if (!k || !lg_undo_path_normal(k)) {
		lg_error_set(err, 0,
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
		lg_error_set(
			err, 0,
			"its kept file %s is not in a quarantine folder of session %s",
			k, r->id);
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

		f->sfd = sp ? walk_trusted(r, sp, 2, &f->why) : -ENOMEM;
		if (f->sfd == -EPERM && sp)
			f->sfd = made_by_lgrun(r, e, sp, f->sfd);
		free(sp);
		if (f->sfd >= 0) {
			f->fd = rst_open2(f->sfd, strrchr(f->path, '/') + 1,
					  O_PATH | O_DIRECTORY, 0);
			{
				struct stat st;

				if (f->fd >= 0 &&
				    !rst_trusted(r, f->fd, true, &st)) {
					close(f->fd);
					f->fd = -EPERM;
					lg_error_set(
						&f->why, EPERM,
						"the quarantine's folder %s is another user's or writable by others",
						f->path);
				} else if (f->fd < 0) {
					lg_error_set(&f->why, -f->fd, "%s: %s",
						     f->path,
						     rst_why_of(f->fd));
				}
			}
		}
	}
found:
	if (f->fd < 0 && f->fd != -ENOENT) {
		lg_error_set(err, -f->fd, "%s", f->why.msg);
		return NULL;
	}
	return f;
}

/* The index, opened once for appending (as its owner). */
static int index_fd(struct restore *r)
{
	char name[PATH_MAX];

	if (r->ifd >= 0)
		return r->ifd;
	snprintf(name, sizeof(name), "%s.jsonl", r->id);
	r->ifd = rst_open2(r->qfd, name, O_WRONLY | O_APPEND, 0);
	return r->ifd;
}

/* A set-aside's line: restorable as any other entry (op set_aside). */
/* A line restore wrote into the index: its digest sealed in SESSION.runs. */
static int seal_line(const struct restore *r, const char *line, size_t n)
{
	char name[300], d[33], out[96];
	int fd, k, e = 0;

	snprintf(name, sizeof(name), "%s.runs", r->id);
	fd = rst_open2(r->qfd, name, O_WRONLY | O_APPEND | O_NOFOLLOW, 0);
	if (fd < 0)
		return fd;
	lg_seal_digest(line, n, d);
	k = snprintf(out, sizeof(out),
		     "{\"set_aside\":true,\"lines\":[\"%s\"]}\n", d);
	if (write(fd, out, (size_t)k) != k)
		e = -EIO;
	close(fd);
	return e;
}

int rst_index_set_aside(struct restore *r, long long n, const char *path,
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
	if (!e && r->sealed.any) /* sealed too, or a later restore refuses it */
		e = seal_line(r, j.buf, j.len - 1);
	lg_json_free(&j);
	return e;
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
 * (<state dir>/sessions/<id>.json, written by session/status.c): the start
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
		rst_open2(sdir, "sessions", O_PATH | O_DIRECTORY, 0);
	LG_AUTOCLOSE int fd = -1;
	LG_AUTOFCLOSE FILE *f = NULL;
	json_t *o = NULL;
	struct stat st;

	r->start_ns = r->x.start_ns;
	r->end_ns = 0;
	snprintf(name, sizeof(name), "%s.json", r->id);
	if (sess >= 0)
		fd = rst_open2(sess, name, O_RDONLY, 0);
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
			ev = rst_open2(sess, name, O_RDONLY, 0);
			if (ev >= 0 && fstat(ev, &es) == 0 &&
			    st_ns(es.st_mtim) > r->end_ns)
				r->end_ns = st_ns(es.st_mtim);
		}
		json_decref(o);
	}
	if (!r->end_ns)
		r->end_ns = r->x.newest_ns;
	/* one run of several: its own bounds (issue 39: a later run's end
	 * would take the user's edits between the runs for the session's) */
	if (r->run_start)
		r->start_ns = r->run_start;
	if (r->run_end)
		r->end_ns = r->run_end;
	else if (r->next_start && r->end_ns > r->next_start)
		r->end_ns = r->next_start;
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

/* The index's name for messages, and its folder as an absolute path. */
int rst_name_index(const struct restore *r, struct request *q)
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
 * checked from / with that owner known (rst_open_quarantine): trusted, and
 * the index found there the same file.
 */
int rst_open_index(struct restore *r, struct request *q)
{
	LG_AUTOCLOSE int qd = -1;
	char name[PATH_MAX];
	int e;

	e = lg_undo_path_normal(q->qdir) ? rst_walk_abs(q->qdir, false) :
					   -EINVAL;
	if (e >= 0) {
		qd = e;
		snprintf(name, sizeof(name), "%s.jsonl", r->id);
		e = rst_open2(qd, name, O_RDONLY, 0);
	}
	if (e == -ENOENT) {
		rst_problem(
			r,
			"lgctl: session '%s' has nothing in the quarantine (no %s)\n",
			r->id, q->index);
		return 1;
	}
	if (e >= 0)
		q->ifd = e;
	if (e < 0 || fstat(e, &q->ist) < 0 || !S_ISREG(q->ist.st_mode)) {
		rst_problem(r, "lgctl: cannot read %s: %s\n", q->index,
			    e < 0 ? rst_why_of(e) : "not a regular file");
		return 2;
	}
	r->owner = q->ist.st_uid;
	r->owner_gid = q->ist.st_gid;
	return GO_ON;
}

/* The index in the quarantine now is the file rst_open_index opened. */
static bool same_index(const struct restore *r, const struct request *q)
{
	LG_AUTOCLOSE int fd = -1;
	char name[PATH_MAX];
	struct stat again;

	snprintf(name, sizeof(name), "%s.jsonl", r->id);
	fd = rst_open2(r->qfd, name, O_RDONLY, 0);
	return fd >= 0 && fstat(fd, &again) == 0 &&
	       again.st_ino == q->ist.st_ino && again.st_dev == q->ist.st_dev;
}

/*
 * The quarantine, checked from / as walk_trusted does, root's when its
 * index is, and holding that index still; else the restore is refused.
 */
int rst_open_quarantine(struct restore *r, const struct request *q)
{
	struct lg_error why;
	struct stat qst;

	r->qfd = walk_trusted(r, q->qdir, 1, &why);
	if (r->qfd >= 0 &&
	    (fstat(r->qfd, &qst) < 0 || (r->owner == 0 && qst.st_uid != 0))) {
		lg_closep(&r->qfd);
		r->qfd = lg_error_set(
			&why, EPERM, "%s is not root's, its index is", q->qdir);
	}
	if (r->qfd >= 0 && !same_index(r, q)) {
		lg_closep(&r->qfd);
		r->qfd = lg_error_set(&why, EPERM, "%s was replaced while read",
				      q->index);
	}
	if (r->qfd < 0) {
		rst_problem(
			r,
			"lgctl restore: refused: %s (a quarantine is used only when it is root's or its index's owner's, not writable by others, and reached without a symlink)\n",
			why.msg);
		return 2;
	}
	return GO_ON;
}

/* As whoever could have written the index, before touching any path. */
int rst_load_as_owner(struct restore *r, const struct request *q)
{
	int e = become_owner(r);

	if (e < 0) {
		rst_problem(
			r,
			"lgctl restore: cannot act as the index's owner (uid %u): %s\n",
			(unsigned)r->owner, strerror(-e));
		return 2;
	}
	{
		/* what lgrun sealed at the run's end (quarantine/seal.c) */
		char name[300];
		int fd;

		snprintf(name, sizeof(name), "%s.runs", r->id);
		fd = r->qfd >= 0 ?
			     rst_open2(r->qfd, name, O_RDONLY | O_NOFOLLOW, 0) :
			     -1;
		if (fd >= 0) {
			lgq_sealed_read(&r->sealed, fd);
			close(fd);
		}
		r->x.sealed = &r->sealed;
	}
	e = lgq_load_fd(&r->x, q->ifd, q->paths, q->npaths, q->since_ns);
	if (e < 0) {
		rst_problem(r, "lgctl: cannot read %s: %s\n", q->index,
			    strerror(-e));
		return 2;
	}
	return GO_ON;
}

/* The session's times, from the state dir: the quarantine's parent. */
void rst_times_from_state_dir(struct restore *r, const char *qdir)
{
	LG_AUTOCLOSE int qd = rst_walk_abs(qdir, false);
	LG_AUTOCLOSE int sdir = -1;

	if (qd >= 0)
		sdir = openat(qd, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (sdir >= 0)
		session_times(r, sdir);
	else
		r->end_ns = r->x.newest_ns;
}
