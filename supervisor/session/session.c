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
#include "provenance/lineage.h"
#include "lib/log.h"
#include "store/metrics.h"
#include "seccomp/pathres.h"
#include "provenance/programs.h"
#include "egress/egress.h"
#include "session.h"
#include "store/state.h"
#include "lib/text.h"
#include "guard/clean.h"
#include "session_int.h"

/* The config does not change while the session lives: no lock. */
bool lg_session_judge_calls(const struct lg_session *s)
{
	return s->cfg->guard.repeat.threshold &&
	       !s->cfg->guard.repeat.include_result;
}

/* [output_repeat] cut: a looping response is ended (not in --observe). */
bool lg_session_cuts_text(const struct lg_session *s)
{
	return s->cfg->guard.output_repeat.enabled &&
	       s->cfg->guard.output_repeat.cut && !s->cfg->observe;
}

static const char *ignore_keys(const struct lg_session *s)
{
	return s->cfg->repeat_ignore_keys ? s->cfg->repeat_ignore_keys :
					    LG_DEFAULT_IGNORE_KEYS;
}

bool lg_session_model_blocked(const struct lg_session *s)
{
	HOLD(s);
	return s->blocked || s->model_blocked;
}

/* Under the lock. */
static void stop_message(const struct lg_session *s, char *out, size_t size)
{
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
		/* a plain lock; taken twice by one thread it says so (hold) */
		pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ERRORCHECK);
		pthread_mutex_init(&s->mu, &a);
		pthread_mutexattr_destroy(&a);
	}
	s->guard = lg_guard_new(&cfg->guard, info->start_mono_ms);
	s->content = lg_lineage_new(0);
	/* read at load (lg_config_finish): fails only out of memory */
	if (cfg->remote)
		s->cli = lg_cli_table_new(cfg->remote_commands, NULL);
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
		if (info->spill)
			lg_quarantine_set_spill(s->quarantine, info->spill);
	}
	s->prov = lg_prov_new(info->start_real_ns);
	if (!s->guard || !s->content || !s->prov ||
	    (cfg->quarantine && info->state_dir && !s->quarantine)) {
		lg_guard_free(s->guard);
		lg_lineage_free(s->content);
		lg_prov_free(s->prov);
		sess_emptied_free(s);
		lg_quarantine_free(s->quarantine);
		free(s);
		return NULL;
	}
	{
		const char *names[64] = { "git" }, *clean;
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
		/* the build tools whose clean verbs are known (guard/clean.def) */
		for (size_t i = 0; s->programs && (clean = lg_clean_program(i));
		     i++)
			(void)lg_programs_later(s->programs, clean);
	}
	/* the project a rewind puts back (issue 40): where the tree starts */
	if (!getcwd(s->project, sizeof(s->project)))
		s->project[0] = '\0';
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
	lg_turns_free(&s->turns);
	lg_lineage_free(s->content);
	lg_programs_free(s->programs);
	lg_prov_free(s->prov);
	/* a session that tripped never checked what its tree emptied */
	sess_emptied_free(s);
	sess_remote_free(s);
	lg_cli_table_free(s->cli);
	lg_quarantine_free(s->quarantine);
	lg_record_close(s->rec);
	free(s->egress);
	pthread_mutex_destroy(&s->mu);
	free(s);
}

/*
 * LG_EV_STOP: another supervisor of the session tripped (rule "store"), or
 * this one stops it; like a trip, and the main loop kills.
 */
static int on_stop(struct lg_session *s, struct lg_event *ev,
		   struct lg_session_verdict *v)
{
	const struct lg_notice *n = ev->notice;
	bool peer = strcmp(n->rule, "store") == 0;
	const char *summary = n->summary;

	(void)v;
	if (s->kill_pending)
		return 0;
	s->kill_pending = true;
	s->blocked = true;
	s->peer_killed = peer;
	memset(&s->trip, 0, sizeof(s->trip));
	s->trip.action = LG_KILL;
	s->trip.rule = peer ? "store" : "supervisor";
	s->trip.reason = peer ? "killed_by_peer" : n->reason;
	if (peer && strncmp(summary, "session_killed: ", 16) == 0)
		summary += 16;
	snprintf(s->trip.summary, sizeof(s->trip.summary), "%s%s",
		 peer ? "another supervisor of the session tripped: " : "",
		 summary);
	s->trip_op = LG_OP_NONE;
	snprintf(s->trip_summary, sizeof(s->trip_summary), "session_killed: %s",
		 s->trip.summary);
	return 0;
}

