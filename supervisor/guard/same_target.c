// SPDX-License-Identifier: MIT
/*
 * Same target: one target attempted max times in the window trips, whether
 * or not it came back in between. This is what stops a loop retrying one
 * delete even when a profile raises the volumetric limit for bulk work.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "detectors.h"

struct st_node {
	struct st_node *next;
	uint64_t h; /* hash(key): compared before the key, kept for grow() */
	unsigned n; /* attempts in ts[] */
	uint64_t *ts; /* the last (max - 1) attempt times, oldest first: in
			 the node's own allocation, after key */
	char key[];
};

struct lg_same_target {
	struct lg_detector_cfg cfg;
	struct st_node **buckets;
	size_t nbuckets, nodes, sweep_at;
	uint64_t last_now;
	uint64_t seq; /* names members of a shared window */
};

static uint64_t hash(const char *s)
{
	uint64_t h = 1469598103934665603ULL; /* FNV-1a */

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ULL;
	return h;
}

struct lg_same_target *lg_same_target_new(const struct lg_detector_cfg *cfg)
{
	struct lg_same_target *d = calloc(1, sizeof(*d));

	if (!d)
		return NULL;
	d->cfg = *cfg;
	d->nbuckets = 256;
	d->sweep_at = 1024;
	d->buckets = calloc(d->nbuckets, sizeof(*d->buckets));
	if (!d->buckets) {
		free(d);
		return NULL;
	}
	return d;
}

static void node_free(struct st_node *n)
{
	free(n);
}

void lg_same_target_free(struct lg_same_target *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->nbuckets; i++) {
		struct st_node *n = d->buckets[i], *next;

		for (; n; n = next) {
			next = n->next;
			node_free(n);
		}
	}
	free(d->buckets);
	free(d);
}

size_t lg_same_target_tracked(const struct lg_same_target *d)
{
	return d->nodes;
}

static void expire(struct lg_same_target *d, struct st_node *n, uint64_t now)
{
	unsigned drop = 0;

	while (drop < n->n && now - n->ts[drop] >= d->cfg.window_ms)
		drop++;
	if (drop) {
		memmove(n->ts, n->ts + drop, (n->n - drop) * sizeof(*n->ts));
		n->n -= drop;
	}
}

/* Drops targets with no attempt left in the window; keeps memory bounded. */
static void sweep(struct lg_same_target *d, uint64_t now)
{
	for (size_t i = 0; i < d->nbuckets; i++) {
		struct st_node **pp = &d->buckets[i];

		while (*pp) {
			struct st_node *n = *pp;

			expire(d, n, now);
			if (n->n == 0) {
				*pp = n->next;
				node_free(n);
				d->nodes--;
			} else {
				pp = &n->next;
			}
		}
	}
	d->sweep_at = d->nodes * 2 > 1024 ? d->nodes * 2 : 1024;
}

static void grow(struct lg_same_target *d)
{
	size_t nb = d->nbuckets * 2;
	struct st_node **b = calloc(nb, sizeof(*b));

	if (!b)
		return; /* keep the old table: slower, still correct */
	for (size_t i = 0; i < d->nbuckets; i++) {
		struct st_node *n = d->buckets[i], *next;

		for (; n; n = next) {
			size_t j = n->h & (nb - 1);

			next = n->next;
			n->next = b[j];
			b[j] = n;
		}
	}
	free(d->buckets);
	d->buckets = b;
	d->nbuckets = nb;
}

/* Removals that count: what destroys, unlinks or replaces data. */
static bool counted(const struct lg_event *ev)
{
	return ev->kind == LG_EV_DESTRUCTIVE &&
	       (ev->cls == LG_CLASS_DESTROY || ev->cls == LG_CLASS_LINKED ||
		ev->cls == LG_CLASS_MOVED || ev->cls == LG_CLASS_SUPERSEDED ||
		ev->cls == LG_CLASS_NO_DATA);
}

static struct st_node *find(const struct lg_same_target *d, const char *key,
			    uint64_t h)
{
	struct st_node *n;

	for (n = d->buckets[h & (d->nbuckets - 1)]; n; n = n->next)
		if (n->h == h && strcmp(n->key, key) == 0)
			break;
	return n;
}

