// SPDX-License-Identifier: MIT
#include "run.h"

/* The proxy answered the agent after a trip: the main loop acts now. */
void wake_main(void *ctx)
{
	struct loop *l = ctx;
	uint64_t one = 1;

	atomic_store(&l->grace_until, lg_mono_ms() + PROXY_TRIP_GRACE_MS);
	if (write(l->efd, &one, sizeof(one)) < 0)
		lg_dbg("cannot wake the main loop: %s", strerror(errno));
}

/* The session decided to kill: stop the tree before the op is answered. */
void kill_now(void *ctx)
{
	struct loop *l = ctx;

	atomic_store(&l->kill_started_ns, lg_mono_ns());
	lg_tree_kill_start(l->cg, l->child.pid);
}

void record_shim_stats(struct loop *l)
{
	struct lg_control_stats st;

	if (!l->ctl)
		return;
	lg_control_stats(l->ctl, &st);
	lg_session_counters(
		l->s, &(struct lg_counters){ .shim = &(struct lg_shim_stats){
						     .accepted = st.accepted,
						     .refused = st.refused,
						     .malformed = st.malformed,
						     .dropped = st.dropped,
						     .gates = st.gates,
						     .tls = st.tls } });
	if (st.dropped) {
		char msg[160];

		/* Nothing is lost silently: the gap itself is on record. */
		snprintf(
			msg, sizeof(msg),
			"warning: the shim dropped %llu event(s): its socket was full",
			(unsigned long long)st.dropped);
		lg_session_audit_simple(l->s, "warn", msg);
	}
}

int run_trip(struct loop *l)
{
	const char *method = "none";
	int survivors;
	double ms;
	struct lg_session_view v;

	/* Timed from the moment the kill began, in kill_now(). */
	uint64_t start = atomic_load(&l->kill_started_ns);

	if (!start)
		start = lg_mono_ns();
	survivors = lg_tree_kill(l->cg, KILL_WAIT_MS, &method);
	ms = (double)(lg_mono_ns() - start) / 1e6;
	reap_children(l);
	{
		/* what left the cgroup but is still ours (lgrun's subreaping) */
		int left = 0, killed = lg_kill_leftovers(KILL_WAIT_MS, &left);

		l->escaped += killed;
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
		size_t n = lg_observer_live(l->obs, live, 512);

		for (size_t i = 0; i < n; i++) {
			int r = lg_kill_escaped(l->cg, live[i].pid,
						live[i].fork_ns);

			l->escaped += r != 0;
			survivors += r > 0;
		}
	}
	l->survivors = survivors;
	record_shim_stats(l);
	l->marker_err = lg_session_record_trip(l->s, method, ms, survivors,
					       l->escaped, &l->audit_err);
	lg_session_view(l->s, &v);
	if (l->store && !v.peer_killed) {
		/* every supervisor of the session stops, and stays blocked */
		struct lg_json j = { 0 };
		char t[40];

		lg_json_begin(&j);
		lg_json_str(&j, "session", l->id);
		lg_json_str(&j, "reason", v.trip_reason);
		lg_json_str(&j, "summary", v.trip_summary);
		lg_time_iso(lg_real_ns(), t, sizeof(t));
		lg_json_str(&j, "time", t);
		if (lg_store_mark_killed(l->store, lg_json_end(&j),
					 v.trip_summary) < 0)
			lg_err("cannot mark the session killed in the shared store: the other hosts were not told");
		lg_json_free(&j);
	}
	lg_session_write_metrics(l->s);
	lg_session_write_state(l->s, "killed", -1, l->child.pid);
	return l->marker_err ? LG_EXIT_UNRECORDED : LG_EXIT_TRIPPED;
}

/* Through lg_log: names from the tree are escaped for the terminal. */
void print_trip(const struct loop *l, const char *id, const char *summary,
		const char *audit, const char *state_dir)
{
	lg_err("%s", summary);
	if (l->survivors)
		lg_err("the operation was refused, but %d process(es) of session '%s' survived the kill.",
		       l->survivors, id);
	else
		lg_err("the operation was refused and every process of session '%s' was stopped%s.",
		       id,
		       l->escaped ?
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
		}
		if (v.not_kept)
			lg_err("%u removal(s) or change(s) of pre-existing data could NOT be kept (why: the warnings above, and the audit's not_kept records)",
			       v.not_kept);
	}
	if (l->audit_err)
		lg_err("the audit record could NOT be written to %s (%s)",
		       audit, strerror(-l->audit_err));
	else
		lg_err("audit record: %s", audit);
	if (l->marker_err)
		lg_err("the session could NOT be blocked: %s/sessions/%s.killed cannot be written (%s). It can be started again; exit status %d.",
		       state_dir, id, strerror(-l->marker_err),
		       LG_EXIT_UNRECORDED);
	else
		lg_err("the session stays blocked (session_killed_loop_guard) until an operator runs: lgctl reset %s",
		       id);
}
