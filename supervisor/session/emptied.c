// SPDX-License-Identifier: MIT
/*
 * Pre-existing files the tree emptied or cut to a stub, judged after the
 * fact (issues 27 and 41). An O_TRUNC open of a file with data, or a
 * rename over it, is never refused: it may be the start of an overwrite.
 * Its content is kept (keep.c), and the file is remembered here
 * (sess_emptied_add). It counts as destroyed data when it stays empty, or
 * a stub (lg_stub_of), EMPTY_QUIET_MS after the open with no process
 * holding it open for writing (sess_emptied_due, on a tick), or at the
 * tree's end (sess_on_tree_over); one written again was an overwrite,
 * never counted. One whose body lives on in a file the session wrote
 * (its distinctive lines there: code moved to another module, logs
 * gathered into one) is not lost and does not count.
 */
#include <dirent.h>

#include "lib/cleanup.h"
#include "session_int.h"

#define EMPTY_QUIET_MS 10000
#define SAMPLE_READ (256 << 10) /* of the body, for its lines */
#define WROTE_MAX_AGE_MS (30 * 60 * 1000)
#define LIVES_ON_READ (4 << 20) /* of a file it may live on in */

/* Up to max bytes of what path (or at_dirfd/at_name) holds, malloc'd. */
static char *read_head(int dirfd, const char *name, size_t max, size_t *n)
{
	LG_AUTOCLOSE int fd = openat(dirfd, name,
				     O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
					     O_NOCTTY | O_CLOEXEC);
	struct stat st;
	char *buf;
	ssize_t r;

	*n = 0;
	if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
		return NULL;
	if ((size_t)st.st_size < max)
		max = (size_t)st.st_size;
	buf = malloc(max ? max : 1);
	if (!buf)
		return NULL;
	while (*n < max && (r = read(fd, buf + *n, max - *n)) > 0)
		*n += (size_t)r;
	return buf;
}

static void sample_of(const struct lg_event *ev, const char *path,
		      struct lg_lines_sample *out)
{
	bool at = ev && ev->at && ev->at_name && ev->at_name[0] &&
		  ev->at_dirfd >= 0;
	size_t n;
	LG_AUTOFREE char *buf = read_head(at ? ev->at_dirfd : AT_FDCWD,
					  at ? ev->at_name : path, SAMPLE_READ,
					  &n);

	out->n = 0;
	if (buf)
		lg_lines_sample(buf, n, out);
}

void sess_emptied_add(struct lg_session *s, const struct lg_event *ev,
		      const char *path, const struct lg_facts *f,
		      const struct lg_facts *now)
{
	struct sess_emptied *e;

	if (!s->emptied) {
		s->emptied = calloc(EMPTIED_MAX, sizeof(*s->emptied));
		if (!s->emptied) {
			s->emptied_unchecked++;
			return;
		}
	}
	if (s->n_emptied == EMPTIED_MAX) {
		s->emptied_unchecked++;
		return;
	}
	e = &s->emptied[s->n_emptied];
	memset(e, 0, sizeof(*e));
	e->path = strdup(path);
	if (!e->path) {
		s->emptied_unchecked++;
		return;
	}
	e->before = f->name_before ? strdup(f->name_before) : NULL;
	sess_exe_of(s, ev->pid, EXE_CACHED, e->exe, sizeof(e->exe));
	e->f = *f;
	e->f.git_recoverable = NULL; /* the notify thread's, gone by then */
	e->f.git_ctx = NULL;
	e->f.name_before = NULL; /* the caller's; e->before is ours */
	e->id = now ? *now : e->f;
	e->id.git_recoverable = NULL;
	e->id.git_ctx = NULL;
	e->id.name_before = NULL;
	e->pid = ev->pid;
	e->at_ms = lg_mono_ms();
	/* the body, still there: the open or the rename waits for lgrun */
	sample_of(now ? NULL : ev, path, &e->sample);
	if (!s->emptied_next_ms ||
	    s->emptied_next_ms > e->at_ms + EMPTY_QUIET_MS)
		s->emptied_next_ms = e->at_ms + EMPTY_QUIET_MS;
	s->n_emptied++;
}

void sess_emptied_free(struct lg_session *s)
{
	for (size_t i = 0; i < s->n_emptied; i++) {
		free(s->emptied[i].path);
		free(s->emptied[i].before);
	}
	free(s->emptied);
	s->emptied = NULL;
	s->n_emptied = 0;
	s->emptied_next_ms = 0;
}

uint64_t sess_emptied_deadline(const struct lg_session *s)
{
	return s->n_emptied ? s->emptied_next_ms : 0;
}

/*
 * A file the tree wrote (made, opened for writing, renamed to): where an
 * emptied file's body may live on. The last SESS_WROTE, a ring.
 */
