// SPDX-License-Identifier: MIT
/*
 * The session's audit records: the head every record begins with
 * (sess_json_head) and Falco's fields (sess_falco_fields), findings,
 * warnings, steers, what the quarantine holds, egress flows, refused
 * outsiders, the observer's and the shim's counters, and the trip record
 * (lg_session_record_trip). The end record is end.c's; the state file and
 * the metrics are status.c's.
 */
#include <arpa/inet.h>
#include <netinet/in.h>

#include "lib/cleanup.h"
#include "lib/tcp.h"
#include "session_int.h"

static void json_recent(struct lg_session *s, struct lg_json *j)
{
	struct lg_json arr = { 0 };

	lg_json_append(&arr, "[", 1);
	for (size_t i = 0; i < s->nrecent; i++) {
		struct recent *r = &s->recent[(s->recent_head + i) % RECENT];
		struct lg_json e = { 0 };

		lg_json_begin(&e);
		lg_json_num(&e, "t",
			    (double)(r->t_ms - s->info.start_mono_ms) / 1000.0);
		lg_json_str(&e, "op", lg_op_name(r->op));
		lg_json_str(&e, "target", r->target);
		if (r->op != LG_OP_AGENT_CALL)
			lg_json_str(&e, "class", lg_class_name(r->cls));
		lg_json_str(&e, "verdict", lg_verdict_name(r->verdict));
		lg_json_int(&e, "pid", r->pid);
		lg_json_str(&e, "exe", r->exe);
		if (i)
			lg_json_append(&arr, ",", 1);
		lg_json_end(&e);
		if (e.buf)
			lg_json_append(&arr, e.buf, e.len);
		lg_json_free(&e);
	}
	lg_json_append(&arr, "]", 1);
	lg_json_raw(j, "recent", arr.buf ? arr.buf : "[]");
	lg_json_free(&arr);
}
static void json_head_id(struct lg_session *s, struct lg_json *j,
			 const char *event, char *id, size_t size)
{
	char n[16];

	snprintf(n, sizeof(n), "%u",
		 __atomic_add_fetch(&s->audit_seq, 1, __ATOMIC_RELAXED));
	lg_audit_begin(j, lg_real_ns(), s->info.id, n, id, size);
	lg_json_str(j, "agent", s->info.agent);
	/* the agent's turn it happened in (issue 40): before the event, so
	 * that what follows "event" reads as it did */
	if (s->turns.turn)
		lg_json_int(j, "turn", s->turns.turn);
	lg_json_str(j, "event", event);
}
void sess_json_head(struct lg_session *s, struct lg_json *j, const char *event)
{
	json_head_id(s, j, event, NULL, 0);
}
/* What the quarantine holds of the session, for its trip and end records. */
/*
 * A remote delete's record (issue 38): the system it ran on, whether it
 * ran (judged at its answer) or was refused (at its exec), and that
 * nothing of it was kept; the session's remote targets so far.
 */
#define DEVICE_NOT_KEPT \
	"lgrun cannot keep a block device's content: nothing of it was kept"
static void remote_fields(const struct lg_session *s, struct lg_json *j,
			  enum lg_op op)
{
	if (op == LG_OP_DEVICE_WRITE) { /* issue 39: what it held, not kept */
		lg_json_str(j, "holds", s->device_holds);
		lg_json_bool(j, "kept", false);
		lg_json_str(j, "note", DEVICE_NOT_KEPT);
		return;
	}
	if (op != LG_OP_REMOTE_DELETE)
		return;
	lg_json_str(j, "system", s->remote_system);
	lg_json_bool(j, "ran", s->remote_ran);
	lg_json_bool(j, "kept", false);
	lg_json_int(j, "remote_deletes", (long long)s->st.remote_deletes);
}

