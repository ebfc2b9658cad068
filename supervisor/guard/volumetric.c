// SPDX-License-Identifier: MIT
/*
 * Volumetric: destroyed pre-existing data in a sliding window. The op that
 * makes the count reach max is refused. An earlier removal whose target
 * exists again (git switching branches, tar extracting over a tree) was an
 * overwrite, not a loss: it is dropped from the window, but only when the
 * count would trip, so the common path asks the world nothing.
 */
#include <stdlib.h>
#include <string.h>

#include "detectors.h"

struct vol_entry {
	uint64_t t;
	enum lg_op op;
	char *target;
};

struct lg_volumetric {
	struct lg_detector_cfg cfg;
	struct vol_entry *ring; /* capacity cfg.max, holds at most max - 1 */
	size_t head, len;
	uint64_t last_now;
};

struct lg_volumetric *lg_volumetric_new(const struct lg_detector_cfg *cfg)
{
	struct lg_volumetric *d = calloc(1, sizeof(*d));

	if (!d)
		return NULL;
	d->cfg = *cfg;
	if (cfg->max) {
		d->ring = calloc(cfg->max, sizeof(*d->ring));
		if (!d->ring) {
			free(d);
			return NULL;
		}
	}
	return d;
}

static struct vol_entry *at(struct lg_volumetric *d, size_t i)
{
	return &d->ring[(d->head + i) % d->cfg.max];
}

static void drop_front(struct lg_volumetric *d)
{
	free(at(d, 0)->target);
	at(d, 0)->target = NULL;
	d->head = (d->head + 1) % d->cfg.max;
	d->len--;
}

static void clear(struct lg_volumetric *d)
{
	while (d->len)
		drop_front(d);
	d->head = 0;
}

void lg_volumetric_free(struct lg_volumetric *d)
{
	if (!d)
		return;
	if (d->ring)
		clear(d);
	free(d->ring);
	free(d);
}

/* Keeps the entries whose targets are still gone, in order. */
static void prune_restored(struct lg_volumetric *d,
			   const struct lg_guard_env *env)
{
	size_t keep = 0, n = d->len;

	if (!env->restored)
		return;
	for (size_t i = 0; i < n; i++) {
		struct vol_entry e = *at(d, i);

		if (env->restored(env->ctx, e.target, e.op)) {
			free(e.target);
			continue;
		}
		*at(d, keep++) = e;
	}
	d->len = keep;
}

enum lg_verdict lg_volumetric_feed(struct lg_volumetric *d,
				   const struct lg_event *ev,
				   const struct lg_guard_env *env,
				   struct lg_findings *out)
{
	uint64_t now = env->now_ms;
	struct vol_entry *e;

	if (!d->cfg.max || ev->kind != LG_EV_DESTRUCTIVE ||
	    ev->cls != LG_CLASS_DESTROY)
		return LG_ALLOW;
	/* A clock that steps back must not make old entries immortal. */
	if (now < d->last_now)
		now = d->last_now;
	d->last_now = now;
	while (d->len && now - at(d, 0)->t >= d->cfg.window_ms)
		drop_front(d);
	if (d->len + 1 >= d->cfg.max)
		prune_restored(d, env);
	if (d->len + 1 >= d->cfg.max) {
		uint64_t span = d->len ? now - at(d, 0)->t : 0;

		lg_findings_add(
			out, d->cfg.action, "volumetric", "volume_exceeded",
			"volume_exceeded, %zu %s of pre-existing files in %.1fs (limit %u per %llus); refused %s %s",
			d->len + 1, lg_op_plural(ev->op), (double)span / 1000.0,
			d->cfg.max,
			(unsigned long long)(d->cfg.window_ms / 1000),
			lg_op_name(ev->op), ev->target);
		/* Start over: a dry run keeps counting from a clean window. */
		clear(d);
		return d->cfg.action;
	}
	e = at(d, d->len);
	e->t = now;
	e->op = ev->op;
	e->target = strdup(ev->target ? ev->target : "");
	if (!e->target)
		return LG_ALLOW; /* out of memory: forget rather than crash */
	d->len++;
	return LG_ALLOW;
}
