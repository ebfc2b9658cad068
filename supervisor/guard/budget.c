// SPDX-License-Identifier: MIT
/*
 * Budget: a wall-clock limit and a cap on destroyed pre-existing data per
 * session. Each warns once when only the reserve fraction is left, then
 * trips past the limit.
 */
#include <math.h>
#include <stdlib.h>

#include "detectors.h"

struct lg_budget {
	struct lg_budget_cfg cfg;
	uint64_t start, ops;
	uint64_t warn_ops; /* op count at which the reserve warning fires */
	uint64_t warn_at, end_at; /* monotonic deadlines, 0 = none */
	bool ops_warned, time_warned, timed_out;
};

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
		lg_findings_add(out, LG_WARN, "budget", "timeout_reserve",
				"timeout_reserve, %llus of %llus used",
				(unsigned long long)(used / 1000),
				(unsigned long long)(d->cfg.timeout_ms / 1000));
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
		lg_findings_add(
			out, LG_WARN, "budget", "budget_reserve",
			"budget_reserve, %llu of %llu destructive ops used",
			(unsigned long long)d->ops, (unsigned long long)max);
		if (v < LG_WARN)
			v = LG_WARN;
	}
	return v;
}
