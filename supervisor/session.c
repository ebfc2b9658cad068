// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "../preload/wire.h"
#include "audit.h"
#include "canon.h"
#include "cgroup.h"
#include "lineage.h"
#include "log.h"
#include "metrics.h"
#include "pathres.h"
#include "programs.h"
#include "egress.h"
#include "session.h"
#include "state.h"
#include "text.h"
#include "session_int.h"

/*
 * A kill decided on this thread while it is set waits (defer_kill): the
 * proxy or the control socket first answers the agent with the reason.
 * Per thread: a kill decided meanwhile on another thread (the notify
 * thread's unlink) is not held back by it.
 */
static _Thread_local bool defer_here;

bool lg_session_judge_calls(const struct lg_session *s)
{
	HOLD(s);
	return s->cfg->guard.repeat.threshold &&
	       !s->cfg->guard.repeat.include_result;
}

const char *lg_session_ignore_keys(const struct lg_session *s)
{
	HOLD(s);
	return s->cfg->repeat_ignore_keys ? s->cfg->repeat_ignore_keys :
					    LG_DEFAULT_IGNORE_KEYS;
}

void lg_session_observed(struct lg_session *s, pid_t pid, const char *exe,
			 unsigned proto, const char *tool,
			 const char *args_preview, const char *result_preview)
{
	HOLD(s);
	if (proto == LG_P_HTTP)
		s->st.observed_http++;
	else
		s->st.observed_jsonrpc++;
	lg_dbg("observed %s(%s) -> %s by %s[%d]", tool, args_preview,
	       result_preview, exe, pid);
}

bool lg_session_model_blocked(const struct lg_session *s)
{
	HOLD(s);
	return s->blocked || s->model_blocked;
}

void lg_session_defer_kill(struct lg_session *s, bool defer)
{
	(void)s;
	defer_here = defer;
}

void lg_session_llm_turn(struct lg_session *s, const char *model,
			 const char *stop_reason, uint64_t in_tokens,
			 uint64_t out_tokens, unsigned tool_calls,
			 const char *text)
{
	HOLD(s);
	struct lg_guard_env env = { lg_mono_ms(), NULL, s, s->shared, NULL };
	struct lg_event ev = { .kind = LG_EV_TURN,
			       .source = LG_SRC_PROXY,
			       .exe = "model",
			       .target = model && *model ? model : "model",
			       .tokens_in = in_tokens,
			       .tokens_out = out_tokens,
			       .turn_tool_calls = tool_calls,
			       .stop_reason = stop_reason ? stop_reason : "",
			       .turn_text = text ? text : "" };
	struct lg_findings out;
	double pin = 0, pout = 0;

	/* Priced here, at the edge: the guard only adds up dollars. */
	if (lg_price_lookup(s->cfg->llm_prices, model, &pin, &pout, NULL) > 0)
		ev.cost =
			((double)in_tokens * pin + (double)out_tokens * pout) /
			1e6;
	else if (s->cfg->guard.budget.max_cost > 0 && !s->unpriced_warned) {
		char msg[300];

		s->unpriced_warned = true;
		snprintf(
			msg, sizeof(msg),
			"warning: model '%s' has no price in [llm] prices: its turns do not count toward budget.max_cost",
			model && *model ? model : "?");
		lg_warn("%s", msg + 9);
		lg_session_audit_simple(s, "warn", msg);
	}
	s->st.cost += ev.cost;
	s->st.turns++;
	s->st.ev_proxy++;
	s->st.tokens_in += in_tokens;
	s->st.tokens_out += out_tokens;
	if (stop_reason && (strcmp(stop_reason, "max_tokens") == 0 ||
			    strcmp(stop_reason, "length") == 0 ||
			    strcmp(stop_reason, "MAX_TOKENS") == 0 ||
			    strcmp(stop_reason, "max_output_tokens") == 0))
		s->st.max_tokens_stops++;
	lg_dbg("model turn (%s): %s, %llu in, %llu out, %u tool call(s)",
	       model && *model ? model : "?", stop_reason ? stop_reason : "?",
	       (unsigned long long)in_tokens, (unsigned long long)out_tokens,
	       tool_calls);
	if (lg_guard_feed(s->guard, &ev, &env, &out) != LG_ALLOW)
		sess_act(s, &out, LG_OP_NONE, 0, "model", ev.target);
}

void lg_session_llm_text(struct lg_session *s, const char *p, size_t n)
{
	HOLD(s);
	struct lg_guard_env env = { lg_mono_ms(), NULL, s, s->shared, NULL };
	struct lg_event ev = { .kind = LG_EV_TEXT,
			       .source = LG_SRC_PROXY,
			       .exe = "model",
			       .target = "model text",
			       .text = p,
			       .text_len = n };
	struct lg_findings out;

	if (lg_guard_feed(s->guard, &ev, &env, &out) != LG_ALLOW)
		sess_act(s, &out, LG_OP_NONE, 0, "model", "model text");
}

