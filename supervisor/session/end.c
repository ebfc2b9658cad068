// SPDX-License-Identifier: MIT
/*
 * The session's end record (lg_session_audit_end) and its groups of
 * fields: what was kept, the notes to the model, the agent's work, the
 * agents' calls, the network, the eBPF observer; forced to disk when the
 * session did something worth it. Above audit.c, whose record head and
 * Falco's fields it uses.
 */
#include "session_int.h"

/* The notes the model was given (issue 28), for the end record. */
static void steer_fields(const struct lg_session *s, struct lg_json *j)
{
	lg_json_int(j, "steers", (long long)s->st.steers);
	if (s->st.responses_cut)
		lg_json_int(j, "responses_cut", (long long)s->st.responses_cut);
	if (s->st.steers_dropped)
		lg_json_int(j, "steers_dropped",
			    (long long)s->st.steers_dropped);
}
/*
 * An agent CLI that ran without one model turn through lgrun: if it did
 * talk to its model, that traffic went around the proxy. Said, never
 * guessed at: "model_traffic": "not seen" in the end record.
 */
static bool model_unseen(const struct lg_session *s)
{
	static const char *const clis[] = { "claude", "codex", "gemini" };
	const char *a = s->info.agent ? s->info.agent : "";

	if (!s->cfg->llm_proxy || s->st.turns)
		return false;
	for (size_t i = 0; i < sizeof(clis) / sizeof(clis[0]); i++)
		if (strcmp(a, clis[i]) == 0)
			return true;
	return false;
}
/* What the agent did: tool calls, model turns, what was kept aside. */
static void work_fields(const struct lg_session *s, struct lg_json *j)
{
	lg_json_int(j, "tool_calls", (long long)s->st.tool_calls);
	if (s->st.observed_http + s->st.observed_jsonrpc)
		lg_json_int(j, "observed_calls",
			    (long long)(s->st.observed_http +
					s->st.observed_jsonrpc));
	lg_json_int(j, "model_turns", (long long)s->st.turns);
	if (s->st.recoverable)
		lg_json_int(j, "recoverable", (long long)s->st.recoverable);
	if (s->st.moved)
		lg_json_int(j, "moved", (long long)s->st.moved);
	if (s->st.left_empty)
		lg_json_int(j, "left_empty", (long long)s->st.left_empty);
	if (s->st.warnings_suppressed)
		lg_json_int(j, "warnings_suppressed",
			    (long long)s->st.warnings_suppressed);
}

/* The agents' calls to each other, when there were any. */
static void agent_call_fields(const struct lg_session *s, struct lg_json *j)
{
	struct lg_flow_stats fs;
	uint64_t rej = 0;

	lg_guard_flow_stats(s->guard, &fs);
	for (int i = 0; i < LG_FLOW_NRULES; i++)
		if (i != LG_FLOW_R_NO_WORK)
			rej += fs.rejected[i];
	if (fs.calls || rej) {
		lg_json_int(j, "agent_calls", (long long)fs.calls);
		lg_json_int(j, "agent_calls_rejected", (long long)rej);
		lg_json_int(j, "longest_chain", fs.longest);
	}
}

/* The network: model traffic unseen, the egress proxy's connections. */
static void network_fields(const struct lg_session *s, struct lg_json *j)
{
	if (model_unseen(s))
		lg_json_str(j, "model_traffic", "not seen");
	if (s->cfg->sealed) /* the egress proxy was the only way out */
		lg_json_str(j, "network", "proxy-only");
	if (s->egress_conns) {
		lg_json_int(j, "egress_connections",
			    (long long)s->egress_conns);
		lg_json_int(j, "egress_hosts",
			    (long long)(s->n_egress + s->egress_hosts_dropped));
		lg_json_int(j, "egress_bytes_up", (long long)s->egress_up);
		lg_json_int(j, "egress_bytes_down", (long long)s->egress_down);
		if (s->egress_failed)
			lg_json_int(j, "egress_failed",
				    (long long)s->egress_failed);
	}
	if (s->refused_outsiders)
		lg_json_int(j, "refused_outsiders",
			    (long long)s->refused_outsiders);
}

/* What the BPF observer saw, when it ran. */
static void bpf_fields(const struct lg_session *s, struct lg_json *j)
{
	if (s->bpf_state[0])
		lg_json_str(j, "bpf", s->bpf_state);
	if (!s->bpf_counted)
		return;
	lg_json_int(j, "bpf_drops", (long long)s->bpf_drops);
	if (s->bpf_tracing[0])
		lg_json_str(j, "syscall_tracing", s->bpf_tracing);
	if (strcmp(s->bpf_tracing, "off") != 0)
		lg_json_int(j, "syscalls", (long long)s->bpf_syscalls);
	lg_json_int(j, "bytes_written", (long long)s->bpf_bytes);
	lg_json_int(j, "shim_bypass", (long long)s->bpf_bypass);
	if (s->bpf_direct)
		lg_json_int(j, "direct_connections", (long long)s->bpf_direct);
}

/*
 * Forced to disk when the session did something worth the record (a
 * destructive attempt, a tool call, a model turn, a warning, an end
 * other than completion); a short command that did none of it does not
 * wait a journal commit (0.3-1 ms on ext4) at its exit.
 */
static bool end_worth_sync(const struct lg_session *s, const char *end)
{
	return s->st.attempts || s->st.tool_calls || s->st.turns ||
	       s->st.would_trip || s->st.warnings_suppressed ||
	       s->kill_pending || strcmp(end, "completed") != 0;
}

void lg_session_audit_end(struct lg_session *s, const char *end,
			  int exit_status, const char *summary)
{
	HOLD(s);
	struct lg_json j = { 0 };
	bool fine = strcmp(end, "completed") == 0 ||
		    strcmp(end, "cancelled") == 0;
	int r;

	lg_record_flush(s->rec); /* the recording is whole before the end */
	lg_quarantine_flush(s->quarantine); /* and the quarantine's index */
	lg_quarantine_end_run(s->quarantine); /* its run's end, for restore */
	if (model_unseen(s))
		lg_warn("no model turn of %s went through lgrun in this session: if it talked to its model, that traffic went around lgrun (a base URL of its own, a CA store of its own, a connection that ignores the proxy variables%s); [llm] mode = both and -v tell more",
			s->info.agent,
			s->bpf_direct ? ": see the direct connections above" :
					"");
	sess_json_head(s, &j, "session_end");
	lg_json_str(&j, "end", end);
	lg_json_int(&j, "exit_status", exit_status);
	lg_json_str(&j, "summary", summary);
	lg_json_num(&j, "duration_s",
		    (double)(lg_mono_ms() - s->info.start_mono_ms) / 1000.0);
	lg_json_int(&j, "destructive_attempts", (long long)s->st.attempts);
	sess_kept_fields(s, &j);
	steer_fields(s, &j);
	work_fields(s, &j);
	agent_call_fields(s, &j);
	network_fields(s, &j);
	bpf_fields(s, &j);
	sess_falco_fields(s, &j, "session_end",
			  &(struct lg_falco){ .priority =
						      fine ? "Informational" :
							     "Warning",
					      .output = summary });
	r = lg_audit_append(s->info.audit_path, lg_json_end(&j),
			    end_worth_sync(s, end));
	if (r < 0)
		lg_err("cannot write the audit log %s: %s", s->info.audit_path,
		       strerror(-r));
	lg_json_free(&j);
}
