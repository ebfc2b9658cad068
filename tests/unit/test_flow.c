// SPDX-License-Identifier: MIT
/* Unit tests for guard/flow.c: agent-to-agent chains (seed 002). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "guard/detectors.h"

#define FLOW "c0ffee"

struct fixture {
	struct lg_flow *d;
	struct lg_guard_env env;
	struct lg_findings out;
};

static struct lg_flow_cfg defaults(void)
{
	return (struct lg_flow_cfg){
		.enabled = true,
		.max_depth = 5,
		.max_sessions = 10,
		.max_duration_ms = 300000,
		.max_rate = 20,
		.rate_window_ms = 60000,
		.max_calls = 100,
		.action = LG_KILL,
		.no_work_calls = 5,
		.no_work_gap_ms = 10000,
		.no_work_action = LG_WARN,
	};
}

static int fx_setup(void **state, const struct lg_flow_cfg *cfg)
{
	static struct fixture fx;
	struct lg_event ev = { .kind = LG_EV_CALL, .flow = FLOW, .to = "1" };

	memset(&fx, 0, sizeof(fx));
	fx.d = lg_flow_new(cfg);
	if (!fx.d)
		return -1;
	fx.env.now_ms = 1000;
	/* the user starts session 1: the flow's root */
	lg_flow_feed(fx.d, &ev, &fx.env, &fx.out);
	*state = &fx;
	return 0;
}

static int setup_default(void **state)
{
	struct lg_flow_cfg c = defaults();

	return fx_setup(state, &c);
}

/* Only the total limit: the others would stop 101 calls first. */
static int setup_total_only(void **state)
{
	struct lg_flow_cfg c = defaults();

	c.max_rate = 0;
	c.max_duration_ms = 0;
	c.no_work_calls = 0;
	return fx_setup(state, &c);
}

static int setup_self_allowed(void **state)
{
	struct lg_flow_cfg c = defaults();

	c.allow_self_calls = true;
	return fx_setup(state, &c);
}

static int setup_deny(void **state)
{
	struct lg_flow_cfg c = defaults();

	c.action = LG_DENY;
	return fx_setup(state, &c);
}

static int setup_off(void **state)
{
	struct lg_flow_cfg c = defaults();

	c.enabled = false;
	return fx_setup(state, &c);
}

static int teardown(void **state)
{
	struct fixture *fx = *state;

	lg_flow_free(fx->d);
	return 0;
}

static enum lg_verdict call_in(struct fixture *fx, const char *flow,
			       const char *from, const char *to)
{
	struct lg_event ev = {
		.kind = LG_EV_CALL, .flow = flow, .from = from, .to = to
	};

	fx->out.n = 0; /* as lg_guard_feed does */
	return lg_flow_feed(fx->d, &ev, &fx->env, &fx->out);
}

static enum lg_verdict call(struct fixture *fx, const char *from,
			    const char *to)
{
	return call_in(fx, FLOW, from, to);
}

static void ret(struct fixture *fx, const char *from, const char *to)
{
	struct lg_event ev = {
		.kind = LG_EV_RETURN, .flow = FLOW, .from = from, .to = to
	};

	assert_int_equal(lg_flow_feed(fx->d, &ev, &fx->env, &fx->out),
			 LG_ALLOW);
}

/*
 * Walks "1,2,1,3": every arrow a call from the previous session, step_ms
 * apart, each session doing some work (a tool call) before it calls on.
 * Returns the verdict of the last call; stops at the first that is not
 * allowed.
 */
static enum lg_verdict walk(struct fixture *fx, const char *seq,
			    uint64_t step_ms)
{
	char buf[512], *save = NULL, *prev, *cur;
	enum lg_verdict v = LG_ALLOW;
	struct lg_event work = { .kind = LG_EV_TOOL_DONE, .tool = "t" };

	snprintf(buf, sizeof(buf), "%s", seq);
	prev = strtok_r(buf, ",", &save);
	while ((cur = strtok_r(NULL, ",", &save))) {
		fx->env.now_ms += step_ms;
		lg_flow_feed(fx->d, &work, &fx->env, &fx->out);
		v = call(fx, prev, cur);
		if (v != LG_ALLOW)
			return v;
		prev = cur;
	}
	return v;
}