void lg_session_stop_message(const struct lg_session *s, char *out, size_t size)
{
	HOLD(s);
	if (s->kill_pending || s->blocked)
		snprintf(
			out, size,
			"lgrun stopped this agent session (%s): %s. The agent was looping, so no further model or tool calls are allowed. An operator can inspect the audit log and allow the session to run again with: lgctl reset %s",
			s->trip.reason ? s->trip.reason : "tripped",
			s->trip.summary, s->info.id);
	else if (s->model_blocked)
		snprintf(
			out, size,
			"lgrun refuses further model calls in this session (%s). The agent was looping; end the task here.",
			s->deny_summary);
	else
		snprintf(out, size, "lgrun refused this request");
}

void lg_session_on_kill(struct lg_session *s, void (*fn)(void *ctx), void *ctx)
{
	HOLD(s);
	s->on_kill = fn;
	s->on_kill_ctx = ctx;
}

struct lg_session *lg_session_new(const struct lg_config *cfg,
				  const struct lg_session_info *info)
{
	struct lg_session *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->cfg = cfg;
	s->info = *info;
	{
		pthread_mutexattr_t a;

		pthread_mutexattr_init(&a);
		pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
		pthread_mutex_init(&s->mu, &a);
		pthread_mutexattr_destroy(&a);
	}
	s->guard = lg_guard_new(&cfg->guard, info->start_mono_ms);
	s->content = lg_lineage_new(0);
	if (!s->guard || !s->content) {
		lg_guard_free(s->guard);
		lg_lineage_free(s->content);
		free(s);
		return NULL;
	}
	{
		const char *names[64] = { "git" };
		size_t n = 1;

		for (size_t i = 0; i < cfg->n_ignore; i++) {
			if (!cfg->ignore[i].program)
				continue;
			s->has_program_rules = true;
			if (n < sizeof(names) / sizeof(names[0]))
				names[n++] = cfg->ignore[i].program;
		}
		/* PATH now: what the names meant when the session began */
		s->programs = lg_programs_new(names, n, getenv("PATH"),
					      info->start_real_ns);
	}
	if (info->flow && info->name) {
		struct lg_guard_env env = { info->start_mono_ms, NULL, s, NULL,
					    NULL };
		struct lg_event ev = { .kind = LG_EV_CALL,
				       .source = LG_SRC_SHIM,
				       .flow = info->flow,
				       .to = info->name };
		struct lg_findings out;

		lg_guard_feed(s->guard, &ev, &env, &out);
	}
	if (cfg->watch_output) {
		struct lg_guard_cfg oc;

		memset(&oc, 0, sizeof(oc));
		oc.output_repeat = cfg->guard.output_repeat;
		s->out_guard = lg_guard_new(&oc, info->start_mono_ms);
	}
	return s;
}

void lg_session_free(struct lg_session *s)
{
	if (!s)
		return;
	lg_guard_free(s->guard);
	lg_guard_free(s->out_guard);
	lg_lineage_free(s->content);
	lg_programs_free(s->programs);
	free(s->egress);
	pthread_mutex_destroy(&s->mu);
	free(s);
}

bool lg_session_kill_pending(const struct lg_session *s)
{
	HOLD(s);
	return s->kill_pending;
}

uint64_t lg_session_kill_deferred(const struct lg_session *s)
{
	HOLD(s);
	return s->kill_pending ? s->kill_deferred_ms : 0;
}

const char *lg_session_trip_summary(const struct lg_session *s)
{
	HOLD(s);
	return s->trip_summary;
}

const char *lg_session_trip_reason(const struct lg_session *s)
{
	HOLD(s);
	return s->trip.reason;
}

void lg_session_stats(const struct lg_session *s, struct lg_session_stats *st)
{
	HOLD(s);
	*st = s->st;
}

/*
 * The guard's question: has a target removed earlier come back? Not where
 * git removed content its object database does not hold (reset --hard,
 * checkout -- f over changes): git writes the committed content there,
 * and the removed content is gone.
 */

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
	snprintf(r->exe, sizeof(r->exe), "%s", exe ? exe : "");
	snprintf(r->target, sizeof(r->target), "%s", target);
}

void lg_session_shared(struct lg_session *s,
		       const struct lg_shared_windows *shared)
{
	HOLD(s);
	s->shared = shared;
}

void lg_session_store_required(struct lg_session *s, bool (*up)(void *ctx),
			       void *ctx)
{
	HOLD(s);
	s->store_up = up;
	s->store_ctx = ctx;
}

