// SPDX-License-Identifier: MIT
/*
 * lgctl replay SESSION [--config FILE] [--profile P] [--agent NAME]: the
 * session's recording (record.h) through the guard under a config
 * (replay.h): where it would have tripped, or that it would not have.
 */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/cleanup.h"
#include "config/config.h"
#include "lgctl.h"
#include "record/replay.h"
#include "store/state.h"

static void replay_usage(FILE *f)
{
	fprintf(f,
		"Usage: lgctl replay SESSION [--config FILE] [--profile P] [--agent NAME]\n"
		"Runs what the session's guard saw (its recording, [record] events) through\n"
		"the guard under a config: the one it ran with, or FILE. Prints where it\n"
		"would have tripped, or that it would not have.\n"
		"Exit status: 0 no trip, 1 a trip, 2 an error.\n");
}

/* The run's options that set keys, over the file, as lgrun applied them. */
static int apply_options(struct lg_config *cfg, const char *json,
			 struct lg_error *err)
{
	json_t *a = json_loads(json, JSON_DECODE_ANY, NULL);
	size_t i;
	json_t *p;
	int e = 0;

	json_array_foreach(a, i, p)
	{
		const char *name = json_string_value(json_array_get(p, 0));
		const char *arg = json_string_value(json_array_get(p, 1));
		const struct lg_option *o = lg_options;

		while (o->name && (!name || strcmp(o->name, name) != 0))
			o++;
		if (!o->name || !o->key)
			continue; /* an option this lgctl does not know */
		e = lg_config_set_option(cfg, o, arg, err);
		if (e < 0)
			break;
	}
	json_decref(a);
	return e;
}

/* " in turn K" when the recording has turns, else "" (a buffer of 32). */
static const char *in_turn(const struct lg_replay *r, unsigned turn, char *buf)
{
	buf[0] = '\0';
	if (r->nturns)
		snprintf(buf, 32, turn ? " in turn %u" : " before turn 1",
			 turn);
	return buf;
}

static void print_trip(const struct lg_replay *r, const char *what,
		       const struct lg_replay_trip *t)
{
	char tn[32];

	/* the turn after the reason: "at event N (Ts): V by R (why)" reads
	 * as it did (the corpus's harness matches it) */
	printf("  %s at event %zu (%.3fs): %s by %s (%s)%s: %s\n", what,
	       t->event, (double)t->t_ms / 1000.0, lg_verdict_name(t->verdict),
	       t->rule, t->reason, in_turn(r, t->turn, tn),
	       lgq_show(t->summary));
}

/*
 * Where each of the agent's turns began (issue 40), one line each: what
 * lgctl rewind SESSION --turn K undoes from, and the trip's turn marked.
 */
static void print_turns(const struct lg_replay *r)
{
	if (!r->nturns) {
		printf("turns: none on record (no model seen through lgrun's proxy)\n");
		return;
	}
	printf("turns: %zu (a model response with tool calls; lgctl rewind %s --turn K undoes K and later)\n",
	       r->nturns, lgq_show(r->session));
	for (size_t i = 0; i < r->nturns; i++) {
		const struct lg_replay_turn *u = &r->turns[i];
		bool trip = r->trip.found && r->trip.turn == u->turn;
		bool rec = r->recorded.found && r->recorded.turn == u->turn;

		printf("  turn %u at %.3fs, %zu call(s): %s%s\n", u->turn,
		       (double)u->t_ms / 1000.0, u->calls, lgq_show(u->what),
		       trip ? "  <- trips in it" :
		       rec  ? "  <- tripped in it (recorded)" :
			      "");
	}
}

