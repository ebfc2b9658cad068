// SPDX-License-Identifier: MIT
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "detectors.h"

struct lg_guard {
	struct lg_volumetric *vol;
	struct lg_same_target *same;
	struct lg_budget *budget;
	struct lg_repeat *repeat;
	struct lg_failures *failures;
	struct lg_output_repeat *output_repeat;
	struct lg_greeting *greeting;
	struct lg_flow *flow;
	struct lg_detector_cfg vol_cfg, same_cfg;
	uint64_t shared_seq;
	struct lg_guard_stats st;
};

struct lg_guard *lg_guard_new(const struct lg_guard_cfg *cfg, uint64_t start_ms)
{
	struct lg_guard *g = calloc(1, sizeof(*g));

	if (!g)
		return NULL;
	g->vol = lg_volumetric_new(&cfg->volumetric);
	g->same = lg_same_target_new(&cfg->same_target);
	g->budget = lg_budget_new(&cfg->budget, start_ms);
	g->repeat = lg_repeat_new(&cfg->repeat);
	g->failures = lg_failures_new(&cfg->failures);
	g->output_repeat = lg_output_repeat_new(&cfg->output_repeat);
	g->greeting = lg_greeting_new(&cfg->greeting);
	g->flow = lg_flow_new(&cfg->flow);
	g->vol_cfg = cfg->volumetric;
	g->same_cfg = cfg->same_target;
	if (!g->vol || !g->same || !g->budget || !g->repeat || !g->failures ||
	    !g->output_repeat || !g->greeting || !g->flow) {
		lg_guard_free(g);
		return NULL;
	}
	return g;
}

void lg_guard_free(struct lg_guard *g)
{
	if (!g)
		return;
	lg_volumetric_free(g->vol);
	lg_same_target_free(g->same);
	lg_budget_free(g->budget);
	lg_repeat_free(g->repeat);
	lg_failures_free(g->failures);
	lg_output_repeat_free(g->output_repeat);
	lg_greeting_free(g->greeting);
	lg_flow_free(g->flow);
	free(g);
}

static enum lg_verdict worst(enum lg_verdict a, enum lg_verdict b)
{
	return a > b ? a : b;
}

enum lg_verdict lg_guard_feed(struct lg_guard *g, const struct lg_event *ev,
			      const struct lg_guard_env *env,
			      struct lg_findings *out)
{
	enum lg_verdict v = LG_ALLOW;
	struct lg_guard_env shared_env;
	struct lg_shared_counts pre;

	out->n = 0;
	g->st.events++;
	if (ev->kind == LG_EV_DESTRUCTIVE && ev->cls == LG_CLASS_DESTROY)
		g->st.counted++;
	/*
	 * Shared windows: both counts of this target in one round trip, done
	 * here so that each detector only reads its own.
	 */
	if (env->shared && env->shared->add2 && !env->pre &&
	    ev->kind == LG_EV_DESTRUCTIVE && ev->cls == LG_CLASS_DESTROY &&
	    (g->vol_cfg.max || g->same_cfg.max)) {
		char tgt[4200];
		long c[2] = { -1, -1 };
		const char *self = env->shared->self ? env->shared->self : "";

		snprintf(pre.vol_member, sizeof(pre.vol_member), "%.30s:v%llu",
			 self, (unsigned long long)++g->shared_seq);
		snprintf(pre.tgt_member, sizeof(pre.tgt_member), "%.30s:t%llu",
			 self, (unsigned long long)g->shared_seq);
		snprintf(tgt, sizeof(tgt), "tgt:%s",
			 ev->target ? ev->target : "");
		if (env->shared->add2(
			    env->shared->ctx, g->vol_cfg.max ? "vol" : NULL,
			    pre.vol_member, g->vol_cfg.window_ms,
			    g->same_cfg.max ? tgt : NULL, pre.tgt_member,
			    g->same_cfg.window_ms, c) < 0)
			c[0] = c[1] = -1;
		pre.vol = c[0];
		pre.tgt = c[1];
		shared_env = *env;
		shared_env.pre = &pre;
		env = &shared_env;
	}
	/*
	 * Same target runs first: when both trip on one op, the tighter,
	 * more specific reason (an actual loop) is the one reported first.
	 */
	v = worst(v, lg_same_target_feed(g->same, ev, env, out));
	v = worst(v, lg_volumetric_feed(g->vol, ev, env, out));
	v = worst(v, lg_budget_feed(g->budget, ev, env, out));
	/* These two only look at tool calls and op results. */
	v = worst(v, lg_repeat_feed(g->repeat, ev, env, out));
	v = worst(v, lg_failures_feed(g->failures, ev, env, out));
	/* The model's own text (LG_EV_TEXT) and its turns (LG_EV_TURN). */
	v = worst(v, lg_output_repeat_feed(g->output_repeat, ev, env, out));
	v = worst(v, lg_greeting_feed(g->greeting, ev, env, out));
	/* Agent-to-agent calls, and the work done between them. */
	v = worst(v, lg_flow_feed(g->flow, ev, env, out));
	for (size_t i = 0; i < out->n; i++)
		if (out->f[i].action >= LG_DENY)
			g->st.trips++;
	return v;
}

uint64_t lg_guard_next_deadline(const struct lg_guard *g)
{
	return lg_budget_next_deadline(g->budget);
}

void lg_guard_flow_stats(const struct lg_guard *g, struct lg_flow_stats *st)
{
	lg_flow_stats(g->flow, st);
}

void lg_guard_stats(const struct lg_guard *g, struct lg_guard_stats *st)
{
	*st = g->st;
}

struct lg_finding *lg_findings_add(struct lg_findings *out,
				   enum lg_verdict action, const char *rule,
				   const char *reason, const char *fmt, ...)
{
	struct lg_finding *f;
	va_list ap;

	if (out->n >= LG_MAX_FINDINGS)
		return NULL;
	f = &out->f[out->n++];
	f->action = action;
	f->rule = rule;
	f->reason = reason;
	va_start(ap, fmt);
	vsnprintf(f->summary, sizeof(f->summary), fmt, ap);
	va_end(ap);
	return f;
}

const char *lg_op_plural(enum lg_op op)
{
	switch (op) {
	case LG_OP_TRUNCATE:
	case LG_OP_OPEN_TRUNC:
		return "truncations";
	case LG_OP_RMDIR:
		return "directory removals";
	case LG_OP_TOOL_DELETE:
		return "tool deletes";
	default:
		return "deletes";
	}
}

static const char *const verdict_names[] = {
	[LG_ALLOW] = "allow",
	[LG_WARN] = "warn",
	[LG_DENY] = "deny",
	[LG_KILL] = "kill",
};

const char *lg_verdict_name(enum lg_verdict v)
{
	if ((unsigned)v < sizeof(verdict_names) / sizeof(verdict_names[0]))
		return verdict_names[v];
	return "?";
}

int lg_verdict_parse(const char *s, enum lg_verdict *out)
{
	for (unsigned i = 0;
	     i < sizeof(verdict_names) / sizeof(verdict_names[0]); i++) {
		if (strcmp(s, verdict_names[i]) == 0) {
			*out = (enum lg_verdict)i;
			return 0;
		}
	}
	return -1;
}
