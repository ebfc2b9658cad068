// SPDX-License-Identifier: MIT
/*
 * The undo (undo.h): what a session's quarantine holds, put back at its
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
 *
 * This file is lg_undo_run: its phases in the order it runs them, a
 * rewind's scope and its record, the audit record. Its command line is
 * lgctl/restore.c. The index and the quarantine are index.c's, putting
 * one entry back is put.c's, the path walks walk.c's, what it says
 * say.c's (undo_int.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/cleanup.h"
#include "lib/clock.h"
#include "lib/json.h"
#include "record/audit.h"
#include "store/state.h"
#include "rewind.h"
#include "undo_int.h"

/* The paths the request owns (a rewind's folder), released. */
static void request_free(struct request *q)
{
	if (q->own_paths)
		for (size_t i = 0; q->paths && i < q->npaths; i++)
			free(q->paths[i]);
	if (q->own_paths)
		free(q->paths);
	lg_closep(&q->ifd);
}

#define LG_REQUEST_AUTO LG_AUTO(request_free)

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
	lgq_sealed_free(&r->sealed);
}

#define LG_RESTORE_AUTO LG_AUTO(restore_free)

/* Where paths go: / or --to DIR (made unless a dry run). */
static int open_top(struct restore *r)
{
	r->top = r->to ? rst_walk_abs(r->to, !r->dry) :
			 open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (r->top < 0 && !(r->dry && r->top == -ENOENT)) {
		rst_problem(r, "lgctl restore: --to %s: %s\n", r->to,
			    rst_why_of(r->top));
		return 2;
	}
	return GO_ON;
}

/*
 * Renames first, newest first (what holds a name is moved out of its way
 * before what goes back there); then directories, parents before
 * children; then files, oldest first.
 */
static int order(const void *a, const void *b)
{
	const struct lgq_entry *x = a, *y = b;

	if (x->moved != y->moved)
		return x->moved ? -1 : 1;
	if (x->moved)
		return x->n > y->n ? -1 : x->n < y->n;
	/* what the session made: last, newest first (contents before) */
	if (x->made_new != y->made_new)
		return x->made_new ? 1 : -1;
	if (x->made_new)
		return x->n > y->n ? -1 : x->n < y->n;
	/* appends cut back and modes set back: once the files are back */
	if ((x->appended || x->mode_only) != (y->appended || y->mode_only))
		return x->appended || x->mode_only ? 1 : -1;
	if (x->appended || x->mode_only)
		return x->n < y->n ? -1 : x->n > y->n;
	if (x->dir != y->dir)
		return x->dir ? -1 : 1;
	if (x->dir)
		return strcmp(x->path, y->path);
	return x->n < y->n ? -1 : x->n > y->n;
}

/* The entries in the order they are put back, each with where it goes. */
static int plan(struct restore *r)
{
	if (r->x.n) /* qsort wants a list */
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

/*
 * Of several entries for one path, the oldest is put back: the path as it
 * was before the session (a later one holds what the session itself wrote
 * there, then replaced or removed). With --newest, the newest: the path as
 * it was just before its last removal. The others are named.
 */
static bool version(const struct lgq_entry *e)
{
	return !e->moved && !e->made_new && !e->appended && !e->mode_only;
}

static int by_path(const void *a, const void *b)
{
	const struct lgq_entry *x = *(struct lgq_entry *const *)a;
	const struct lgq_entry *y = *(struct lgq_entry *const *)b;
	int c = x->dir != y->dir ? (x->dir ? -1 : 1) : strcmp(x->path, y->path);

	return c ? c : x->n < y->n ? -1 : x->n > y->n;
}

/*
 * Marks the versions that are not put back (superseded): sorted by path,
 * each run of one path keeps its first (oldest) or last (--newest). In
 * n log n: a rewind of 10,000 entries would spend seconds comparing each
 * with each.
 */
static int mark_superseded(struct restore *r)
{
	struct lgq_entry **v = calloc(r->x.n + 1, sizeof(*v));
	size_t n = 0;

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < r->x.n; i++)
		if (version(&r->x.e[i]))
			v[n++] = &r->x.e[i];
	qsort(v, n, sizeof(*v), by_path);
	for (size_t i = 0; i < n; i++) {
		bool same_prev = i > 0 && v[i - 1]->dir == v[i]->dir &&
				 strcmp(v[i - 1]->path, v[i]->path) == 0;
		bool same_next = i + 1 < n && v[i + 1]->dir == v[i]->dir &&
				 strcmp(v[i + 1]->path, v[i]->path) == 0;

		v[i]->superseded = r->newest ? same_next : same_prev;
	}
	free(v);
	return 0;
}

