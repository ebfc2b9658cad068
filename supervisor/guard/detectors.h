/* SPDX-License-Identifier: MIT */
/* Internal to the guard: each detector keeps its own state. */
#ifndef LG_DETECTORS_H
#define LG_DETECTORS_H

#include "guard.h"

struct lg_finding *lg_findings_add(struct lg_findings *out,
				   enum lg_verdict action, const char *rule,
				   const char *reason, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
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

#endif
