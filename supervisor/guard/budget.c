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
#include <stdio.h>
#include <stdlib.h>

#include "detectors.h"

/* The limits on what the session adds up as it goes: a row each. */
enum { L_TURNS, L_TOOL_CALLS, L_TOKENS, L_COST, N_LIMITS };

struct lg_budget {
	struct lg_budget_cfg cfg;
	uint64_t start, ops;
	uint64_t warn_ops; /* op count at which the reserve warning fires */
	uint64_t warn_at, end_at; /* monotonic deadlines, 0 = none */
	bool ops_warned, time_warned, timed_out;
	/* the counts a turn or a call adds up, one per row of limits[] */
	struct count {
		uint64_t n, max, warn; /* a whole count; max 0: no limit */
		double x, xmax, xwarn; /* an amount (dollars) */
		bool warned;
	} count[N_LIMITS];
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
	d->count[L_TURNS].max = cfg->max_turns;
	d->count[L_TOOL_CALLS].max = cfg->max_tool_calls;
	d->count[L_TOKENS].max = cfg->max_tokens;
	for (int i = 0; i < N_LIMITS; i++)
		if (d->count[i].max)
			d->count[i].warn =
				reserve_point(d->count[i].max, cfg->reserve);
	d->count[L_COST].xmax = cfg->max_cost > 0 ? cfg->max_cost : 0;
	d->count[L_COST].xwarn = d->count[L_COST].xmax * (1.0 - cfg->reserve);
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

/*
 * What each limit says: over it (the action), and at its reserve point
 * (a warning, once). The numbers are the budget's; ev is the event that
 * added to it.
 */
static void say_turns(const struct lg_budget *d, const struct lg_event *ev,
		      bool over, char *buf, size_t n)
{
	const struct count *c = &d->count[L_TURNS];

	(void)ev;
	if (over)
		snprintf(
			buf, n,
			"max_turns, model turn #%llu ended, over the session limit of %llu turns",
			(unsigned long long)c->n, (unsigned long long)c->max);
	else
		snprintf(buf, n, "turns_reserve, %llu of %llu model turns used",
			 (unsigned long long)c->n, (unsigned long long)c->max);
}
static void say_tool_calls(const struct lg_budget *d, const struct lg_event *ev,
			   bool over, char *buf, size_t n)
{
	const struct count *c = &d->count[L_TOOL_CALLS];

	(void)ev;
	if (over)
		snprintf(
			buf, n,
			"max_tool_calls, tool call #%llu, over the session limit of %llu steps",
			(unsigned long long)c->n, (unsigned long long)c->max);
	else
		snprintf(buf, n,
			 "tool_calls_reserve, %llu of %llu tool calls used",
			 (unsigned long long)c->n, (unsigned long long)c->max);
}
static void say_tokens(const struct lg_budget *d, const struct lg_event *ev,
		       bool over, char *buf, size_t n)
{
	const struct count *c = &d->count[L_TOKENS];

	if (over)
		snprintf(
			buf, n,
			"max_tokens, %llu tokens used after model turn #%llu (this turn: %llu in, %llu out), over the session limit of %llu",
			(unsigned long long)c->n,
			(unsigned long long)d->count[L_TURNS].n,
			(unsigned long long)ev->tokens_in,
			(unsigned long long)ev->tokens_out,
			(unsigned long long)c->max);
	else
		snprintf(buf, n, "tokens_reserve, %llu of %llu tokens used",
			 (unsigned long long)c->n, (unsigned long long)c->max);
}
static void say_cost(const struct lg_budget *d, const struct lg_event *ev,
		     bool over, char *buf, size_t n)
{
	const struct count *c = &d->count[L_COST];

	(void)ev;
	if (over)
		snprintf(
			buf, n,
			"max_cost, $%.4f spent after model turn #%llu, over the session limit of $%g",
			c->x, (unsigned long long)d->count[L_TURNS].n, c->xmax);
	else
		snprintf(buf, n, "cost_reserve, $%.4f of $%g spent", c->x,
			 c->xmax);
}

static const struct limit {
	const char *reason, *reserve; /* the findings' reasons */
	bool whole; /* a count (n), or an amount (x): dollars */
	void (*say)(const struct lg_budget *d, const struct lg_event *ev,
		    bool over, char *buf, size_t n);
} limits[N_LIMITS] = {
	[L_TURNS] = { "max_turns", "turns_reserve", true, say_turns },
	[L_TOOL_CALLS] = { "max_tool_calls", "tool_calls_reserve", true,
			   say_tool_calls },
	[L_TOKENS] = { "max_tokens", "tokens_reserve", true, say_tokens },
	[L_COST] = { "max_cost", "cost_reserve", false, say_cost },
};

/* Limit i after ev added to it: over (the action), at its reserve, or not. */
static enum lg_verdict check(struct lg_budget *d, int i,
			     const struct lg_event *ev, struct lg_findings *out)
{
	const struct limit *l = &limits[i];
	struct count *c = &d->count[i];
	char text[LG_SUMMARY_MAX];

	bool over = l->whole ? c->n > c->max : c->x > c->xmax;
	bool near = l->whole ? c->n >= c->warn && c->n < c->max :
			       c->x >= c->xwarn;

	if (l->whole ? !c->max : c->xmax <= 0)
		return LG_ALLOW;
	if (over) {
		l->say(d, ev, true, text, sizeof(text));
		lg_findings_add(out, d->cfg.action, "budget", l->reason, "%s",
				text);
		return d->cfg.action;
	}
	if (!c->warned && d->cfg.reserve > 0 && near) {
		c->warned = true;
		l->say(d, ev, false, text, sizeof(text));
		reserve_then(d, lg_findings_add(out, LG_WARN, "budget",
						l->reserve, "%s", text));
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
		d->count[L_TOOL_CALLS].n++;
		return worse(v, check(d, L_TOOL_CALLS, ev, out));
	}
	if (ev->kind == LG_EV_TURN) {
		d->count[L_TURNS].n++;
		d->count[L_TOKENS].n =
			add_sat(d->count[L_TOKENS].n,
				add_sat(ev->tokens_in, ev->tokens_out));
		if (ev->cost > 0)
			d->count[L_COST].x += ev->cost;
		for (int i = L_TURNS; i < N_LIMITS; i++)
			if (i != L_TOOL_CALLS)
				v = worse(v, check(d, i, ev, out));
		return v;
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
