/* SPDX-License-Identifier: MIT */
/*
 * A session's recording (record.h) run through a new pure guard under a
 * config: where it would have tripped, and what the recording says
 * happened. The guard answers from recorded facts only: whether a removed
 * target had come back is what the session found when its guard asked (a
 * question it never asked is answered "not back"); shared windows (Redis)
 * are not replayed; model text is replayed when it was recorded.
 */
#ifndef LG_REPLAY_H
#define LG_REPLAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "guard/guard.h"

/* A verdict above warn: where a session stops being what it was. */
struct lg_replay_trip {
	bool found;
	size_t event; /* 1-based, among the events fed */
	uint64_t t_ms; /* since the session's start */
	enum lg_verdict verdict;
	char rule[32], reason[48], target[256];
	char summary[LG_SUMMARY_MAX];
	unsigned turn; /* the agent's turn it came in (0: before the first) */
};

/*
 * Where one of the agent's turns began (issue 40: a model response with
 * tool calls, in the main conversation): its model_call lines.
 */
struct lg_replay_turn {
	unsigned turn;
	uint64_t t_ms; /* its first call's */
	size_t calls; /* its tool calls, a subagent's included */
	char what[240]; /* its calls for a person: "Bash: rm -rf sub; ..." */
};

struct lg_replay {
	/* the recording */
	char session[200], config[4096], profile[200], agent[200];
	char options[2048]; /* the run's options that set keys (JSON) */
	bool observe;
	bool partial; /* its oldest part was dropped (record.max_bytes) */
	bool newer; /* written by a newer lgrun (a later record version) */
	size_t recorded_events; /* in the recording */
	size_t events; /* fed to the guard (up to the trip) */
	size_t skipped; /* text events whose text was not recorded */
	size_t malformed; /* lines that are not a recording's */
	uint64_t last_t_ms; /* the recording's last event */
	struct lg_replay_trip recorded; /* the first recorded one */
	/* the replay */
	struct lg_replay_trip trip;
	size_t warnings; /* warn verdicts before the trip (or the end) */
	size_t notes; /* findings that tell the model ([steer]) before it */
	struct lg_replay_trip note; /* the first of them */
	size_t differ; /* events whose verdict is not the recorded one */
	/* the turns, in the order they began (lg_replay_free) */
	struct lg_replay_turn *turns;
	size_t nturns;
};

/*
 * Feeds the recording in the files (in order: the old part first, NULL
 * entries skipped) to a guard made from cfg, until the first verdict
 * above warn (the rest is counted; the turns are all read). 0, or -errno
 * (ENOENT: no recording; EINVAL: not one; EPROTO: a newer lgrun's). out's
 * turns are allocated, whatever it returns: lg_replay_free before out is
 * run again or dropped.
 */
int lg_replay_run(FILE *const *files, size_t nfiles,
		  const struct lg_guard_cfg *cfg, struct lg_replay *out);

/* What lg_replay_run allocated in out (its turns). */
void lg_replay_free(struct lg_replay *out);

/* The recording's head alone (for its config, before the replay). */
int lg_replay_head(FILE *f, struct lg_replay *out);

#endif