void sess_kept_fields(const struct lg_session *s, struct lg_json *j)
{
	unsigned files, dirs;
	uint64_t bytes, held, copied;

	/* deleted off this host: counted, never kept */
	if (s->st.remote_deletes)
		lg_json_int(j, "remote_deletes",
			    (long long)s->st.remote_deletes);
	/* block devices written over: counted, never kept */
	if (s->st.device_writes)
		lg_json_int(j, "device_writes", (long long)s->st.device_writes);
	if (!s->quarantine)
		return;
	lg_quarantine_totals(s->quarantine, &files, &dirs, &bytes);
	lg_json_int(j, "kept_files", files);
	lg_json_int(j, "kept_dirs", dirs);
	lg_quarantine_disk(s->quarantine, &held, &copied);
	/*
	 * kept_bytes: the kept files' sizes (what a restore puts back);
	 * held_bytes: the disk blocks they hold; copied_bytes: of those,
	 * what copies took anew (max_bytes's measure; the rest are links)
	 */
	lg_json_int(j, "kept_bytes", (long long)bytes);
	lg_json_int(j, "held_bytes", (long long)held);
	lg_json_int(j, "copied_bytes", (long long)copied);
	lg_json_int(j, "not_kept", s->not_kept);
	/* what no rule counts, or the undo's records, that could not be kept */
	if (s->not_kept_quiet)
		lg_json_int(j, "not_kept_uncounted", s->not_kept_quiet);
	lg_json_int(j, "kept_writes", (long long)s->st.kept_writes);
}
static const char *priority_of(enum lg_verdict v, bool observe)
{
	if (observe)
		return "Notice";
	switch (v) {
	case LG_KILL:
		return "Critical";
	case LG_DENY:
		return "Error";
	case LG_WARN:
		return "Warning";
	default:
		return "Informational";
	}
}
/* Falco's fields (audit.h) of one of the session's records. */
void sess_falco_fields(const struct lg_session *s, struct lg_json *j,
		       const char *event, const struct lg_falco *f)
{
	lg_audit_falco(j, s->info.id, s->info.agent, event, f);
}
void sess_audit_device(struct lg_session *s, pid_t pid, const char *exe,
		       const char *target)
{
	struct lg_json j = { 0 };
	char line[LG_SUMMARY_MAX + 128];

	snprintf(line, sizeof(line),
		 "warning: %s wrote over %s, which held %s: " DEVICE_NOT_KEPT,
		 exe, target, s->device_holds);
	lg_warn("%s", line);
	sess_json_head(s, &j, "warn");
	lg_json_str(&j, "rule", "quarantine");
	lg_json_str(&j, "reason", "not_kept");
	lg_json_str(&j, "action", "warn");
	lg_json_str(&j, "summary", line);
	lg_json_str(&j, "op", lg_op_name(LG_OP_DEVICE_WRITE));
	lg_json_str(&j, "target", target);
	lg_json_int(&j, "pid", pid);
	lg_json_str(&j, "exe", exe);
	remote_fields(s, &j, LG_OP_DEVICE_WRITE);
	sess_falco_fields(
		s, &j, "warn",
		&(struct lg_falco){ .priority = "Warning",
				    .output = line,
				    .rule = "quarantine",
				    .op = lg_op_name(LG_OP_DEVICE_WRITE),
				    .target = target,
				    .exe = exe,
				    .pid = pid });
	sess_audit(s, &j, false);
	lg_json_free(&j);
}
void sess_audit(struct lg_session *s, struct lg_json *j, bool sync)
{
	int r = lg_audit_append(s->info.audit_path, lg_json_end(j), sync);

	if (r < 0)
		lg_err("cannot write the audit log %s: %s", s->info.audit_path,
		       strerror(-r));
}
/*
 * The quarantine's record gets its id when the first entry is tried (the
 * entries name it), and is written once one is really kept: it never says
 * "kept" of a session that kept nothing.
 */