bool lg_session_kill_pending(const struct lg_session *s)
{
	HOLD(s);
	return s->kill_pending;
}

unsigned lg_session_settle(struct lg_session *s)
{
	HOLD(s);

	return (s->kill_pending ? LG_SETTLE_TRIP : 0) |
	       (lg_quarantine_flush_wanted(s->quarantine) ? LG_SETTLE_FLUSH :
							    0);
}

void lg_session_bind(struct lg_session *s, const struct lg_session_hooks *h)
{
	HOLD(s);
	if (h->on_kill) {
		s->on_kill = h->on_kill;
		s->on_kill_ctx = h->on_kill_ctx;
	}
	if (h->lineage) {
		s->lineage = h->lineage;
		s->lineage_ctx = h->lineage_ctx;
	}
	if (h->shared)
		s->shared = h->shared;
	if (h->store_up) {
		s->store_up = h->store_up;
		s->store_ctx = h->store_ctx;
	}
}

void lg_session_view(const struct lg_session *s, struct lg_session_view *v)
{
	HOLD(s);
	memset(v, 0, sizeof(*v));
	v->flow = s->info.flow ? s->info.flow : "";
	v->name = s->info.name ? s->info.name : "";
	v->kill_pending = s->kill_pending;
	v->kill_deferred_ms = s->kill_pending ? s->kill_deferred_ms : 0;
	v->peer_killed = s->peer_killed;
	v->trip_reason = s->trip.reason;
	v->trip_remote = s->trip_op == LG_OP_REMOTE_DELETE && s->remote_ran;
	v->trip_left = s->trip_left;
	snprintf(v->trip_summary, sizeof(v->trip_summary), "%s",
		 s->trip_summary);
	v->quarantine = s->quarantine != NULL;
	lg_quarantine_totals(s->quarantine, &v->kept_files, &v->kept_dirs,
			     &v->kept_bytes);
	v->not_kept = s->not_kept;
	v->turn = s->turns.turn;
	v->stats = s->st;
	v->ignore_keys = ignore_keys(s);
}

int lg_session_refusal(const struct lg_session *s)
{
	HOLD(s);
	return s->blocked ? s->cfg->deny_errno : 0;
}

