// SPDX-License-Identifier: MIT
/*
 * Volumetric: destroyed pre-existing data in a sliding window. The op that
 * makes the count reach max is refused. An earlier removal whose target
 * exists again (git switching branches, tar extracting over a tree) was an
 * overwrite, not a loss: it is dropped from the window, but only when the
 * count would trip, so the common path asks the world nothing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "detectors.h"

struct vol_entry {
	uint64_t t;
	enum lg_op op;
	char *target;
	struct lg_target_id id;
	char member[48]; /* its name in a shared window */
};

struct lg_volumetric {
	struct lg_detector_cfg cfg;
	struct vol_entry *ring; /* capacity cfg.max, holds at most max - 1 */
	size_t head, len;
	uint64_t last_now;
	uint64_t seq; /* names members of a shared window */
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

/*
 * Keeps the entries whose targets are still gone, in order; the shared
 * window (if any) forgets the others. Returns the shared count after
 * that, or -1.
 */
static long prune_restored(struct lg_volumetric *d,
			   const struct lg_guard_env *env)
{
	const char *gone[64];
	char names[64][48];
	size_t keep = 0, n = d->len, ngone = 0;

	if (!env->restored)
		return -1;
	for (size_t i = 0; i < n; i++) {
		struct vol_entry e = *at(d, i);

		if (env->restored(env->ctx, e.target, e.op, &e.id)) {
			if (ngone < 64) {
				memcpy(names[ngone], e.member,
				       sizeof(names[0]));
				gone[ngone] = names[ngone];
				ngone++;
			}
			free(e.target);
			continue;
		}
		*at(d, keep++) = e;
	}
	d->len = keep;
	if (env->shared && ngone)
		return env->shared->forget(env->shared->ctx, "vol", gone, ngone,
					   d->cfg.window_ms);
	return -1;
}

/* "5 removals (2 of pre-existing files, 3 of remote data)" */
static void spell_kinds(size_t count, const size_t kind[4], char *buf,
			size_t size)
{
	char parts[4][48];
	unsigned n = 0;

	if (kind[0])
		snprintf(parts[n++], sizeof(parts[0]),
			 "%zu of pre-existing files", kind[0]);
	if (kind[1])
		snprintf(parts[n++], sizeof(parts[0]), "%zu tool delete%s",
			 kind[1], kind[1] == 1 ? "" : "s");
	if (kind[2])
		snprintf(parts[n++], sizeof(parts[0]), "%zu of remote data",
			 kind[2]);
	if (kind[3])
		snprintf(parts[n++], sizeof(parts[0]), "%zu of block devices",
			 kind[3]);
	snprintf(buf, size, "%zu removals (%s%s%s%s%s%s%s)", count, parts[0],
		 n > 1 ? ", " : "", n > 1 ? parts[1] : "", n > 2 ? ", " : "",
		 n > 2 ? parts[2] : "", n > 3 ? ", " : "",
		 n > 3 ? parts[3] : "");
}

/*
 * What the window counted, in words that are true of it: "3 deletes of
 * pre-existing files", "3 tool deletes", "3 deletes of remote data", or
 * the kinds spelled out.
 */
static void what_counted(const struct lg_volumetric *d,
			 const struct lg_event *ev, size_t count, char *buf,
			 size_t size)
{
	size_t kind[4] = { 0 }; /* files, tool, remote, devices */
	bool same = true;

	for (size_t i = 0; i <= d->len; i++) {
		enum lg_op op = i < d->len ?
					at((struct lg_volumetric *)d, i)->op :
					ev->op;

		kind[op == LG_OP_TOOL_DELETE   ? 1 :
		     op == LG_OP_REMOTE_DELETE ? 2 :
		     op == LG_OP_DEVICE_WRITE  ? 3 :
						 0]++;
		same &= op == ev->op;
	}
	if (kind[0] + kind[1] + kind[2] + kind[3] != count)
		/* other supervisors' counts */
		snprintf(buf, size, "%zu removals of pre-existing data", count);
	else if (kind[0] == count)
		snprintf(buf, size, "%zu %s of pre-existing files", count,
			 same ? lg_op_plural(ev->op) : "removals");
	else if (!!kind[0] + !!kind[1] + !!kind[2] + !!kind[3] == 1)
		snprintf(buf, size, "%zu %s", count, lg_op_plural(ev->op));
	else /* the kinds spelled out, those it counted */
		spell_kinds(count, kind, buf, size);
}

/*
 * Did the window count an op of op's kind: data destroyed off this host,
 * a block device written over (nothing of either was kept)?
 */
static bool counted_op(const struct lg_volumetric *d, const struct lg_event *ev,
		       enum lg_op op)
{
	if (ev->op == op)
		return true;
	for (size_t i = 0; i < d->len; i++)
		if (at((struct lg_volumetric *)d, i)->op == op)
			return true;
	return false;
}

/* The finding's words on what was not kept. */
static void mark_unkept(struct lg_finding *f, const struct lg_volumetric *d,
			const struct lg_event *ev)
{
	if (!f)
		return;
	f->remote = counted_op(d, ev, LG_OP_REMOTE_DELETE);
	f->device = counted_op(d, ev, LG_OP_DEVICE_WRITE);
}

/* The window is full: the finding, in words that are true of it. */
static void trip(const struct lg_volumetric *d, const struct lg_event *ev,
		 size_t count, uint64_t now, bool shared,
		 struct lg_findings *out)
{
	uint64_t span = d->len ? now - at((struct lg_volumetric *)d, 0)->t : 0;
	char what[160], last[4200];
	struct lg_finding *f;

