// SPDX-License-Identifier: MIT
/*
 * What the session does with its guard's findings (sess_act): warnings,
 * refusals, the kill and what it names; the shared store's gate; and the
 * recent verdicts a trip record shows. Below the handlers that judge
 * (session.c, fs.c), above the records (audit.c).
 */
#include "session_int.h"

/*
 * A kill decided on this thread while it is set waits (defer_kill): the
 * proxy or the control socket first answers the agent with the reason.
 * Per thread: a kill decided meanwhile on another thread (the notify
 * thread's unlink) is not held back by it.
 */
static _Thread_local bool defer_here;

void lg_session_defer_kill(struct lg_session *s, bool defer)
{
	(void)s;
	defer_here = defer;
}

/* An op and its verdict, for the recent ops a trip record shows. */
void sess_remember(struct lg_session *s, uint64_t now, pid_t pid, enum lg_op op,
		   enum lg_class cls, enum lg_verdict v, const char *exe,
		   const char *target)
{
	struct recent *r = &s->recent[(s->recent_head + s->nrecent) % RECENT];

	if (s->nrecent == RECENT)
		s->recent_head = (s->recent_head + 1) % RECENT;
	else
		s->nrecent++;
	r->t_ms = now;
	r->op = op;
	r->cls = cls;
	r->verdict = v;
	r->pid = pid;
	lg_strtrunc(r->exe, sizeof(r->exe), exe ? exe : "");
	lg_strtrunc(r->target, sizeof(r->target), target);
}

/*
 * on_store_error = fail: while the shared store does not answer, what
 * would count is refused (the other hosts cannot be asked).
 */
int sess_store_gate(struct lg_session *s, pid_t pid, const char *exe)
{
	if (!s->store_up || s->store_up(s->store_ctx)) {
		s->store_refusing = false;
		return 0;
	}
	if (!s->store_refusing) {
		s->store_refusing = true;
		sess_warn(
			s, "store", "store_unavailable", pid, exe,
			"the shared store does not answer: destructive operations are refused until it does (on_store_error = fail)");
	}
	s->st.denied++;
	return s->cfg->deny_errno;
}

/* The count of warnings of this reason so far (NULL: no slot left). */
static unsigned *warn_count(struct lg_session *s, const char *reason)
{
	for (size_t i = 0; i < sizeof(s->warns) / sizeof(s->warns[0]); i++) {
		if (!s->warns[i].reason) {
			s->warns[i].reason = reason;
			return &s->warns[i].n;
		}
		if (strcmp(s->warns[i].reason, reason) == 0)
			return &s->warns[i].n;
	}
	return NULL;
}

/* "rm[12] <- bash[10] <- python3[9]" from /proc, the tree still alive. */
static void proc_lineage(pid_t pid, char *out, size_t size)
{
	size_t len = 0;
	pid_t self = getpid();

	out[0] = '\0';
	for (int depth = 0; pid > 1 && pid != self && depth < 16 && len < size;
	     depth++) {
		char path[64], comm[32] = "?", state;
		pid_t ppid;
		FILE *f;

		snprintf(path, sizeof(path), "/proc/%d/comm", pid);
		f = fopen(path, "re");
		if (f) {
			if (fgets(comm, sizeof(comm), f))
				comm[strcspn(comm, "\n")] = '\0';
			fclose(f);
		}
		len += (size_t)snprintf(out + len, size - len, "%s%s[%d]",
					depth ? " <- " : "", comm, pid);
		if (lg_proc_stat(pid, &state, &ppid) < 0)
			break;
		pid = ppid;
	}
}

/* Acts on the guard's findings; returns the errno for the syscall or 0. */
int sess_act(struct lg_session *s, const struct lg_findings *out, enum lg_op op,
	     pid_t pid, const char *exe, const char *target,
	     struct lg_session_verdict *v)
{
	int err = 0;

	for (size_t i = 0; i < out->n; i++) {
		const struct lg_finding *f = &out->f[i];

		if (f->action == LG_WARN) {
			unsigned *n = warn_count(s, f->reason);

			/* a warning repeated without end is noise: capped */
			if (n && ++*n > MAX_WARN_RECORDS) {
				if (*n == MAX_WARN_RECORDS + 1)
					lg_warn("further %s warnings are not reported in this session (see the session's end record)",
						f->reason);
				s->st.warnings_suppressed++;
				continue;
			}
			lg_warn("warning: %s", f->summary);
			sess_audit_finding(s, f, "warn", op, pid, exe, target,
					   false);
			continue;
		}
		if (s->cfg->observe) {
			if (s->st.would_trip++ < MAX_WOULD_TRIP_RECORDS)
				sess_audit_finding(s, f, "would_trip", op, pid,
						   exe, target, false);
			lg_info("observe: would %s: %s",
				lg_verdict_name(f->action), f->summary);
			continue;
		}
		err = s->cfg->deny_errno;
		if (v && !v->why[0])
			snprintf(v->why, sizeof(v->why), "%s", f->summary);
		if (f->action == LG_DENY) {
			if (op == LG_OP_NONE) { /* model or tool-call path */
				s->model_blocked = true;
				snprintf(s->deny_summary,
					 sizeof(s->deny_summary), "%s",
					 f->summary);
			}
			lg_warn("refused: %s", f->summary);
			sess_audit_finding(s, f, "deny", op, pid, exe, target,
					   true);
			continue;
		}
		if (!s->kill_pending) {
			s->kill_pending = true;
			s->blocked = true;
			if (defer_here)
				s->kill_deferred_ms = lg_mono_ms();
			else
				s->kill_start = true;
			s->trip = *f;
			s->trip_op = op;
			s->trip_pid = pid;
			proc_lineage(pid, s->trip_lineage,
				     sizeof(s->trip_lineage));
			snprintf(s->trip_exe, sizeof(s->trip_exe), "%s",
				 exe ? exe : "");
			snprintf(s->trip_target, sizeof(s->trip_target), "%s",
				 target ? target : "");
			snprintf(s->trip_summary, sizeof(s->trip_summary),
				 "session_killed: %s", f->summary);
		}
	}
	if (err)
		s->st.denied++;
	return err;
}
