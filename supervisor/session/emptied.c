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
 * gathered into one) is not lost and does not count: what the file left
 * and where its body lives on are provenance's (provenance/written.c).
 */
#include "lib/cleanup.h"
#include "session_int.h"

#define EMPTY_QUIET_MS 10000

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
	lg_prov_sample(now ? NULL : ev, path, &e->sample);
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
 * Which of the due files some process holds open for writing (a slow
 * `cmd > f` writes later): held[i] set.
 */
static void writers(const struct lg_session *s, const size_t *due, size_t n,
		    bool *held)
{
	LG_AUTOFREE uint64_t *dev = calloc(n, sizeof(*dev));
	LG_AUTOFREE uint64_t *ino = calloc(n, sizeof(*ino));

	if (!dev || !ino) { /* the safe side: asked again later */
		for (size_t i = 0; i < n; i++)
			held[i] = true;
		return;
	}
	for (size_t i = 0; i < n; i++) {
		dev[i] = s->emptied[due[i]].id.dev;
		ino[i] = s->emptied[due[i]].id.ino;
	}
	lg_prov_writers(dev, ino, n, held);
}

/*
 * e, found empty or a stub at path: counted as destroyed pre-existing
 * data (once per inode), unless its body lives on elsewhere. quiet_s: how
 * long it was left so while the tree ran (0: at its end).
 */
static int count(struct lg_session *s, struct sess_emptied *e, const char *path,
		 enum lg_prov_left how, unsigned quiet_s,
		 struct lg_session_verdict *v)
{
	struct lg_inode_key k = sess_inode_key(&e->id);
	struct sess_left left = { how == LG_LEFT_STUB, quiet_s };
	struct lg_facts f = e->f;
	int err;

	e->judged = true;
	if (lg_lineage_get(s->content, &k) & LG_INODE_COUNTED_EMPTY)
		return 0; /* one inode, however many names emptied it */
	if (lg_prov_lives_on(s->prov, &e->sample, path, e->before, e->id.dev,
			     e->id.ino, lg_mono_ms()))
		return 0;
	lg_lineage_mark(s->content, &k, LG_INODE_COUNTED_EMPTY, 0);
	f.name_before = e->before;
	lg_dbg("%s: %s and left so: destroyed", path,
	       how == LG_LEFT_STUB ? "cut to a stub" : "emptied");
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
			 const struct sess_emptied *e, enum lg_prov_left *how,
			 char *buf, size_t size)
{
	struct lg_inode_key k = sess_inode_key(&e->id);

	*how = lg_prov_left_at(e->path, &e->id, e->f.size);
	if (*how != LG_LEFT_GONE)
		return e->path;
	if (lg_lineage_name_before(s->content, &k, e->path, buf, size) <= 0)
		return NULL;
	*how = lg_prov_left_at(buf, &e->id, e->f.size);
	return *how == LG_LEFT_GONE ? NULL : buf;
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
		enum lg_prov_left how;

		if (e->judged)
			continue;
		if (now < at) {
			if (!next || at < next)
				next = at;
			continue;
		}
		if (!where(s, e, &how, buf, sizeof(buf)) ||
		    how == LG_LEFT_CONTENT) {
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
		enum lg_prov_left how;

		if (held[i]) { /* its writer may write yet: asked again */
			e->recheck_ms = now + EMPTY_QUIET_MS;
			if (!next || e->recheck_ms < next)
				next = e->recheck_ms;
			continue;
		}
		path = where(s, e, &how, buf, sizeof(buf));
		if (path && how != LG_LEFT_CONTENT)
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
		enum lg_prov_left how;

		if (e->judged)
			continue;
		/*
		 * Emptied through a name it has no more (renamed back, a hard
		 * link removed since): its name before the session is asked.
		 */
		path = where(s, e, &how, buf, sizeof(buf));
		if (path && how != LG_LEFT_CONTENT)
			(void)count(s, e, path, how, 0, v);
		/* nothing to refuse: the tree is over */
	}
	if (s->emptied_unchecked)
		lg_warn("%llu file(s) emptied by the tree were not checked at its end (more than %d)",
			(unsigned long long)s->emptied_unchecked, EMPTIED_MAX);
	sess_emptied_free(s);
	return 0;
}