static void put_all(struct restore *r)
{
	if (mark_superseded(r) < 0) {
		rst_say(r, "failed    out of memory: nothing restored\n");
		r->failed++;
		return;
	}
	for (size_t i = 0; i < r->x.n; i++) {
		struct lgq_entry *e = &r->x.e[i];

		if (e->moved) {
			if (r->top >= 0)
				rst_put_moved(r, e);
			continue;
		}
		if (e->made_new) {
			if (r->top >= 0)
				rst_put_made(r, e);
			continue;
		}
		if (e->appended || e->mode_only) {
			if (r->top >= 0)
				rst_put_note(r, e);
			continue;
		}
		if (e->superseded) {
			rst_say(r,
				"%s %s: %s version stays in the quarantine (%s); the %s is restored\n",
				r->newest ? "earlier  " : "later    ", e->path,
				r->newest ? "an earlier" : "a later",
				e->kept ? e->kept : "metadata",
				r->newest ? "newest" : "oldest");
			continue;
		}
		if (r->top < 0) { /* a dry run into a --to DIR not made yet */
			rst_say(r, "would restore %s\n", e->dest);
			r->restored += !e->dir;
			continue;
		}
		if (e->dir)
			rst_put_dir(r, e);
		else
			rst_put_file(r, e);
	}
	/* the directories' own metadata last, deepest first */
	for (size_t i = r->x.n; i-- > 0;)
		if (r->x.e[i].made)
			rst_set_dir_meta(r, &r->x.e[i]);
}

/* The undo's audit record, by ask->by. */
static int audit_restore(const struct restore *r)
{
	const char *id = r->id;
	struct lg_json j = { 0 };
	char audit[PATH_MAX + 16], sum[256];
	int e;

	if (r->rewind)
		snprintf(
			sum, sizeof(sum),
			"rewind to turn %lld by operator: %u restored, %u conflicts, %u missing, %u failed",
			r->turn, r->restored, r->conflicts, r->missing,
			r->failed);
	else
		snprintf(
			sum, sizeof(sum),
			"restore by operator: %u restored, %u conflicts, %u missing, %u failed",
			r->restored, r->conflicts, r->missing, r->failed);
	lg_audit_begin(&j, lg_real_ns(), id, NULL, NULL, 0);
	lg_json_str(&j, "event", r->verb);
	if (r->rewind)
		lg_json_int(&j, "turn", r->turn);
	lg_json_str(&j, "by", r->ask->by ? r->ask->by : "?");
	if (r->to)
		lg_json_str(&j, "to", r->to);
	lg_json_int(&j, "restored", r->restored);
	lg_json_int(&j, "conflicts", r->conflicts);
	lg_json_int(&j, "missing", r->missing);
	lg_json_int(&j, "failed", r->failed);
	if (r->set_aside)
		lg_json_int(&j, "set_aside", r->set_aside);
	if (r->moved)
		lg_json_int(&j, "moved_back", r->moved);
	if (r->made_gone)
		lg_json_int(&j, "made_set_aside", r->made_gone);
	if (r->noted)
		lg_json_int(&j, "appends_and_modes", r->noted);
	if (r->refused)
		lg_json_int(&j, "refused", r->refused);
	if (r->changed)
		lg_json_int(&j, "changed", r->changed);
	lg_json_str(&j, "summary", sum);
	lg_audit_falco(&j, id, NULL, r->verb,
		       &(struct lg_falco){ .priority = "Notice",
					   .output = sum });
	snprintf(audit, sizeof(audit), "%s/audit.jsonl", r->state_dir);
	e = lg_audit_append(audit, lg_json_end(&j), true);
	lg_json_free(&j);
	return e;
}

/*
 * Only what lgrun sealed is believed (quarantine/seal.c): a line of the
 * index whose digest SESSION.runs does not hold was added after the fact
 * (a root tree that undid the bind over lgrun's state): refused, named,
 * and left out. A running session's index is not sealed yet: refused. An
 * index of an older lgrun (no line signed, nothing sealed) is read as
 * before, and said.
 */
