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

#include "../../preload/wire.h"
#include "record/audit.h"
#include "lib/canon.h"
#include "tree/cgroup.h"
#include "lineage.h"
#include "lib/log.h"
#include "store/metrics.h"
#include "seccomp/pathres.h"
#include "programs.h"
#include "egress/egress.h"
#include "session.h"
#include "store/state.h"
#include "lib/text.h"
#include "session_int.h"

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

bool lg_session_model_blocked(const struct lg_session *s)
{
	HOLD(s);
	return s->blocked || s->model_blocked;
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
	if (cfg->quarantine && info->state_dir)
		s->quarantine = lg_quarantine_new(info->state_dir, info->id,
						  cfg->quarantine_max_bytes,
						  cfg->quarantine_folders);
	if (s->quarantine) {
		struct lg_quarantine_limits lim = {
			cfg->quarantine_max_copy, cfg->quarantine_min_free,
			cfg->quarantine_min_free_fraction,
			cfg->quarantine_max_total
		};

		lg_quarantine_set_start(s->quarantine, info->start_real_ns);
		lg_quarantine_set_limits(s->quarantine, &lim);
	}
	if (!s->guard || !s->content ||
	    (cfg->quarantine && info->state_dir && !s->quarantine)) {
		lg_guard_free(s->guard);
		lg_lineage_free(s->content);
		lg_quarantine_free(s->quarantine);
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
	if (cfg->record_events && info->state_dir)
		sess_record_open(s, cfg, info);
	if (info->flow && info->name) {
		struct lg_guard_env env = { info->start_mono_ms, NULL, s, NULL,
					    NULL };
		struct lg_event ev = { .kind = LG_EV_CALL,
				       .source = LG_SRC_SHIM,
				       .flow = info->flow,
				       .to = info->name };
		struct lg_findings out;

		sess_feed(s, s->guard, &ev, &env, &out);
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
	lg_quarantine_free(s->quarantine);
	lg_record_close(s->rec);
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

int lg_session_refusal(const struct lg_session *s)
{
	HOLD(s);
	return s->blocked ? s->cfg->deny_errno : 0;
}

uint64_t lg_session_next_deadline(const struct lg_session *s)
{
	HOLD(s);
	return lg_guard_next_deadline(s->guard);
}

/*
 * The guard g's findings on ev, acted on (sess_act): the errno for the
 * operation, or 0. restored: the guard may ask whether a target removed
 * earlier has come back (destructive attempts and ticks).
 */
int sess_judge(struct lg_session *s, struct lg_guard *g, struct lg_event *ev,
	       bool restored, struct lg_session_verdict *v)
{
	struct lg_guard_env env = { lg_mono_ms(),
				    restored ? sess_restored : NULL, s,
				    s->shared, NULL };
	struct lg_findings out;

	v->verdict = sess_feed(s, g, ev, &env, &out);
	if (v->verdict == LG_ALLOW)
		return 0;
	return sess_act(s, &out, ev->op, ev->pid, ev->exe, ev->target, v);
}

/* Priced here, at the edge: the guard only adds up dollars. */
static void price_turn(struct lg_session *s, const char *model,
		       struct lg_event *ev)
{
	double pin = 0, pout = 0;
	char msg[300];

	if (lg_price_lookup(s->cfg->llm_prices, model, &pin, &pout, NULL) > 0) {
		ev->cost = ((double)ev->tokens_in * pin +
			    (double)ev->tokens_out * pout) /
			   1e6;
		return;
	}
	if (s->cfg->guard.budget.max_cost <= 0 || s->unpriced_warned)
		return;
	s->unpriced_warned = true;
	snprintf(
		msg, sizeof(msg),
		"warning: model '%s' has no price in [llm] prices: its turns do not count toward budget.max_cost",
		*model ? model : "?");
	lg_warn("%s", msg + 9);
	lg_session_audit_simple(s, "warn", msg);
}

static int on_turn(struct lg_session *s, struct lg_event *ev,
		   struct lg_session_verdict *v)
{
	const char *model = ev->target ? ev->target : "";
	const char *stop = ev->stop_reason ? ev->stop_reason : "";

	price_turn(s, model, ev);
	ev->target = *model ? model : "model";
	ev->exe = "model";
	ev->stop_reason = stop;
	if (!ev->turn_text)
		ev->turn_text = "";
	s->st.cost += ev->cost;
	s->st.turns++;
	s->st.tokens_in += ev->tokens_in;
	s->st.tokens_out += ev->tokens_out;
	if (strcmp(stop, "max_tokens") == 0 || strcmp(stop, "length") == 0 ||
	    strcmp(stop, "MAX_TOKENS") == 0 ||
	    strcmp(stop, "max_output_tokens") == 0)
		s->st.max_tokens_stops++;
	lg_dbg("model turn (%s): %s, %llu in, %llu out, %u tool call(s)",
	       *model ? model : "?", *stop ? stop : "?",
	       (unsigned long long)ev->tokens_in,
	       (unsigned long long)ev->tokens_out, ev->turn_tool_calls);
	return sess_judge(s, s->guard, ev, false, v);
}

/* The model's streamed text, or the terminal's (its own repeat state). */
static int on_text(struct lg_session *s, struct lg_event *ev,
		   struct lg_session_verdict *v)
{
	if (ev->source == LG_SRC_OUTPUT) {
		ev->target = "terminal output";
		return s->out_guard ?
			       sess_judge(s, s->out_guard, ev, false, v) :
			       0;
	}
	ev->exe = "model";
	ev->target = "model text";
	return sess_judge(s, s->guard, ev, false, v);
}

static int on_tool_done(struct lg_session *s, struct lg_event *ev,
			struct lg_session_verdict *v)
{
	s->st.tool_calls++;
	if (!ev->target)
		ev->target = ev->tool;
	lg_dbg("tool %s(%s) -> %s by %s[%d]", ev->tool, ev->args_preview,
	       ev->result_preview, ev->exe, ev->pid);
	return sess_judge(s, s->guard, ev, false, v);
}

static int on_observed(struct lg_session *s, struct lg_event *ev,
		       struct lg_session_verdict *v)
{
	(void)v;
	if (ev->proto == LG_P_HTTP)
		s->st.observed_http++;
	else
		s->st.observed_jsonrpc++;
	lg_dbg("observed %s(%s) -> %s by %s[%d]", ev->tool, ev->args_preview,
	       ev->result_preview, ev->exe, ev->pid);
	return 0;
}

static int on_call(struct lg_session *s, struct lg_event *ev,
		   struct lg_session_verdict *v)
{
	char arrow[2 * LG_FLOW_NAME_MAX + 16];
	int err;

	ev->op = LG_OP_AGENT_CALL;
	ev->target = ev->to;
	if (s->blocked) {
		lg_session_stop_message(s, v->why, sizeof(v->why));
		return s->cfg->deny_errno;
	}
	err = sess_judge(s, s->guard, ev, false, v);
	snprintf(arrow, sizeof(arrow), "%s -> %s", ev->from, ev->to);
	sess_remember(s, lg_mono_ms(), ev->pid, LG_OP_AGENT_CALL,
		      LG_CLASS_DESTROY, v->verdict, ev->exe, arrow);
	lg_info("agent call %s -> %s (%s[%d]): %s", ev->from, ev->to, ev->exe,
		ev->pid, lg_verdict_name(v->verdict));
	return err;
}

static int on_return(struct lg_session *s, struct lg_event *ev,
		     struct lg_session_verdict *v)
{
	lg_dbg("agent return %s -> %s", ev->from, ev->to);
	return sess_judge(s, s->guard, ev, false, v);
}

/* Fed for their bookkeeping: no rule acts on them. */
static int on_quiet(struct lg_session *s, struct lg_event *ev,
		    struct lg_session_verdict *v)
{
	struct lg_guard_env env = { lg_mono_ms(), NULL, s, s->shared, NULL };
	struct lg_findings out;

	v->verdict = sess_feed(s, s->guard, ev, &env, &out);
	return 0;
}

static int on_judged(struct lg_session *s, struct lg_event *ev,
		     struct lg_session_verdict *v)
{
	if (ev->kind == LG_EV_PROCESSES)
		ev->target = "process tree";
	return sess_judge(s, s->guard, ev, ev->kind == LG_EV_TICK, v);
}

/* What each kind of event does to the session, and which guard sees it. */
static int (*const on_event[LG_EV_KINDS])(struct lg_session *s,
					  struct lg_event *ev,
					  struct lg_session_verdict *v) = {
	[LG_EV_DESTRUCTIVE] = sess_on_destructive,
	[LG_EV_TICK] = on_judged,
	[LG_EV_OP_RESULT] = on_judged,
	[LG_EV_TOOL_DONE] = on_tool_done,
	[LG_EV_TURN] = on_turn,
	[LG_EV_TEXT] = on_text,
	[LG_EV_PROCESSES] = on_judged,
	[LG_EV_CALL] = on_call,
	[LG_EV_RETURN] = on_return,
	[LG_EV_WORK] = on_quiet,
	[LG_EV_RENAME] = sess_on_rename,
	[LG_EV_UNREADABLE] = sess_on_unreadable,
	[LG_EV_OBSERVED] = on_observed,
	[LG_EV_EGRESS] = sess_on_egress,
};

int lg_session_feed(struct lg_session *s, const struct lg_event *ev,
		    struct lg_session_verdict *v)
{
	HOLD(s);
	struct lg_session_verdict mine;
	struct lg_event e = *ev; /* the session completes it */

	if (!v)
		v = &mine;
	v->verdict = LG_ALLOW;
	v->cls = LG_CLASS_MISSING; /* not a file's: nothing of it is lost */
	v->why[0] = '\0';
	if ((unsigned)e.kind >= LG_EV_KINDS || !on_event[e.kind])
		return v->err = 0;
	/* events by source: not text deltas, counters, connections, timers */
	if (e.kind == LG_EV_TEXT || e.kind == LG_EV_WORK ||
	    e.kind == LG_EV_EGRESS)
		;
	else if (e.source == LG_SRC_SECCOMP)
		s->st.ev_seccomp++;
	else if (e.source == LG_SRC_SHIM)
		s->st.ev_shim++;
	else if (e.source == LG_SRC_PROXY)
		s->st.ev_proxy++;
	else if (e.source == LG_SRC_BPF)
		s->st.ev_bpf++;
	return v->err = on_event[e.kind](s, &e, v);
}

unsigned lg_session_not_kept(const struct lg_session *s)
{
	HOLD(s);
	return s->not_kept;
}
bool lg_session_kept(const struct lg_session *s, unsigned *files,
		     unsigned *dirs, uint64_t *bytes)
{
	HOLD(s);
	lg_quarantine_totals(s->quarantine, files, dirs, bytes);
	return s->quarantine != NULL;
}
