/* SPDX-License-Identifier: MIT */
/*
 * The guard: events in, verdicts out. Pure: no I/O, no globals, the clock
 * and the one question it must ask the world ("has this target come back?")
 * are passed in by the caller.
 */
#ifndef LG_GUARD_H
#define LG_GUARD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "event.h"

enum lg_verdict {
	LG_ALLOW,
	LG_WARN,
	LG_DENY,
	LG_KILL,
};

struct lg_detector_cfg {
	unsigned max; /* trips when the count reaches max; 0 = off */
	uint64_t window_ms; /* sliding window */
	enum lg_verdict action;
	/*
	 * The count at which the model is told (a note, issue 28): 0 means
	 * one short of max (none when max < 2); >= max: never.
	 */
	unsigned steer_at;
};

/* The count at which a rule of max and steer_at notes; 0: none. */
static inline unsigned lg_steer_level(unsigned max, unsigned steer_at)
{
	if (steer_at)
		return steer_at < max ? steer_at : 0;
	return max >= 2 ? max - 1 : 0;
}

/* New fields go at the end: positional initializers elsewhere stay valid. */
struct lg_budget_cfg {
	uint64_t timeout_ms; /* wall clock; 0 = off */
	unsigned max_destructive_ops; /* per session; 0 = off */
	double reserve; /* warn when this fraction is left */
	enum lg_verdict action;
	unsigned max_turns; /* model turns (LG_EV_TURN) per session; 0 = off */
	uint64_t max_tokens; /* tokens in + out over those turns; 0 = off */
	double max_cost; /* USD over those turns (priced by the edge); 0 = off */
	unsigned max_tool_calls; /* completed tool calls (steps); 0 = off */
	unsigned max_processes; /* live processes of the tree at once; 0 = off */
};

/* The same tool call (and result) many times in a row: a stuck agent. */
struct lg_repeat_cfg {
	unsigned threshold; /* identical calls in a row that trip; 0 = off */
	bool include_result; /* a different result breaks the run */
	enum lg_verdict action;
	unsigned steer_at; /* as lg_detector_cfg's, of threshold */
};

/* Failed writes, deletes, renames and truncations on one path. */
struct lg_failures_cfg {
	unsigned max; /* failures on one path that trip; 0 = off */
	enum lg_verdict action;
	/*
	 * The failure of a path at which the model is told to rewrite the
	 * whole file (issue 28): 0 means at max itself with action warn (seed
	 * 004: the correction when it fires), one short of max with deny or
	 * kill (the note first, the action at max); >= max: at max.
	 */
	unsigned steer_at;
};

/* The failure of one path at which a failures rule of cfg notes. */
static inline unsigned lg_failures_steer_level(const struct lg_failures_cfg *c)
{
	if (!c->max)
		return 0;
	if (c->steer_at)
		return c->steer_at < c->max ? c->steer_at : c->max;
	if (c->action <= LG_WARN || c->max < 2)
		return c->max;
	return c->max - 1;
}

#define LG_OUTPUT_REPEAT_MAX_SIZES 8

/*
 * The model repeating itself in its streamed text (LG_EV_TEXT): the last
 * `size` characters (code points) occur threshold times, without
 * overlapping, within the last max(window, (threshold + 1) * size)
 * characters. All-zero or enabled false: off.
 */
struct lg_output_repeat_cfg {
	bool enabled;
	unsigned window; /* characters */
	unsigned threshold; /* occurrences, the last chunk included */
	/* chunk sizes in characters, ascending; unused entries are 0 */
	unsigned sizes[LG_OUTPUT_REPEAT_MAX_SIZES];
	enum lg_verdict action;
	unsigned steer_at; /* firings noted before a deny or kill applies */
	/*
	 * Not the detector's: the LLM proxy ends a response whose text trips
	 * (the session's on_text, issue 28).
	 */
	bool cut;
};

/* A "how can I help you today?" turn right after a turn that used tools. */
struct lg_greeting_cfg {
	bool enabled;
	enum lg_verdict action;
	/*
	 * With action deny or kill, the session's first steer_at firings only
	 * warn and tell the model (issue 28); the action applies from the
	 * next one on (0: at once). With warn, every firing tells the model.
	 */
	unsigned steer_at;
};

/*
 * Agent-to-agent flows (seed 002): the chain of sessions a flow visits,
 * collapsed (a call to a session already on the stack is a return to it),
 * and its calls. Every limit: 0 = off. A refused call's action is
 * `action`; the no-work warning has its own.
 */
struct lg_flow_cfg {
	bool enabled;
	unsigned max_depth; /* collapsed stack length, the root included */
	unsigned max_sessions; /* distinct sessions in one flow */
	uint64_t max_duration_ms; /* a flow's age at a call */
	unsigned max_rate; /* calls within rate_window_ms */
	uint64_t rate_window_ms;
	unsigned max_calls; /* calls in one flow */
	bool allow_self_calls;
	enum lg_verdict action;
	/* no_work_calls calls in a row, each within no_work_gap_ms of the
	 * one before, with no tool call or file write between them */
	unsigned no_work_calls;
	uint64_t no_work_gap_ms;
	enum lg_verdict no_work_action;
};

/*
 * Each detector's section, named after it (detectors.def). All-zero means
 * off for every detector.
 */
struct lg_guard_cfg {
#define LG_DETECTOR(NAME, CFG) CFG NAME;
#include "detectors.def"
#undef LG_DETECTOR
};

/*
 * Sliding windows shared with the other supervisors of a session (a store
 * such as Redis), for the volumetric and same-target counts. Each call
 * answers with the number of entries the window holds within window_ms
 * after it, or -1 when the store cannot answer: the detector then counts
 * on its own entries. Times are the store's.
 */
