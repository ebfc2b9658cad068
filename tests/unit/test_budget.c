// SPDX-License-Identifier: MIT
/* Unit tests for guard/budget.c: the wall-clock and destructive-op budgets. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "config/config.h"
#include "guard/detectors.h"

static const struct lg_event tick = { .kind = LG_EV_TICK,
				      .source = LG_SRC_TIMER };

static struct lg_event destroy(const char *target)
{
	return (struct lg_event){ .kind = LG_EV_DESTRUCTIVE,
				  .source = LG_SRC_SECCOMP,
				  .op = LG_OP_UNLINK,
				  .cls = LG_CLASS_DESTROY,
				  .pid = 3,
				  .target = target };
}

static struct lg_event model_turn(uint64_t in, uint64_t out)
{
	return (struct lg_event){ .kind = LG_EV_TURN,
				  .source = LG_SRC_PROXY,
				  .tokens_in = in,
				  .tokens_out = out,
				  .stop_reason = "end_turn",
				  .turn_text = "" };
}

static enum lg_verdict feed(struct lg_budget *d, const struct lg_event *ev,
			    uint64_t now, struct lg_findings *out)
{
	struct lg_guard_env env = { .now_ms = now };

	out->n = 0;
	return lg_budget_feed(d, ev, &env, out);
}

static void test_off_by_default(void **state)
{
	struct lg_config c;
	struct lg_findings out;
	struct lg_budget *d;

	(void)state;
	lg_config_init(&c);
	assert_int_equal(c.guard.budget.timeout_ms, 0);
	assert_int_equal(c.guard.budget.max_destructive_ops, 0);
	assert_int_equal(c.guard.budget.max_turns, 0);
	assert_int_equal(c.guard.budget.max_tokens, 0);
	d = lg_budget_new(&c.guard.budget, 0);
	assert_non_null(d);
	assert_int_equal(lg_budget_next_deadline(d), 0);
	assert_int_equal(feed(d, &tick, 1000ULL * 86400 * 365, &out), LG_ALLOW);
	for (int i = 0; i < 1000; i++) {
		struct lg_event ev = destroy("/p/a");

		assert_int_equal(feed(d, &ev, (uint64_t)i, &out), LG_ALLOW);
		ev = model_turn(1000000000, 1000000000);
		assert_int_equal(feed(d, &ev, (uint64_t)i, &out), LG_ALLOW);
	}
	assert_int_equal(out.n, 0);
	lg_budget_free(d);
	lg_config_free(&c);
}

static void test_timeout(void **state)
{
	struct lg_budget_cfg cfg = { .timeout_ms = 10000,
				     .reserve = 0.2,
				     .action = LG_KILL };
	struct lg_findings out;
	struct lg_budget *d = lg_budget_new(&cfg, 0);

	(void)state;
	assert_non_null(d);
	assert_int_equal(lg_budget_next_deadline(d), 8000);
	assert_int_equal(feed(d, &tick, 7999, &out), LG_ALLOW);
	assert_int_equal(out.n, 0);
	assert_int_equal(lg_budget_next_deadline(d), 8000);

	assert_int_equal(feed(d, &tick, 8000, &out), LG_WARN);
	assert_int_equal(out.n, 1);
	assert_int_equal(out.f[0].action, LG_WARN);
	assert_string_equal(out.f[0].rule, "budget");
	assert_string_equal(out.f[0].reason, "timeout_reserve");
	assert_int_equal(lg_budget_next_deadline(d), 10000);

	/* the warning is given once */
	assert_int_equal(feed(d, &tick, 8001, &out), LG_ALLOW);
	assert_int_equal(out.n, 0);
	assert_int_equal(feed(d, &tick, 9999, &out), LG_ALLOW);
	assert_int_equal(out.n, 0);

	assert_int_equal(feed(d, &tick, 10000, &out), LG_KILL);
	assert_int_equal(out.n, 1);
	assert_int_equal(out.f[0].action, LG_KILL);
	assert_string_equal(out.f[0].reason, "timeout");
	assert_non_null(strstr(out.f[0].summary, "limit 10s"));
	assert_int_equal(lg_budget_next_deadline(d), 0);
	lg_budget_free(d);
}