void sess_wrote(struct lg_session *s, const char *path)
{
	size_t n = strlen(path);
	uint64_t h = lg_digest(path, n);
	struct sess_wrote *w;

	if (path[0] != '/' || n >= sizeof(w->path))
		return;
	for (unsigned i = 0; i < SESS_WROTE; i++)
		if (s->wrote[i].hash == h && s->wrote[i].at_ms &&
		    strcmp(s->wrote[i].path, path) == 0) {
			s->wrote[i].at_ms = lg_mono_ms();
			return;
		}
	w = &s->wrote[s->wrote_next++ % SESS_WROTE];
	memcpy(w->path, path, n + 1);
	w->hash = h;
	w->at_ms = lg_mono_ms();
}

/* Its body's distinctive lines are in a file the session wrote. */
static bool lives_on(const struct lg_session *s, const struct sess_emptied *e,
		     const char *path, uint64_t now)
{
	if (e->sample.n < 4)
		return false;
	for (unsigned i = 0; i < SESS_WROTE; i++) {
		const struct sess_wrote *w = &s->wrote[i];
		LG_AUTOFREE char *buf = NULL;
		struct stat st;
		size_t n;

		if (!w->at_ms || now - w->at_ms > WROTE_MAX_AGE_MS ||
		    strcmp(w->path, path) == 0 ||
		    (e->before && strcmp(w->path, e->before) == 0) ||
		    stat(w->path, &st) != 0 ||
		    (st.st_ino == e->id.ino && st.st_dev == e->id.dev))
			continue;
		buf = read_head(AT_FDCWD, w->path, LIVES_ON_READ, &n);
		if (buf &&
		    lg_lines_live_on(&e->sample,
				     lg_lines_found(&e->sample, buf, n))) {
			lg_dbg("%s: its body lives on in %s", path, w->path);
			return true;
		}
	}
	return false;
}

enum left { LEFT_GONE, LEFT_CONTENT, LEFT_EMPTY, LEFT_STUB };

/* What path holds now of e: the same inode, empty or a stub, or not. */
static enum left left_at(const char *path, const struct sess_emptied *e)
{
	struct statx st;

	if (statx(AT_FDCWD, path, AT_SYMLINK_NOFOLLOW,
		  STATX_TYPE | STATX_INO | STATX_SIZE | STATX_BTIME,
		  &st) != 0 ||
	    !S_ISREG(st.stx_mode) || st.stx_ino != e->id.ino ||
	    makedev(st.stx_dev_major, st.stx_dev_minor) != e->id.dev ||
	    (e->id.has_btime && (st.stx_mask & STATX_BTIME) &&
	     sess_ns(st.stx_btime) != e->id.btime_ns))
		return LEFT_GONE;
	if (st.stx_size == 0)
		return LEFT_EMPTY;
	return lg_stub_of(e->f.size, (int64_t)st.stx_size) ? LEFT_STUB :
							     LEFT_CONTENT;
}

/*
 * Which of the due files some process holds open for writing (a slow
 * `cmd > f` writes later): held[i] set. Every process of the machine is
 * looked at, the safe side: a writer outside the tree defers too.
 */
static void writers(const struct lg_session *s, const size_t *due, size_t n,
		    bool *held)
{
	LG_AUTOCLOSEDIR DIR *proc = opendir("/proc");
	struct dirent *p;
	pid_t self = getpid();

	while (proc && (p = readdir(proc))) {
		LG_AUTOCLOSEDIR DIR *fds = NULL;
		char dir[64], link[96];
		struct dirent *d;
		pid_t pid = atoi(p->d_name);

		if (pid <= 0 || pid == self)
			continue;
		snprintf(dir, sizeof(dir), "/proc/%d/fd", pid);
		fds = opendir(dir);
		while (fds && (d = readdir(fds))) {
			struct stat ls, st;

			if (d->d_name[0] == '.')
				continue;
			snprintf(link, sizeof(link), "%s/%s", dir, d->d_name);
			/* the link's mode says how it was opened */
			if (lstat(link, &ls) != 0 || !(ls.st_mode & S_IWUSR) ||
			    stat(link, &st) != 0 || !S_ISREG(st.st_mode))
				continue;
			for (size_t i = 0; i < n; i++)
				if (s->emptied[due[i]].id.ino == st.st_ino &&
				    s->emptied[due[i]].id.dev == st.st_dev)
					held[i] = true;
		}
	}
}

/*
 * e, found empty or a stub at path: counted as destroyed pre-existing
 * data (once per inode), unless its body lives on elsewhere. quiet_s: how
 * long it was left so while the tree ran (0: at its end).
 */
static int count(struct lg_session *s, struct sess_emptied *e, const char *path,
		 enum left how, unsigned quiet_s, struct lg_session_verdict *v)
{
	struct lg_inode_key k = sess_inode_key(&e->id);
	struct sess_left left = { how == LEFT_STUB, quiet_s };
	struct lg_facts f = e->f;
	int err;