/* A new target's node, in the table; NULL when out of memory. */
static struct st_node *add_node(struct lg_same_target *d, const char *key,
				uint64_t h, uint64_t now)
{
	size_t len = strlen(key), at, b;
	struct st_node *n;

	if (d->nodes >= d->sweep_at)
		sweep(d, now);
	if (d->nodes >= d->nbuckets)
		grow(d);
	/* one allocation: the node, its key, then its times (aligned) */
	at = (sizeof(*n) + len + 1 + 7) & ~(size_t)7;
	n = malloc(at + (d->cfg.max - 1) * sizeof(*n->ts));
	if (!n)
		return NULL;
	n->ts = (uint64_t *)((char *)n + at);
	memcpy(n->key, key, len + 1);
	n->h = h;
	n->n = 0;
	b = h & (d->nbuckets - 1);
	n->next = d->buckets[b];
	d->buckets[b] = n;
	d->nodes++;
	return n;
}

/*
 * The session's attempts on the target from every host (env->shared):
 * true, found, when they reach the maximum. n is this host's count, or
 * NULL.
 */
static bool shared_trip(struct lg_same_target *d, const struct lg_event *ev,
			const struct lg_guard_env *env, struct st_node *n,
			const char *key, struct lg_findings *out)
{
	char win[4200], member[48];
	long c;

	snprintf(win, sizeof(win), "tgt:%s", key);
	if (env->pre) {
		c = env->pre->tgt;
	} else {
		snprintf(member, sizeof(member), "%.30s:%llu",
			 env->shared->self ? env->shared->self : "",
			 (unsigned long long)++d->seq);
		c = env->shared->add(env->shared->ctx, win, member,
				     d->cfg.window_ms);
	}
	if (c >= (long)d->cfg.max) {
		lg_findings_add(
			out, d->cfg.action, "same_target", "loop_detected",
			"loop_detected, %ld %s on %s (all supervisors of the session)",
			c, lg_op_plural(ev->op), key);
		env->shared->reset(env->shared->ctx, win);
		if (n)
			n->n = 0;
		return true;
	}
	if (c >= 0 && n && n->n + 1 >= d->cfg.max)
		n->n = 0; /* the store decides; keep room locally */
	return false;
}

enum lg_verdict lg_same_target_feed(struct lg_same_target *d,
				    const struct lg_event *ev,
				    const struct lg_guard_env *env,
				    struct lg_findings *out)
{
	uint64_t now = env->now_ms;
	const char *key = ev->target ? ev->target : "";
	struct st_node *n;
	uint64_t h;

	if (!d->cfg.max || !counted(ev))
		return LG_ALLOW;
	if (now < d->last_now)
		now = d->last_now;
	d->last_now = now;

	h = hash(key);
	n = find(d, key, h);
	if (n)
		expire(d, n, now);
	if (env->shared && shared_trip(d, ev, env, n, key, out))
		return d->cfg.action;
	if (n && n->n + 1 >= d->cfg.max) {
		uint64_t span = now - n->ts[0];

		lg_findings_add(out, d->cfg.action, "same_target",
				"loop_detected",
				"loop_detected, %u %s on %s in %.1fs", n->n + 1,
				lg_op_plural(ev->op), key,
				(double)span / 1000.0);
		n->n = 0; /* a dry run starts this target's count over */
		return d->cfg.action;
	}
	if (d->cfg.max == 1) {
		lg_findings_add(out, d->cfg.action, "same_target",
				"loop_detected", "loop_detected, 1 %s on %s",
				lg_op_plural(ev->op), key);
		return d->cfg.action;
	}
	if (!n)
		n = add_node(d, key, h, now);
	if (!n)
		return LG_ALLOW;
	n->ts[n->n++] = now;
	if (n->n == lg_steer_level(d->cfg.max, d->cfg.steer_at)) {
		struct lg_finding *f = lg_findings_note(
			out, "same_target", "target_near",
			"%u %s on %s within %llus; at %u, lgrun %s", n->n,
			lg_op_plural(ev->op), key,
			(unsigned long long)(d->cfg.window_ms / 1000),
			d->cfg.max, lg_verdict_deed(d->cfg.action));

		if (f) {
			f->then = d->cfg.action;
			f->left = d->cfg.max - n->n;
		}
	}
	return LG_ALLOW;
}

LG_DETECTOR_DEFINE(same_target);