uint64_t lg_session_next_deadline(const struct lg_session *s)
{
	HOLD(s);
	uint64_t g = lg_guard_next_deadline(s->guard);
	uint64_t e = sess_emptied_deadline(s);

	return !g || (e && e < g) ? e : g;
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
	sess_audit_simple(s, "warn", msg);
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

/*
 * The model's streamed text, or the terminal's (its own repeat state). A
 * looping response the proxy can end (can_cut) is cut when output_repeat
 * fires and [output_repeat] cut is on: its warning says so (cut_text).
 */
static int on_text(struct lg_session *s, struct lg_event *ev,
		   struct lg_session_verdict *v)
{
	struct lg_guard_env env = { lg_mono_ms(), NULL, s, s->shared, NULL };
	struct lg_findings out;
	int err;

	if (ev->source == LG_SRC_OUTPUT) {
		ev->target = "terminal output";
		return s->out_guard ?
			       sess_judge(s, s->out_guard, ev, false, v) :
			       0;
	}
	ev->exe = "model";
	ev->target = "model text";
	v->verdict = sess_feed(s, s->guard, ev, &env, &out);
	if (v->verdict == LG_ALLOW)
		return 0;
	for (size_t i = 0; i < out.n; i++)
		if (strcmp(out.f[i].rule, "output_repeat") == 0 &&
		    out.f[i].action != LG_ALLOW)
			v->cut = ev->can_cut &&
				 s->cfg->guard.output_repeat.cut &&
				 !s->cfg->observe;
	if (v->cut)
		s->st.responses_cut++;
	s->cut_text = v->cut;
	err = sess_act(s, &out, ev->op, ev->pid, ev->exe, ev->target, v);
	s->cut_text = false;
	return err;
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
	if (ev->made) { /* a remote resource the session made (remote.c) */
		sess_remote_made(s, ev->made);
		return 0;
	}
	if (ev->proto == LG_P_TLS) /* opaque: what an exec left pending */
		return sess_remote_opaque(s, ev->pid);
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
		stop_message(s, v->why, sizeof(v->why));
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
	if (ev->kind == LG_EV_TICK) /* files emptied a while ago */
		sess_emptied_due(s, v);
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
	[LG_EV_WARN] = sess_on_warn,
	[LG_EV_REFUSED] = sess_on_refused,
	[LG_EV_STOP] = on_stop,
	[LG_EV_COUNTERS] = sess_on_counters,
	[LG_EV_TREE_OVER] = sess_on_tree_over,
};

_Thread_local const struct lg_session *sess_held;

/*
 * The supervisor's word, fed by a callback the session made while this
 * thread holds its lock (the store telling a change of its state while
 * the guard asks it): taken under the lock already held.
 */
static int feed_held(struct lg_session *s, const struct lg_event *ev,
		     struct lg_session_verdict *v)
{
	struct lg_session_verdict mine;
	struct lg_event e = *ev;

	if (e.kind != LG_EV_WARN && e.kind != LG_EV_REFUSED &&
	    e.kind != LG_EV_STOP && e.kind != LG_EV_COUNTERS) {
		fprintf(stderr,
			"lgrun: a %s event fed to the session from under its own lock\n",
			lg_kind_name(e.kind));
		abort();
	}
	if (!v)
		v = &mine;
	memset(v, 0, sizeof(*v));
	return v->err = on_event[e.kind](s, &e, v);
}

int lg_session_feed(struct lg_session *s, const struct lg_event *ev,
		    struct lg_session_verdict *v)
{
	if (sess_held == s)
		return feed_held(s, ev, v);
	HOLD(s);
	struct lg_session_verdict mine;
	struct lg_event e = *ev; /* the session completes it */

	if (!v)
		v = &mine;
	v->verdict = LG_ALLOW;
	v->cut = false;
	v->cls = LG_CLASS_MISSING; /* not a file's: nothing of it is lost */
	v->why[0] = '\0';
	if ((unsigned)e.kind >= LG_EV_KINDS || !on_event[e.kind])
		return v->err = 0;
	/* events by source: not text deltas, counters, connections, timers */
	/* ... nor the supervisor's own word (the kinds after LG_EV_EGRESS) */
	if (e.kind == LG_EV_TEXT || e.kind == LG_EV_WORK ||
	    e.kind >= LG_EV_EGRESS)
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

/*
 * A tool call of a model response in conversation conv (first: the
 * response's first), recorded. The first call of a response in the main
 * conversation (the first conversation seen making calls; a subagent's
 * turns belong to the turn that started it) begins a turn (issue 40),
 * stamped so that every file the tree changes from then on is newer than
 * its start.
 */
void lg_session_model_call(struct lg_session *s, uint64_t conv, bool first,
			   const char *tool, const char *args)
{
	char run_dir[PATH_MAX];
	int64_t now = 0;

	if (first) { /* outside the lock: it may wait a tick */
		snprintf(run_dir, sizeof(run_dir), "%s/run",
			 s->info.state_dir ? s->info.state_dir : "/");
		now = lg_real_ns();
		lg_real_start_after(s->info.state_dir ? run_dir : NULL, now);
	}
	HOLD(s);
	if (lg_turns_call(&s->turns, conv, first, now)) {
		lg_quarantine_set_turn(s->quarantine, s->turns.turn);
		lg_dbg("turn %u: %s", s->turns.turn, tool ? tool : "?");
	}
	lg_record_call(s->rec, lg_mono_ms(), s->turns.turn, conv, tool, args);
}

void lg_session_stop_message(const struct lg_session *s, char *out, size_t size)
{
	HOLD(s);
	stop_message(s, out, size);
}