static const char *stack(struct fixture *fx)
{
	static char s[256];

	lg_flow_stack(fx->d, FLOW, s, sizeof(s));
	return s;
}

static void assert_summary(struct fixture *fx, const char *want)
{
	assert_int_equal(fx->out.n, 1);
	if (!strstr(fx->out.f[0].summary, want))
		fail_msg("summary '%s' lacks '%s'", fx->out.f[0].summary, want);
}

/* The seed's collapse table, by what the stack is after each chain. */
static void test_collapse_table(void **state)
{
	static const struct {
		const char *chain, *collapsed;
	} t[] = {
		{ "1,2,1", "1" },     { "1,2,1,2", "1,2" },
		{ "1,2,1,2,1", "1" }, { "1,2,3", "1,2,3" },
		{ "1,2,1,3", "1,3" }, { "1,2,1,3,1", "1" },
	};
	struct lg_flow_cfg c = defaults();

	(void)state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct fixture *fx;

		assert_int_equal(fx_setup((void **)&fx, &c), 0);
		assert_int_equal(walk(fx, t[i].chain, 1000), LG_ALLOW);
		assert_string_equal(stack(fx), t[i].collapsed);
		teardown((void **)&fx);
	}
}

static void test_simple_delegation_allowed(void **state)
{
	struct fixture *fx = *state;

	assert_int_equal(walk(fx, "1,2,1", 1000), LG_ALLOW);
	assert_int_equal(fx->out.n, 0);
	assert_int_equal(lg_flow_depth(fx->d, FLOW), 1);
}

static void test_oscillation_allowed(void **state)
{
	struct fixture *fx = *state;

	assert_int_equal(walk(fx, "1,2,1,2,1", 1000), LG_ALLOW);
	assert_string_equal(stack(fx), "1");
}

static void test_deep_chain_rejected_at_six(void **state)
{
	struct fixture *fx = *state;
	struct lg_flow_stats st;

	assert_int_equal(walk(fx, "1,2,3,4,5", 1000), LG_ALLOW);
	fx->env.now_ms += 1000;
	assert_int_equal(call(fx, "5", "6"), LG_KILL);
	assert_summary(fx, "effective call depth 6 exceeds limit (max 5)");
	assert_string_equal(fx->out.f[0].reason, "flow_depth");
	assert_string_equal(fx->out.f[0].rule, "flow");
	assert_non_null(
		strstr(fx->out.f[0].summary, "1 -> 2 -> 3 -> 4 -> 5 -> 6"));
	/* the refused call is not recorded */
	assert_string_equal(stack(fx), "1,2,3,4,5");
	lg_flow_stats(fx->d, &st);
	assert_int_equal(st.rejected[LG_FLOW_R_DEPTH], 1);
	assert_int_equal(st.calls, 4);
	assert_int_equal(st.longest, 5);
}

static void test_multi_peer_allowed(void **state)
{
	struct fixture *fx = *state;

	assert_int_equal(walk(fx, "1,2,1,3,1", 1000), LG_ALLOW);
	assert_string_equal(stack(fx), "1");
}

/* Recursion through a peer: 1 -> 2 -> 1 -> 2 -> 1 ... stays at depth 2. */
static void test_recursion_through_peer_stays_shallow(void **state)
{
	struct fixture *fx = *state;

	assert_int_equal(walk(fx, "1,2,1,2,1,2,1,2,1,2", 2000), LG_ALLOW);
	assert_string_equal(stack(fx), "1,2");
}