static int believed(struct restore *r)
{
	size_t k = 0;

	if (lg_state_running(r->state_dir, r->id)) {
		rst_problem(
			r,
			"lgctl %s: session %s is running: its index is sealed at its end; restore it then (or stop it: lgctl stop %s)\n",
			r->verb, r->id, r->id);
		return 1;
	}
	if (!r->sealed.any && !r->x.macs && r->x.n) {
		/*
		 * Nothing sealed, nothing signed: an older lgrun's index, or
		 * one a tree wrote for a session that kept nothing
		 */
		if (!r->trust_unsigned) {
			rst_problem(
				r,
				"lgctl %s: session %s's index is not sealed by lgrun (an older lgrun's, or written by someone else): nothing restored; if you trust it, restore it with --trust-unsigned\n",
				r->verb, r->id);
			return 1;
		}
		rst_say(r,
			"note      session %s's index is not sealed: believed as it is (--trust-unsigned)\n",
			r->id);
		return GO_ON;
	}
	for (size_t i = 0; i < r->x.n; i++) {
		struct lgq_entry *e = &r->x.e[i];

		if (r->sealed.any && !e->forged) {
			r->x.e[k++] = *e;
			continue;
		}
		rst_say(r,
			"refused   %s: its line in the index is not one lgrun sealed (added after the fact, or the session ended without lgrun's end): not believed\n",
			e->path);
		r->refused++;
		lgq_entry_free(e);
	}
	r->x.n = k;
	return GO_ON;
}

/*
 * A session id run again (--session NAME) is another run: one run is
 * restored, the last that kept anything, or --run N. Its times bound what
 * is its own: its end line's time, else the next run's start.
 */
/*
 * SESSION.SUFFIX beside the index, to read, when it is the index's
 * owner's (or root's) and written by no one else; else NULL.
 */
static FILE *beside_index(const struct restore *r, const char *suffix)
{
	char name[300];
	struct stat st;
	FILE *f = NULL;
	int fd;

	snprintf(name, sizeof(name), "%s.%s", r->id, suffix);
	fd = r->qfd >= 0 ? rst_open2(r->qfd, name, O_RDONLY | O_NOFOLLOW, 0) :
			   -1;
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    (st.st_uid != r->owner && st.st_uid != 0) || (st.st_mode & 022) ||
	    !(f = fdopen(fd, "re")))
		close(fd);
	return f;
}

/* Each run's end, from SESSION.runs (lgrun's, beside the index). */
static void run_ends(struct restore *r)
{
	LG_AUTOFCLOSE FILE *f = beside_index(r, "runs");
	char line[256];

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		json_t *o = json_loads(line, 0, NULL);
		long long s =
			json_integer_value(json_object_get(o, "start_ns"));
		long long e = json_integer_value(json_object_get(o, "end_ns"));

		for (size_t i = 0; i < r->x.nruns; i++)
			if (s && r->x.runs[i].start_ns == s && e > s)
				r->x.runs[i].end_ns = e;
		json_decref(o);
	}
}

static int pick_run(struct restore *r)
{
	size_t last = 0, n = lgq_runs_with_entries(&r->x, &last), k;
	char t[40];

	if (r->run && r->run > r->x.nruns) {
		rst_problem(
			r,
			"lgctl %s: session %s has %zu run(s) on record; --run %u is not one of them\n",
			r->verb, r->id, r->x.nruns, r->run);
		return 1;
	}
	if (!r->x.nruns)
		return GO_ON; /* an index of an older lgrun: no runs said */
	run_ends(r);
	k = r->run ? r->run - 1 : last;
	r->run_start = r->x.runs[k].start_ns;
	r->run_end = r->x.runs[k].end_ns;
	r->next_start = k + 1 < r->x.nruns ? r->x.runs[k + 1].start_ns : 0;
	lgq_keep_run(&r->x, r->run_start);
	if (r->x.nruns > 1) {
		lg_time_iso(r->run_start, t, sizeof(t));
		rst_say(r,
			"run       session %s has %zu runs that kept something: restoring run %zu of them, started %s%s\n",
			r->id, n, k + 1, t,
			r->run ? "" : " (another with --run N)");
	}
	return GO_ON;
}

/*
 * A rewind with no PATH: the session's project, the folder it started in
 * (its recording's head says), so that the agent's own state elsewhere
 * (its home's settings and transcripts) stays as it is. GO_ON, with
 * q->paths that one; or no recording: every path, said.
 */
