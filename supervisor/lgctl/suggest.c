// SPDX-License-Identifier: MIT
/*
 * lgctl suggest SESSION... [--config FILE] [--margin F]: from recorded
 * sessions an operator calls legitimate, the thresholds that let every one
 * of them through, with a margin, as an INI fragment. Found by replay
 * (replay.h), so what the guard would do is what decides: a session that
 * trips on a rule gets that rule's threshold raised to the least value it
 * passes at, and again until none trips; then the margin goes on top.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/cleanup.h"
#include "config/config.h"
#include "lgctl.h"
#include "record/replay.h"
#include "store/state.h"

/*
 * A threshold a trip names, by its rule and reason; higher lets more by.
 * What the key is (its kind, bounds, where it goes, how it is spelt) is
 * the config's key table's to say (lg_config_key_find).
 */
static const struct tunable {
	const char *rule, *reason, *section, *key;
} tunables[] = {
	{ "volumetric", "volume_exceeded", "volumetric", "max_ops" },
	{ "same_target", "loop_detected", "same_target", "max" },
	{ "repeat", "repeat", "repeat", "threshold" },
	{ "failures", "write_failures", "failures", "max" },
	{ "output_repeat", "output_repeat", "output_repeat", "threshold" },
	{ "budget", "budget_exceeded", "budget", "max_destructive_ops" },
	{ "budget", "timeout", "budget", "timeout" },
	{ "budget", "max_turns", "budget", "max_turns" },
	{ "budget", "max_tokens", "budget", "max_tokens" },
	{ "budget", "max_tool_calls", "budget", "max_tool_calls" },
	{ "budget", "max_processes", "budget", "max_processes" },
	{ "budget", "max_cost", "budget", "max_cost" },
};
#define NTUN (sizeof(tunables) / sizeof(tunables[0]))

/* t's key: its kind, bounds and place (find_keys made sure it is one). */
static const struct lg_config_key *key_of(const struct tunable *t)
{
	return lg_config_key_find(t->section, t->key);
}

/* Every tunable names a key that holds a number: else a bug here. */
static int find_keys(void)
{
	for (size_t i = 0; i < NTUN; i++) {
		const struct lg_config_key *k = key_of(&tunables[i]);
		uint64_t min, max;

		if (!k || !lg_config_key_number(k, &min, &max)) {
			fprintf(stderr,
				"lgctl: %s.%s is not a number key of the config\n",
				tunables[i].section, tunables[i].key);
			return -EINVAL;
		}
	}
	return 0;
}

static uint64_t get(const struct lg_config *c, const struct tunable *t)
{
	return lg_config_number(c, key_of(t));
}

static void set(struct lg_config *c, const struct tunable *t, uint64_t v)
{
	lg_config_set_number(c, key_of(t), v);
}

/* The most t's key can hold. */
static uint64_t max_of(const struct tunable *t)
{
	uint64_t min, max;

	lg_config_key_number(key_of(t), &min, &max);
	return max;
}

static const struct tunable *tunable_of(const struct lg_replay_trip *t)
{
	for (size_t i = 0; i < NTUN; i++)
		if (strcmp(tunables[i].rule, t->rule) == 0 &&
		    strcmp(tunables[i].reason, t->reason) == 0)
			return &tunables[i];
	return NULL;
}

/* One recorded session: its files, read again at each replay. */
struct rec {
	const char *id;
	FILE *f[2];
};

static int replay_one(struct rec *r, const struct lg_config *cfg,
		      struct lg_replay *out)
{
	int e;

	for (int i = 0; i < 2; i++)
		if (r->f[i])
			rewind(r->f[i]);
	e = lg_replay_run(r->f, 2, &cfg->guard, out);
	lg_replay_free(out); /* its trip is all suggest reads */
	return e;
}

/* Does r trip on t's threshold under cfg with it at v? */
static bool trips_on(struct rec *r, struct lg_config *cfg,
		     const struct tunable *t, uint64_t v)
{
	struct lg_replay out;
	uint64_t was = get(cfg, t);
	bool on;

	set(cfg, t, v);
	on = replay_one(r, cfg, &out) == 0 && out.trip.found &&
	     tunable_of(&out.trip) == t;
	set(cfg, t, was);
	return on;
}

/*
 * The least value above the current one at which r passes t's rule; past
 * the most its key can hold (max_of) when r trips even there.
 */
