// SPDX-License-Identifier: MIT
/*
 * Budget: a wall-clock limit, a cap on destroyed pre-existing data, on
 * model turns and on tokens per session. Each warns once when only the
 * reserve fraction is left (and the limit is not reached yet), then trips
 * past the limit.
 *
 * A destructive op over the limit is refused before it happens and does
 * not use the budget. A turn is only known when it has ended: the turn
 * that goes over max_turns or max_tokens trips (the proxy then refuses
 * the next request), and so does every turn after it.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "detectors.h"

struct lg_budget {
	struct lg_budget_cfg cfg;
	uint64_t start, ops;
	uint64_t warn_ops; /* op count at which the reserve warning fires */
	uint64_t warn_at, end_at; /* monotonic deadlines, 0 = none */
	uint64_t turns, tokens; /* model turns and their tokens so far */
	uint64_t warn_turns, warn_tokens; /* their reserve points */
	bool ops_warned, time_warned, timed_out;
	bool turns_warned, tokens_warned;
	double cost; /* USD so far */
	bool cost_warned;
	uint64_t calls, warn_calls; /* tool calls (steps) and their reserve */
	bool calls_warned;
	uint64_t warn_procs;
	bool procs_warned, procs_tripped;
};

/* A reserve's note says what the budget's action does (issue 28). */
static void reserve_then(const struct lg_budget *d, struct lg_finding *f)
{
	if (f)
		f->then = d->cfg.action;
}

static uint64_t reserve_point(uint64_t limit, double reserve)
{
	uint64_t p = (uint64_t)ceil((double)limit * (1.0 - reserve));

	if (p < 1)
		p = 1;
	return p > limit ? limit : p;
}

struct lg_budget *lg_budget_new(const struct lg_budget_cfg *cfg,
				uint64_t start_ms)
{
	struct lg_budget *d = calloc(1, sizeof(*d));

	if (!d)
		return NULL;
	d->cfg = *cfg;
	d->start = start_ms;
	if (cfg->max_destructive_ops)
		d->warn_ops =
			reserve_point(cfg->max_destructive_ops, cfg->reserve);
	if (cfg->max_turns)
		d->warn_turns = reserve_point(cfg->max_turns, cfg->reserve);
	if (cfg->max_tokens)
		d->warn_tokens = reserve_point(cfg->max_tokens, cfg->reserve);
	if (cfg->max_tool_calls)
		d->warn_calls =
			reserve_point(cfg->max_tool_calls, cfg->reserve);
	if (cfg->max_processes)
		d->warn_procs = reserve_point(cfg->max_processes, cfg->reserve);
	if (cfg->timeout_ms) {
		d->end_at = start_ms + cfg->timeout_ms;
		if (cfg->reserve > 0)
			d->warn_at = start_ms + reserve_point(cfg->timeout_ms,
							      cfg->reserve);
	}
	return d;
}

void lg_budget_free(struct lg_budget *d)
{
	free(d);
}

uint64_t lg_budget_next_deadline(const struct lg_budget *d)
{
	if (!d->end_at || d->timed_out)
		return 0;
	if (d->warn_at && !d->time_warned && d->warn_at < d->end_at)
		return d->warn_at;
	return d->end_at;
}

static enum lg_verdict check_time(struct lg_budget *d, uint64_t now,
				  struct lg_findings *out)
{
	uint64_t used = now > d->start ? now - d->start : 0;

	if (!d->end_at || d->timed_out)
		return LG_ALLOW;
	if (now >= d->end_at) {
		d->timed_out = true;
		lg_findings_add(out, d->cfg.action, "budget", "timeout",
				"timeout, session ran %llus (limit %llus)",
				(unsigned long long)(used / 1000),
				(unsigned long long)(d->cfg.timeout_ms / 1000));
		return d->cfg.action;
	}
	if (d->warn_at && !d->time_warned && now >= d->warn_at) {
		d->time_warned = true;
		reserve_then(d,
			     lg_findings_add(
				     out, LG_WARN, "budget", "timeout_reserve",
				     "timeout_reserve, %llus of %llus used",
				     (unsigned long long)(used / 1000),
				     (unsigned long long)(d->cfg.timeout_ms /
							  1000)));
		return LG_WARN;
	}
	return LG_ALLOW;
}

