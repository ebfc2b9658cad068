/* SPDX-License-Identifier: MIT */
/*
 * What lgctl report's files share: the session read back (report.c: its
 * recording, its audit records, its quarantine index) and gathered by the
 * agent's turns (issue 40), written as an HTML page (report_html.c) or as
 * text (report_text.c).
 */
#ifndef LG_LGCTL_REPORT_INT_H
#define LG_LGCTL_REPORT_INT_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "config/config.h"
#include "quarantine/index.h"
#include "lib/text.h"

/* Rows of one turn's events shown, each of what matters and what is folded. */
#define RPT_ROWS 200

/* One event of the recording. */
struct rpt_ev {
	uint64_t t;
	size_t seq; /* its place in the recording */
	int src;
	unsigned turn; /* said, else the turn under way (0: before turn 1) */
	char kind[16], what[48], target[256], cls[16], verdict[8], note[32];
	bool destroy; /* of pre-existing data (class destroy) */
	bool matters; /* shown; else folded (rpt_matters) */
};

/* One tool call of the model (a model_call line). */
struct rpt_call {
	uint64_t t;
	size_t seq;
	unsigned turn;
	uint64_t stream; /* its conversation: the turn's first call's is main */
	char *tool, *args;
};

/* A note lgrun sent to the model (the audit's steer records). */
struct rpt_note {
	unsigned turn;
	size_t seq;
	bool observe; /* observe mode: decided, not sent */
	unsigned times; /* placed this often in the turn's requests */
	char *rule, *reason, *text;
};

/* One turn (turn 0: before the first) and its share of each list. */
struct rpt_turn {
	unsigned n;
	uint64_t t; /* its first call's (its first event's when it has none) */
	bool have_t;
	uint64_t stream;
	size_t ev0, nev, call0, ncall, ch0, nch, note0, nnote;
	size_t matters, folded, outside; /* its events; changes not under cwd */
};

struct rep {
	struct rpt_ev *e;
	size_t n, cap;
	struct rpt_call *c;
	size_t nc;
	struct rpt_note *notes_sent;
	size_t nn;
	struct lgq_index x; /* the quarantine index (this run's lines) */
	const struct lgq_entry **ch; /* its changes by turn, then n */
	size_t nch;
	struct rpt_turn *turns; /* turn 0 first, then by number */
	size_t nturns; /* with turn 0 */
	bool any_turn; /* the model was seen: there are turns 1.. */
	char id[200], session[200], agent[200], config[PATH_MAX], profile[200];
	char cwd[PATH_MAX]; /* the folder the session started in ("": unknown) */
	int64_t start_ns; /* its start, wall clock (0: unknown) */
	bool observe, tripped;
	uint64_t trip_t, last_t;
	unsigned trip_turn;
	char trip_rule[32], trip_summary[LG_SUMMARY_MAX];
	unsigned long tools, model_turns, destroys, warns, notes;
	unsigned long remote; /* deletes of data off this host: never kept */
	unsigned long devices; /* block devices written over: never kept */
	unsigned long long tokens;
	struct lg_config cfg;
	bool have_cfg, have_x;
};

/* report.c: what the writers share */
bool rpt_matters(const struct rpt_ev *e);
/* A path relative to the session's folder when under it ("." for it). */
const char *rpt_rel(const struct rep *r, const char *path);
/* Is an index entry's path under the session's folder (all: none known)? */
bool rpt_in_project(const struct rep *r, const struct lgq_entry *e);
/* An index entry's name when it changed (not the one before the session). */
const char *rpt_entry_path(const struct lgq_entry *e);
/* What an index entry says happened: "removed", "created", ... */
const char *rpt_change_word(const struct lgq_entry *e);
/* A turn's time: "11:49:53.585 UTC" (out: 32 bytes), or "" unknown. */
const char *rpt_clock(const struct rep *r, uint64_t t, char *out, size_t size);
/* The session's start: "2026-11-28 11:49:52 UTC", or "". */
const char *rpt_started(const struct rep *r, char *out, size_t size);
/* The folded events' kinds, most first: "op_result 11, session_owned 9". */
void rpt_fold_words(const struct rep *r, const struct rpt_turn *u, char *out,
		    size_t size);
/* A call for a person, in out: its shell command (true), else its arguments. */
bool rpt_call_text(const struct rpt_call *c, char *out, size_t size);

/* report_html.c */
void rpt_html_page(FILE *f, const struct rep *r, const char *dir);
/* report_text.c */
void rpt_text(FILE *f, const struct rep *r);

#endif
