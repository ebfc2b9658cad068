/* SPDX-License-Identifier: MIT */
/* Internal to the guard: each detector keeps its own state. */
#ifndef LG_DETECTORS_H
#define LG_DETECTORS_H

#include <stddef.h>

#include "guard.h"

/*
 * A detector as the guard sees it: one table entry (detectors.def). cfg is
 * the offset of its section in struct lg_guard_cfg, which new gets, with
 * the session's start. Each one keeps its own state and reads only its
 * own section; next_deadline (NULL: none) is when a time-based rule wants
 * an LG_EV_TICK.
 */
struct lg_detector {
	const char *name;
	size_t cfg;
	void *(*new)(const void *cfg, uint64_t start_ms);
	void (*free)(void *d);
	enum lg_verdict (*feed)(void *d, const struct lg_event *ev,
				const struct lg_guard_env *env,
				struct lg_findings *out);
	uint64_t (*next_deadline)(const void *d);
};

/*
 * Defines lg_detector_NAME from the typed lg_NAME_new(cfg), lg_NAME_free
 * and lg_NAME_feed (which the unit tests call); its section is NAME.
 */
#define LG_DETECTOR_DEFINE(NAME)                                               \
	static void *NAME##_new_any(const void *cfg, uint64_t start_ms)        \
	{                                                                      \
		(void)start_ms;                                                \
		return lg_##NAME##_new(cfg);                                   \
	}                                                                      \
	static void NAME##_free_any(void *d)                                   \
	{                                                                      \
		lg_##NAME##_free(d);                                           \
	}                                                                      \
	static enum lg_verdict NAME##_feed_any(void *d,                        \
					       const struct lg_event *ev,      \
					       const struct lg_guard_env *env, \
					       struct lg_findings *out)        \
	{                                                                      \
		return lg_##NAME##_feed(d, ev, env, out);                      \
	}                                                                      \
	const struct lg_detector lg_detector_##NAME = {                        \
		#NAME,		 offsetof(struct lg_guard_cfg, NAME),          \
		NAME##_new_any,	 NAME##_free_any,                              \
		NAME##_feed_any, NULL,                                         \
	}

#define LG_DETECTOR(NAME, CFG) \
	extern const struct lg_detector lg_detector_##NAME;
#include "detectors.def"
#undef LG_DETECTOR

struct lg_finding *lg_findings_add(struct lg_findings *out,
				   enum lg_verdict action, const char *rule,
				   const char *reason, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
/* A note at a rule's steer level (action LG_ALLOW, note set). */
struct lg_finding *lg_findings_note(struct lg_findings *out, const char *rule,
				    const char *reason, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/*
 * The nth firing (from 1) in a session of a rule that fires on an
 * occurrence, not a count (greeting, output_repeat), with its action and
 * steer_at (issue 28's ladder): each firing of a warn rule is its note;
 * with deny or kill, firings 1 to steer_at only warn and are the note
 * (then: the action, left: firings until it), the later ones take the
 * action. Returns the firing's verdict.
 */
enum lg_verdict lg_findings_fire(struct lg_findings *out,
				 enum lg_verdict action, unsigned steer_at,
				 uint64_t nth, const char *rule,
				 const char *reason, const char *fmt, ...)
	__attribute__((format(printf, 7, 8)));
const char *lg_op_plural(enum lg_op op);

struct lg_volumetric;
struct lg_volumetric *lg_volumetric_new(const struct lg_detector_cfg *cfg);
void lg_volumetric_free(struct lg_volumetric *d);
enum lg_verdict lg_volumetric_feed(struct lg_volumetric *d,
				   const struct lg_event *ev,
				   const struct lg_guard_env *env,
				   struct lg_findings *out);

struct lg_same_target;
struct lg_same_target *lg_same_target_new(const struct lg_detector_cfg *cfg);
void lg_same_target_free(struct lg_same_target *d);
enum lg_verdict lg_same_target_feed(struct lg_same_target *d,
				    const struct lg_event *ev,
				    const struct lg_guard_env *env,
				    struct lg_findings *out);
size_t lg_same_target_tracked(const struct lg_same_target *d);

struct lg_budget;
struct lg_budget *lg_budget_new(const struct lg_budget_cfg *cfg,
				uint64_t start_ms);
void lg_budget_free(struct lg_budget *d);
enum lg_verdict lg_budget_feed(struct lg_budget *d, const struct lg_event *ev,
			       const struct lg_guard_env *env,
			       struct lg_findings *out);
uint64_t lg_budget_next_deadline(const struct lg_budget *d);

struct lg_repeat;
struct lg_repeat *lg_repeat_new(const struct lg_repeat_cfg *cfg);
void lg_repeat_free(struct lg_repeat *d);
enum lg_verdict lg_repeat_feed(struct lg_repeat *d, const struct lg_event *ev,
			       const struct lg_guard_env *env,
			       struct lg_findings *out);
/* Length of the current run of identical calls (0 after a trip). */
unsigned lg_repeat_run(const struct lg_repeat *d);

/* Paths with a nonzero failure count kept at most; the least recent goes. */
#define LG_FAILURES_MAX_PATHS 1024

struct lg_failures;
struct lg_failures *lg_failures_new(const struct lg_failures_cfg *cfg);
void lg_failures_free(struct lg_failures *d);
enum lg_verdict lg_failures_feed(struct lg_failures *d,
				 const struct lg_event *ev,
				 const struct lg_guard_env *env,
				 struct lg_findings *out);
size_t lg_failures_tracked(const struct lg_failures *d);
/* The current count of path; 0 when it is not tracked. */
unsigned lg_failures_count(const struct lg_failures *d, const char *path);

struct lg_output_repeat;
struct lg_output_repeat *
lg_output_repeat_new(const struct lg_output_repeat_cfg *cfg);
void lg_output_repeat_free(struct lg_output_repeat *d);
enum lg_verdict lg_output_repeat_feed(struct lg_output_repeat *d,
				      const struct lg_event *ev,
				      const struct lg_guard_env *env,
				      struct lg_findings *out);
/* Code points of the current response kept (0 after a turn or a trip). */
size_t lg_output_repeat_len(const struct lg_output_repeat *d);

struct lg_greeting;
struct lg_greeting *lg_greeting_new(const struct lg_greeting_cfg *cfg);
void lg_greeting_free(struct lg_greeting *d);
enum lg_verdict lg_greeting_feed(struct lg_greeting *d,
				 const struct lg_event *ev,
				 const struct lg_guard_env *env,
				 struct lg_findings *out);
/* Whether text is a short "how can I help you?" greeting and nothing else. */
bool lg_greeting_match(const char *text);

struct lg_flow;
struct lg_flow *lg_flow_new(const struct lg_flow_cfg *cfg);
void lg_flow_free(struct lg_flow *d);
enum lg_verdict lg_flow_feed(struct lg_flow *d, const struct lg_event *ev,
			     const struct lg_guard_env *env,
			     struct lg_findings *out);
void lg_flow_stats(const struct lg_flow *d, struct lg_flow_stats *st);
/* The collapsed stack of flow id: its depth, and "a,b,c" in out. */
size_t lg_flow_stack(const struct lg_flow *d, const char *id, char *out,
		     size_t size);
unsigned lg_flow_depth(const struct lg_flow *d, const char *id);

#endif