/* A session that did not start at 0 on the monotonic clock. */
static void test_timeout_offset_start(void **state)
{
	struct lg_budget_cfg cfg = { .timeout_ms = 10000,
				     .reserve = 0.2,
				     .action = LG_DENY };
	struct lg_findings out;
	struct lg_budget *d = lg_budget_new(&cfg, 5000000);

	(void)state;
	assert_non_null(d);
	assert_int_equal(lg_budget_next_deadline(d), 5008000);
	assert_int_equal(feed(d, &tick, 5007999, &out), LG_ALLOW);
	assert_int_equal(feed(d, &tick, 5008000, &out), LG_WARN);
	assert_int_equal(lg_budget_next_deadline(d), 5010000);
	assert_int_equal(feed(d, &tick, 5010000, &out), LG_DENY);
	assert_int_equal(lg_budget_next_deadline(d), 0);
	lg_budget_free(d);
}

/* A late tick past the end trips without the warning first. */
static void test_timeout_late_tick(void **state)
{
	struct lg_budget_cfg cfg = { .timeout_ms = 10000,
				     .reserve = 0.2,
				     .action = LG_KILL };
	struct lg_findings out;
	struct lg_budget *d = lg_budget_new(&cfg, 0);

	(void)state;
	assert_non_null(d);
	assert_int_equal(feed(d, &tick, 25000, &out), LG_KILL);
	assert_int_equal(out.n, 1);
	assert_string_equal(out.f[0].reason, "timeout");
	assert_int_equal(lg_budget_next_deadline(d), 0);
	/* it trips once */
	assert_int_equal(feed(d, &tick, 26000, &out), LG_ALLOW);
	assert_int_equal(out.n, 0);
	lg_budget_free(d);
}

/* Destructive events also check the clock. */
static void test_timeout_on_destructive_event(void **state)
{
	struct lg_budget_cfg cfg = { .timeout_ms = 10000,
				     .reserve = 0.2,
				     .action = LG_KILL };
	struct lg_event ev = destroy("/p/a");
	struct lg_findings out;
	struct lg_budget *d = lg_budget_new(&cfg, 0);

	(void)state;
	assert_non_null(d);
	assert_int_equal(feed(d, &ev, 8500, &out), LG_WARN);
	assert_string_equal(out.f[0].reason, "timeout_reserve");
	assert_int_equal(feed(d, &ev, 10500, &out), LG_KILL);
	assert_string_equal(out.f[0].reason, "timeout");
	lg_budget_free(d);
}

static void test_timeout_no_reserve(void **state)
{
	struct lg_budget_cfg cfg = { .timeout_ms = 10000,
				     .reserve = 0,
				     .action = LG_KILL };
	struct lg_findings out;
	struct lg_budget *d = lg_budget_new(&cfg, 0);

	(void)state;
	assert_non_null(d);
	assert_int_equal(lg_budget_next_deadline(d), 10000);
	assert_int_equal(feed(d, &tick, 9999, &out), LG_ALLOW);
	assert_int_equal(out.n, 0);
	assert_int_equal(feed(d, &tick, 10000, &out), LG_KILL);
	lg_budget_free(d);
}

static void test_max_ops(void **state)
{
	struct lg_budget_cfg cfg = { .max_destructive_ops = 10,
				     .reserve = 0.2,
				     .action = LG_KILL };
	struct lg_findings out;
	struct lg_budget *d = lg_budget_new(&cfg, 0);

	(void)state;
	assert_non_null(d);
	assert_int_equal(lg_budget_next_deadline(d), 0);
	for (int i = 1; i <= 7; i++) {
		struct lg_event ev = destroy("/p/a");

		assert_int_equal(feed(d, &ev, (uint64_t)i, &out), LG_ALLOW);
		assert_int_equal(out.n, 0);
	}
	{
		struct lg_event ev = destroy("/p/op8");

		assert_int_equal(feed(d, &ev, 8, &out), LG_WARN);
		assert_int_equal(out.n, 1);
		assert_int_equal(out.f[0].action, LG_WARN);
		assert_string_equal(out.f[0].rule, "budget");
		assert_string_equal(out.f[0].reason, "budget_reserve");
		assert_non_null(strstr(out.f[0].summary, "8 of 10"));
	}
	for (int i = 9; i <= 10; i++) {
		struct lg_event ev = destroy("/p/a");

		assert_int_equal(feed(d, &ev, (uint64_t)i, &out), LG_ALLOW);
		assert_int_equal(out.n, 0);
	}
	{
		struct lg_event ev = destroy("/p/op11");

		assert_int_equal(feed(d, &ev, 11, &out), LG_KILL);
		assert_int_equal(out.n, 1);
		assert_int_equal(out.f[0].action, LG_KILL);
		assert_string_equal(out.f[0].reason, "budget_exceeded");
		assert_non_null(strstr(out.f[0].summary, "/p/op11"));
		assert_non_null(strstr(out.f[0].summary, "#11"));
		/* a refused op does not use the budget: the next is #11 too */
		assert_int_equal(feed(d, &ev, 12, &out), LG_KILL);
		assert_non_null(strstr(out.f[0].summary, "#11"));
	}
	lg_budget_free(d);
}

