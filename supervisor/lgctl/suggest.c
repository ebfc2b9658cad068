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

#include "config/config.h"
#include "lgctl.h"
#include "record/replay.h"
#include "store/state.h"

enum ttype { T_UINT, T_U64, T_MS, T_CENTS };

/* A threshold a trip names, by its rule and reason; higher lets more by. */
static const struct tunable {
	const char *rule, *reason, *section, *key;
	enum ttype type;
	size_t off; /* in struct lg_guard_cfg */
} tunables[] = {
#define G(f) offsetof(struct lg_guard_cfg, f)
	{ "volumetric", "volume_exceeded", "volumetric", "max_ops", T_UINT,
	  G(volumetric.max) },
	{ "same_target", "loop_detected", "same_target", "max", T_UINT,
	  G(same_target.max) },
	{ "repeat", "repeat", "repeat", "threshold", T_UINT,
	  G(repeat.threshold) },
	{ "failures", "write_failures", "failures", "max", T_UINT,
	  G(failures.max) },
	{ "output_repeat", "output_repeat", "output_repeat", "threshold",
	  T_UINT, G(output_repeat.threshold) },
	{ "budget", "budget_exceeded", "budget", "max_destructive_ops", T_UINT,
	  G(budget.max_destructive_ops) },
	{ "budget", "timeout", "budget", "timeout", T_MS,
	  G(budget.timeout_ms) },
	{ "budget", "max_turns", "budget", "max_turns", T_UINT,
	  G(budget.max_turns) },
	{ "budget", "max_tokens", "budget", "max_tokens", T_U64,
	  G(budget.max_tokens) },
	{ "budget", "max_tool_calls", "budget", "max_tool_calls", T_UINT,
	  G(budget.max_tool_calls) },
	{ "budget", "max_processes", "budget", "max_processes", T_UINT,
	  G(budget.max_processes) },
	{ "budget", "max_cost", "budget", "max_cost", T_CENTS,
	  G(budget.max_cost) },
#undef G
};
#define NTUN (sizeof(tunables) / sizeof(tunables[0]))

static uint64_t get(const struct lg_guard_cfg *c, const struct tunable *t)
{
	const char *p = (const char *)c + t->off;

	switch (t->type) {
	case T_UINT:
		return *(const unsigned *)p;
	case T_CENTS:
		return (uint64_t)llround(*(const double *)p * 100.0);
	default:
		return *(const uint64_t *)p;
	}
}

static void set(struct lg_guard_cfg *c, const struct tunable *t, uint64_t v)
{
	char *p = (char *)c + t->off;

	switch (t->type) {
	case T_UINT:
		*(unsigned *)p = v > UINT_MAX ? UINT_MAX : (unsigned)v;
		break;
	case T_CENTS:
		*(double *)p = (double)v / 100.0;
		break;
	default:
		*(uint64_t *)p = v;
	}
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

static int replay_one(struct rec *r, const struct lg_guard_cfg *cfg,
		      struct lg_replay *out)
{
	for (int i = 0; i < 2; i++)
		if (r->f[i])
			rewind(r->f[i]);
	return lg_replay_run(r->f, 2, cfg, out);
}

/* Does r trip on t's threshold under cfg with it at v? */
static bool trips_on(struct rec *r, struct lg_guard_cfg *cfg,
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

/* The least value above the current one at which r passes t's rule. */
static uint64_t least_passing(struct rec *r, struct lg_guard_cfg *cfg,
			      const struct tunable *t)
{
	uint64_t lo = get(cfg, t), hi = lo ? lo : 1; /* lo trips */

	for (int k = 0; k < 40 && trips_on(r, cfg, t, hi); k++) {
		lo = hi;
		hi = hi * 2 > hi ? hi * 2 : UINT64_MAX;
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
	if (t->type == T_MS)
		snprintf(out, size, v % 1000 ? "%llums" : "%llus",
			 (unsigned long long)(v % 1000 ? v : v / 1000));
	else if (t->type == T_CENTS)
		snprintf(out, size, "%llu.%02llu",
			 (unsigned long long)(v / 100),
			 (unsigned long long)(v % 100));
	else
		snprintf(out, size, "%llu", (unsigned long long)v);
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

static int run_suggest(struct rec *recs, size_t n, struct lg_config *cfg,
		       double margin, const char *base)
{
	struct tuned tuned[NTUN] = { 0 };
	struct lg_replay out;
	bool any = false;

	for (int round = 0; round < 64; round++) {
		const struct tunable *t = NULL;
		size_t s;

		for (s = 0; s < n; s++) {
			if (replay_one(&recs[s], &cfg->guard, &out) < 0) {
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
		{
			struct tuned *u = &tuned[t - tunables];
			uint64_t v = least_passing(&recs[s], &cfg->guard, t);

			if (!u->by) {
				u->was = get(&cfg->guard, t);
				u->by = recs[s].id;
			}
			u->needed = v;
			set(&cfg->guard, t, v);
		}
	}
	printf("; lgctl suggest: thresholds that let %zu recorded session(s) through, with a %.0f%% margin\n",
	       n, margin * 100.0);
	printf("; base: %s; sessions:", base ? lgq_show(base) : "the defaults");
	for (size_t s = 0; s < n; s++)
		printf(" %s", lgq_show(recs[s].id));
	printf("\n");
	for (size_t i = 0; i < NTUN; i++) {
		const struct tunable *t = &tunables[i];
		struct tuned *u = &tuned[i];
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
		print_value(t, v, a, sizeof(a));
		print_value(t, u->needed, b, sizeof(b));
		print_value(t, u->was, c, sizeof(c));
		if (header)
			printf("[%s]\n", t->section);
		printf("; %s passes them all (it was %s; first needed by %s)\n%s = %s\n",
		       b, c, lgq_show(u->by), t->key, a);
		set(&cfg->guard, t, v);
		any = true;
	}
	if (!any)
		printf("; every session passes under the base config: nothing to raise\n");
	/* what it prints holds: every session passes under it */
	for (size_t s = 0; s < n; s++)
		if (replay_one(&recs[s], &cfg->guard, &out) < 0 ||
		    out.trip.found) {
			fprintf(stderr,
				"lgctl: session '%s' still trips under the suggestion (%s)\n",
				lgq_show(recs[s].id), out.trip.rule);
			return 2;
		}
	return 0;
}

int lgctl_suggest(const char *dir, int argc, char **argv)
{
	static const struct option lo[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "margin", required_argument, NULL, 'm' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *config = NULL;
	double margin = 0.5;
	struct rec *recs;
	struct lg_config cfg;
	struct lg_error err;
	struct lg_replay head;
	size_t n;
	int c, rc = 2;

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
	recs = calloc(n, sizeof(*recs));
	if (!recs)
		return 2;
	for (size_t i = 0; i < n; i++) {
		char p[PATH_MAX + 256];

		recs[i].id = argv[optind + (int)i];
		if (!lg_session_id_valid(recs[i].id)) {
			fprintf(stderr,
				"lgctl: '%s' is not a valid session id\n",
				lgq_show(recs[i].id));
			goto out;
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
			goto out;
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
out:
	for (size_t i = 0; i < n; i++)
		for (int k = 0; k < 2; k++)
			if (recs[i].f[k])
				fclose(recs[i].f[k]);
	free(recs);
	return rc;
}