static void report(const struct lg_replay *r, const char *config,
		   const char *profile, const char *agent, bool same)
{
	printf("session %s: %zu event(s) over %.3fs, recorded under %s%s%s%s\n",
	       lgq_show(r->session), r->recorded_events,
	       (double)r->last_t_ms / 1000.0,
	       r->config[0] ? lgq_show(r->config) : "the defaults",
	       r->profile[0] ? " (profile " : "",
	       r->profile[0] ? lgq_show(r->profile) : "",
	       r->profile[0] ? ")" : "");
	printf("replayed under %s%s%s%s%s%s%s:\n",
	       config ? lgq_show(config) : "the defaults",
	       profile ? ", profile " : "", profile ? lgq_show(profile) : "",
	       agent && *agent ? ", agent " : "",
	       agent && *agent ? lgq_show(agent) : "",
	       same ? "" : " (not the session's config)",
	       r->observe ? " [the session ran in observe mode]" : "");
	if (r->trip.found)
		print_trip(r, "trips", &r->trip);
	else
		printf("  no trip: every event passes\n");
	if (r->warnings)
		printf("  %zu warning(s)%s\n", r->warnings,
		       r->trip.found ? " before it" : "");
	if (r->notes) {
		printf("  %zu note(s) for the model ([steer])%s; the first:\n",
		       r->notes, r->trip.found ? " before it" : "");
		char tn[32];

		printf("  decided at event %zu (%.3fs): %s (%s)%s: %s\n",
		       r->note.event, (double)r->note.t_ms / 1000.0,
		       r->note.rule, r->note.reason,
		       in_turn(r, r->note.turn, tn), lgq_show(r->note.summary));
	}
	if (r->recorded.found &&
	    (!r->trip.found || r->recorded.event != r->trip.event ||
	     strcmp(r->recorded.rule, r->trip.rule) != 0))
		print_trip(r,
			   r->observe ? "recorded: would have tripped" :
					"recorded: tripped",
			   &r->recorded);
	else if (r->recorded.found)
		printf("  as recorded: the session %s there\n",
		       r->observe ? "would have tripped" : "tripped");
	else
		printf("  recorded: no trip\n");
	if (r->recorded.found && !r->trip.found && !r->observe)
		printf("  (the recording ends where the session was stopped: what it would have done next is not in it)\n");
	if (r->differ && same)
		printf("  %zu event(s) got another verdict than recorded: the config changed since?\n",
		       r->differ);
	if (r->partial)
		printf("  note: the recording's oldest events were dropped (record.max_bytes); its windows begin at its first event\n");
	if (r->skipped)
		printf("  note: %zu output event(s) were recorded without their text ([record] output = false) and are not replayed\n",
		       r->skipped);
	if (r->malformed)
		printf("  note: %zu line(s) of the recording were not understood and skipped\n",
		       r->malformed);
	print_turns(r);
}

int lgctl_replay(const char *dir, const struct lg_config *loaded, int argc,
		 char **argv)
{
	static const struct option lo[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "profile", required_argument, NULL, 'p' },
		{ "agent", required_argument, NULL, 'a' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *config = NULL, *profile = NULL, *agent = NULL, *id;
	char cur[PATH_MAX + 256], old[PATH_MAX + 256];
	LG_AUTOFCLOSE FILE *fc = NULL;
	LG_AUTOFCLOSE FILE *fo = NULL;
	struct lg_replay head, r;
	struct lg_config cfg;
	struct lg_error err;
	bool same;
	int c, e;

	(void)loaded; /* the recording's own, or --config's */
	optind = 0;
	while ((c = getopt_long(argc, argv, "c:p:a:h", lo, NULL)) != -1) {
		switch (c) {
		case 'c':
			config = optarg;
			break;
		case 'p':
			profile = optarg;
			break;
		case 'a':
			agent = optarg;
			break;
		case 'h':
			replay_usage(stdout);
			return 0;
		default:
			replay_usage(stderr);
			return 2;
		}
	}
	if (optind != argc - 1) {
		replay_usage(stderr);
		return 2;
	}
	id = argv[optind];
	if (!lg_session_id_valid(id)) {
		fprintf(stderr, "lgctl: '%s' is not a valid session id\n",
			lgq_show(id));
		return 2;
	}
	snprintf(cur, sizeof(cur), "%s/sessions/%s.events.jsonl", dir, id);
	snprintf(old, sizeof(old), "%s/sessions/%s.events.old.jsonl", dir, id);
	fc = fopen(cur, "re");
	fo = fopen(old, "re");
	if (!fc) {
		fprintf(stderr,
			"lgctl: no recording of session '%s' (%s: %s); lgrun records what the guard sees when [record] events is on, the default\n",
			lgq_show(id), lgq_show(cur), strerror(errno));
		return 2;
	}
	if (lg_replay_head(fo ? fo : fc, &head) < 0) {
		fprintf(stderr, "lgctl: %s is not a session recording\n",
			lgq_show(fo ? old : cur));
		return 2;
	}
	same = !config && !profile && !agent;
	if (!config && head.config[0])
		config = head.config;
	if (!profile && head.profile[0])
		profile = head.profile;
	if (!agent)
		agent = head.agent;
	lg_config_init(&cfg);
	if (lg_config_load(&cfg, config, profile, agent, &err) < 0 ||
	    apply_options(&cfg, head.options, &err) < 0 ||
	    lg_config_finish(&cfg, &err) < 0) {
		fprintf(stderr, "lgctl: %s%s\n", err.msg,
			same ? " (the session's config: pass --config FILE)" :
			       "");
		lg_config_free(&cfg);
		return 2;
	}
	{
		FILE *files[2] = { fo, fc };

		e = lg_replay_run(files, 2, &cfg.guard, &r);
	}
	lg_config_free(&cfg);
	if (e < 0) {
		lg_replay_free(&r);
		fprintf(stderr, "lgctl: cannot replay %s: %s\n", lgq_show(cur),
			e == -EPROTO ? "it was written by a newer lgrun" :
			e == -EINVAL ? "not a session recording" :
				       strerror(-e));
		return 2;
	}
	report(&r, config, profile, agent, same);
	lg_replay_free(&r);
	return r.trip.found ? 1 : 0;
}
