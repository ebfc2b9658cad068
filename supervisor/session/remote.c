// SPDX-License-Identifier: MIT
/*
 * Data off this host (issue 38): what the tree deletes in a database or a
 * service, judged as a file's removal is, with "pre-existing versus the
 * session's own" carried over. The shim reads the wire (an HTTP DELETE
 * answered 2xx, a DROP or TRUNCATE a PostgreSQL server answered) and
 * tells what the session made there (a POST answered 201, a CREATE): a
 * delete of one of those, or of something inside one (a table of a
 * database the session created), is no loss. Nothing remote can be kept:
 * a trip stops what comes after, and every record says so.
 */
#include "session_int.h"

/* Is target one of the session's own, or inside one ("db" covers "db/t")? */
static bool own(const struct lg_session *s, const char *target)
{
	for (unsigned i = 0; i < REMOTE_OWN; i++) {
		const char *o = s->remote_own[i];
		size_t n;

		if (!o)
			continue;
		n = strlen(o);
		if (strncmp(target, o, n) == 0 &&
		    (target[n] == '\0' || target[n] == '/' || target[n] == '.'))
			return true;
	}
	return false;
}

void sess_remote_made(struct lg_session *s, const char *target)
{
	char **slot;

	if (!target || !*target || own(s, target))
		return;
	slot = &s->remote_own[s->remote_own_next++ % REMOTE_OWN];
	free(*slot);
	*slot = strdup(target);
	lg_dbg("made by the session: %s", target);
}

void sess_remote_free(struct lg_session *s)
{
	for (unsigned i = 0; i < REMOTE_OWN; i++) {
		free(s->remote_own[i]);
		s->remote_own[i] = NULL;
	}
}

/*
 * One decision, two witnesses: a server of the tree that removes a file
 * for a DELETE it was sent (the file's removal was judged, and counted if
 * it destroyed pre-existing data, moments before the answer came back).
 * A removal in the last 10 s whose name is the URL's last segment is the
 * same decision.
 */
static bool seen_as_file(const struct lg_session *s, const char *url,
			 uint64_t now)
{
	const char *seg = strrchr(url, '/');

	if (!seg || !seg[1] || strstr(url, "://") + 2 == seg)
		return false;
	seg++;
	for (size_t i = 0; i < s->nrecent; i++) {
		const struct recent *r =
			&s->recent[(s->recent_head + i) % RECENT];
		const char *base = strrchr(r->target, '/');

		if (r->op != LG_OP_UNLINK && r->op != LG_OP_RMDIR)
			continue;
		if (now - r->t_ms > 10000 || !base)
			continue;
		if (strcmp(base + 1, seg) == 0)
			return true;
	}
	return false;
}

bool lg_session_exec_wanted(const struct lg_session *s, const char *program)
{
	return s->cli && lg_cli_known(s->cli, program);
}

bool lg_session_cli_on(const struct lg_session *s)
{
	return s->cli != NULL;
}

/* The exec of pid judged lately (EXEC_MS), or NULL. */
#define EXEC_MS 600000
static struct sess_exec *exec_of(struct lg_session *s, pid_t pid, uint64_t now)
{
	for (unsigned i = 0; i < SESS_EXECS; i++)
		if (s->execs[i].pid == pid && now - s->execs[i].at_ms < EXEC_MS)
			return &s->execs[i];
	return NULL;
}

bool sess_exec_did(struct lg_session *s, pid_t pid, uint64_t now)
{
	bool any = false;

	for (unsigned i = 0; i < SESS_EXECS && !any; i++)
		any = s->execs[i].pid && s->execs[i].counted &&
		      now - s->execs[i].at_ms < 60000;
	if (!any) /* the common case: no /proc walk */
		return false;
	for (int depth = 0; pid > 1 && depth < 8; depth++) {
		char state;
		pid_t ppid;

		for (unsigned i = 0; i < SESS_EXECS; i++)
			if (s->execs[i].pid == pid && s->execs[i].counted &&
			    now - s->execs[i].at_ms < 60000)
				return true;
		if (lg_proc_stat(pid, &state, &ppid) < 0)
			return false;
		pid = ppid;
	}
	return false;
}

