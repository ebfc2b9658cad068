// SPDX-License-Identifier: MIT
/*
 * One destructive operation on a file decided (sess_decide): lgrun's own
 * state protected, the class (lg_classify, with the program when a scoped
 * rule or git's recoverable removals may apply), the guard fed, its
 * findings acted on. Called by the handlers of an attempt (fs.c) and of
 * what is judged after the fact (emptied.c); calls down to facts.c,
 * feed.c and act.c only.
 */
#include "session_int.h"

int sess_decide(struct lg_session *s, pid_t pid, enum lg_op op,
		const struct sess_left *left, const char *path,
		const struct lg_facts *f, struct lg_session_verdict *v)
{
	const struct lg_config *c = s->cfg;
	struct lg_guard_env env = { lg_mono_ms(), sess_restored, s, s->shared,
				    NULL };
	struct lg_event ev = {
		.kind = LG_EV_DESTRUCTIVE,
		.source = LG_SRC_SECCOMP,
		.op = op,
		.pid = pid,
		.target = path,
		.left_empty = left != NULL,
		.left_stub = left && left->stub,
		.left_quiet_s = left ? left->quiet_s : 0,
		/* what a block device written over holds */
		.system = op == LG_OP_DEVICE_WRITE ? f->blockdev_holds : NULL,
		.id = { f->dev, f->ino,
			f->has_btime ? f->btime_ns : f->ctime_ns, f->mtime_ns,
			pid, env.now_ms, f->size }
	};
	struct lg_findings out;
	char exe[64] = "";
	const char *scoped = NULL; /* exe, when it is the program it names */

	s->st.attempts++;
	if (sess_protected_path(s, path) && f->exists) {
		/* The agent must not erase its own record or lift its block. */
		lg_prov_exe_name(pid, exe, sizeof(exe));
		lg_warn("refused %s %s by %s[%d]: lgrun's state is protected",
			lg_op_name(op), path, exe, pid);
		sess_remember(s, env.now_ms, pid, op, LG_CLASS_DESTROY, LG_DENY,
			      exe, path);
		s->st.denied++;
		v->verdict = LG_DENY;
		return c->deny_errno;
	}
	ev.cls = lg_classify(op, f, path, NULL, c->ignore, c->n_ignore,
			     s->info.start_real_ns);
	v->cls = ev.cls;
	/*
	 * The program is read only when a scoped rule could apply (git in
	 * .git) or a removal that would count may be git's (recoverable, or
	 * not to be taken for an overwrite), when something is to be
	 * reported, or with -vv: it costs a readlink on the hot path.
	 */
	if (ev.cls == LG_CLASS_DESTROY &&
	    lg_classify_needs_program(c->ignore, c->n_ignore, op, f, path)) {
		/*
		 * As read in the last 100 ms: a process that just exec'd git
		 * counts as what it was (counted, the safe side); one that
		 * exec'd away from git is git's only where git's objects hold
		 * the content (what makes git's removals recoverable).
		 */
		sess_exe_of(s, pid, EXE_RECENT, exe, sizeof(exe));
		ev.exe = exe;
		scoped = lg_programs_is(s->programs, exe, pid) ? exe : NULL;
		ev.cls = lg_classify(op, f, path, scoped, c->ignore,
				     c->n_ignore, s->info.start_real_ns);
		v->cls = ev.cls;
	} else if (lg_log_verbosity >= LG_LOG_DEBUG) {
		lg_prov_exe_name(pid, exe, sizeof(exe));
		ev.exe = exe;
	}
	if (ev.cls == LG_CLASS_DESTROY && s->store_up &&
	    !s->store_up(s->store_ctx))
		return sess_store_gate(s, pid, exe); /* not counted: refused */
	if (ev.cls == LG_CLASS_DESTROY)
		s->st.counted++;
	else if (ev.cls == LG_CLASS_RECOVERABLE)
		s->st.recoverable++;
	else if (ev.cls == LG_CLASS_MOVED)
		s->st.moved++;
	if (lg_classify_lost_by_git(op, ev.cls, path, scoped))
		sess_lost_by_git_add(s, path);
	s->feeding_tid = pid;
	v->verdict = sess_feed(s, s->guard, &ev, &env, &out);
	s->feeding_tid = 0;
	if (!exe[0]) /* the target waits: still there */
		sess_exe_of(s, pid,
			    v->verdict != LG_ALLOW     ? EXE_NOW :
			    ev.cls == LG_CLASS_DESTROY ? EXE_RECENT :
							 EXE_CACHED,
			    exe, sizeof(exe));
	sess_remember(s, env.now_ms, pid, op, ev.cls, v->verdict, exe, path);
	lg_dbg("%s %s (%s) by %s[%d]: %s", lg_op_name(op), path,
	       lg_class_name(ev.cls), exe, pid, lg_verdict_name(v->verdict));
	if (v->verdict == LG_ALLOW)
		return ev.cls == LG_CLASS_DESTROY ?
			       sess_store_gate(s, pid, exe) :
			       0;
	return sess_act(s, &out, op, pid, exe, path, v);
}