static void test_max_ops_ignores_other_events(void **state)
{
	static const enum lg_class cls[] = { LG_CLASS_MISSING, LG_CLASS_SESSION,
					     LG_CLASS_IGNORED,
					     LG_CLASS_HARMLESS };
	struct lg_budget_cfg cfg = { .max_destructive_ops = 2,
				     .reserve = 0.2,
				     .action = LG_DENY };
	struct lg_findings out;
	struct lg_budget *d = lg_budget_new(&cfg, 0);
	struct lg_event ev = destroy("/p/a");
	struct lg_event t = tick;

	(void)state;
	assert_non_null(d);
	for (size_t i = 0; i < sizeof(cls) / sizeof(cls[0]); i++) {
		ev.cls = cls[i];
		for (int k = 0; k < 5; k++)
			assert_int_equal(feed(d, &ev, 0, &out), LG_ALLOW);
	}
	t.cls = LG_CLASS_DESTROY;
	for (int k = 0; k < 5; k++)
		assert_int_equal(feed(d, &t, 0, &out), LG_ALLOW);
	ev.cls = LG_CLASS_DESTROY;
	/* only these count: ops 1 and 2 pass, 3 is over the limit */
	assert_true(feed(d, &ev, 0, &out) <= LG_WARN);
	assert_true(feed(d, &ev, 0, &out) <= LG_WARN);
	assert_int_equal(feed(d, &ev, 0, &out), LG_DENY);
	assert_string_equal(out.f[0].reason, "budget_exceeded");
	lg_budget_free(d);
}

