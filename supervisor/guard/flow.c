// SPDX-License-Identifier: MIT
/*
 * Flows: agent-to-agent calls (seed 002). A flow is what one user action
 * sets off; every call in it carries the flow's correlation id. The chain
 * of sessions control passes through is kept collapsed: a call to (or a
 * return to) a session already on the stack pops back to it, so
 * delegation that comes back (a -> b -> a, a -> b -> a -> c -> a) stays
 * shallow and only a chain that keeps going deeper grows. The stack's
 * length, the root included, is the effective depth.
 *
 * A call names its caller. When the caller is not on top of the stack
 * (two delegations running side by side) the stack first pops back to it,
 * or, if it is not on the stack at all, it is pushed: the depth is then
 * never less than the real one.
 *
 * Returns move the chain but are never refused (a session that ended has
 * ended) and are not calls for the rate and total limits. A call that is
 * refused is not recorded.
 *
 * A flow expires lazily: a call that finds its flow back at its root
 * (nothing open) and older than max_duration starts it afresh ("resume
 * after a break"); a call made while the chain is still open past that age
 * is refused (flow timeout).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "detectors.h"

#define NAME LG_FLOW_NAME_MAX

struct fl_flow {
	char id[NAME];
	uint64_t start_ms, last_call_ms;
	uint64_t calls;
	unsigned depth;
	char stack[LG_FLOW_STACK_MAX][NAME];
	unsigned nnames; /* saturates at LG_FLOW_SESSIONS_MAX */
	char names[LG_FLOW_SESSIONS_MAX][NAME];
	uint64_t *times; /* ring of the last max_rate call times */
	unsigned ntimes, head;
	bool work; /* a tool call or file write since the last call */
	unsigned idle_run;
	unsigned nchain; /* the last entries of the raw chain, a ring */
	char chain[LG_FLOW_CHAIN_KEEP][NAME];
};

struct lg_flow {
	struct lg_flow_cfg cfg;
	uint64_t seq; /* names members of shared windows */
	struct fl_flow *flows[LG_FLOW_FLOWS_MAX];
	struct lg_flow_stats st;
};

static const char *const rule_reasons[LG_FLOW_NRULES] = {
	[LG_FLOW_R_CORRELATION] = "flow_no_correlation_id",
	[LG_FLOW_R_SELF] = "flow_self_call",
	[LG_FLOW_R_DURATION] = "flow_timeout",
	[LG_FLOW_R_DEPTH] = "flow_depth",
	[LG_FLOW_R_SESSIONS] = "flow_sessions",
	[LG_FLOW_R_RATE] = "flow_rate",
	[LG_FLOW_R_TOTAL] = "flow_total_calls",
	[LG_FLOW_R_NO_WORK] = "flow_no_work",
};

const char *lg_flow_rule_reason(enum lg_flow_rule r)
{
	return (unsigned)r < LG_FLOW_NRULES ? rule_reasons[r] : "?";
}

struct lg_flow *lg_flow_new(const struct lg_flow_cfg *cfg)
{
	struct lg_flow *d = calloc(1, sizeof(*d));

	if (!d)
		return NULL;
	d->cfg = *cfg;
	return d;
}

static void flow_free(struct fl_flow *f)
{
	if (f)
		free(f->times);
	free(f);
}

void lg_flow_free(struct lg_flow *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < LG_FLOW_FLOWS_MAX; i++)
		flow_free(d->flows[i]);
	free(d);
}

void lg_flow_stats(const struct lg_flow *d, struct lg_flow_stats *st)
{
	*st = d->st;
}

static bool same(const char *a, const char *b)
{
	return strncmp(a, b, NAME - 1) == 0;
}

static void copy(char *dst, const char *src)
{
	snprintf(dst, NAME, "%s", src);
}

/* Index of name in the first n entries of the stack, or -1. */
static int on_stack(const struct fl_flow *f, unsigned n, const char *name)
{
	for (unsigned i = 0; i < n; i++)
		if (same(f->stack[i], name))
			return (int)i;
	return -1;
}

/* One step of the collapse: pop back to name, or push it. */
static void step(struct fl_flow *f, const char *name, bool record)
{
	int i = on_stack(f, f->depth, name);

	if (i >= 0)
		f->depth = (unsigned)i + 1;
	else if (f->depth < LG_FLOW_STACK_MAX)
		copy(f->stack[f->depth++], name);
	if (record)
		copy(f->chain[f->nchain++ % LG_FLOW_CHAIN_KEEP], name);
}