void sess_reserve_quarantine_id(struct lg_session *s)
{
	s->kept_audit_n =
		__atomic_add_fetch(&s->audit_seq, 1, __ATOMIC_RELAXED);
	snprintf(s->kept_audit_id, sizeof(s->kept_audit_id), "%s#%u",
		 s->info.id, s->kept_audit_n);
}
void sess_audit_quarantine(struct lg_session *s)
{
	struct lg_json j = { 0 };
	char sum[LG_SUMMARY_MAX], n[16];

	snprintf(n, sizeof(n), "%u", s->kept_audit_n);
	lg_audit_begin(&j, lg_real_ns(), s->info.id, n, NULL, 0);
	lg_json_str(&j, "agent", s->info.agent);
	lg_json_str(&j, "event", "quarantine");
	snprintf(
		sum, sizeof(sum),
		"the session changes or removes pre-existing data: lgrun keeps what was there in the quarantine (see it: lgctl quarantine list; put it back: lgctl restore %s)",
		s->info.id);
	lg_json_str(&j, "summary", sum);
	lg_json_str(&j, "index", lg_quarantine_index(s->quarantine));
	sess_falco_fields(s, &j, "quarantine",
			  &(struct lg_falco){ .priority = "Informational",
					      .output = sum });
	sess_audit(s, &j, false);
	lg_json_free(&j);
}
int sess_on_egress(struct lg_session *s, struct lg_event *ev,
		   struct lg_session_verdict *v)
{
	const struct lg_egress_flow *f = ev->egress;
	struct egress_host *h = NULL;

	(void)v;
	if (!f)
		return 0;

	s->egress_conns++;
	s->egress_up += f->up;
	s->egress_down += f->down;
	if (f->error)
		s->egress_failed++;
	for (size_t i = 0; i < s->n_egress && !h; i++)
		if (s->egress[i].port == f->port &&
		    strcmp(s->egress[i].host, f->host) == 0)
			h = &s->egress[i];
	if (h) {
		h->conns++;
		goto warn;
	}
	if (s->n_egress >= MAX_EGRESS_HOSTS) {
		s->egress_hosts_dropped++;
		return 0;
	}
	if (!s->egress) {
		s->egress = calloc(MAX_EGRESS_HOSTS, sizeof(*s->egress));
		if (!s->egress)
			return 0;
	}
	h = &s->egress[s->n_egress++];
	snprintf(h->host, sizeof(h->host), "%s", f->host);
	h->port = f->port;
	h->conns = 1;
	{
		/* a new destination: host and port only, never a URL */
		struct lg_json j = { 0 };
		char exe[64];

		sess_json_head(s, &j, "egress");
		lg_json_str(&j, "host", f->host);
		lg_json_int(&j, "port", f->port);
		lg_json_str(&j, "via",
			    f->decrypted		 ? "decrypt" :
			    f->kind == LG_EGRESS_CONNECT ? "connect" :
							   "http");
		if (f->pid > 0) {
			lg_prov_exe_name(f->pid, exe, sizeof(exe));
			lg_json_int(&j, "pid", f->pid);
			lg_json_str(&j, "exe", exe);
		}
		if (f->error)
			lg_json_str(&j, "error", f->error);
		{
			char out[320];

			snprintf(out, sizeof(out),
				 "egress: a new destination %s:%u", f->host,
				 f->port);
			sess_falco_fields(
				s, &j, "egress",
				&(struct lg_falco){ .priority = "Informational",
						    .output = out,
						    .exe = f->pid > 0 ? exe :
									NULL,
						    .pid = f->pid });
		}
		lg_json_end(&j);
		if (lg_audit_append(s->info.audit_path, j.buf, false) < 0)
			lg_dbg("cannot write the audit log %s",
			       s->info.audit_path);
		lg_json_free(&j);
	}
	lg_dbg("egress: %s:%u%s%s", f->host, f->port, f->error ? ": " : "",
	       f->error ? f->error : "");
warn:
	if (f->decrypted && f->error && !h->warned) {
		/* the agent's own traffic failed because of us: say so */
		h->warned = true;
		lg_warn("egress proxy: a decrypted connection to %s failed: %s (a client with a CA store of its own cannot trust lgrun's session CA; [llm] mode = base_url leaves its TLS alone)",
			f->host, f->error);
	}
	return 0;
}
/*
 * The owner of the peer's end of a loopback TCP connection (lg_tcp_peer);
 * -1 when not found (gone already, or another network namespace).
 */
