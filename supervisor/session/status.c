// SPDX-License-Identifier: MIT
/*
 * What the session tells other programs of itself, beside the audit log:
 * its state record (lg_session_write_state: STATE_DIR/sessions/ID.json,
 * which lgctl and whoever notices that lgrun died read) and its counters
 * in the metrics file (lg_session_write_metrics).
 */
#include "session_int.h"

void lg_session_write_metrics(struct lg_session *s)
{
	HOLD(s);
	struct lg_metric_inc inc[] = {
		{ "lgrun_events_total", "source=\"seccomp\"",
		  s->st.ev_seccomp },
		{ "lgrun_events_total", "source=\"shim\"", s->st.ev_shim },
		{ "lgrun_events_total", "source=\"proxy\"", s->st.ev_proxy },
		{ "lgrun_events_total", "source=\"bpf\"", s->st.ev_bpf },
		{ "lgrun_shim_dropped_events_total", "", s->shim.dropped },
		{ "lgrun_shim_refused_connections_total", "", s->shim.refused },
		{ "lgrun_shim_malformed_frames_total", "", s->shim.malformed },
		{ "lgrun_gated_calls_total", "", s->shim.gates },
		{ "lgrun_observed_calls_total", "proto=\"http\"",
		  s->st.observed_http },
		{ "lgrun_observed_calls_total", "proto=\"jsonrpc\"",
		  s->st.observed_jsonrpc },
	};
	struct lg_metric_inc flow[1 + LG_FLOW_NRULES];
	char labels[LG_FLOW_NRULES][64];
	struct lg_metric_inc all[sizeof(inc) / sizeof(inc[0]) +
				 sizeof(flow) / sizeof(flow[0])];
	struct lg_flow_stats fs;
	size_t n = 0;
	bool any = false;
	int r;

	/* lgrun_flow_calls_total, lgrun_flow_rejected_calls_total{reason} */
	lg_guard_flow_stats(s->guard, &fs);
	flow[0] = (struct lg_metric_inc){ "lgrun_flow_calls_total", "",
					  fs.calls };
	for (int i = 0; i < LG_FLOW_NRULES; i++) {
		snprintf(labels[i], sizeof(labels[i]), "reason=\"%s\"",
			 lg_flow_rule_reason((enum lg_flow_rule)i));
		flow[1 + i] = (struct lg_metric_inc){
			"lgrun_flow_rejected_calls_total", labels[i],
			fs.rejected[i]
		};
	}
	for (size_t i = 0; i < sizeof(inc) / sizeof(inc[0]); i++)
		all[n++] = inc[i];
	for (size_t i = 0; i < sizeof(flow) / sizeof(flow[0]); i++)
		if (flow[i].n)
			all[n++] = flow[i];
	for (size_t i = 0; i < n; i++)
		any |= all[i].n != 0;
	/* nothing to add: leave the file alone (a quiet session is cheap) */
	if (!s->info.metrics_path || !any)
		return;
	r = lg_metrics_add(s->info.metrics_path, all, n);
	if (r < 0)
		lg_warn("cannot update the metrics file %s: %s",
			s->info.metrics_path, strerror(-r));
}
void lg_session_write_state(struct lg_session *s, const char *state,
			    int exit_status, pid_t pid)
{
	HOLD(s);
	struct lg_json j = { 0 };
	char t[40];
	int r;

	lg_json_begin(&j);
	lg_json_str(&j, "session", s->info.id);
	lg_json_str(&j, "agent", s->info.agent);
	lg_json_str(&j, "state", state);
	lg_json_int(&j, "lgrun_pid", getpid());
	lg_json_int(&j, "pid", pid);
	/* for whoever notices that lgrun died: what to kill, where to say it */
	if (s->info.cgroup)
		lg_json_str(&j, "cgroup", s->info.cgroup);
	lg_json_str(&j, "audit", s->info.audit_path);
	lg_time_iso(s->info.start_real_ns, t, sizeof(t));
	lg_json_str(&j, "started", t);
	lg_time_iso(lg_real_ns(), t, sizeof(t));
	lg_json_str(&j, "updated", t);
	if (exit_status >= 0)
		lg_json_int(&j, "exit_status", exit_status);
	if (s->kill_pending) {
		lg_json_str(&j, "reason", s->trip.reason);
		lg_json_str(&j, "summary", s->trip_summary);
	}
	lg_json_int(&j, "attempts", (long long)s->st.attempts);
	lg_json_int(&j, "counted", (long long)s->st.counted);
	lg_json_int(&j, "denied", (long long)s->st.denied);
	lg_json_int(&j, "would_trip", (long long)s->st.would_trip);
	lg_json_int(&j, "tool_calls", (long long)s->st.tool_calls);
	lg_json_int(&j, "model_turns", (long long)s->st.turns);
	lg_json_int(&j, "tokens_in", (long long)s->st.tokens_in);
	lg_json_int(&j, "tokens_out", (long long)s->st.tokens_out);
	lg_json_int(&j, "max_tokens_stops", (long long)s->st.max_tokens_stops);
	lg_json_num(&j, "cost_usd", s->st.cost);
	lg_json_int(&j, "shim_connections", (long long)s->shim.accepted);
	lg_json_int(&j, "shim_refused", (long long)s->shim.refused);
	lg_json_int(&j, "shim_malformed", (long long)s->shim.malformed);
	lg_json_int(&j, "shim_dropped", (long long)s->shim.dropped);
	lg_json_int(&j, "gated_calls", (long long)s->shim.gates);
	lg_json_int(&j, "tls_channels", (long long)s->shim.tls);
	if (s->bpf_state[0])
		lg_json_str(&j, "bpf", s->bpf_state);
	r = lg_state_write_session(s->info.state_dir, s->info.id,
				   lg_json_end(&j));
	if (r < 0)
		lg_dbg("cannot write the session record: %s", strerror(-r));
	lg_json_free(&j);
}
