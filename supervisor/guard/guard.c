// SPDX-License-Identifier: MIT
#include <stdio.h>
#include <stdlib.h>

#include "detectors.h"

static const struct lg_detector *const detectors[] = {
#define LG_DETECTOR(NAME, CFG) &lg_detector_##NAME,
#include "detectors.def"
#undef LG_DETECTOR
};
#define NDETECTORS (sizeof(detectors) / sizeof(detectors[0]))

struct lg_guard {
	void *state[NDETECTORS]; /* detectors[i]'s */
	struct lg_detector_cfg vol_cfg, same_cfg;
	uint64_t shared_seq;
	struct lg_guard_stats st;
};

struct lg_guard *lg_guard_new(const struct lg_guard_cfg *cfg, uint64_t start_ms)
{
	struct lg_guard *g = calloc(1, sizeof(*g));

	if (!g)
		return NULL;
	for (size_t i = 0; i < NDETECTORS; i++) {
		g->state[i] = detectors[i]->new (
			(const char *)cfg + detectors[i]->cfg, start_ms);
		if (!g->state[i]) {
			lg_guard_free(g);
			return NULL;
		}
	}
	g->vol_cfg = cfg->volumetric;
	g->same_cfg = cfg->same_target;
	return g;
}

void lg_guard_free(struct lg_guard *g)
{
	if (!g)
		return;
	for (size_t i = 0; i < NDETECTORS; i++)
		if (g->state[i])
			detectors[i]->free(g->state[i]);
	free(g);
}

/* The state of detector d in g (it is in the table). */
static void *state_of(const struct lg_guard *g, const struct lg_detector *d)
{
	for (size_t i = 0; i < NDETECTORS; i++)
		if (detectors[i] == d)
			return g->state[i];
	return NULL;
}

static enum lg_verdict worst(enum lg_verdict a, enum lg_verdict b)
{
	return a > b ? a : b;
}

/*
 * Shared windows (a store across hosts): the volumetric and same-target
 * counts of this target in one round trip before the detectors run, so
 * that each of them only reads its own (env->pre). env unchanged when
 * there is no store, nothing counted or the counts are in already.
 */
static const struct lg_guard_env *
shared_precount(struct lg_guard *g, const struct lg_event *ev,
		const struct lg_guard_env *env, struct lg_guard_env *shared_env,
		struct lg_shared_counts *pre)
{
	char tgt[4200];
	long c[2] = { -1, -1 };
	const char *self;

	if (!env->shared || !env->shared->add2 || env->pre ||
	    ev->kind != LG_EV_DESTRUCTIVE || ev->cls != LG_CLASS_DESTROY ||
	    !(g->vol_cfg.max || g->same_cfg.max))
		return env;
	self = env->shared->self ? env->shared->self : "";
	snprintf(pre->vol_member, sizeof(pre->vol_member), "%.30s:v%llu", self,
		 (unsigned long long)++g->shared_seq);
	snprintf(pre->tgt_member, sizeof(pre->tgt_member), "%.30s:t%llu", self,
		 (unsigned long long)g->shared_seq);
	snprintf(tgt, sizeof(tgt), "tgt:%s", ev->target ? ev->target : "");
	if (env->shared->add2(env->shared->ctx, g->vol_cfg.max ? "vol" : NULL,
			      pre->vol_member, g->vol_cfg.window_ms,
			      g->same_cfg.max ? tgt : NULL, pre->tgt_member,
			      g->same_cfg.window_ms, c) < 0)
		c[0] = c[1] = -1;
	pre->vol = c[0];
	pre->tgt = c[1];
	*shared_env = *env;
	shared_env->pre = pre;
	return shared_env;
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
	env = shared_precount(g, ev, env, &shared_env, &pre);
	for (size_t i = 0; i < NDETECTORS; i++)
		v = worst(v, detectors[i]->feed(g->state[i], ev, env, out));
	for (size_t i = 0; i < out->n; i++)
		if (out->f[i].action >= LG_DENY)
			g->st.trips++;
	return v;
}

uint64_t lg_guard_next_deadline(const struct lg_guard *g)
{
	uint64_t next = 0;

	for (size_t i = 0; i < NDETECTORS; i++) {
		uint64_t t;

		if (!detectors[i]->next_deadline)
			continue;
		t = detectors[i]->next_deadline(g->state[i]);
		if (t && (!next || t < next))
			next = t;
	}
	return next;
}

void lg_guard_flow_stats(const struct lg_guard *g, struct lg_flow_stats *st)
{
	lg_flow_stats(state_of(g, &lg_detector_flow), st);
}

void lg_guard_stats(const struct lg_guard *g, struct lg_guard_stats *st)
{
	*st = g->st;
}