static void test_eleven_sessions_rejected(void **state)
{
	struct fixture *fx = *state;

	/* 1 -> 2 -> 1 -> 3 -> 1 ... -> 10: ten sessions */
	assert_int_equal(walk(fx, "1,2,1,3,1,4,1,5,1,6,1,7,1,8,1,9,1,10,1",
			      3100),
			 LG_ALLOW);
	fx->env.now_ms += 3100;
	assert_int_equal(call(fx, "1", "11"), LG_KILL);
	assert_summary(fx, "flow involves too many sessions (11, max 10)");
	/* an old one again is fine */
	fx->env.now_ms += 3100;
	assert_int_equal(call(fx, "1", "4"), LG_ALLOW);
}

static void test_rate_21_in_a_minute_rejected(void **state)
{
	struct fixture *fx = *state;

	for (int i = 0; i < 20; i++) {
		fx->env.now_ms += 2000;
		assert_int_equal(call(fx, i % 2 ? "2" : "1", i % 2 ? "1" : "2"),
				 i == 4 ? LG_WARN : /* no work: once a run */
					  LG_ALLOW);
	}
	fx->env.now_ms += 2000;
	assert_int_equal(call(fx, "1", "2"), LG_KILL);
	assert_summary(fx, "call rate limit exceeded (max 20/minute)");
	assert_string_equal(fx->out.f[0].reason, "flow_rate");
}

/* A sliding minute: 21 calls over more than a minute are fine. */
static void test_rate_is_a_sliding_window(void **state)
{
	struct fixture *fx = *state;
	struct lg_event work = { .kind = LG_EV_TOOL_DONE, .tool = "t" };

	for (int i = 0; i < 40; i++) {
		fx->env.now_ms += 3001;
		lg_flow_feed(fx->d, &work, &fx->env, &fx->out);
		assert_int_equal(call(fx, i % 2 ? "2" : "1", i % 2 ? "1" : "2"),
				 LG_ALLOW);
	}
}

static void test_timeout_rejected(void **state)
{
	struct fixture *fx = *state;

	assert_int_equal(walk(fx, "1,2", 1000), LG_ALLOW);
	fx->env.now_ms += 6 * 60000; /* session 2 still open */
	assert_int_equal(call(fx, "2", "3"), LG_KILL);
	assert_summary(fx, "flow timeout (max 5 minutes)");
}

static void test_resume_after_break(void **state)
{
	struct fixture *fx = *state;
	struct lg_flow_stats st;

	assert_int_equal(walk(fx, "1,2,1", 1000), LG_ALLOW);
	fx->env.now_ms += 5 * 60000 + 1;
	assert_int_equal(call(fx, "1", "2"), LG_ALLOW);
	assert_string_equal(stack(fx), "1,2");
	lg_flow_stats(fx->d, &st);
	assert_int_equal(st.flows, 2); /* the user's, and the fresh one */
}

static void test_101_calls_rejected(void **state)
{
	struct fixture *fx = *state;

	for (int i = 0; i < 100; i++) {
		fx->env.now_ms += 100;
		assert_int_equal(call(fx, i % 2 ? "2" : "1", i % 2 ? "1" : "2"),
				 LG_ALLOW);
	}
	fx->env.now_ms += 100;
	assert_int_equal(call(fx, "1", "2"), LG_KILL);
	assert_summary(fx, "total call limit exceeded (max 100 per flow)");
}

static void test_self_call_rejected(void **state)
{
	struct fixture *fx = *state;

	assert_int_equal(call(fx, "1", "1"), LG_KILL);
	assert_summary(fx, "self-calls not allowed");
	assert_string_equal(fx->out.f[0].reason, "flow_self_call");
	assert_int_equal(walk(fx, "1,2,3", 1000), LG_ALLOW);
	assert_int_equal(call(fx, "3", "3"), LG_KILL);
}

static void test_self_call_allowed_by_config(void **state)
{
	struct fixture *fx = *state;

	assert_int_equal(call(fx, "1", "1"), LG_ALLOW);
	assert_string_equal(stack(fx), "1");
}