void lg_session_peer_kill(struct lg_session *s, const char *summary)
{
	HOLD(s);
	if (s->kill_pending)
		return;
	s->kill_pending = true;
	s->blocked = true;
	s->peer_killed = true;
	memset(&s->trip, 0, sizeof(s->trip));
	s->trip.action = LG_KILL;
	s->trip.rule = "store";
	s->trip.reason = "killed_by_peer";
	if (strncmp(summary, "session_killed: ", 16) == 0)
		summary += 16;
	snprintf(s->trip.summary, sizeof(s->trip.summary),
		 "another supervisor of the session tripped: %s", summary);
	s->trip_op = LG_OP_NONE;
	snprintf(s->trip_summary, sizeof(s->trip_summary), "session_killed: %s",
		 s->trip.summary);
}

void lg_session_supervisor_kill(struct lg_session *s, const char *reason,
				const char *fmt, ...)
{
	HOLD(s);
	va_list ap;

	if (s->kill_pending)
		return;
	s->kill_pending = true;
	s->blocked = true;
	memset(&s->trip, 0, sizeof(s->trip));
	s->trip.action = LG_KILL;
	s->trip.rule = "supervisor";
	s->trip.reason = reason;
	va_start(ap, fmt);
	vsnprintf(s->trip.summary, sizeof(s->trip.summary), fmt, ap);
	va_end(ap);
	s->trip_op = LG_OP_NONE;
	snprintf(s->trip_summary, sizeof(s->trip_summary), "session_killed: %s",
		 s->trip.summary);
}

bool lg_session_peer_killed(const struct lg_session *s)
{
	HOLD(s);
	return s->peer_killed;
}

void lg_session_lineage_fn(struct lg_session *s,
			   void (*fn)(void *ctx, pid_t pid, char *out,
				      size_t size),
			   void *ctx)
{
	HOLD(s);
	s->lineage = fn;
	s->lineage_ctx = ctx;
}

