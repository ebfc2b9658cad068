// SPDX-License-Identifier: MIT
/*
 * What the detectors report: findings and the words they are written in.
 * Below every detector and the guard that walks them (guard.c), so calls
 * go one way: guard.c -> each detector -> here.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "detectors.h"

static struct lg_finding *vadd(struct lg_findings *out, enum lg_verdict action,
			       bool note, const char *rule, const char *reason,
			       const char *fmt, va_list ap)
{
	struct lg_finding *f;

	if (out->n >= LG_MAX_FINDINGS)
		return NULL;
	f = &out->f[out->n++];
	f->note = note;
	f->action = action;
	f->then = LG_ALLOW;
	f->left = 0;
	f->remote = false;
	f->device = false;
	f->rule = rule;
	f->reason = reason;
	vsnprintf(f->summary, sizeof(f->summary), fmt, ap);
	return f;
}

struct lg_finding *lg_findings_add(struct lg_findings *out,
				   enum lg_verdict action, const char *rule,
				   const char *reason, const char *fmt, ...)
{
	struct lg_finding *f;
	va_list ap;

	va_start(ap, fmt);
	f = vadd(out, action, false, rule, reason, fmt, ap);
	va_end(ap);
	return f;
}

struct lg_finding *lg_findings_note(struct lg_findings *out, const char *rule,
				    const char *reason, const char *fmt, ...)
{
	struct lg_finding *f;
	va_list ap;

	va_start(ap, fmt);
	f = vadd(out, LG_ALLOW, true, rule, reason, fmt, ap);
	va_end(ap);
	return f;
}

enum lg_verdict lg_findings_fire(struct lg_findings *out,
				 enum lg_verdict action, unsigned steer_at,
				 uint64_t nth, const char *rule,
				 const char *reason, const char *fmt, ...)
{
	enum lg_verdict v = action;
	struct lg_finding *f;
	unsigned left = 0;
	va_list ap;

	if (action > LG_WARN && nth <= steer_at) {
		v = LG_WARN; /* a step of the ladder: the note first */
		left = (unsigned)(steer_at + 1 - nth);
	}
	va_start(ap, fmt);
	f = vadd(out, v, v <= LG_WARN, rule, reason, fmt, ap);
	va_end(ap);
	if (f) {
		f->then = action;
		f->left = left;
	}
	return v;
}

static bool ends_with(const char *s, const char *end)
{
	size_t n = strlen(s), m = strlen(end);

	return n >= m && strcmp(s + n - m, end) == 0;
}

const char *lg_verdict_deed(enum lg_verdict v)
{
	switch (v) {
	case LG_KILL:
		return "stops the session";
	case LG_DENY:
		return "refuses the operation";
	case LG_WARN:
		return "warns (nothing is stopped)";
	case LG_ALLOW:
		break;
	}
	return "does nothing";
}

bool lg_finding_steers(const struct lg_finding *f)
{
	if (f->note)
		return true;
	/* a budget's reserve: one step short too */
	return f->action == LG_WARN && strcmp(f->rule, "budget") == 0 &&
	       ends_with(f->reason, "_reserve");
}

const char *lg_op_plural(enum lg_op op)
{
	switch (op) {
	case LG_OP_TRUNCATE:
	case LG_OP_OPEN_TRUNC:
		return "truncations";
	case LG_OP_RMDIR:
		return "directory removals";
	case LG_OP_TOOL_DELETE:
		return "tool deletes";
	case LG_OP_REMOTE_DELETE:
		return "deletes of remote data";
	case LG_OP_DEVICE_WRITE:
		return "writes over block devices holding data";
	default:
		return "deletes";
	}
}
