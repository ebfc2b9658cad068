/* SPDX-License-Identifier: MIT */
/*
 * The session recording: every event the guard saw, with the facts the
 * session gave it and its verdict, one JSON line each, so `lgctl replay`
 * can run them through the pure guard again under another config.
 *
 * <state_dir>/sessions/<session>.events.jsonl (the latest run of a session
 * id). The first line is a head ({"record":1, session, agent, config,
 * profile, observe, ...}); then events ({"t": ms since the start, "k":
 * kind, ...}, "v": verdict) and the answers the guard got when it asked
 * whether a removed target had come back ({"k":"restored", ...}), before
 * the event that asked. Tool arguments are a digest and a preview, never
 * the arguments; model text is kept (record.text), programs' output only
 * with record.output. Buffered: written at a trip, at the end, and within
 * 250 ms of an event (lgctl top reads it live; lg_record_due says when). Past max_bytes / 2 the file becomes
 * <session>.events.old.jsonl (the one before goes) and a new one starts:
 * the oldest events go first. An event is held (copied, with its verdict)
 * by the session under its lock, before the notify step answers; its line
 * is made when the main loop flushes, without the session's lock.
 */
#ifndef LG_RECORD_H
#define LG_RECORD_H

#include <stdbool.h>
#include <stdint.h>

#include "guard/event.h"
#include "guard/guard.h"

#define LG_RECORD_VERSION 1

struct lg_record_head {
	const char *session, *agent;
	const char *config, *profile; /* as loaded; NULL: none */
	bool observe;
	int64_t start_real_ns;
	uint64_t start_mono_ms;
	bool text, output; /* model text; programs' output (--watch-output) */
	const char *options; /* JSON: the run's options that set keys */
	const char *cwd; /* where the agent started: its project (a rewind's) */
};

struct lg_record;

/*
 * NULL when the file cannot be made (said once by the caller). sp (or
 * NULL: the recording makes its own): the spill its lines and held events
 * go through, lg_record_spill()'s, made before the watchdog's fork so that
 * the watchdog writes what lgrun held when it died (lg_spill_salvage);
 * the caller frees it after lg_record_close.
 */
struct lg_spill;
struct lg_record *lg_record_open(const char *path, uint64_t max_bytes,
				 const struct lg_record_head *h,
				 struct lg_spill *sp);
/* A spill for lg_record_open: its room, its line function. NULL. */
struct lg_spill *lg_record_spill(void);
void lg_record_close(struct lg_record *r);

/*
 * What guard (0: the session's, 1: the output guard) was fed at now_ms in
 * the agent's turn (issue 40: 0, before the first or with no model seen),
 * and what it answered.
 */
void lg_record_event(struct lg_record *r, int guard, uint64_t now_ms,
		     unsigned turn, const struct lg_event *ev,
		     enum lg_verdict v, const struct lg_findings *out);

/*
 * A tool call of the model's response that made turn (issue 40): its tool
 * and its arguments (JSON, cut at LG_RECORD_ARGS_MAX bytes), a "call" line
 * for the report and the replay; stream: its conversation.
 */
#define LG_RECORD_ARGS_MAX 4096
void lg_record_call(struct lg_record *r, uint64_t now_ms, unsigned turn,
		    uint64_t stream, const char *tool, const char *args);

/* The guard asked whether target (removed earlier) is back: the answer. */
void lg_record_restored(struct lg_record *r, uint64_t now_ms,
			const char *target, enum lg_op op,
			const struct lg_target_id *id, bool answer);

/*
 * What is buffered, written out (a trip, a tick, the end): the events
 * held made into their lines. The main loop's tick calls it without the
 * session's lock, so the lines are made while the tree goes on.
 */
void lg_record_flush(struct lg_record *r);

/* When the buffer should be written (monotonic ms; 0: it is empty). */
uint64_t lg_record_due(struct lg_record *r);
/* The events held fill half their room: a flush is wanted now. */
bool lg_record_flush_wanted(struct lg_record *r);

/* The digest a recording holds for tool arguments (32 hex digits). */
void lg_record_digest(const char *s, char out[33]);

#endif