	e->judged = true;
	if (lg_lineage_get(s->content, &k) & LG_INODE_COUNTED_EMPTY)
		return 0; /* one inode, however many names emptied it */
	if (lives_on(s, e, path, lg_mono_ms()))
		return 0;
	lg_lineage_mark(s->content, &k, LG_INODE_COUNTED_EMPTY, 0);
	f.name_before = e->before;
	lg_dbg("%s: %s and left so: destroyed", path,
	       how == LEFT_STUB ? "cut to a stub" : "emptied");
	s->st.left_empty++;
	if (s->blocked)
		return 0; /* tripped by an earlier one: counted, said */
	err = sess_decide(s, e->pid, LG_OP_OPEN_TRUNC, &left, path, &f, v);
	if (s->blocked)
		s->trip_left = true; /* by this one: nothing was refused */
	/* its process may be gone: the program named is the one it was */
	if (s->blocked && e->exe[0] &&
	    (!s->trip_exe[0] || strcmp(s->trip_exe, "?") == 0))
		snprintf(s->trip_exe, sizeof(s->trip_exe), "%s", e->exe);
	return err;
}

/* Where e is now: its name, or (renamed back) its name before. */
static const char *where(const struct lg_session *s,
			 const struct sess_emptied *e, enum left *how,
			 char *buf, size_t size)
{
	struct lg_inode_key k = sess_inode_key(&e->id);

	*how = left_at(e->path, e);
	if (*how != LEFT_GONE)
		return e->path;
	if (lg_lineage_name_before(s->content, &k, e->path, buf, size) <= 0)
		return NULL;
	*how = left_at(buf, e);
	return *how == LEFT_GONE ? NULL : buf;
}

void sess_emptied_due(struct lg_session *s, struct lg_session_verdict *v)
{
	uint64_t now = lg_mono_ms(), next = 0;
	LG_AUTOFREE size_t *due = NULL;
	LG_AUTOFREE bool *held = NULL;
	size_t ndue = 0;

	if (!s->emptied_next_ms || now < s->emptied_next_ms)
		return;
	due = calloc(s->n_emptied, sizeof(*due));
	held = calloc(s->n_emptied, sizeof(*held));
	if (!due || !held)
		return;
	for (size_t i = 0; i < s->n_emptied; i++) {
		struct sess_emptied *e = &s->emptied[i];
		uint64_t at = e->recheck_ms ? e->recheck_ms :
					      e->at_ms + EMPTY_QUIET_MS;
		char buf[PATH_MAX];
		enum left how;

		if (e->judged)
			continue;
		if (now < at) {
			if (!next || at < next)
				next = at;
			continue;
		}
		if (!where(s, e, &how, buf, sizeof(buf)) ||
		    how == LEFT_CONTENT) {
			e->judged = true; /* written again: an overwrite */
			continue;
		}
		due[ndue++] = i;
	}
	if (ndue)
		writers(s, due, ndue, held);
	for (size_t i = 0; i < ndue; i++) {
		struct sess_emptied *e = &s->emptied[due[i]];
		char buf[PATH_MAX];
		const char *path;
		enum left how;

		if (held[i]) { /* its writer may write yet: asked again */
			e->recheck_ms = now + EMPTY_QUIET_MS;
			if (!next || e->recheck_ms < next)
				next = e->recheck_ms;
			continue;
		}
		path = where(s, e, &how, buf, sizeof(buf));
		if (path && how != LEFT_CONTENT)
			count(s, e, path, how,
			      (unsigned)((now - e->at_ms) / 1000), v);
		else
			e->judged = true;
	}
	s->emptied_next_ms = next;
}

/*
 * The tree is over: a file it emptied (or cut to a stub) that is still so,
 * the same inode, counts as destroyed pre-existing data, as its removal
 * would have (issue 27, "emptying is destroying"); one it wrote again was
 * an overwrite, never counted. Its content is kept either way.
 */
int sess_on_tree_over(struct lg_session *s, struct lg_event *ev,
		      struct lg_session_verdict *v)
{
	(void)ev;
	for (size_t i = 0; i < s->n_emptied; i++) {
		struct sess_emptied *e = &s->emptied[i];
		char buf[PATH_MAX];
		const char *path;
		enum left how;

		if (e->judged)
			continue;
		/*
		 * Emptied through a name it has no more (renamed back, a hard
		 * link removed since): its name before the session is asked.
		 */
		path = where(s, e, &how, buf, sizeof(buf));
		if (path && how != LEFT_CONTENT)
			(void)count(s, e, path, how, 0, v);
		/* nothing to refuse: the tree is over */
	}
	if (s->emptied_unchecked)
		lg_warn("%llu file(s) emptied by the tree were not checked at its end (more than %d)",
			(unsigned long long)s->emptied_unchecked, EMPTIED_MAX);
	sess_emptied_free(s);
	return 0;
}