	what_counted(d, ev, count, what, sizeof(what));
	if (ev->left_empty && ev->left_quiet_s) /* nothing to refuse */
		snprintf(last, sizeof(last),
			 "the last: %s, %s and left so for %us with no writer",
			 ev->target,
			 ev->left_stub ? "cut to a stub" : "emptied",
			 ev->left_quiet_s);
	else if (ev->left_empty) /* nothing to refuse: it happened */
		snprintf(last, sizeof(last), "the last: %s, %s at the end",
			 ev->target,
			 ev->left_stub ? "cut to a stub and left so" :
					 "emptied and left empty");
	else if (ev->happened) /* judged at its answer: it ran */
		snprintf(
			last, sizeof(last),
			"the last: %s %s, answered by its server (%s): it ran, and remote data cannot be kept",
			ev->tool ? ev->tool : lg_op_name(ev->op), ev->target,
			ev->system ? ev->system : "remote");
	else if (ev->op == LG_OP_REMOTE_DELETE) /* a command, at its exec */
		snprintf(last, sizeof(last),
			 "refused %s%s%s%s at its exec: it did not run",
			 ev->tool ? ev->tool : "", ev->tool ? " (" : "",
			 ev->target, ev->tool ? ")" : "");
	else if (ev->op == LG_OP_DEVICE_WRITE) /* "what was wiped" */
		snprintf(
			last, sizeof(last),
			"refused %s %s (it holds %s; lgrun cannot keep a block device's content)",
			lg_op_name(ev->op), ev->target,
			ev->system ? ev->system : "data");
	else
		snprintf(last, sizeof(last), "refused %s %s",
			 lg_op_name(ev->op), ev->target);
	f = lg_findings_add(
		out, d->cfg.action, "volumetric", "volume_exceeded",
		"volume_exceeded, %s in %.1fs (limit %u per %llus%s); %s", what,
		(double)span / 1000.0, d->cfg.max,
		(unsigned long long)(d->cfg.window_ms / 1000),
		shared ? ", all supervisors of the session" : "", last);
	mark_unkept(f, d, ev);
}

enum lg_verdict lg_volumetric_feed(struct lg_volumetric *d,
				   const struct lg_event *ev,
				   const struct lg_guard_env *env,
				   struct lg_findings *out)
{
	uint64_t now = env->now_ms;
	struct vol_entry *e;
	char member[48];
	long shared = -1;
	size_t count;
	unsigned steer;
	char what[160];

	if (!d->cfg.max || ev->kind != LG_EV_DESTRUCTIVE ||
	    ev->cls != LG_CLASS_DESTROY)
		return LG_ALLOW;
	/* A clock that steps back must not make old entries immortal. */
	if (now < d->last_now)
		now = d->last_now;
	d->last_now = now;
	while (d->len && now - at(d, 0)->t >= d->cfg.window_ms)
		drop_front(d);
	if (d->len == d->cfg.max) /* shared mode: the ring may be full */
		drop_front(d);
	if (env->pre) { /* counted already, with the same target's */
		snprintf(member, sizeof(member), "%s", env->pre->vol_member);
		shared = env->pre->vol;
	} else if (!env->shared) {
		member[0] = '\0'; /* a name only the shared window needs */
	} else {
		snprintf(member, sizeof(member), "%.30s:%llu",
			 env->shared->self ? env->shared->self : "",
			 (unsigned long long)++d->seq);
		shared = env->shared->add(env->shared->ctx, "vol", member,
					  d->cfg.window_ms);
	}
	count = shared >= 0 ? (size_t)shared : d->len + 1;
	if (count >= d->cfg.max) {
		long after = prune_restored(d, env);

		count = shared >= 0 && after >= 0 ? (size_t)after :
			shared >= 0		  ? count :
						    d->len + 1;
	}
	if (count >= d->cfg.max) {
		trip(d, ev, count, now, shared >= 0, out);
		/* Start over: a dry run keeps counting from a clean window. */
		clear(d);
		if (shared >= 0)
			env->shared->reset(env->shared->ctx, "vol");
		return d->cfg.action;
	}
	/*
	 * One short of the action, the model is told, counting only what is
	 * still gone: a removal whose target came back (tar or unzip over a
	 * tree, an editor's save) is no step toward the trip.
	 */
	steer = lg_steer_level(d->cfg.max, d->cfg.steer_at);
	if (steer && count == steer && shared < 0) {
		prune_restored(d, env);
		count = d->len + 1;
	}
	if (count == steer)
		what_counted(d, ev, count, what, sizeof(what));
	e = at(d, d->len);
	e->t = now;
	e->op = ev->op;
	e->id = ev->id;
	e->target = strdup(ev->target ? ev->target : "");
	if (!e->target)
		return LG_ALLOW; /* out of memory: forget rather than crash */
	memcpy(e->member, member, sizeof(e->member));
	d->len++;
	if (count == steer) {
		struct lg_finding *f;

		f = lg_findings_note(
			out, "volumetric", "volume_near",
			"%s within %llus (the last: %s %s); at %u, lgrun %s",
			what, (unsigned long long)(d->cfg.window_ms / 1000),
			lg_op_name(ev->op), ev->target, d->cfg.max,
			lg_verdict_deed(d->cfg.action));
		if (f) {
			f->then = d->cfg.action;
			f->left = d->cfg.max - (unsigned)count;
		}
		mark_unkept(f, d, ev);
	}
	return LG_ALLOW;
}

LG_DETECTOR_DEFINE(volumetric);
