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

int sess_on_remote_delete(struct lg_session *s, struct lg_event *ev,
			  struct lg_session_verdict *v)
{
	struct lg_guard_env env = { lg_mono_ms(), NULL, s, s->shared, NULL };
	struct lg_findings out;

	if (s->blocked)
		return s->cfg->deny_errno;
	if (ev->asked) /* before it leaves: only a blocked session refuses */
		return 0;
	s->st.attempts++;
	if (own(s, ev->target))
		ev->cls = LG_CLASS_SESSION;
	else if (strcmp(ev->system, "http") == 0 &&
		 seen_as_file(s, ev->target, env.now_ms))
		ev->cls = LG_CLASS_TOOL_DELETED;
	else
		ev->cls = LG_CLASS_DESTROY;
	if (ev->cls != LG_CLASS_DESTROY) {
		sess_remember(s, env.now_ms, ev->pid, LG_OP_REMOTE_DELETE,
			      ev->cls, LG_ALLOW, ev->exe, ev->target);
		lg_dbg("%s %s by %s[%d]: %s, not counted", ev->tool, ev->target,
		       ev->exe, ev->pid, lg_class_name(ev->cls));
		return 0;
	}
	if (s->store_up && !s->store_up(s->store_ctx))
		return sess_store_gate(s, ev->pid, ev->exe);
	s->st.counted++;
	s->st.remote_deletes++;
	v->verdict = sess_feed(s, s->guard, ev, &env, &out);
	sess_remember(s, env.now_ms, ev->pid, LG_OP_REMOTE_DELETE, ev->cls,
		      v->verdict, ev->exe, ev->target);
	lg_info("%s %s by %s[%d] (%s): deleted off this host, nothing kept",
		ev->tool, ev->target, ev->exe, ev->pid, ev->system);
	if (v->verdict != LG_ALLOW)
		return sess_act(s, &out, LG_OP_REMOTE_DELETE, ev->pid, ev->exe,
				ev->target, v);
	return 0;
}