/* Acts on the guard's findings; returns the errno for the syscall or 0. */
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
		lg_session_warn(
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

int sess_act(struct lg_session *s, const struct lg_findings *out, enum lg_op op,
	     pid_t pid, const char *exe, const char *target)
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

const char *lg_session_flow(const struct lg_session *s)
{
	HOLD(s);
	return s->info.flow ? s->info.flow : "";
}

const char *lg_session_name(const struct lg_session *s)
{
	HOLD(s);
	return s->info.name ? s->info.name : "";
}

int lg_session_call(struct lg_session *s, pid_t pid, const char *exe,
		    const char *flow, const char *from, const char *to,
		    char *why, size_t why_size)
{
	HOLD(s);
	struct lg_guard_env env = { lg_mono_ms(), NULL, s, s->shared, NULL };
	struct lg_event ev = { .kind = LG_EV_CALL,
			       .source = LG_SRC_SHIM,
			       .op = LG_OP_AGENT_CALL,
			       .pid = pid,
			       .exe = exe,
			       .target = to,
			       .flow = flow,
			       .from = from,
			       .to = to };
	struct lg_findings out;
	enum lg_verdict v;
	int err;

	if (why_size)
		why[0] = '\0';
	s->st.ev_shim++;
	if (s->blocked) {
		lg_session_stop_message(s, why, why_size);
		return s->cfg->deny_errno;
	}
	v = lg_guard_feed(s->guard, &ev, &env, &out);
	{
		char arrow[2 * LG_FLOW_NAME_MAX + 16];

		snprintf(arrow, sizeof(arrow), "%s -> %s", from, to);
		sess_remember(s, env.now_ms, pid, LG_OP_AGENT_CALL,
			      LG_CLASS_DESTROY, v, exe, arrow);
	}
	lg_info("agent call %s -> %s (%s[%d]): %s", from, to, exe, pid,
		lg_verdict_name(v));
	if (v == LG_ALLOW)
		return 0;
	err = sess_act(s, &out, LG_OP_AGENT_CALL, pid, exe, to);
	for (size_t i = 0; err && i < out.n; i++)
		if (out.f[i].action >= LG_DENY) {
			snprintf(why, why_size, "%s", out.f[i].summary);
			break;
		}
	return err;
}

void lg_session_work(struct lg_session *s)
{
	HOLD(s);
	struct lg_guard_env env = { lg_mono_ms(), NULL, s, s->shared, NULL };
	struct lg_event ev = { .kind = LG_EV_WORK, .source = LG_SRC_BPF };
	struct lg_findings out;

	lg_guard_feed(s->guard, &ev, &env, &out);
}

void lg_session_return(struct lg_session *s, const char *flow, const char *from,
		       const char *to)
{
	HOLD(s);
	struct lg_guard_env env = { lg_mono_ms(), NULL, s, s->shared, NULL };
	struct lg_event ev = { .kind = LG_EV_RETURN,
			       .source = LG_SRC_SHIM,
			       .flow = flow,
			       .from = from,
			       .to = to };
	struct lg_findings out;

	lg_dbg("agent return %s -> %s", from, to);
	lg_guard_feed(s->guard, &ev, &env, &out);
}

static void op_result(struct lg_session *s, enum lg_source src, pid_t pid,
		      const char *exe, enum lg_op op, const char *path,
		      int result)
{
	struct lg_guard_env env = { lg_mono_ms(), NULL, s, s->shared, NULL };
	struct lg_event ev = { .kind = LG_EV_OP_RESULT,
			       .source = src,
			       .op = op,
			       .pid = pid,
			       .exe = exe,
			       .target = path,
			       .result = result };
	struct lg_findings out;

	if (src == LG_SRC_SHIM)
		s->st.ev_shim++;
	else
		s->st.ev_bpf++;
	if (lg_guard_feed(s->guard, &ev, &env, &out) != LG_ALLOW)
		sess_act(s, &out, op, pid, exe, path);
}

void lg_session_op_result(struct lg_session *s, pid_t pid, const char *exe,
			  enum lg_op op, const char *path, int result)
{
	HOLD(s);
	op_result(s, LG_SRC_SHIM, pid, exe, op, path, result);
}

void lg_session_bpf_result(struct lg_session *s, pid_t pid, const char *exe,
			   enum lg_op op, const char *path, int result)
{
	HOLD(s);
	op_result(s, LG_SRC_BPF, pid, exe, op, path, result);
}

void lg_session_tool_done(struct lg_session *s, pid_t pid, const char *exe,
			  const char *tool, const char *args,
			  const char *digest, const char *args_preview,
			  const char *result_preview, uint64_t stream)
{
	HOLD(s);
	struct lg_guard_env env = { lg_mono_ms(), NULL, s, s->shared, NULL };
	/* pid 0: the call came through the LLM proxy, not a process */
	struct lg_event ev = { .kind = LG_EV_TOOL_DONE,
			       .source = pid ? LG_SRC_SHIM : LG_SRC_PROXY,
			       .pid = pid,
			       .exe = exe,
			       .target = tool,
			       .tool = tool,
			       .args = args,
			       .result_digest = digest,
			       .args_preview = args_preview,
			       .result_preview = result_preview,
			       .stream = stream };
	struct lg_findings out;

	s->st.tool_calls++;
	if (pid)
		s->st.ev_shim++;
	else
		s->st.ev_proxy++;
	lg_dbg("tool %s(%s) -> %s by %s[%d]", tool, args_preview,
	       result_preview, exe, pid);
	if (lg_guard_feed(s->guard, &ev, &env, &out) != LG_ALLOW)
		sess_act(s, &out, LG_OP_NONE, pid, exe, tool);
}

int lg_session_refusal(const struct lg_session *s)
{
	HOLD(s);
	return s->blocked ? s->cfg->deny_errno : 0;
}

void lg_session_output_text(struct lg_session *s, const char *p, size_t n)
{
	HOLD(s);
	struct lg_guard_env env = { lg_mono_ms(), NULL, s, s->shared, NULL };
	struct lg_event ev = { .kind = LG_EV_TEXT,
			       .source = LG_SRC_OUTPUT,
			       .target = "terminal output",
			       .text = p,
			       .text_len = n };
	struct lg_findings out;

	if (s->out_guard &&
	    lg_guard_feed(s->out_guard, &ev, &env, &out) != LG_ALLOW)
		sess_act(s, &out, LG_OP_NONE, 0, NULL, "terminal output");
}

void lg_session_processes(struct lg_session *s, unsigned n)
{
	HOLD(s);
	struct lg_guard_env env = { lg_mono_ms(), NULL, s, s->shared, NULL };
	struct lg_event ev = { .kind = LG_EV_PROCESSES,
			       .source = LG_SRC_TIMER,
			       .target = "process tree",
			       .processes = n };
	struct lg_findings out;

	if (lg_guard_feed(s->guard, &ev, &env, &out) != LG_ALLOW)
		sess_act(s, &out, LG_OP_NONE, 0, NULL, NULL);
}

void lg_session_tick(struct lg_session *s)
{
	HOLD(s);
	struct lg_guard_env env = { lg_mono_ms(), sess_restored, s, s->shared,
				    NULL };
	struct lg_event ev = { .kind = LG_EV_TICK, .source = LG_SRC_TIMER };
	struct lg_findings out;

	if (lg_guard_feed(s->guard, &ev, &env, &out) != LG_ALLOW)
		sess_act(s, &out, LG_OP_NONE, 0, NULL, NULL);
}

uint64_t lg_session_next_deadline(const struct lg_session *s)
{
	HOLD(s);
	return lg_guard_next_deadline(s->guard);
}