static int project_of(struct restore *r, struct request *q)
{
	char p[PATH_MAX + 300], line[65536];
	LG_AUTOFCLOSE FILE *f = NULL;
	const char *cwd;
	json_t *o = NULL;
	int fd;

	snprintf(p, sizeof(p), "%s/sessions/%s.events.jsonl", r->state_dir,
		 r->id);
	fd = open(p, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0 && !(f = fdopen(fd, "re")))
		close(fd);
	if (f && fgets(line, sizeof(line), f))
		o = json_loads(line, 0, NULL);
	cwd = json_string_value(json_object_get(o, "cwd"));
	if (!cwd || cwd[0] != '/' || !lg_undo_path_normal(cwd)) {
		rst_say(r,
			"note      session %s's recording does not say where it started: every path it changed is rewound\n",
			r->id);
		json_decref(o);
		return GO_ON;
	}
	q->paths = calloc(2, sizeof(*q->paths));
	q->own_paths = true;
	if (!q->paths || !(q->paths[0] = strdup(cwd))) {
		json_decref(o);
		return 2;
	}
	q->npaths = 1;
	rst_say(r,
		"under     %s (the folder the session started in; name PATHs, or /, to rewind elsewhere)\n",
		cwd);
	json_decref(o);
	return GO_ON;
}

/* The paths a rewind covered, as its line in SESSION.rewound says them. */
static char *scope_of(const struct request *q)
{
	json_t *a = json_array();
	char *s;

	for (size_t i = 0; a && i < q->npaths; i++)
		json_array_append_new(a, json_string(q->paths[i]));
	s = a ? json_dumps(a, JSON_COMPACT) : NULL;
	json_decref(a);
	return s;
}

/*
 * An earlier rewind of the same paths (SESSION.rewound, the index's
 * owner's, beside it): the turn it went back to and when. Its work is
 * not a change after the session: a later rewind undoes only the turns
 * before it, and what changed after it is a conflict.
 */
static void rewound_before(struct restore *r, const struct request *q)
{
	LG_AUTOFCLOSE FILE *f = beside_index(r, "rewound");
	LG_AUTOFREE char *scope = scope_of(q);
	char line[PATH_MAX * 2];

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		json_t *o = json_loads(line, 0, NULL);
		char *under = json_dumps(json_object_get(o, "under"),
					 JSON_COMPACT | JSON_ENCODE_ANY);
		long long k = json_integer_value(json_object_get(o, "turn"));
		long long t = json_integer_value(json_object_get(o, "time_ns"));

		/* a run's rewinds: of this run, after its end */
		if (k > 0 && t > r->run_start && under && scope &&
		    strcmp(under, scope) == 0) {
			r->rewound = k;
			r->rewound_ns = t;
		}
		free(under);
		json_decref(o);
	}
}

/* This rewind, for the next (rewound_before). */
static void note_rewound(struct restore *r, const struct request *q)
{
	char name[300];
	LG_AUTOFREE char *scope = scope_of(q);
	LG_AUTOCLOSE int fd = -1;
	char *line = NULL;
	int n;

	snprintf(name, sizeof(name), "%s.rewound", r->id);
	fd = rst_open2(r->qfd, name,
		       O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC,
		       0600);
	n = scope ? asprintf(&line,
			     "{\"turn\":%lld,\"time_ns\":%lld,\"under\":%s}\n",
			     r->turn, (long long)lg_real_ns(), scope) :
		    -1;
	if (fd < 0 || n < 0 || write(fd, line, (size_t)n) != n)
		rst_say(r,
			"note      could not record this rewind in %s.rewound: a later rewind of this session reports what it put back as changed since\n",
			r->id);
	free(line);
}

/*
 * The turns undone (issue 40): a rewind to turn K keeps the entries of
 * turns K and later, each at its name when turn K began; a restore, the
 * whole session (not the session's own versions, which only a rewind to
 * a later turn puts back).
 */
static int pick_turns(struct restore *r)
{
	long long last = r->x.max_turn;

	if (r->rewind && r->turn > 1 && !last) {
		rst_problem(
			r,
			"lgctl rewind: session %s has no turns on record (no model seen through lgrun's proxy, or an older lgrun's): undo by time with lgctl restore %s --since DUR\n",
			r->id, r->id);
		return 1;
	}
	if (r->rewound && r->rewind && r->turn >= r->rewound) {
		rst_say(r,
			"rewound   session %s was rewound to the start of turn %lld already: nothing of turns %lld and later is left to undo (a rewind goes back, never forward; lgctl restore %s --newest puts back what it set aside)\n",
			r->id, r->rewound, r->turn, r->id);
		for (size_t i = 0; i < r->x.n; i++)
			lgq_entry_free(&r->x.e[i]);
		r->x.n = 0;
		return GO_ON;
	}
	if (lgq_select_turns(&r->x, r->rewind ? r->turn : 0, r->rewound) < 0) {
		rst_problem(r, "lgctl %s: out of memory\n", r->verb);
		return 2;
	}
	if (r->rewind)
		rst_say(r,
			"rewind    session %s to the start of turn %lld%s: %zu change(s) of turns %lld to %lld to undo\n",
			r->id, r->turn,
			r->turn == 1 ? " (the whole session)" : "", r->x.n,
			r->turn,
			r->rewound     ? r->rewound - 1 :
			last > r->turn ? last :
					 r->turn);
	return GO_ON;
}