/* The depth after a call from -> to, without making it. */
static unsigned depth_after(const struct fl_flow *f, const char *from,
			    const char *to)
{
	int i = on_stack(f, f->depth, from);
	/* the caller is popped back to, or pushed at f->depth */
	unsigned d = i >= 0 ? (unsigned)i + 1 : f->depth + 1;
	int j = on_stack(f, i >= 0 ? d : f->depth, to);

	if (j < 0 && i < 0 && same(from, to))
		j = (int)d - 1;
	return j >= 0 ? (unsigned)j + 1 : d + 1;
}

static bool known(const struct fl_flow *f, const char *name)
{
	for (unsigned i = 0; i < f->nnames; i++)
		if (same(f->names[i], name))
			return true;
	return false;
}

static void add_name(struct fl_flow *f, const char *name)
{
	if (!known(f, name) && f->nnames < LG_FLOW_SESSIONS_MAX)
		copy(f->names[f->nnames++], name);
}

static struct fl_flow *find(struct lg_flow *d, const char *id)
{
	for (size_t i = 0; i < LG_FLOW_FLOWS_MAX; i++)
		if (d->flows[i] && same(d->flows[i]->id, id))
			return d->flows[i];
	return NULL;
}

/* A fresh flow rooted at root; replaces the least recent one if full. */
static struct fl_flow *start(struct lg_flow *d, struct fl_flow *f,
			     const char *id, const char *root, uint64_t now)
{
	uint64_t *times;

	if (!f) {
		size_t slot = 0;

		for (size_t i = 0; i < LG_FLOW_FLOWS_MAX; i++) {
			if (!d->flows[i]) {
				slot = i;
				break;
			}
			if (d->flows[i]->last_call_ms <
			    d->flows[slot]->last_call_ms)
				slot = i;
		}
		if (!d->flows[slot]) {
			d->flows[slot] = calloc(1, sizeof(*f));
			if (!d->flows[slot])
				return NULL;
			if (d->cfg.max_rate) {
				d->flows[slot]->times =
					calloc(d->cfg.max_rate,
					       sizeof(*d->flows[slot]->times));
				if (!d->flows[slot]->times) {
					free(d->flows[slot]);
					d->flows[slot] = NULL;
					return NULL;
				}
			}
		}
		f = d->flows[slot];
	}
	times = f->times;
	memset(f, 0, sizeof(*f));
	f->times = times;
	copy(f->id, id);
	f->start_ms = now;
	f->last_call_ms = now;
	step(f, root, true);
	add_name(f, root);
	d->st.flows++;
	return f;
}

/* Calls within the rate window, this one included. */
static unsigned calls_in_window(const struct lg_flow *d,
				const struct fl_flow *f, uint64_t now)
{
	unsigned n = 1;

	for (unsigned i = 0; i < f->ntimes; i++)
		if (now - f->times[i] < d->cfg.rate_window_ms)
			n++;
	return n;
}

static void chain_text(const struct fl_flow *f, const char *to, char *out,
		       size_t size)
{
	size_t len = 0;
	unsigned first = f->nchain > LG_FLOW_CHAIN_KEEP ?
				 f->nchain - LG_FLOW_CHAIN_KEEP :
				 0;

	out[0] = '\0';
	if (first)
		len += (size_t)snprintf(out, size, "... -> ");
	for (unsigned i = first; i < f->nchain && len < size; i++)
		len += (size_t)snprintf(out + len, size - len, "%s -> ",
					f->chain[i % LG_FLOW_CHAIN_KEEP]);
	if (len < size)
		snprintf(out + len, size - len, "%s", to);
}

/* "5 minutes", "90 s" */
static void duration_text(uint64_t ms, char *out, size_t size)
{
	if (ms % 60000 == 0)
		snprintf(out, size, "%llu minute%s",
			 (unsigned long long)(ms / 60000),
			 ms == 60000 ? "" : "s");
	else
		snprintf(out, size, "%g s", (double)ms / 1000.0);
}

static enum lg_verdict reject(struct lg_flow *d, enum lg_flow_rule rule,
			      struct lg_findings *out, const char *fmt,
			      const char *detail, const char *chain)
{
	struct lg_finding *fd;

	d->st.rejected[rule]++;
	fd = lg_findings_add(out, d->cfg.action, "flow",
			     lg_flow_rule_reason(rule),
			     "Agent call rejected: ");
	if (fd) {
		size_t n = strlen(fd->summary);

		snprintf(fd->summary + n, sizeof(fd->summary) - n, fmt, detail);
		n = strlen(fd->summary);
		if (chain && *chain)
			snprintf(fd->summary + n, sizeof(fd->summary) - n,
				 " (chain %s)", chain);
	}
	return d->cfg.action;
}

/*
 * Supervisors of one session on several hosts: the rate and the total are
 * the session's (one round trip for both); -1 each when there is no store
 * or it does not answer.
 */