static long peer_uid(const struct sockaddr_in *peer)
{
	unsigned long uid, ino;

	return lg_tcp_peer(peer, &uid, &ino) == 0 ? (long)uid : -1;
}

#define REFUSED_AUDITED 20 /* then counted only: a flood fills no disk */

int sess_on_refused(struct lg_session *s, struct lg_event *ev,
		    struct lg_session_verdict *v)
{
	const char *proxy = ev->notice->rule, *why = ev->notice->summary;
	const struct sockaddr_in *peer = ev->notice->peer;
	struct lg_json j = { 0 };
	char line[LG_SUMMARY_MAX], addr[INET_ADDRSTRLEN] = "?", who[32] = "";
	long uid = -1;
	uint64_t n = ++s->refused_outsiders;

	(void)v;
	if (n > REFUSED_AUDITED)
		return 0;
	if (peer) {
		inet_ntop(AF_INET, &peer->sin_addr, addr, sizeof(addr));
		uid = peer_uid(peer);
	}
	if (uid >= 0)
		snprintf(who, sizeof(who), ", uid %ld", uid);
	snprintf(
		line, sizeof(line),
		"the %s proxy refused a connection from outside the session's tree (%s:%u%s): %s%s",
		proxy, addr, peer ? ntohs(peer->sin_port) : 0, who, why,
		n == REFUSED_AUDITED ? " (further refusals are counted only)" :
				       "");
	lg_warn("%s", line);
	sess_json_head(s, &j, "refused");
	lg_json_str(&j, "proxy", proxy);
	lg_json_str(&j, "peer", addr);
	lg_json_int(&j, "peer_port", peer ? ntohs(peer->sin_port) : 0);
	if (uid >= 0)
		lg_json_int(&j, "uid", uid);
	lg_json_str(&j, "summary", line);
	sess_falco_fields(s, &j, "refused",
			  &(struct lg_falco){ .priority = "Warning",
					      .output = line });
	sess_audit(s, &j, false);
	lg_json_free(&j);
	return 0;
}
void sess_warn(struct lg_session *s, const char *rule, const char *reason,
	       pid_t pid, const char *exe, const char *summary)
{
	struct lg_json j = { 0 };
	char line[LG_SUMMARY_MAX + 32];

	snprintf(line, sizeof(line), "warning: %s", summary);
	lg_warn("%s", line);
	sess_json_head(s, &j, "warn");
	lg_json_str(&j, "rule", rule);
	lg_json_str(&j, "reason", reason);
	lg_json_str(&j, "action", "warn");
	lg_json_str(&j, "summary", line);
	lg_json_int(&j, "pid", pid);
	lg_json_str(&j, "exe", exe);
	sess_falco_fields(s, &j, "warn",
			  &(struct lg_falco){ .priority = "Warning",
					      .output = line,
					      .rule = rule,
					      .exe = exe,
					      .pid = pid });
	sess_audit(s, &j, false);
	lg_json_free(&j);
}
void sess_audit_steer(struct lg_session *s, const char *rule,
		      const char *reason, const char *digest, const char *uri,
		      uint64_t conv, size_t at, bool observe, const char *text)
{
	struct lg_json j = { 0 };
	char sum[LG_SUMMARY_MAX], cv[LG_DIGEST_HEX];

	snprintf(
		sum, sizeof(sum),
		"%s a note to the model (%s, %s): it is told what lgrun saw and what happens next",
		observe ? "observe: would have added" : "added", rule, reason);
	lg_digest_hex(conv, cv);
	sess_json_head(s, &j, "steer");
	lg_json_str(&j, "rule", rule);
	lg_json_str(&j, "reason", reason);
	lg_json_str(&j, "text_digest", digest);
	lg_json_str(&j, "request", uri ? uri : "");
	lg_json_str(&j, "conversation", cv);
	lg_json_int(&j, "at", (long long)at);
	lg_json_bool(&j, "observe", observe);
	lg_json_str(&j, "text", text);
	lg_json_str(&j, "summary", sum);
	sess_falco_fields(s, &j, "steer",
			  &(struct lg_falco){ .priority = "Notice",
					      .output = sum,
					      .rule = rule });
	sess_audit(s, &j, false);
	lg_json_free(&j);
}
int sess_on_warn(struct lg_session *s, struct lg_event *ev,
		 struct lg_session_verdict *v)
{
	const struct lg_notice *n = ev->notice;