/*
 * Each PATH that no entry is at or under, said (a mistyped path would
 * otherwise restore nothing and succeed): how many.
 */
static unsigned unmatched_paths(const struct restore *r,
				const struct request *q)
{
	unsigned n = 0;

	for (size_t i = 0; i < q->npaths; i++) {
		const char *top = q->paths[i];
		size_t k = strlen(top);
		bool hit = false;

		for (size_t j = 0; j < r->x.n && !hit; j++) {
			const char *p = r->x.e[j].path;

			hit = k == 1 || (strncmp(p, top, k) == 0 &&
					 (p[k] == '/' || p[k] == '\0'));
		}
		if (hit)
			continue;
		rst_problem(
			r,
			"lgctl %s: %s: session %s kept nothing at or under it%s\n",
			r->verb, top, r->id,
			q->since_ns ? " in the --since window" :
			r->rewind   ? " from that turn on" :
				      "");
		n++;
	}
	return n;
}

/*
 * The order is the safety: the index opened and its owner known, its
 * quarantine checked with that owner, the owner's credentials taken,
 * and only then the index read and any path touched.
 */
int lg_undo_run(const struct lg_undo_ask *ask, struct lg_undo_tally *t)
{
	LG_RESTORE_AUTO struct restore r = {
		.ask = ask,
		.state_dir = ask->state_dir,
		.id = ask->id,
		.to = ask->to,
		.dry = ask->dry,
		.newest = ask->newest,
		.force = ask->force,
		.keep_new = ask->keep_new,
		.trust_unsigned = ask->trust_unsigned,
		.run = ask->run,
		.rewind = ask->rewind,
		.turn = ask->turn,
		.verb = ask->rewind ? "rewind" : "restore",
		.top = -1,
		.qfd = -1,
		.ifd = -1,
	};
	LG_REQUEST_AUTO struct request q = { .ifd = -1,
					     .since_ns = ask->since_ns,
					     .paths = (char **)ask->paths,
					     .npaths = ask->npaths };
	int rc = GO_ON;

	*t = (struct lg_undo_tally){ 0 };
	if (r.rewind && !q.npaths)
		rc = project_of(&r, &q);
	if (rc != GO_ON)
		return rc;
	rc = rst_name_index(&r, &q);
	if (rc != GO_ON)
		return rc;
	rc = rst_open_index(&r, &q);
	if (rc != GO_ON)
		return rc;
	rc = rst_open_quarantine(&r, &q);
	if (rc != GO_ON)
		return rc;
	rc = rst_load_as_owner(&r, &q);
	if (rc != GO_ON)
		return rc;
	rc = believed(&r);
	if (rc != GO_ON)
		return rc;
	rc = pick_run(&r);
	if (rc != GO_ON)
		return rc;
	if (r.rewind || q.npaths)
		rewound_before(&r, &q);
	rc = pick_turns(&r);
	if (rc != GO_ON)
		return rc;
	t->unmatched = unmatched_paths(&r, &q);
	rst_times_from_state_dir(&r, q.qdir);
	if (r.rewound_ns >
	    r.end_ns) /* an earlier rewind's work: not a change */
		r.end_ns = r.rewound_ns;
	rc = open_top(&r);
	if (rc != GO_ON)
		return rc;
	rc = plan(&r);
	if (rc != GO_ON)
		return rc;
	if (!r.dry) {
		char held[PATH_MAX];

		/*
		 * The totals lgrun wrote at the session's end (index.h,
		 * lgq_held_write) no longer hold once files go back: the
		 * next reader counts from the index.
		 */
		snprintf(held, sizeof(held), "%s.held", r.id);
		unlinkat(r.qfd, held, 0);
	}
	put_all(&r);
	if (r.rewind && !r.dry && r.x.n)
		note_rewound(&r, &q);
	t->restored = r.restored;
	t->conflicts = r.conflicts;
	t->missing = r.missing;
	t->failed = r.failed;
	t->earlier = r.earlier;
	t->refused = r.refused;
	t->changed = r.changed;
	t->set_aside = r.set_aside;
	t->moved = r.moved;
	t->made_gone = r.made_gone;
	t->noted = r.noted;
	if (!r.dry && r.x.n)
		audit_restore(&r);
	return 0;
}