static void shared_counts(struct lg_flow *d,
			  const struct lg_shared_windows *env_shared,
			  long *rate, long *total)
{
	const struct lg_flow_cfg *c = &d->cfg;

	if (!env_shared || !env_shared->add2 || !(c->max_rate || c->max_calls))
		return;
	{
		char m1[48], m2[48];
		const char *self = env_shared->self ? env_shared->self : "";
		long n[2];

		snprintf(m1, sizeof(m1), "%.30s:r%llu", self,
			 (unsigned long long)++d->seq);
		snprintf(m2, sizeof(m2), "%.30s:c%llu", self,
			 (unsigned long long)d->seq);
		if (env_shared->add2(
			    env_shared->ctx, c->max_rate ? "flow:rate" : NULL,
			    m1, c->rate_window_ms,
			    c->max_calls ? "flow:calls" : NULL, m2,
			    c->max_duration_ms ? c->max_duration_ms : 86400000,
			    n) == 0) {
			*rate = n[0];
			*total = n[1];
			if ((c->max_rate && *rate > (long)c->max_rate) ||
			    (c->max_calls && *total > (long)c->max_calls)) {
				const char *one[1];

				/* a refused call is not recorded */
				one[0] = m1;
				env_shared->forget(env_shared->ctx, "flow:rate",
						   one, 1, c->rate_window_ms);
				one[0] = m2;
				env_shared->forget(env_shared->ctx,
						   "flow:calls", one, 1,
						   c->max_duration_ms ?
							   c->max_duration_ms :
							   86400000);
			}
		}
	}
}

/* An allowed call: recorded in its flow (and the no-work run counted). */
static enum lg_verdict record_call(struct lg_flow *d, struct fl_flow *f,
				   const struct lg_event *ev, uint64_t now,
				   struct lg_findings *out)
{
	const struct lg_flow_cfg *c = &d->cfg;
	char detail[96];
	enum lg_verdict v = LG_ALLOW;

	if (f->calls && !f->work && c->no_work_gap_ms &&
	    now - f->last_call_ms <= c->no_work_gap_ms)
		f->idle_run++;
	else
		f->idle_run = 1;
	if (c->no_work_calls && f->idle_run == c->no_work_calls) {
		d->st.rejected[LG_FLOW_R_NO_WORK]++;
		duration_text(c->no_work_gap_ms, detail, sizeof(detail));
		lg_findings_add(
			out, c->no_work_action, "flow",
			lg_flow_rule_reason(LG_FLOW_R_NO_WORK),
			"rapid calls with no work: %u calls in a row, each within %s of the last, with no tool call or file write between them (latest %s -> %s)",
			f->idle_run, detail, ev->from, ev->to);
		v = c->no_work_action;
	}
	/* the caller is a new entry of the raw chain only if control was
	 * elsewhere (a delegation running beside another) */
	step(f, ev->from,
	     !f->nchain || !same(f->chain[(f->nchain - 1) % LG_FLOW_CHAIN_KEEP],
				 ev->from));
	step(f, ev->to, true);
	add_name(f, ev->from);
	add_name(f, ev->to);
	f->calls++;
	if (c->max_rate) {
		f->times[f->head] = now;
		f->head = (f->head + 1) % c->max_rate;
		if (f->ntimes < c->max_rate)
			f->ntimes++;
	}
	f->work = false;
	f->last_call_ms = now;
	d->st.calls++;
	if (f->depth > d->st.longest)
		d->st.longest = f->depth;
	return v;
}

static enum lg_verdict call(struct lg_flow *d, const struct lg_event *ev,
			    uint64_t now,
			    const struct lg_shared_windows *env_shared,
			    struct lg_findings *out)
{
	const struct lg_flow_cfg *c = &d->cfg;
	long shared_rate = -1, shared_total = -1;
	struct fl_flow *f;
	char detail[96], chain[LG_SUMMARY_MAX / 2];
	unsigned depth, names;