static uint64_t least_passing(struct rec *r, struct lg_config *cfg,
			      const struct tunable *t)
{
	uint64_t lo = get(cfg, t), hi = lo ? lo : 1, max = max_of(t);

	/* lo trips */
	while (trips_on(r, cfg, t, hi)) {
		if (hi >= max)
			return max + 1;
		lo = hi;
		hi = hi > max / 2 ? max : hi * 2;
	}
	while (hi - lo > 1) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (trips_on(r, cfg, t, mid))
			lo = mid;
		else
			hi = mid;
	}
	return hi;
}

static void print_value(const struct tunable *t, uint64_t v, char *out,
			size_t size)
{
	lg_config_spell_number(key_of(t), v, out, size);
}

static void suggest_usage(FILE *f)
{
	fprintf(f,
		"Usage: lgctl suggest SESSION... [--config FILE] [--margin F]\n"
		"From recorded sessions you call legitimate, the thresholds that let every\n"
		"one of them through, with a margin (default 0.5: half again), as an INI\n"
		"fragment for lgrun.ini. Base: FILE, else the first session's config.\n");
}

struct tuned {
	uint64_t needed, was;
	const char *by; /* the first session that needed it */
};

/*
 * Replays the sessions, raising the threshold the first trip names to the
 * least value that passes, until none trips: 0, or 2 when one trips on a
 * rule with no threshold, or past the most its key can hold.
 */
static int raise_until_pass(struct rec *recs, size_t n, struct lg_config *cfg,
			    struct tuned tuned[NTUN])
{
	for (int round = 0; round < 64; round++) {
		struct lg_replay out;
		const struct tunable *t;
		struct tuned *u;
		uint64_t v;
		size_t s;

		for (s = 0; s < n; s++) {
			if (replay_one(&recs[s], cfg, &out) < 0) {
				fprintf(stderr,
					"lgctl: cannot replay session '%s'\n",
					lgq_show(recs[s].id));
				return 2;
			}
			if (out.trip.found)
				break;
		}
		if (s == n)
			break; /* every session passes */
		t = tunable_of(&out.trip);
		if (!t) {
			fprintf(stderr,
				"lgctl: session '%s' trips on %s (%s), which has no threshold to raise: %s\n",
				lgq_show(recs[s].id), out.trip.rule,
				out.trip.reason, lgq_show(out.trip.summary));
			return 2;
		}
		v = least_passing(&recs[s], cfg, t);
		if (v > max_of(t)) {
			char most[32];

			print_value(t, max_of(t), most, sizeof(most));
			fprintf(stderr,
				"lgctl: session '%s' trips on %s (%s) even at %s.%s = %s, the most it can be: %s\n",
				lgq_show(recs[s].id), out.trip.rule,
				out.trip.reason, t->section, t->key, most,
				lgq_show(out.trip.summary));
			return 2;
		}
		u = &tuned[t - tunables];
		if (!u->by) {
			u->was = get(cfg, t);
			u->by = recs[s].id;
		}
		u->needed = v;
		set(cfg, t, v);
	}
	return 0;
}

/* Prints the raised thresholds with the margin, and sets them in cfg. */
static bool print_fragment(struct rec *recs, size_t n, struct lg_config *cfg,
			   const struct tuned tuned[NTUN], double margin,
			   const char *base)
{
	bool any = false;

	printf("; lgctl suggest: thresholds that let %zu recorded session(s) through, with a %.0f%% margin\n",
	       n, margin * 100.0);
	printf("; base: %s; sessions:", base ? lgq_show(base) : "the defaults");
	for (size_t s = 0; s < n; s++)
		printf(" %s", lgq_show(recs[s].id));
	printf("\n");
	for (size_t i = 0; i < NTUN; i++) {
		const struct tunable *t = &tunables[i];
		const struct tuned *u = &tuned[i];
		bool header = true;
		uint64_t v;
		char a[32], b[32], c[32];

		if (!u->by)
			continue;
		for (size_t k = 0; k < i; k++) /* its section said already */
			if (tuned[k].by &&
			    strcmp(tunables[k].section, t->section) == 0)
				header = false;
		v = (uint64_t)ceil((double)u->needed * (1.0 + margin));
		if (margin > 0 && v <= u->needed)
			v = u->needed + 1; /* a margin adds one at least */
		if (v > max_of(t))
			v = max_of(t); /* what the key can hold: it passes */
		print_value(t, v, a, sizeof(a));
		print_value(t, u->needed, b, sizeof(b));
		print_value(t, u->was, c, sizeof(c));
		if (header)
			printf("[%s]\n", t->section);
		printf("; %s passes them all (it was %s; first needed by %s)\n%s = %s\n",
		       b, c, lgq_show(u->by), t->key, a);
		set(cfg, t, v);
		any = true;
	}
	return any;
}