/* A table of a database: "postgres://", "psql://", "mysql://"... */
static bool sql_target(const char *t)
{
	static const char *const schemes[] = { "postgres://", "psql://",
					       "mysql://",    "mariadb://",
					       "sqlite:",     NULL };

	for (int i = 0; schemes[i]; i++)
		if (strncmp(t, schemes[i], strlen(schemes[i])) == 0)
			return true;
	return false;
}

/* One remote target counted: judged, remembered, acted on. */
static int count_one(struct lg_session *s, struct lg_event *ev,
		     struct lg_session_verdict *v)
{
	struct lg_guard_env env = { lg_mono_ms(), NULL, s, s->shared, NULL };
	struct lg_findings out;

	ev->cls = LG_CLASS_DESTROY;
	if (s->store_up && !s->store_up(s->store_ctx))
		return sess_store_gate(s, ev->pid, ev->exe);
	s->st.counted++;
	if (ev->op == LG_OP_REMOTE_DELETE)
		s->st.remote_deletes++;
	v->verdict = sess_feed(s, s->guard, ev, &env, &out);
	sess_remember(s, env.now_ms, ev->pid, ev->op, ev->cls, v->verdict,
		      ev->exe, ev->target);
	lg_info("%s by %s[%d] (%s): %s%s%s%s",
		ev->op == LG_OP_REMOTE_DELETE ? "deleted off this host" :
						"deleted in a local database",
		ev->exe, ev->pid, ev->system,
		ev->happened && ev->tool ? ev->tool : "",
		ev->happened && ev->tool ? " " : "", ev->target,
		ev->op == LG_OP_REMOTE_DELETE ?
			"; nothing of it can be kept" :
			"; its file is kept at its first write ([quarantine] keep_writes)");
	/*
	 * A table emptied (TRUNCATE, DELETE of every row) is still there,
	 * holding only what the session writes into it from now on: emptying
	 * it again is no loss (a test suite's cleaning between its tests), as
	 * a file the session truncated once
	 */
	if (ev->tool && sql_target(ev->target) &&
	    (strstr(ev->tool, "TRUNCATE") || strstr(ev->tool, "DELETE")))
		sess_remote_made(s, ev->target);
	s->remote_ran = ev->happened;
	snprintf(s->remote_system, sizeof(s->remote_system), "%s",
		 ev->system ? ev->system : "remote");
	if (v->verdict != LG_ALLOW)
		return sess_act(s, &out, ev->op, ev->pid, ev->exe, ev->target,
				v);
	return 0;
}

/* The targets an exec left to its wire, counted now: 0 or the errno. */
static int count_exec(struct lg_session *s, struct sess_exec *x, pid_t pid,
		      struct lg_session_verdict *v)
{
	int err = 0;

	x->counted = true;
	for (unsigned i = 0; i < x->n && !err; i++) {
		struct lg_event ev = { .kind = LG_EV_DESTRUCTIVE,
				       .source = LG_SRC_SECCOMP,
				       .op = LG_OP_REMOTE_DELETE,
				       .pid = pid,
				       .exe = x->exe,
				       .tool = x->verb,
				       .target = x->targets[i],
				       .system = "exec" };

		s->st.attempts++;
		if (own(s, ev.target))
			continue;
		/*
		 * sqlite3's database is a file of this host: what the statement
		 * destroys is kept with it (the file kept as it was at its first
		 * write-open, [quarantine] keep_writes), so it is counted as a
		 * tool's delete of local data, not as data lost off this host
		 */
		if (strncmp(ev.target, "sqlite:", 7) == 0) {
			ev.op = LG_OP_TOOL_DELETE;
			ev.system = "sqlite";
		}
		err = count_one(s, &ev, v);
	}
	return err;
}