	if (!ev->flow || !*ev->flow) {
		snprintf(detail, sizeof(detail), "%s -> %s", ev->from, ev->to);
		return reject(
			d, LG_FLOW_R_CORRELATION, out,
			"correlation ID required for agent-initiated calls (%s)",
			detail, NULL);
	}
	f = find(d, ev->flow);
	if (f && f->depth <= 1 && c->max_duration_ms &&
	    now - f->start_ms > c->max_duration_ms)
		f = start(d, f, ev->flow, ev->from, now); /* after a break */
	else if (!f)
		f = start(d, NULL, ev->flow, ev->from, now);
	if (!f)
		return LG_ALLOW; /* out of memory: nothing to judge with */
	chain_text(f, ev->to, chain, sizeof(chain));
	if (same(ev->from, ev->to) && !c->allow_self_calls)
		return reject(d, LG_FLOW_R_SELF, out,
			      "self-calls not allowed (%s calls itself)",
			      ev->to, chain);
	if (c->max_duration_ms && now - f->start_ms > c->max_duration_ms) {
		duration_text(c->max_duration_ms, detail, sizeof(detail));
		return reject(d, LG_FLOW_R_DURATION, out,
			      "flow timeout (max %s)", detail, chain);
	}
	depth = depth_after(f, ev->from, ev->to);
	if (c->max_depth && depth > c->max_depth) {
		snprintf(detail, sizeof(detail), "%u exceeds limit (max %u)",
			 depth, c->max_depth);
		return reject(d, LG_FLOW_R_DEPTH, out,
			      "effective call depth %s", detail, chain);
	}
	names = f->nnames + !known(f, ev->from) +
		(!known(f, ev->to) && !same(ev->from, ev->to));
	if (c->max_sessions && names > c->max_sessions) {
		snprintf(detail, sizeof(detail), "%u, max %u", names,
			 c->max_sessions);
		return reject(d, LG_FLOW_R_SESSIONS, out,
			      "flow involves too many sessions (%s)", detail,
			      chain);
	}
	shared_counts(d, env_shared, &shared_rate, &shared_total);
	if (c->max_rate &&
	    (shared_rate >= 0 ? shared_rate > (long)c->max_rate :
				calls_in_window(d, f, now) > c->max_rate)) {
		char w[32];

		if (c->rate_window_ms == 60000)
			snprintf(w, sizeof(w), "minute");
		else
			duration_text(c->rate_window_ms, w, sizeof(w));
		snprintf(detail, sizeof(detail), "max %u/%s%s", c->max_rate, w,
			 shared_rate >= 0 ? ", all supervisors of the session" :
					    "");
		return reject(d, LG_FLOW_R_RATE, out,
			      "call rate limit exceeded (%s)", detail, chain);
	}
	if (c->max_calls &&
	    (shared_total >= 0 ? shared_total > (long)c->max_calls :
				 f->calls + 1 > c->max_calls)) {
		snprintf(detail, sizeof(detail), "max %u per flow%s",
			 c->max_calls,
			 shared_total >= 0 ?
				 ", all supervisors of the session" :
				 "");
		return reject(d, LG_FLOW_R_TOTAL, out,
			      "total call limit exceeded (%s)", detail, chain);
	}

	return record_call(d, f, ev, now, out);
}

enum lg_verdict lg_flow_feed(struct lg_flow *d, const struct lg_event *ev,
			     const struct lg_guard_env *env,
			     struct lg_findings *out)
{
	struct fl_flow *f;

	if (!d->cfg.enabled)
		return LG_ALLOW;
	switch (ev->kind) {
	case LG_EV_CALL:
		if (!ev->to)
			return LG_ALLOW;
		if (!ev->from) { /* a user starts a flow */
			if (ev->flow && *ev->flow)
				start(d, find(d, ev->flow), ev->flow, ev->to,
				      env->now_ms);
			return LG_ALLOW;
		}
		return call(d, ev, env->now_ms, env->shared, out);
	case LG_EV_RETURN:
		f = ev->flow && ev->to ? find(d, ev->flow) : NULL;
		if (f) {
			step(f, ev->to, true);
			d->st.returns++;
		}
		return LG_ALLOW;
	case LG_EV_TOOL_DONE:
	case LG_EV_OP_RESULT:
	case LG_EV_DESTRUCTIVE:
	case LG_EV_WORK:
		break;
	case LG_EV_TURN:
		if (!ev->turn_tool_calls)
			return LG_ALLOW;
		break;
	default:
		return LG_ALLOW;
	}
	/* Work: it is not known which flow did it, so every flow did. */
	for (size_t i = 0; i < LG_FLOW_FLOWS_MAX; i++)
		if (d->flows[i])
			d->flows[i]->work = true;
	return LG_ALLOW;
}

unsigned lg_flow_depth(const struct lg_flow *d, const char *id)
{
	const struct fl_flow *f = find((struct lg_flow *)d, id);

	return f ? f->depth : 0;
}

size_t lg_flow_stack(const struct lg_flow *d, const char *id, char *out,
		     size_t size)
{
	const struct fl_flow *f = find((struct lg_flow *)d, id);
	size_t len = 0;

	if (size)
		out[0] = '\0';
	for (unsigned i = 0; f && i < f->depth && len < size; i++)
		len += (size_t)snprintf(out + len, size - len, "%s%s",
					i ? "," : "", f->stack[i]);
	return f ? f->depth : 0;
}

LG_DETECTOR_DEFINE(flow);
