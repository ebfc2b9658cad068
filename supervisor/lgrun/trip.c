// SPDX-License-Identifier: MIT
/*
 * The kill: started on the thread that decided it (kill_now), finished on
 * the main thread (run_trip: the tree stopped, what escaped it killed, the
 * records, the store told), and said (print_trip). A trip answered
 * through the LLM proxy gives the agent a grace to show why (wake_main,
 * trip_grace).
 */
#include "run.h"

/* The proxy answered the agent after a trip: the main loop acts now. */
void wake_main(void *ctx)
{
	struct loop *l = ctx;
	uint64_t one = 1;

	atomic_store(&l->trip.grace_until, lg_mono_ms() + PROXY_TRIP_GRACE_MS);
	if (write(l->efd, &one, sizeof(one)) < 0)
		lg_dbg("cannot wake the main loop: %s", strerror(errno));
}

/*
 * Until when the tree waits for the agent to hear why (0: it does not): a
 * grace from the proxy's answer (wake_main), or, before that answer is
 * out, from the decision itself (the main loop may turn in between: an
 * observer event, the timer).
 */
uint64_t trip_grace(struct loop *l)
{
	uint64_t g = atomic_load(&l->trip.grace_until), d;

	if (g)
		return g;
	{
		struct lg_session_view v;

		lg_session_view(l->s, &v);
		d = v.kill_deferred_ms;
	}
	return d ? d + PROXY_TRIP_GRACE_MS : 0;
}

/*
 * A kill is pending: due now, unless the agent (or a refused nested
 * lgrun) is reading why; trip_source's deadline wakes the loop when that
 * is over.
 */
bool trip_due(struct loop *l)
{
	uint64_t g = trip_grace(l);
	uint64_t now = lg_mono_ms();
	bool linger = l->ctl.ctl && lg_control_lingering(l->ctl.ctl);

	if (linger && !l->trip.linger_until)
		l->trip.linger_until = now + NESTED_LINGER_MS;
	if (linger && now < l->trip.linger_until)
		return false;
	return !g || l->tree.main_exited || now >= g;
}

/*
 * When a pending kill is due: a nested lgrun's linger, the grace of a kill
 * decided on the proxy's path (event_loop acts when it wakes).
 */
static uint64_t trip_deadline(void *ctx)
{
	struct loop *l = ctx;
	uint64_t g = 0, linger = l->trip.linger_until;

	/* only while a deferred kill waits (a deny never arms it) */
	if (lg_session_kill_pending(l->s))
		g = trip_grace(l);
	return !g ? linger : !linger ? g : g < linger ? g : linger;
}

const struct lg_loop_source trip_source = { "trip", NULL, trip_deadline, NULL,
					    NULL };

/* The session decided to kill: stop the tree before the op is answered. */
void kill_now(void *ctx)
{
	struct loop *l = ctx;

	atomic_store(&l->trip.kill_started_ns, lg_mono_ns());
	lg_tree_kill_start(l->cg, l->child.pid);
}

int run_trip(struct loop *l)
{
	const char *method = "none";
	int survivors;
	double ms;
	/* Timed from the moment the kill began, in kill_now(). */
	uint64_t start = atomic_load(&l->trip.kill_started_ns);

	if (!start)
		start = lg_mono_ns();
	survivors = lg_tree_kill(l->cg, KILL_WAIT_MS, &method);
	ms = (double)(lg_mono_ns() - start) / 1e6;
	reap_children(l);
	{
		/* what left the cgroup but is still ours (lgrun's subreaping) */
		int left = 0, killed = lg_kill_leftovers(KILL_WAIT_MS, &left);

		l->trip.escaped += killed;
		survivors += left;
		reap_children(l);
	}
	lg_launch_restore_tty(&l->child);
	drain_output(l);
	restore_terminal(l);
	observer_finish(l);
	{
		/* what left the cgroup, as far as the observer saw it born */
		struct lg_observed live[512];
		size_t n = lg_observer_live(l->observer.obs, live, 512);

		for (size_t i = 0; i < n; i++) {
			int r = lg_kill_escaped(l->cg, live[i].pid,
						live[i].fork_ns);

			l->trip.escaped += r != 0;
			survivors += r > 0;
		}
	}
	l->trip.survivors = survivors;
	record_shim_stats(l);
	/* judged after the tree's end: nothing was refused, nothing killed */
	l->trip.marker_err = lg_session_record_trip(
		l->s, l->trip.after_end ? NULL : method, ms, survivors,
		l->trip.escaped, &l->trip.audit_err);
	store_tell_killed(l);
	lg_session_write_metrics(l->s);
	lg_session_write_state(l->s, "killed", -1, l->child.pid);
	return l->trip.marker_err ? LG_EXIT_UNRECORDED : LG_EXIT_TRIPPED;
}

/* Through lg_log: names from the tree are escaped for the terminal. */
void print_trip(const struct loop *l, const char *id, const char *summary,
		const char *audit, const char *state_dir)
{
	struct lg_session_view sv;
	const char *what;

	lg_session_view(l->s, &sv);
	/* a remote delete tripped at its answer: it ran, what comes next not */
	what = sv.trip_remote ?
		       "the last delete had already run on its server (lgrun judges a remote delete by its answer); what came after it was refused" :
	       sv.trip_left ?
		       "the files were emptied or cut before lgrun judged them (their content is kept)" :
		       "the operation was refused";
	lg_err("%s", summary);
	if (l->trip.after_end)
		lg_err("the command had already ended: nothing was refused or stopped; session '%s' is marked as tripped.",
		       id);
	else if (l->trip.survivors)
		lg_err("%s, but %d process(es) of session '%s' survived the kill.",
		       what, l->trip.survivors, id);
	else
		lg_err("%s, and every process of session '%s' was stopped%s.",
		       what, id,
		       l->trip.escaped ?
			       " (some had left its cgroup: killed by pid)" :
			       "");
	{
		struct lg_session_view v;

		lg_session_view(l->s, &v);
		if (v.quarantine && v.kept_files + v.kept_dirs) {
			char size[32];

			lg_human_bytes(v.kept_bytes, size, sizeof(size));
			lg_err("what it removed or changed before the trip is kept: %u file(s), %s%s; put it back with: lgctl restore %s",
			       v.kept_files, size,
			       v.kept_dirs ? " and the directories' metadata" :
					     "",
			       id);
			if (v.quarantine && v.turn)
				lg_err("the trip came in the agent's turn %u: put the project back as it was before it with: lgctl rewind %s --turn %u (lgctl report %s shows each turn)",
				       v.turn, id, v.turn, id);
		}
		if (v.not_kept)
			lg_err("%u removal(s) or change(s) of pre-existing data could NOT be kept (why: the warnings above, and the audit's not_kept records)",
			       v.not_kept);
	}
	if (l->trip.audit_err)
		lg_err("the audit record could NOT be written to %s (%s)",
		       audit, strerror(-l->trip.audit_err));
	else
		lg_err("audit record: %s", audit);
	if (l->trip.marker_err)
		lg_err("the session could NOT be blocked: %s/sessions/%s.killed cannot be written (%s). It can be started again; exit status %d.",
		       state_dir, id, strerror(-l->trip.marker_err),
		       LG_EXIT_UNRECORDED);
	else
		lg_err("the session stays blocked (session_killed_loop_guard) until an operator runs: lgctl reset %s",
		       id);
}