static void test_no_correlation_id_rejected(void **state)
{
	struct fixture *fx = *state;

	assert_int_equal(call_in(fx, NULL, "1", "2"), LG_KILL);
	assert_summary(fx, "correlation ID required");
	assert_int_equal(call_in(fx, "", "1", "2"), LG_KILL);
	/* nothing was recorded */
	assert_string_equal(stack(fx), "1");
}

static void test_deny_action(void **state)
{
	struct fixture *fx = *state;

	assert_int_equal(walk(fx, "1,2,3,4,5,6", 1000), LG_DENY);
	/* the flow goes on where it was */
	assert_int_equal(call(fx, "5", "1"), LG_ALLOW);
	assert_string_equal(stack(fx), "1");
}

/* Returns move the chain and are not calls. */
static void test_returns(void **state)
{
	struct fixture *fx = *state;
	struct lg_flow_stats st;

	for (int i = 0; i < 30; i++) {
		fx->env.now_ms += 1500;
		assert_int_equal(call(fx, "1", i % 2 ? "b" : "a"),
				 i < 20 ? (i == 4 ? LG_WARN : LG_ALLOW) :
					  LG_KILL);
		if (i < 20)
			ret(fx, i % 2 ? "b" : "a", "1");
		assert_string_equal(stack(fx), "1");
		if (i >= 20)
			break;
	}
	lg_flow_stats(fx->d, &st);
	assert_int_equal(st.calls, 20);
	assert_int_equal(st.returns, 20);
	assert_int_equal(st.rejected[LG_FLOW_R_RATE], 1);
}

/* Six nested sessions, each returning in turn: the stack follows. */
static void test_nested_returns_unwind(void **state)
{
	struct fixture *fx = *state;

	assert_int_equal(walk(fx, "1,2,3,4,5", 1000), LG_ALLOW);
	ret(fx, "5", "4");
	ret(fx, "4", "3");
	assert_string_equal(stack(fx), "1,2,3");
	assert_int_equal(call(fx, "3", "6"), LG_ALLOW);
	assert_int_equal(call(fx, "6", "7"), LG_ALLOW);
	assert_int_equal(call(fx, "7", "8"), LG_KILL);
}

/* Two delegations side by side: the second pops back to its caller. */
static void test_parallel_calls(void **state)
{
	struct fixture *fx = *state;

	assert_int_equal(call(fx, "1", "2"), LG_ALLOW);
	assert_int_equal(call(fx, "1", "3"), LG_ALLOW);
	assert_string_equal(stack(fx), "1,3");
	/* a caller not on the stack at all is pushed first */
	assert_int_equal(call(fx, "2", "4"), LG_ALLOW);
	assert_string_equal(stack(fx), "1,3,2,4");
}

static void test_no_work_warns(void **state)
{
	struct fixture *fx = *state;
	struct lg_event work = { .kind = LG_EV_OP_RESULT,
				 .op = LG_OP_WRITE,
				 .target = "/tmp/x" };

	for (int i = 0; i < 4; i++) {
		fx->env.now_ms += 1000;
		assert_int_equal(call(fx, "1", "2"), LG_ALLOW);
		ret(fx, "2", "1");
	}
	fx->env.now_ms += 1000;
	assert_int_equal(call(fx, "1", "2"), LG_WARN);
	assert_summary(fx, "rapid calls with no work: 5 calls");
	assert_string_equal(fx->out.f[0].reason, "flow_no_work");
	/* work in between breaks the run */
	for (int i = 0; i < 8; i++) {
		fx->env.now_ms += 1000;
		lg_flow_feed(fx->d, &work, &fx->env, &fx->out);
		assert_int_equal(call(fx, "2", i % 2 ? "2b" : "2a"), LG_ALLOW);
		ret(fx, i % 2 ? "2b" : "2a", "2");
	}
}

/* Bytes written between calls (the eBPF counters) are work too. */
static void test_bytes_written_are_work(void **state)
{
	struct fixture *fx = *state;
	struct lg_event work = { .kind = LG_EV_WORK };

	for (int i = 0; i < 8; i++) {
		fx->env.now_ms += 1000;
		lg_flow_feed(fx->d, &work, &fx->env, &fx->out);
		assert_int_equal(call(fx, "1", "2"), LG_ALLOW);
		ret(fx, "2", "1");
	}
}