static int run_suggest(struct rec *recs, size_t n, struct lg_config *cfg,
		       double margin, const char *base)
{
	struct tuned tuned[NTUN] = { 0 };
	struct lg_replay out;

	if (find_keys() < 0 || raise_until_pass(recs, n, cfg, tuned))
		return 2;
	if (!print_fragment(recs, n, cfg, tuned, margin, base))
		printf("; every session passes under the base config: nothing to raise\n");
	/* what it prints holds: every session passes under it */
	for (size_t s = 0; s < n; s++)
		if (replay_one(&recs[s], cfg, &out) < 0 || out.trip.found) {
			fprintf(stderr,
				"lgctl: session '%s' still trips under the suggestion (%s)\n",
				lgq_show(recs[s].id), out.trip.rule);
			return 2;
		}
	return 0;
}

/* The recordings' files, up to the first entry without an id; then recs. */
static void recs_close(struct rec **recs)
{
	int e = errno;

	for (struct rec *r = *recs; r && r->id; r++)
		for (int k = 0; k < 2; k++)
			if (r->f[k])
				fclose(r->f[k]);
	free(*recs);
	errno = e;
}

int lgctl_suggest(const char *dir, const struct lg_config *loaded, int argc,
		  char **argv)
{
	static const struct option lo[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "margin", required_argument, NULL, 'm' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *config = NULL;
	double margin = 0.5;
	LG_AUTO(recs_close) struct rec *recs = NULL;
	struct lg_config cfg;
	struct lg_error err;
	struct lg_replay head;
	size_t n;
	int c, rc = 2;

	(void)loaded; /* --config's, or the recordings' own */
	optind = 0;
	while ((c = getopt_long(argc, argv, "c:m:h", lo, NULL)) != -1) {
		char *end;

		switch (c) {
		case 'c':
			config = optarg;
			break;
		case 'm':
			margin = strtod(optarg, &end);
			if (*end || margin < 0 || margin > 100) {
				fprintf(stderr,
					"lgctl suggest: --margin '%s' is not a fraction (0.5: half again)\n",
					optarg);
				return 2;
			}
			break;
		case 'h':
			suggest_usage(stdout);
			return 0;
		default:
			suggest_usage(stderr);
			return 2;
		}
	}
	if (optind >= argc) {
		suggest_usage(stderr);
		return 2;
	}
	n = (size_t)(argc - optind);
	recs = calloc(n + 1, sizeof(*recs)); /* + 1: no id, the end */
	if (!recs)
		return 2;
	for (size_t i = 0; i < n; i++) {
		char p[PATH_MAX + 256];

		recs[i].id = argv[optind + (int)i];
		if (!lg_session_id_valid(recs[i].id)) {
			fprintf(stderr,
				"lgctl: '%s' is not a valid session id\n",
				lgq_show(recs[i].id));
			return 2;
		}
		snprintf(p, sizeof(p), "%s/sessions/%s.events.old.jsonl", dir,
			 recs[i].id);
		recs[i].f[0] = fopen(p, "re");
		snprintf(p, sizeof(p), "%s/sessions/%s.events.jsonl", dir,
			 recs[i].id);
		recs[i].f[1] = fopen(p, "re");
		if (!recs[i].f[1]) {
			fprintf(stderr,
				"lgctl: no recording of session '%s' (%s)\n",
				lgq_show(recs[i].id), lgq_show(p));
			return 2;
		}
	}
	if (!config &&
	    lg_replay_head(recs[0].f[0] ? recs[0].f[0] : recs[0].f[1], &head) ==
		    0 &&
	    head.config[0])
		config = head.config;
	lg_config_init(&cfg);
	if (lg_config_load(&cfg, config, NULL, NULL, &err) < 0) {
		fprintf(stderr, "lgctl: %s\n", err.msg);
	} else {
		rc = run_suggest(recs, n, &cfg, margin, config);
	}
	lg_config_free(&cfg);
	return rc;
}