/* The reserve point for a few limits and fractions. */
static void test_reserve_points(void **state)
{
	static const struct {
		unsigned max;
		double reserve;
		unsigned warn_at; /* 0: never warns */
	} tc[] = {
		{ 10, 0.2, 8 },	 { 10, 0.1, 9 },     { 100, 0.25, 75 },
		{ 50, 0.2, 40 }, { 10, 0.5, 5 },     { 10, 0, 0 },
		{ 10, 0.95, 1 }, { 1000, 0.3, 700 }, { 7, 0.3, 5 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(tc) / sizeof(tc[0]); i++) {
		struct lg_budget_cfg cfg = { .max_destructive_ops = tc[i].max,
					     .reserve = tc[i].reserve,
					     .action = LG_KILL };
		struct lg_budget *d = lg_budget_new(&cfg, 0);
		unsigned warned = 0, nwarn = 0;
		struct lg_findings out;

		assert_non_null(d);
		for (unsigned op = 1; op <= tc[i].max; op++) {
			struct lg_event ev = destroy("/p/a");
			enum lg_verdict v = feed(d, &ev, op, &out);

			if (v == LG_WARN) {
				warned = op;
				nwarn++;
			} else if (v != LG_ALLOW) {
				lg_budget_free(d);
				fail_msg("case %zu: op %u tripped", i, op);
			}
		}
		lg_budget_free(d);
		if (nwarn > 1 || warned != tc[i].warn_at)
			fail_msg(
				"case %zu (%u, %g): warned %u times, at op %u, want at %u",
				i, tc[i].max, tc[i].reserve, nwarn, warned,
				tc[i].warn_at);
	}
}

/*
 * Turns: the reserve warning once at 8 of 10, the 11th turn trips (a
 * turn is known when it has ended), and every turn after it.
 */
static void test_max_turns(void **state)
{
	struct lg_budget_cfg cfg = { .max_turns = 10,
				     .reserve = 0.2,
				     .action = LG_KILL };
	struct lg_event ev = model_turn(10, 10);
	struct lg_findings out;
	struct lg_budget *d = lg_budget_new(&cfg, 0);

	(void)state;
	assert_non_null(d);
	assert_int_equal(lg_budget_next_deadline(d), 0);
	for (int i = 1; i <= 7; i++) {
		assert_int_equal(feed(d, &ev, (uint64_t)i, &out), LG_ALLOW);
		assert_int_equal(out.n, 0);
	}
	assert_int_equal(feed(d, &ev, 8, &out), LG_WARN);
	assert_int_equal(out.n, 1);
	assert_int_equal(out.f[0].action, LG_WARN);
	assert_string_equal(out.f[0].rule, "budget");
	assert_string_equal(out.f[0].reason, "turns_reserve");
	assert_string_equal(out.f[0].summary,
			    "turns_reserve, 8 of 10 model turns used");
	for (int i = 9; i <= 10; i++) {
		assert_int_equal(feed(d, &ev, (uint64_t)i, &out), LG_ALLOW);
		assert_int_equal(out.n, 0);
	}
	assert_int_equal(feed(d, &ev, 11, &out), LG_KILL);
	assert_int_equal(out.n, 1);
	assert_int_equal(out.f[0].action, LG_KILL);
	assert_string_equal(out.f[0].rule, "budget");
	assert_string_equal(out.f[0].reason, "max_turns");
	assert_string_equal(
		out.f[0].summary,
		"max_turns, model turn #11 ended, over the session limit of 10 turns");
	assert_int_equal(feed(d, &ev, 12, &out), LG_KILL);
	assert_string_equal(out.f[0].reason, "max_turns");
	assert_non_null(strstr(out.f[0].summary, "#12"));
	lg_budget_free(d);
}

/* Tokens in and out, summed over turns. */
static void test_max_tokens(void **state)
{
	struct lg_budget_cfg cfg = { .max_tokens = 1000,
				     .reserve = 0.2,
				     .action = LG_DENY };
	struct lg_event ev = model_turn(200, 100);
	struct lg_findings out;
	struct lg_budget *d = lg_budget_new(&cfg, 0);

	(void)state;
	assert_non_null(d);
	assert_int_equal(feed(d, &ev, 1, &out), LG_ALLOW); /* 300 */
	assert_int_equal(feed(d, &ev, 2, &out), LG_ALLOW); /* 600 */
	assert_int_equal(out.n, 0);
	assert_int_equal(feed(d, &ev, 3, &out), LG_WARN); /* 900 */
	assert_int_equal(out.n, 1);
	assert_string_equal(out.f[0].reason, "tokens_reserve");
	assert_string_equal(out.f[0].summary,
			    "tokens_reserve, 900 of 1000 tokens used");
	ev = model_turn(60, 40);
	assert_int_equal(feed(d, &ev, 4, &out), LG_ALLOW); /* 1000: at it */
	assert_int_equal(out.n, 0);
	ev = model_turn(1, 0);
	assert_int_equal(feed(d, &ev, 5, &out), LG_DENY); /* 1001 */
	assert_int_equal(out.n, 1);
	assert_int_equal(out.f[0].action, LG_DENY);
	assert_string_equal(out.f[0].reason, "max_tokens");
	assert_string_equal(
		out.f[0].summary,
		"max_tokens, 1001 tokens used after model turn #5 (this turn: 1 in, 0 out), over the session limit of 1000");
	ev = model_turn(0, 0);
	assert_int_equal(feed(d, &ev, 6, &out), LG_DENY);
	assert_string_equal(out.f[0].reason, "max_tokens");
	lg_budget_free(d);
}

/* A turn that jumps past the limit trips without the warning first. */
static void test_max_tokens_jump(void **state)
{
	struct lg_budget_cfg cfg = { .max_tokens = 1000,
				     .reserve = 0.2,
				     .action = LG_KILL };
	struct lg_event ev = model_turn(700, 0);
	struct lg_findings out;
	struct lg_budget *d = lg_budget_new(&cfg, 0);

	(void)state;
	assert_non_null(d);
	assert_int_equal(feed(d, &ev, 1, &out), LG_ALLOW);
	ev = model_turn(0, 700);
	assert_int_equal(feed(d, &ev, 2, &out), LG_KILL);
	assert_int_equal(out.n, 1);
	assert_string_equal(out.f[0].reason, "max_tokens");
	assert_non_null(strstr(out.f[0].summary, "1400 tokens used"));
	/* the warning is not given late either */
	ev = model_turn(0, 0);
	assert_int_equal(feed(d, &ev, 3, &out), LG_KILL);
	assert_int_equal(out.n, 1);
	lg_budget_free(d);

	/* nor on reaching the limit exactly, like destructive ops: the
	 * warning is for while something is left; the next turn trips */
	d = lg_budget_new(&cfg, 0);
	assert_non_null(d);
	ev = model_turn(700, 0);
	assert_int_equal(feed(d, &ev, 1, &out), LG_ALLOW);
	ev = model_turn(0, 300);
	assert_int_equal(feed(d, &ev, 2, &out), LG_ALLOW);
	assert_int_equal(out.n, 0);
	ev = model_turn(0, 1);
	assert_int_equal(feed(d, &ev, 3, &out), LG_KILL);
	lg_budget_free(d);
}

/* Turns also check the clock, with the turn budgets off or quiet. */
static void test_timeout_on_turn_event(void **state)
{
	struct lg_budget_cfg cfg = { .timeout_ms = 10000,
				     .max_turns = 100,
				     .reserve = 0.2,
				     .action = LG_KILL };
	struct lg_event ev = model_turn(1, 1);
	struct lg_findings out;
	struct lg_budget *d = lg_budget_new(&cfg, 0);

	(void)state;
	assert_non_null(d);
	assert_int_equal(feed(d, &ev, 8500, &out), LG_WARN);
	assert_int_equal(out.n, 1);
	assert_string_equal(out.f[0].reason, "timeout_reserve");
	assert_int_equal(feed(d, &ev, 10500, &out), LG_KILL);
	assert_int_equal(out.n, 1);
	assert_string_equal(out.f[0].reason, "timeout");
	lg_budget_free(d);
}

/* The sum saturates instead of wrapping round to a small number. */
static void test_max_tokens_saturates(void **state)
{
	struct lg_budget_cfg cfg = { .max_tokens = 4000000000ULL,
				     .reserve = 0,
				     .action = LG_KILL };
	struct lg_event ev = model_turn(UINT64_MAX, UINT64_MAX);
	struct lg_findings out;
	struct lg_budget *d = lg_budget_new(&cfg, 0);

	(void)state;
	assert_non_null(d);
	assert_int_equal(feed(d, &ev, 1, &out), LG_KILL);
	ev = model_turn(2, 2);
	assert_int_equal(feed(d, &ev, 2, &out), LG_KILL);
	assert_non_null(
		strstr(out.f[0].summary, "18446744073709551615 tokens"));
	lg_budget_free(d);
}

/*
 * One turn can bring the time, turns and tokens findings together; each
 * warning is still given once.
 */
static void test_turn_findings_together(void **state)
{
	struct lg_budget_cfg cfg = { .timeout_ms = 10000,
				     .max_turns = 2,
				     .max_tokens = 100,
				     .reserve = 0.5,
				     .action = LG_KILL };
	struct lg_event ev = model_turn(30, 30);
	struct lg_findings out;
	struct lg_budget *d = lg_budget_new(&cfg, 0);

	(void)state;
	assert_non_null(d);
	/* 1 of 2 turns, 60 of 100 tokens, 5 of 10 s: three warnings */
	assert_int_equal(feed(d, &ev, 5000, &out), LG_WARN);
	assert_int_equal(out.n, 3);
	assert_string_equal(out.f[0].reason, "timeout_reserve");
	assert_string_equal(out.f[1].reason, "turns_reserve");
	assert_string_equal(out.f[2].reason, "tokens_reserve");
	ev = model_turn(10, 10);
	assert_int_equal(feed(d, &ev, 6000, &out), LG_ALLOW); /* 2, 80 */
	assert_int_equal(out.n, 0);
	assert_int_equal(feed(d, &ev, 7000, &out), LG_KILL); /* 3, 100 */
	assert_int_equal(out.n, 1);
	assert_string_equal(out.f[0].reason, "max_turns");
	assert_int_equal(feed(d, &ev, 10000, &out), LG_KILL); /* 4, 120 */
	assert_int_equal(out.n, 3);
	assert_string_equal(out.f[0].reason, "timeout");
	assert_string_equal(out.f[1].reason, "max_turns");
	assert_string_equal(out.f[2].reason, "max_tokens");
	lg_budget_free(d);
}

/*
 * Only LG_EV_TURN counts turns and tokens, and a turn is not a
 * destructive op: neither budget moves on the other's events.
 */
static void test_turns_and_ops_apart(void **state)
{
	struct lg_budget_cfg cfg = { .max_destructive_ops = 1,
				     .max_turns = 1,
				     .max_tokens = 10,
				     .reserve = 0,
				     .action = LG_DENY };
	struct lg_event other[] = {
		destroy("/p/a"),
		tick,
		{ .kind = LG_EV_TEXT, .text = "hello", .text_len = 5 },
		{ .kind = LG_EV_TOOL_DONE,
		  .tool = "t",
		  .args = "{}",
		  .tokens_in = 50 },
		{ .kind = LG_EV_OP_RESULT, .tokens_out = 50 },
	};
	struct lg_event ev = model_turn(5, 5);
	struct lg_findings out;
	struct lg_budget *d = lg_budget_new(&cfg, 0);

	(void)state;
	assert_non_null(d);
	other[1].tokens_in = 99;
	for (size_t i = 0; i < sizeof(other) / sizeof(other[0]); i++)
		assert_int_equal(feed(d, &other[i], 0, &out), LG_ALLOW);
	/* one destructive op used; the turn budget is untouched */
	assert_int_equal(feed(d, &ev, 0, &out), LG_ALLOW);
	assert_int_equal(out.n, 0);
	assert_int_equal(feed(d, &ev, 0, &out), LG_DENY);
	assert_int_equal(out.n, 2);
	assert_string_equal(out.f[0].reason, "max_turns");
	assert_string_equal(out.f[1].reason, "max_tokens");
	/* and the second destructive op is still the one over its limit */
	other[0] = destroy("/p/b");
	assert_int_equal(feed(d, &other[0], 0, &out), LG_DENY);
	assert_int_equal(out.n, 1);
	assert_string_equal(out.f[0].reason, "budget_exceeded");
	assert_non_null(strstr(out.f[0].summary, "#2"));
	lg_budget_free(d);
}

/* Reserve points for turns, as for ops; no reserve, no warning. */
static void test_turn_reserve_points(void **state)
{
	static const struct {
		unsigned max;
		double reserve;
		unsigned warn_at; /* 0: never warns */
	} tc[] = {
		{ 10, 0.2, 8 }, { 10, 0.5, 5 }, { 10, 0, 0 },
		{ 3, 0.2, 0 },	{ 1, 0.5, 0 },	{ 100, 0.25, 75 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(tc) / sizeof(tc[0]); i++) {
		struct lg_budget_cfg cfg = { .max_turns = tc[i].max,
					     .reserve = tc[i].reserve,
					     .action = LG_KILL };
		struct lg_budget *d = lg_budget_new(&cfg, 0);
		struct lg_event ev = model_turn(1, 1);
		unsigned warned = 0, nwarn = 0;
		struct lg_findings out;

		assert_non_null(d);
		for (unsigned t = 1; t <= tc[i].max; t++) {
			enum lg_verdict v = feed(d, &ev, t, &out);

			if (v == LG_WARN) {
				warned = t;
				nwarn++;
			} else if (v != LG_ALLOW) {
				lg_budget_free(d);
				fail_msg("case %zu: turn %u tripped", i, t);
			}
		}
		lg_budget_free(d);
		if (nwarn > 1 || warned != tc[i].warn_at)
			fail_msg(
				"case %zu (%u, %g): warned %u times, at turn %u, want at %u",
				i, tc[i].max, tc[i].reserve, nwarn, warned,
				tc[i].warn_at);
	}
}

/* Dollars add up per turn; one warning at the reserve, then the trip. */
static void test_max_cost(void **state)
{
	struct lg_budget_cfg cfg = { .max_cost = 1.0,
				     .reserve = 0.2,
				     .action = LG_KILL };
	struct lg_event ev = model_turn(100, 100);
	struct lg_findings out;
	struct lg_budget *d = lg_budget_new(&cfg, 0);

	(void)state;
	assert_non_null(d);
	ev.cost = 0.3;
	assert_int_equal(feed(d, &ev, 1, &out), LG_ALLOW); /* 0.3 */
	assert_int_equal(feed(d, &ev, 2, &out), LG_ALLOW); /* 0.6 */
	assert_int_equal(feed(d, &ev, 3, &out), LG_WARN); /* 0.9 >= 0.8 */
	assert_string_equal(out.f[0].reason, "cost_reserve");
	assert_non_null(strstr(out.f[0].summary, "$0.9000 of $1 spent"));
	assert_int_equal(feed(d, &ev, 4, &out), LG_KILL); /* 1.2 > 1.0 */
	assert_string_equal(out.f[0].reason, "max_cost");
	assert_non_null(
		strstr(out.f[0].summary, "over the session limit of $1"));
	ev.cost = 0; /* unpriced turns never count */
	lg_budget_free(d);
	cfg.max_cost = 0; /* off */
	d = lg_budget_new(&cfg, 0);
	ev.cost = 100;
	assert_int_equal(feed(d, &ev, 1, &out), LG_ALLOW);
	assert_int_equal(out.n, 0);
	lg_budget_free(d);
}

/* Steps: completed tool calls, with the reserve warning first. */
static void test_max_tool_calls(void **state)
{
	struct lg_budget_cfg cfg = { .max_tool_calls = 5,
				     .reserve = 0.2,
				     .action = LG_DENY };
	struct lg_event ev = { .kind = LG_EV_TOOL_DONE,
			       .source = LG_SRC_PROXY,
			       .tool = "get",
			       .args = "{}" };
	struct lg_findings out;
	struct lg_budget *d = lg_budget_new(&cfg, 0);

	(void)state;
	assert_non_null(d);
	for (int i = 1; i <= 3; i++)
		assert_int_equal(feed(d, &ev, (uint64_t)i, &out), LG_ALLOW);
	assert_int_equal(feed(d, &ev, 4, &out), LG_WARN);
	assert_string_equal(out.f[0].reason, "tool_calls_reserve");
	assert_int_equal(feed(d, &ev, 5, &out), LG_ALLOW);
	assert_int_equal(feed(d, &ev, 6, &out), LG_DENY);
	assert_string_equal(out.f[0].reason, "max_tool_calls");
	assert_non_null(strstr(out.f[0].summary, "tool call #6"));
	lg_budget_free(d);
}

static void test_max_processes(void **state)
{
	struct lg_budget_cfg cfg = { .max_processes = 10,
				     .reserve = 0.2,
				     .action = LG_KILL };
	struct lg_event ev = { .kind = LG_EV_PROCESSES,
			       .source = LG_SRC_TIMER };
	struct lg_findings out;
	struct lg_budget *d = lg_budget_new(&cfg, 0);

	(void)state;
	ev.processes = 5;
	assert_int_equal(feed(d, &ev, 1, &out), LG_ALLOW);
	ev.processes = 8; /* 80%: the reserve */
	assert_int_equal(feed(d, &ev, 2, &out), LG_WARN);
	assert_string_equal(out.f[0].reason, "processes_reserve");
	ev.processes = 9;
	assert_int_equal(feed(d, &ev, 3, &out), LG_ALLOW); /* warned once */
	ev.processes = 10;
	assert_int_equal(feed(d, &ev, 4, &out), LG_ALLOW); /* at the limit */
	ev.processes = 11;
	assert_int_equal(feed(d, &ev, 5, &out), LG_KILL);
	assert_string_equal(out.f[0].reason, "max_processes");
	assert_int_equal(feed(d, &ev, 6, &out), LG_ALLOW); /* trips once */
	lg_budget_free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_off_by_default),
		cmocka_unit_test(test_timeout),
		cmocka_unit_test(test_timeout_offset_start),
		cmocka_unit_test(test_timeout_late_tick),
		cmocka_unit_test(test_timeout_on_destructive_event),
		cmocka_unit_test(test_timeout_no_reserve),
		cmocka_unit_test(test_max_ops),
		cmocka_unit_test(test_max_ops_ignores_other_events),
		cmocka_unit_test(test_reserve_points),
		cmocka_unit_test(test_max_turns),
		cmocka_unit_test(test_max_tokens),
		cmocka_unit_test(test_max_tokens_jump),
		cmocka_unit_test(test_max_tokens_saturates),
		cmocka_unit_test(test_timeout_on_turn_event),
		cmocka_unit_test(test_turn_findings_together),
		cmocka_unit_test(test_turns_and_ops_apart),
		cmocka_unit_test(test_turn_reserve_points),
		cmocka_unit_test(test_max_cost),
		cmocka_unit_test(test_max_tool_calls),
		cmocka_unit_test(test_max_processes),
	};

	return cmocka_run_group_tests_name("budget", tests, NULL, NULL);
}