static uint64_t add_sat(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static enum lg_verdict worse(enum lg_verdict a, enum lg_verdict b)
{
	return a > b ? a : b;
}

static enum lg_verdict check_turns(struct lg_budget *d, struct lg_findings *out)
{
	uint64_t max = d->cfg.max_turns;

	if (!max)
		return LG_ALLOW;
	if (d->turns > max) {
		lg_findings_add(
			out, d->cfg.action, "budget", "max_turns",
			"max_turns, model turn #%llu ended, over the session limit of %llu turns",
			(unsigned long long)d->turns, (unsigned long long)max);
		return d->cfg.action;
	}
	if (!d->turns_warned && d->cfg.reserve > 0 &&
	    d->turns >= d->warn_turns && d->turns < max) {
		d->turns_warned = true;
		reserve_then(
			d,
			lg_findings_add(
				out, LG_WARN, "budget", "turns_reserve",
				"turns_reserve, %llu of %llu model turns used",
				(unsigned long long)d->turns,
				(unsigned long long)max));
		return LG_WARN;
	}
	return LG_ALLOW;
}

/* Steps: every completed tool call, from the shim or the model's stream. */
static enum lg_verdict check_calls(struct lg_budget *d, struct lg_findings *out)
{
	uint64_t max = d->cfg.max_tool_calls;

	if (!max)
		return LG_ALLOW;
	if (d->calls > max) {
		lg_findings_add(
			out, d->cfg.action, "budget", "max_tool_calls",
			"max_tool_calls, tool call #%llu, over the session limit of %llu steps",
			(unsigned long long)d->calls, (unsigned long long)max);
		return d->cfg.action;
	}
	if (!d->calls_warned && d->cfg.reserve > 0 &&
	    d->calls >= d->warn_calls && d->calls < max) {
		d->calls_warned = true;
		reserve_then(
			d,
			lg_findings_add(
				out, LG_WARN, "budget", "tool_calls_reserve",
				"tool_calls_reserve, %llu of %llu tool calls used",
				(unsigned long long)d->calls,
				(unsigned long long)max));
		return LG_WARN;
	}
	return LG_ALLOW;
}

static enum lg_verdict check_tokens(struct lg_budget *d,
				    const struct lg_event *ev,
				    struct lg_findings *out)
{
	uint64_t max = d->cfg.max_tokens;

	if (!max)
		return LG_ALLOW;
	if (d->tokens > max) {
		lg_findings_add(
			out, d->cfg.action, "budget", "max_tokens",
			"max_tokens, %llu tokens used after model turn #%llu (this turn: %llu in, %llu out), over the session limit of %llu",
			(unsigned long long)d->tokens,
			(unsigned long long)d->turns,
			(unsigned long long)ev->tokens_in,
			(unsigned long long)ev->tokens_out,
			(unsigned long long)max);
		return d->cfg.action;
	}
	if (!d->tokens_warned && d->cfg.reserve > 0 &&
	    d->tokens >= d->warn_tokens && d->tokens < max) {
		d->tokens_warned = true;
		reserve_then(d,
			     lg_findings_add(
				     out, LG_WARN, "budget", "tokens_reserve",
				     "tokens_reserve, %llu of %llu tokens used",
				     (unsigned long long)d->tokens,
				     (unsigned long long)max));
		return LG_WARN;
	}
	return LG_ALLOW;
}

static enum lg_verdict check_cost(struct lg_budget *d, struct lg_findings *out)
{
	double max = d->cfg.max_cost;

	if (max <= 0)
		return LG_ALLOW;
	if (d->cost > max) {
		lg_findings_add(
			out, d->cfg.action, "budget", "max_cost",
			"max_cost, $%.4f spent after model turn #%llu, over the session limit of $%g",
			d->cost, (unsigned long long)d->turns, max);
		return d->cfg.action;
	}
	if (!d->cost_warned && d->cfg.reserve > 0 &&
	    d->cost >= max * (1.0 - d->cfg.reserve)) {
		d->cost_warned = true;
		reserve_then(d, lg_findings_add(
					out, LG_WARN, "budget", "cost_reserve",
					"cost_reserve, $%.4f of $%g spent",
					d->cost, max));
		return LG_WARN;
	}
	return LG_ALLOW;
}

enum lg_verdict lg_budget_feed(struct lg_budget *d, const struct lg_event *ev,
			       const struct lg_guard_env *env,
			       struct lg_findings *out)
{
	enum lg_verdict v = check_time(d, env->now_ms, out);
	uint64_t max = d->cfg.max_destructive_ops;

	if (ev->kind == LG_EV_PROCESSES && d->cfg.max_processes &&
	    !d->procs_tripped) {
		uint64_t pmax = d->cfg.max_processes;

		if (ev->processes > pmax) {
			d->procs_tripped = true;
			lg_findings_add(
				out, d->cfg.action, "budget", "max_processes",
				"max_processes, %u processes in the tree, over the session limit of %llu",
				ev->processes, (unsigned long long)pmax);
			return worse(v, d->cfg.action);
		}
		if (!d->procs_warned && d->cfg.reserve > 0 &&
		    ev->processes >= d->warn_procs) {
			d->procs_warned = true;
			reserve_then(
				d,
				lg_findings_add(
					out, LG_WARN, "budget",
					"processes_reserve",
					"processes_reserve, %u of %llu processes",
					ev->processes,
					(unsigned long long)pmax));
			return worse(v, LG_WARN);
		}
		return v;
	}
	if (ev->kind == LG_EV_TOOL_DONE) {
		d->calls++;
		return worse(v, check_calls(d, out));
	}
	if (ev->kind == LG_EV_TURN) {
		d->turns++;
		d->tokens = add_sat(d->tokens,
				    add_sat(ev->tokens_in, ev->tokens_out));
		if (ev->cost > 0)
			d->cost += ev->cost;
		v = worse(v, check_turns(d, out));
		v = worse(v, check_tokens(d, ev, out));
		return worse(v, check_cost(d, out));
	}
	if (!max || ev->kind != LG_EV_DESTRUCTIVE ||
	    ev->cls != LG_CLASS_DESTROY)
		return v;
	if (d->ops + 1 > max) {
		lg_findings_add(
			out, d->cfg.action, "budget", "budget_exceeded",
			"budget_exceeded, %s %s would be destructive op #%llu, over the session limit of %llu",
			lg_op_name(ev->op), ev->target,
			(unsigned long long)(d->ops + 1),
			(unsigned long long)max);
		return d->cfg.action > v ? d->cfg.action : v;
	}
	d->ops++;
	if (!d->ops_warned && d->cfg.reserve > 0 && d->ops >= d->warn_ops &&
	    d->ops < max) {
		d->ops_warned = true;
		reserve_then(
			d,
			lg_findings_add(
				out, LG_WARN, "budget", "budget_reserve",
				"budget_reserve, %llu of %llu destructive ops used",
				(unsigned long long)d->ops,
				(unsigned long long)max));
		if (v < LG_WARN)
			v = LG_WARN;
	}
	return v;
}

static void *budget_new_any(const void *cfg, uint64_t start_ms)
{
	return lg_budget_new(cfg, start_ms);
}

static void budget_free_any(void *d)
{
	lg_budget_free(d);
}

static enum lg_verdict budget_feed_any(void *d, const struct lg_event *ev,
				       const struct lg_guard_env *env,
				       struct lg_findings *out)
{
	return lg_budget_feed(d, ev, env, out);
}

static uint64_t budget_next_deadline_any(const void *d)
{
	return lg_budget_next_deadline(d);
}

const struct lg_detector lg_detector_budget = {
	"budget",	 offsetof(struct lg_guard_cfg, budget),
	budget_new_any,	 budget_free_any,
	budget_feed_any, budget_next_deadline_any,
};