/* Slow calls with no work are not rapid. */
static void test_no_work_needs_rapid_calls(void **state)
{
	struct fixture *fx = *state;

	for (int i = 0; i < 8; i++) {
		fx->env.now_ms += 11000;
		assert_int_equal(call(fx, "1", "2"), LG_ALLOW);
		ret(fx, "2", "1");
	}
}

static void test_flows_are_separate(void **state)
{
	struct fixture *fx = *state;

	assert_int_equal(walk(fx, "1,2,3,4,5", 1000), LG_ALLOW);
	/* another flow's chain starts from its caller */
	assert_int_equal(call_in(fx, "other", "x", "y"), LG_ALLOW);
	assert_int_equal(lg_flow_depth(fx->d, "other"), 2);
	assert_int_equal(lg_flow_depth(fx->d, FLOW), 5);
}

static void test_off(void **state)
{
	struct fixture *fx = *state;

	assert_int_equal(walk(fx, "1,2,3,4,5,6,7,8", 1000), LG_ALLOW);
	assert_int_equal(call(fx, "8", "8"), LG_ALLOW);
	assert_int_equal(lg_flow_depth(fx->d, FLOW), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_collapse_table),
		cmocka_unit_test_setup_teardown(test_simple_delegation_allowed,
						setup_default, teardown),
		cmocka_unit_test_setup_teardown(test_oscillation_allowed,
						setup_default, teardown),
		cmocka_unit_test_setup_teardown(test_deep_chain_rejected_at_six,
						setup_default, teardown),
		cmocka_unit_test_setup_teardown(test_multi_peer_allowed,
						setup_default, teardown),
		cmocka_unit_test_setup_teardown(
			test_recursion_through_peer_stays_shallow,
			setup_default, teardown),
		cmocka_unit_test_setup_teardown(test_eleven_sessions_rejected,
						setup_default, teardown),
		cmocka_unit_test_setup_teardown(
			test_rate_21_in_a_minute_rejected, setup_default,
			teardown),
		cmocka_unit_test_setup_teardown(test_rate_is_a_sliding_window,
						setup_default, teardown),
		cmocka_unit_test_setup_teardown(test_timeout_rejected,
						setup_default, teardown),
		cmocka_unit_test_setup_teardown(test_resume_after_break,
						setup_default, teardown),
		cmocka_unit_test_setup_teardown(test_101_calls_rejected,
						setup_total_only, teardown),
		cmocka_unit_test_setup_teardown(test_self_call_rejected,
						setup_default, teardown),
		cmocka_unit_test_setup_teardown(test_self_call_allowed_by_config,
						setup_self_allowed, teardown),
		cmocka_unit_test_setup_teardown(test_no_correlation_id_rejected,
						setup_default, teardown),
		cmocka_unit_test_setup_teardown(test_deny_action, setup_deny,
						teardown),
		cmocka_unit_test_setup_teardown(test_returns, setup_default,
						teardown),
		cmocka_unit_test_setup_teardown(test_nested_returns_unwind,
						setup_default, teardown),
		cmocka_unit_test_setup_teardown(test_parallel_calls,
						setup_default, teardown),
		cmocka_unit_test_setup_teardown(test_no_work_warns,
						setup_default, teardown),
		cmocka_unit_test_setup_teardown(test_bytes_written_are_work,
						setup_default, teardown),
		cmocka_unit_test_setup_teardown(test_no_work_needs_rapid_calls,
						setup_default, teardown),
		cmocka_unit_test_setup_teardown(test_flows_are_separate,
						setup_default, teardown),
		cmocka_unit_test_setup_teardown(test_off, setup_off, teardown),
	};

	return cmocka_run_group_tests_name("flow", tests, NULL, NULL);
}
