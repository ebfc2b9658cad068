/* SPDX-License-Identifier: MIT */
/*
 * Inside the recording (record.h): an event as record.c holds it for its
 * line, and the line held.c makes of it (lg_record_held_line, lg_spill's
 * line function: it may use only what the held record holds).
 */
#ifndef LG_RECORD_HELD_H
#define LG_RECORD_HELD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "guard/event.h"

/*
 * An event (or a "has it come back?" answer) as held for its line: its
 * numbers, then its strings. Held before the notify step answers, made
 * into its line by the main loop's flush (lg_spill), so the JSON is
 * written off the tree's path. Everything the line needs is in it.
 */
enum {
	S_EXE,
	S_TARGET,
	S_TOOL,
	S_ARGS_DIGEST,
	S_RESULT_DIGEST,
	S_ARGS_PREVIEW,
	S_RESULT_PREVIEW,
	S_STOP,
	S_TURN_TEXT,
	S_TEXT,
	S_FLOW,
	S_FROM,
	S_TO,
	S_RULE,
	S_REASON,
	S_SUMMARY,
	S_NOTE,
	S_NOTE_REASON,
	S_SYSTEM, /* a remote delete's system (issue 38), a device's content */
	S_ARGS, /* a turn's tool call: its arguments (cut) */
	NSTR
};

struct held {
	bool restored, answer, left_empty, left_stub, text_cut, verdict_why;
	unsigned left_quiet_s;
	bool ran; /* a remote delete judged at its answer: it ran */
	bool call; /* a turn's tool call as the model made it (issue 40) */
	unsigned turn; /* the agent's turn (0: none yet) */
	int guard, kind, source, op, cls, verdict;
	int pid, result, turn_tool_calls, processes;
	long long t; /* ms since the start */
	uint64_t start_ms;
	struct lg_target_id id;
	uint64_t tokens_in, tokens_out, stream, text_len;
	double cost;
	uint32_t off[NSTR]; /* into s, plus 1; 0: none */
	uint32_t len; /* of s */
	char s[];
};

/* A held record's line, with its newline (allocated); NULL. */
char *lg_record_held_line(const void *rec, size_t len, size_t *n);

#endif