struct lg_shared_windows {
	/* adds member to window ("vol", "tgt:" + target) */
	long (*add)(void *ctx, const char *window, const char *member,
		    uint64_t window_ms);
	/* drops members (overwrites found on this host) */
	long (*forget)(void *ctx, const char *window,
		       const char *const *members, size_t n,
		       uint64_t window_ms);
	/* empties window: after a trip, counting starts over */
	void (*reset)(void *ctx, const char *window);
	/*
	 * Both windows of one destroyed target in one round trip: member_a
	 * added to window_a and member_b to window_b (either window NULL:
	 * skipped); counts[] as add() would answer. 0, or -1 (store down).
	 */
	int (*add2)(void *ctx, const char *window_a, const char *member_a,
		    uint64_t window_a_ms, const char *window_b,
		    const char *member_b, uint64_t window_b_ms, long counts[2]);
	void *ctx;
	const char *self; /* this supervisor's unique prefix for members */
};

struct lg_guard_env {
	uint64_t now_ms; /* monotonic */
	/*
	 * True when a target removed earlier exists again (an overwrite, not a
	 * loss): another file sits at the path now, not the one id names (that
	 * one may still be there because its removal, allowed, has not run
	 * yet). NULL means "never restored".
	 */
	bool (*restored)(void *ctx, const char *target, enum lg_op op,
			 const struct lg_target_id *id);
	void *ctx;
	const struct lg_shared_windows *shared; /* NULL: this host only */
	/* set by lg_guard_feed: this event's shared counts, already added */
	const struct lg_shared_counts *pre;
};

struct lg_shared_counts {
	long vol, tgt; /* -1: not counted there */
	char vol_member[48], tgt_member[48];
};

#define LG_SUMMARY_MAX 512
/* One LG_EV_TURN alone can bring four: time, turns, tokens, greeting. */
#define LG_MAX_FINDINGS 6

struct lg_finding {
	enum lg_verdict action;
	/*
	 * detector: volumetric, same_target, budget, repeat, failures,
	 * output_repeat, greeting
	 */
	const char *rule;
	const char *reason; /* loop_detected, volume_exceeded, ... */
	char summary[LG_SUMMARY_MAX];
	/*
	 * The session tells the model (issue 28); summary says what the rule
	 * saw. A rule at its steer level, short of its action (action
	 * LG_ALLOW), or a firing of seed 004's detectors that is its note: a
	 * warn, or a deny or kill rule's firing at its steer level.
	 */
	bool note;
	/*
	 * A note's: what the rule does at its action (its configured
	 * verdict), and how many more counted steps take it there (0: not a
	 * count, a budget's reserve).
	 */
	enum lg_verdict then;
	unsigned left;
	/* what it counted was destroyed off this host: nothing was kept */
	bool remote;
	/* it counted a block device written over: nothing of it was kept */
	bool device;
};

/* What lgrun does at a verdict, for a rule's message: "stops the session". */
const char *lg_verdict_deed(enum lg_verdict v);

struct lg_findings {
	size_t n;
	struct lg_finding f[LG_MAX_FINDINGS];
};

struct lg_guard;

struct lg_guard *lg_guard_new(const struct lg_guard_cfg *cfg,
			      uint64_t start_ms);
void lg_guard_free(struct lg_guard *g);

/* Feeds one event; returns the most severe action among the findings. */
enum lg_verdict lg_guard_feed(struct lg_guard *g, const struct lg_event *ev,
			      const struct lg_guard_env *env,
			      struct lg_findings *out);

/* Monotonic ms at which a time-based rule wants a LG_EV_TICK; 0 = none. */
uint64_t lg_guard_next_deadline(const struct lg_guard *g);

/* Counters for status and the session summary. */
struct lg_guard_stats {
	uint64_t events;
	uint64_t counted; /* destructive ops of class DESTROY */
	uint64_t trips;
};
void lg_guard_stats(const struct lg_guard *g, struct lg_guard_stats *st);

/* The flow detector's rules and counters (metrics). */
enum lg_flow_rule {
	LG_FLOW_R_CORRELATION,
	LG_FLOW_R_SELF,
	LG_FLOW_R_DURATION,
	LG_FLOW_R_DEPTH,
	LG_FLOW_R_SESSIONS,
	LG_FLOW_R_RATE,
	LG_FLOW_R_TOTAL,
	LG_FLOW_R_NO_WORK, /* a warning, counted with the rejections */
	LG_FLOW_NRULES
};
#define LG_FLOW_NAME_MAX 64 /* longer session names are cut */
#define LG_FLOW_STACK_MAX 64
#define LG_FLOW_SESSIONS_MAX 256
#define LG_FLOW_FLOWS_MAX 8
#define LG_FLOW_CHAIN_KEEP 16 /* raw chain entries kept for messages */

struct lg_flow_stats {
	uint64_t flows, calls, returns;
	uint64_t rejected[LG_FLOW_NRULES];
	unsigned longest; /* the deepest collapsed chain allowed */
};
void lg_guard_flow_stats(const struct lg_guard *g, struct lg_flow_stats *st);
const char *lg_flow_rule_reason(enum lg_flow_rule r);

/*
 * Does the finding tell the model something (issue 28)? A rule at its
 * steer level (note: seed 004's detectors' firings included when they are
 * their note), or a budget's reserve.
 */
bool lg_finding_steers(const struct lg_finding *f);

const char *lg_verdict_name(enum lg_verdict v);
int lg_verdict_parse(const char *s, enum lg_verdict *out);

#endif