	(void)v;
	sess_warn(s, n->rule, n->reason, n->pid, n->exe, n->summary);
	return 0;
}
static void bpf_stats(struct lg_session *s, const struct lg_bpf_stats *st)
{
	uint64_t drops = st->drops;

	s->bpf_counted = true;
	s->bpf_direct = st->direct;
	s->bpf_drops = drops;
	s->bpf_syscalls = st->syscalls;
	s->bpf_bytes = st->bytes_written;
	s->bpf_bypass = st->bypass_warnings;
	snprintf(s->bpf_tracing, sizeof(s->bpf_tracing), "%s",
		 st->syscall_tracing ? st->syscall_tracing : "");
	if (drops) {
		char msg[256];

		snprintf(
			msg, sizeof(msg),
			"the eBPF observer dropped %llu events (its ring buffer was full): raise [bpf] ring",
			(unsigned long long)drops);
		sess_warn(s, "bpf", "bpf_drops", 0, "lgrun", msg);
	}
}
int sess_on_counters(struct lg_session *s, struct lg_event *ev,
		     struct lg_session_verdict *v)
{
	const struct lg_counters *c = ev->counters;

	(void)v;
	if (c->bpf_state)
		snprintf(s->bpf_state, sizeof(s->bpf_state), "%s",
			 c->bpf_state);
	if (c->bpf)
		bpf_stats(s, c->bpf);
	if (c->shim)
		s->shim = *c->shim;
	return 0;
}
void lg_session_audit_simple(struct lg_session *s, const char *event,
			     const char *summary)
{
	HOLD(s);
	sess_audit_simple(s, event, summary);
}
void sess_audit_simple(struct lg_session *s, const char *event,
		       const char *summary)
{
	struct lg_json j = { 0 };

	sess_json_head(s, &j, event);
	if (summary)
		lg_json_str(&j, "summary", summary);
	sess_falco_fields(s, &j, event,
			  &(struct lg_falco){ .priority = "Informational",
					      .output = summary });
	sess_audit(s, &j, false);
	lg_json_free(&j);
}
static const char *prefix_for(enum lg_verdict v, bool observe)
{
	if (observe)
		return "would_kill";
	switch (v) {
	case LG_KILL:
		return "session_killed";
	case LG_DENY:
		return "op_denied";
	default:
		return "warning";
	}
}
void sess_audit_finding(struct lg_session *s, const struct lg_finding *f,
			const char *event, enum lg_op op, pid_t pid,
			const char *exe, const char *target, bool sync)
{
	struct lg_json j = { 0 };
	char summary[LG_SUMMARY_MAX + 32];

	snprintf(summary, sizeof(summary), "%s: %s",
		 prefix_for(f->action, s->cfg->observe && f->action > LG_WARN),
		 f->summary);
	sess_json_head(s, &j, event);
	lg_json_str(&j, "rule", f->rule);
	lg_json_str(&j, "reason", f->reason);
	lg_json_str(&j, "action", lg_verdict_name(f->action));
	lg_json_bool(&j, "observe", s->cfg->observe);
	lg_json_str(&j, "summary", summary);
	if (s->cut_text && strcmp(f->rule, "output_repeat") == 0)
		lg_json_bool(&j, "cut", true); /* the response ends here */
	if (op != LG_OP_NONE) {
		lg_json_str(&j, "op", lg_op_name(op));
		lg_json_str(&j, "target", target);
		lg_json_int(&j, "pid", pid);
		lg_json_str(&j, "exe", exe);
		remote_fields(s, &j, op);
	}
	sess_falco_fields(
		s, &j, event,
		&(struct lg_falco){
			.priority = priority_of(f->action,
						s->cfg->observe &&
							f->action > LG_WARN),
			.output = summary,
			.rule = f->rule,
			.op = op != LG_OP_NONE ? lg_op_name(op) : NULL,
			.target = op != LG_OP_NONE ? target : NULL,
			.exe = exe,
			.pid = op != LG_OP_NONE ? pid : 0 });
	json_recent(s, &j);
	sess_audit(s, &j, sync);
	lg_json_free(&j);
}
int lg_session_record_trip(struct lg_session *s, const char *method,
			   double kill_ms, int survivors, unsigned escaped,
			   int *audit_err)
{
	HOLD(s);
	struct lg_json j = { 0 };
	const struct lg_finding *f = &s->trip;
	int r, marker;

	/* what was kept is in the index before the trip is on record */
	lg_quarantine_flush(s->quarantine);
	sess_json_head(s, &j, "trip");
	lg_json_str(&j, "rule", f->rule);
	lg_json_str(&j, "reason", f->reason);
	lg_json_str(&j, "action", lg_verdict_name(f->action));
	lg_json_bool(&j, "observe", false);
	lg_json_str(&j, "summary", s->trip_summary);
	if (s->trip_op != LG_OP_NONE) {
		lg_json_str(&j, "op", lg_op_name(s->trip_op));
		lg_json_str(&j, "target", s->trip_target);
		lg_json_int(&j, "pid", s->trip_pid);
		lg_json_str(&j, "exe", s->trip_exe);
		remote_fields(s, &j, s->trip_op);
		if (method)
			lg_json_str(&j, "errno",
				    lg_errno_name(s->cfg->deny_errno));
		{
			/* the observer's (main thread) knows exited parents */
			char lin[1024] = "";

			if (s->lineage && s->trip_pid > 0)
				s->lineage(s->lineage_ctx, s->trip_pid, lin,
					   sizeof(lin));
			if (lin[0] || s->trip_lineage[0])
				lg_json_str(&j, "lineage",
					    lin[0] ? lin : s->trip_lineage);
		}
	}
	sess_kept_fields(s, &j);
	if (!method) { /* the tree had ended: nothing was refused or killed */
		lg_json_bool(&j, "after_end", true);
		lg_json_bool(&j, "refused", false);
	} else {
		lg_json_str(&j, "kill_method", method);
		lg_json_num(&j, "kill_ms", kill_ms);
		lg_json_int(&j, "survivors", survivors);
	}
	if (escaped) /* had left the cgroup; killed by pid */
		lg_json_int(&j, "escaped", escaped);
	sess_falco_fields(
		s, &j, "trip",
		&(struct lg_falco){
			.priority = priority_of(f->action, false),
			.output = s->trip_summary,
			.rule = f->rule,
			.op = s->trip_op != LG_OP_NONE ?
				      lg_op_name(s->trip_op) :
				      NULL,
			.target = s->trip_op != LG_OP_NONE ? s->trip_target :
							     NULL,
			.exe = s->trip_exe,
			.pid = s->trip_op != LG_OP_NONE ? s->trip_pid : 0 });
	json_recent(s, &j);
	lg_json_end(&j);
	/* The marker first: even if the log write fails, the block holds. */
	marker = lg_state_mark_killed(s->info.state_dir, s->info.id, j.buf);
	if (marker < 0)
		lg_err("cannot mark session '%s' killed in %s: %s", s->info.id,
		       s->info.state_dir, strerror(-marker));
	r = lg_audit_append(s->info.audit_path, j.buf, true);
	if (r < 0)
		lg_err("cannot write the audit log %s: %s", s->info.audit_path,
		       strerror(-r));
	if (audit_err)
		*audit_err = r < 0 ? r : 0;
	lg_json_free(&j);
	if (s->info.metrics_path) {
		r = lg_metrics_count_trip(s->info.metrics_path, s->info.agent,
					  f->reason);
		if (r < 0)
			lg_warn("cannot update the metrics file %s: %s",
				s->info.metrics_path, strerror(-r));
	}
	return marker < 0 ? marker : 0;
}