/*
 * An exec of a command of the table: what it destroys is judged at the
 * exec (refused there at the trip) unless the shim will read its wire
 * (curl of an http:// URL, psql, with the shim in it), whose answers say
 * more: whether it was there, whether it was the session's. Left to the
 * wire, it is pending: counted if the wire turns out opaque (TLS).
 */
static int on_exec(struct lg_session *s, struct lg_event *ev,
		   struct lg_session_verdict *v)
{
	struct lg_cli_match m;
	struct sess_exec *x;
	unsigned n = 0;
	uint64_t now = lg_mono_ms();

	if (!s->cli || !lg_cli_classify(s->cli, ev->program, ev->argc, ev->argv,
					ev->cwd, &m))
		return 0;
	/* a process that execs again (a wrapper: psql's pg_wrapper) */
	x = exec_of(s, ev->pid, now);
	if (!x)
		x = &s->execs[s->execs_next++ % SESS_EXECS];
	memset(x, 0, sizeof(*x));
	for (unsigned i = 0; i < m.n; i++) {
		if (m.made[i]) { /* CREATE TABLE: the session's from now */
			sess_remote_made(s, m.targets[i]);
			continue;
		}
		memcpy(x->targets[n++], m.targets[i], sizeof(x->targets[0]));
	}
	if (!n)
		return 0;
	x->pid = ev->pid;
	x->at_ms = now;
	x->n = n;
	snprintf(x->verb, sizeof(x->verb), "%s", m.verb);
	snprintf(x->exe, sizeof(x->exe), "%s", ev->program);
	if (m.wire && ev->shim) {
		lg_dbg("%s by %s[%d]: its wire will tell", m.verb, ev->program,
		       ev->pid);
		return 0;
	}
	return count_exec(s, x, ev->pid, v);
}

int sess_remote_opaque(struct lg_session *s, pid_t pid)
{
	struct lg_session_verdict v = { 0 };
	struct sess_exec *x = exec_of(s, pid, lg_mono_ms());

	if (!x || x->counted || s->blocked || !s->cfg->remote)
		return 0;
	lg_dbg("%s by %s[%d]: its wire is TLS, judged by its command line",
	       x->verb, x->exe, pid);
	return count_exec(s, x, pid, &v);
}

int sess_on_remote_delete(struct lg_session *s, struct lg_event *ev,
			  struct lg_session_verdict *v)
{
	uint64_t now = lg_mono_ms();
	struct sess_exec *x;

	if (s->blocked)
		return s->cfg->deny_errno;
	if (!s->cfg->remote)
		return 0;
	if (ev->argv) /* an exec's command line (system "exec") */
		return on_exec(s, ev, v);
	if (ev->asked) /* before it leaves: only a blocked session refuses */
		return 0;
	s->st.attempts++;
	x = exec_of(s, ev->pid, now);
	if (x && x->counted) {
		/* its command line counted this decision at its exec */
		ev->cls = LG_CLASS_TOOL_DELETED;
	} else if (own(s, ev->target)) {
		ev->cls = LG_CLASS_SESSION;
	} else if (strcmp(ev->system, "http") == 0 &&
		   seen_as_file(s, ev->target, now)) {
		ev->cls = LG_CLASS_TOOL_DELETED;
	} else {
		ev->cls = LG_CLASS_DESTROY;
	}
	if (x && !x->counted) /* its wire answered: that counts */
		x->pid = 0;
	if (ev->cls != LG_CLASS_DESTROY) {
		sess_remember(s, now, ev->pid, LG_OP_REMOTE_DELETE, ev->cls,
			      LG_ALLOW, ev->exe, ev->target);
		lg_dbg("%s %s by %s[%d]: %s, not counted", ev->tool, ev->target,
		       ev->exe, ev->pid, lg_class_name(ev->cls));
		return 0;
	}
	return count_one(s, ev, v);
}
