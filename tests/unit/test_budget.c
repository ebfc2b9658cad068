// SPDX-License-Identifier: MIT
/* Unit tests for guard/budget.c: the wall-clock and destructive-op budgets. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "config.h"
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
	d = lg_budget_new(&c.guard.budget, 0);
	assert_non_null(d);
	assert_int_equal(lg_budget_next_deadline(d), 0);
	assert_int_equal(feed(d, &tick, 1000ULL * 86400 * 365, &out), LG_ALLOW);
	for (int i = 0; i < 1000; i++) {
		struct lg_event ev = destroy("/p/a");

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
	};

	return cmocka_run_group_tests_name("budget", tests, NULL, NULL);
}
