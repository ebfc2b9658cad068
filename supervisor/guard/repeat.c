// SPDX-License-Identifier: MIT
/*
 * Repeat: the same tool called with the same arguments (and, with
 * include_result, getting the same result) threshold times in a row. An
 * agent in that state is not making progress, and the fault is usually
 * upstream (a tool that keeps answering the same thing), so waiting for
 * it to recover only burns turns. Any other tool call breaks the run;
 * events that are not tool calls do not.
 *
 * Only a 64-bit digest of the last signature is kept: the tripping event
 * itself carries the previews the summary needs.
 */
#include <stdlib.h>
#include <string.h>

#include "lib/text.h"
#include "detectors.h"

/*
 * "In a row" is per stream: one agent's conversation (the proxy), or one
 * process with one server (the shim). Parallel subagents, or a process's
 * parallel workers, asking the same thing once each are not a loop.
 */
#define REPEAT_STREAMS 64

struct rstream {
	uint64_t key, used;
	uint64_t last; /* digest of the last call's signature */
	unsigned run; /* calls in a row with that signature; 0: none */
};

struct lg_repeat {
	struct lg_repeat_cfg cfg;
	struct rstream s[REPEAT_STREAMS];
	uint64_t tick;
	struct rstream *cur; /* the stream fed last */
};

static struct rstream *stream_of(struct lg_repeat *d, uint64_t key)
{
	struct rstream *lru = &d->s[0];

	d->tick++;
	for (size_t i = 0; i < REPEAT_STREAMS; i++) {
		if (d->s[i].used && d->s[i].key == key) {
			d->s[i].used = d->tick;
			return &d->s[i];
		}
		if (d->s[i].used < lru->used)
			lru = &d->s[i];
	}
	/* a new stream takes the least recently used slot */
	memset(lru, 0, sizeof(*lru));
	lru->key = key;
	lru->used = d->tick;
	return lru;
}

struct lg_repeat *lg_repeat_new(const struct lg_repeat_cfg *cfg)
{
	struct lg_repeat *d = calloc(1, sizeof(*d));

	if (!d)
		return NULL;
	d->cfg = *cfg;
	return d;
}

void lg_repeat_free(struct lg_repeat *d)
{
	free(d);
}

unsigned lg_repeat_run(const struct lg_repeat *d)
{
	return d->cur ? d->cur->run : 0;
}

static void add_str(struct lg_digest *h, const char *s)
{
	s = s ? s : "";
	lg_digest_update(h, s, strlen(s));
}

/*
 * tool NUL args [NUL result_digest]: none of the parts can hold a NUL, so
 * different calls never spell the same bytes.
 */
static uint64_t signature(const struct lg_repeat *d, const struct lg_event *ev)
{
	struct lg_digest h;

	lg_digest_init(&h);
	add_str(&h, ev->tool);
	lg_digest_update(&h, "", 1);
	add_str(&h, ev->args);
	if (d->cfg.include_result) {
		lg_digest_update(&h, "", 1);
		add_str(&h, ev->result_digest);
	}
	return lg_digest_final(&h);
}

/* Sized so the summary always fits in LG_SUMMARY_MAX, never cut mid-way. */
struct previews {
	char tool[96];
	char args[192];
	char result[152];
};

static void trip(struct lg_repeat *d, struct rstream *st,
		 const struct lg_event *ev, struct lg_findings *out)
{
	struct previews p;
	const char *args = ev->args_preview && *ev->args_preview ?
				   ev->args_preview :
				   ev->args;

	lg_preview(ev->tool && *ev->tool ? ev->tool : "?", p.tool,
		   sizeof(p.tool), 64);
	lg_preview(args, p.args, sizeof(p.args), 120);
	lg_preview(ev->result_preview, p.result, sizeof(p.result), 100);
	/* Without include_result, results may differ within the run. */
	if (d->cfg.include_result && p.result[0])
		lg_findings_add(out, d->cfg.action, "repeat", "repeat",
				"repeat, %s(%s) -> \"%s\" %u times in a row",
				p.tool, p.args, p.result, st->run);
	else
		lg_findings_add(out, d->cfg.action, "repeat", "repeat",
				"repeat, %s(%s) %u times in a row", p.tool,
				p.args, st->run);
}

enum lg_verdict lg_repeat_feed(struct lg_repeat *d, const struct lg_event *ev,
			       const struct lg_guard_env *env,
			       struct lg_findings *out)
{
	struct rstream *st;
	uint64_t sig;

	(void)env;
	if (!d->cfg.threshold || ev->kind != LG_EV_TOOL_DONE)
		return LG_ALLOW;
	sig = signature(d, ev);
	st = d->cur = stream_of(d, ev->stream);
	if (st->run && sig == st->last) {
		st->run++;
	} else {
		st->last = sig;
		st->run = 1;
	}
	if (st->run < d->cfg.threshold) {
		if (st->run ==
		    lg_steer_level(d->cfg.threshold, d->cfg.steer_at)) {
			struct previews p;

			lg_preview(ev->tool && *ev->tool ? ev->tool : "?",
				   p.tool, sizeof(p.tool), 64);
			lg_preview(ev->args_preview && *ev->args_preview ?
					   ev->args_preview :
					   ev->args,
				   p.args, sizeof(p.args), 120);
			struct lg_finding *f = lg_findings_note(
				out, "repeat", "repeat_near",
				"the same call %s(%s) %u times in a row%s; at %u, lgrun %s",
				p.tool, p.args, st->run,
				d->cfg.include_result ?
					" with the same result" :
					"",
				d->cfg.threshold,
				lg_verdict_deed(d->cfg.action));

			if (f) {
				f->then = d->cfg.action;
				f->left = d->cfg.threshold - st->run;
			}
		}
		return LG_ALLOW;
	}
	trip(d, st, ev, out);
	/* Observe mode and warn go on: the next run starts over. */
	st->run = 0;
	return d->cfg.action;
}

LG_DETECTOR_DEFINE(repeat);
