// SPDX-License-Identifier: MIT
/* Unit tests for guard/same_target.c: one target attempted again and again. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "guard/detectors.h"

/* A world in which every target always comes back. */
static bool always_restored(void *ctx, const char *target, enum lg_op op,
			    const struct lg_target_id *id)
{
	unsigned *calls = ctx;

	(void)target;
	(void)op;
	(void)id;
	(*calls)++;
	return true;
}

struct fixture {
	struct lg_same_target *d;
	unsigned calls;
	struct lg_guard_env env;
	struct lg_findings out;
};

static enum lg_verdict feed_op(struct fixture *fx, uint64_t t, enum lg_op op,
			       const char *target)
{
	struct lg_event ev = { .kind = LG_EV_DESTRUCTIVE,
			       .source = LG_SRC_SECCOMP,
			       .op = op,
			       .cls = LG_CLASS_DESTROY,
			       .pid = 7,
			       .exe = "python3",
			       .target = target };

	fx->out.n = 0;
	fx->env.now_ms = t;
	return lg_same_target_feed(fx->d, &ev, &fx->env, &fx->out);
}

static enum lg_verdict feed_at(struct fixture *fx, uint64_t t,
			       const char *target)
{
	return feed_op(fx, t, LG_OP_UNLINK, target);
}

static int fx_setup_cfg(void **state, unsigned max, uint64_t window,
			enum lg_verdict action)
{
	static struct fixture fx;
	/* steer_at = max: no notes in these tests */
	struct lg_detector_cfg cfg = { max, window, action, max };

	memset(&fx, 0, sizeof(fx));
	fx.d = lg_same_target_new(&cfg);
	if (!fx.d)
		return -1;
	*state = &fx;
	return 0;
}

static int setup_default(void **state)
{
	return fx_setup_cfg(state, 3, 60000, LG_KILL);
}

static int setup_warn(void **state)
{
	return fx_setup_cfg(state, 3, 60000, LG_WARN);
}

static int setup_max0(void **state)
{
	return fx_setup_cfg(state, 0, 60000, LG_KILL);
}

static int setup_max1(void **state)
{
	return fx_setup_cfg(state, 1, 60000, LG_DENY);
}

static int teardown(void **state)
{
	struct fixture *fx = *state;

	lg_same_target_free(fx->d);
	return 0;
}

/* "<prefix><N>s" with N (seconds, maybe with decimals) equal to secs. */
static void assert_summary(const char *summary, const char *prefix, double secs)
{
	size_t n = strlen(prefix);
	char *end;
	double got;

	if (strncmp(summary, prefix, n) != 0)
		fail_msg("summary '%s' does not start with '%s'", summary,
			 prefix);
	got = strtod(summary + n, &end);
	if (end == summary + n || strcmp(end, "s") != 0 || got != secs)
		fail_msg("summary '%s': want %s%gs", summary, prefix, secs);
}

static void test_third_on_same_target_trips(void **state)
{
	struct fixture *fx = *state;
	const struct lg_finding *f = &fx->out.f[0];

	assert_int_equal(feed_at(fx, 10000, "/p/config.json"), LG_ALLOW);
	assert_int_equal(fx->out.n, 0);
	assert_int_equal(feed_at(fx, 11000, "/p/config.json"), LG_ALLOW);
	assert_int_equal(fx->out.n, 0);
	assert_int_equal(feed_at(fx, 12000, "/p/config.json"), LG_KILL);
	assert_int_equal(fx->out.n, 1);
	assert_int_equal(f->action, LG_KILL);
	assert_string_equal(f->rule, "same_target");
	assert_string_equal(f->reason, "loop_detected");
	assert_summary(f->summary,
		       "loop_detected, 3 deletes on /p/config.json in ", 2);
}

static void test_summary_names_the_op(void **state)
{
	struct fixture *fx = *state;

	assert_int_equal(feed_op(fx, 0, LG_OP_RMDIR, "/p/d"), LG_ALLOW);
	assert_int_equal(feed_op(fx, 0, LG_OP_RMDIR, "/p/d"), LG_ALLOW);
	assert_int_equal(feed_op(fx, 5000, LG_OP_RMDIR, "/p/d"), LG_KILL);
	assert_summary(fx->out.f[0].summary,
		       "loop_detected, 3 directory removals on /p/d in ", 5);
	assert_int_equal(feed_op(fx, 6000, LG_OP_TRUNCATE, "/p/f"), LG_ALLOW);
	assert_int_equal(feed_op(fx, 6000, LG_OP_TRUNCATE, "/p/f"), LG_ALLOW);
	assert_int_equal(feed_op(fx, 6000, LG_OP_TRUNCATE, "/p/f"), LG_KILL);
	assert_summary(fx->out.f[0].summary,
		       "loop_detected, 3 truncations on /p/f in ", 0);
}

static void test_different_targets_do_not_trip(void **state)
{
	struct fixture *fx = *state;

	assert_int_equal(feed_at(fx, 0, "/p/a"), LG_ALLOW);
	assert_int_equal(feed_at(fx, 1, "/p/b"), LG_ALLOW);
	assert_int_equal(feed_at(fx, 2, "/p/c"), LG_ALLOW);
	assert_int_equal(feed_at(fx, 3, "/p/a"), LG_ALLOW);
	assert_int_equal(feed_at(fx, 4, "/p/b"), LG_ALLOW);
	assert_int_equal(feed_at(fx, 5, "/p/c"), LG_ALLOW);
	/* prefixes and near names are other targets */
	assert_int_equal(feed_at(fx, 6, "/p/a/"), LG_ALLOW);
	assert_int_equal(feed_at(fx, 7, "/p/aa"), LG_ALLOW);
	assert_int_equal(fx->out.n, 0);
	/* but the third a does */
	assert_int_equal(feed_at(fx, 8, "/p/a"), LG_KILL);
	assert_non_null(strstr(fx->out.f[0].summary, " on /p/a in "));
}

static void test_window_expiry(void **state)
{
	struct fixture *fx = *state;

	assert_int_equal(feed_at(fx, 0, "/p/a"), LG_ALLOW);
	assert_int_equal(feed_at(fx, 30000, "/p/a"), LG_ALLOW);
	/* exactly window_ms after the first: it no longer counts */
	assert_int_equal(feed_at(fx, 60000, "/p/a"), LG_ALLOW);
	assert_int_equal(fx->out.n, 0);
	/* 30000, 60000 and this one are within 60 s */
	assert_int_equal(feed_at(fx, 61000, "/p/a"), LG_KILL);
	assert_summary(fx->out.f[0].summary,
		       "loop_detected, 3 deletes on /p/a in ", 31);
}

static void test_window_edge_inside(void **state)
{
	struct fixture *fx = *state;

	assert_int_equal(feed_at(fx, 0, "/p/a"), LG_ALLOW);
	assert_int_equal(feed_at(fx, 30000, "/p/a"), LG_ALLOW);
	assert_int_equal(feed_at(fx, 59999, "/p/a"), LG_KILL);
}

static void test_all_expired(void **state)
{
	struct fixture *fx = *state;

	assert_int_equal(feed_at(fx, 0, "/p/a"), LG_ALLOW);
	assert_int_equal(feed_at(fx, 1, "/p/a"), LG_ALLOW);
	assert_int_equal(feed_at(fx, 3600000, "/p/a"), LG_ALLOW);
	assert_int_equal(feed_at(fx, 3600001, "/p/a"), LG_ALLOW);
	assert_int_equal(feed_at(fx, 3600002, "/p/a"), LG_KILL);
}

static void test_clock_backwards(void **state)
{
	struct fixture *fx = *state;

	assert_int_equal(feed_at(fx, 100000, "/p/a"), LG_ALLOW);
	/* the clock steps back: the first attempt must still count */
	assert_int_equal(feed_at(fx, 1000, "/p/a"), LG_ALLOW);
	assert_int_equal(feed_at(fx, 1001, "/p/a"), LG_KILL);
}

/* Whether or not the target came back in between, attempts count. */
static void test_counts_restored_targets(void **state)
{
	struct fixture *fx = *state;

	fx->env.restored = always_restored;
	fx->env.ctx = &fx->calls;
	assert_int_equal(feed_at(fx, 0, "/p/a"), LG_ALLOW);
	assert_int_equal(feed_at(fx, 100, "/p/a"), LG_ALLOW);
	assert_int_equal(feed_at(fx, 200, "/p/a"), LG_KILL);
	assert_int_equal(fx->out.n, 1);
	assert_string_equal(fx->out.f[0].reason, "loop_detected");
}

/* Observe mode: after a trip the target's count starts over. */
static void test_count_starts_over_after_trip(void **state)
{
	struct fixture *fx = *state;

	assert_int_equal(feed_at(fx, 0, "/p/a"), LG_ALLOW);
	assert_int_equal(feed_at(fx, 1, "/p/a"), LG_ALLOW);
	assert_int_equal(feed_at(fx, 2, "/p/a"), LG_WARN);
	assert_int_equal(fx->out.f[0].action, LG_WARN);
	assert_int_equal(feed_at(fx, 3, "/p/a"), LG_ALLOW);
	assert_int_equal(fx->out.n, 0);
	assert_int_equal(feed_at(fx, 4, "/p/a"), LG_ALLOW);
	assert_int_equal(feed_at(fx, 5, "/p/a"), LG_WARN);
}

static void test_other_classes_never_count(void **state)
{
	static const enum lg_class cls[] = { LG_CLASS_MISSING, LG_CLASS_SESSION,
					     LG_CLASS_IGNORED,
					     LG_CLASS_HARMLESS };
	struct fixture *fx = *state;

	for (size_t i = 0; i < sizeof(cls) / sizeof(cls[0]); i++) {
		for (int k = 0; k < 5; k++) {
			struct lg_event ev = { .kind = LG_EV_DESTRUCTIVE,
					       .op = LG_OP_UNLINK,
					       .cls = cls[i],
					       .target = "/p/a" };

			assert_int_equal(lg_same_target_feed(fx->d, &ev,
							     &fx->env,
							     &fx->out),
					 LG_ALLOW);
		}
	}
	for (int k = 0; k < 5; k++) {
		struct lg_event tick = { .kind = LG_EV_TICK,
					 .source = LG_SRC_TIMER,
					 .cls = LG_CLASS_DESTROY,
					 .target = "/p/a" };

		assert_int_equal(lg_same_target_feed(fx->d, &tick, &fx->env,
						     &fx->out),
				 LG_ALLOW);
	}
	assert_int_equal(fx->out.n, 0);
	assert_int_equal(lg_same_target_tracked(fx->d), 0);
	assert_int_equal(feed_at(fx, 0, "/p/a"), LG_ALLOW);
	assert_int_equal(feed_at(fx, 0, "/p/a"), LG_ALLOW);
	assert_int_equal(feed_at(fx, 0, "/p/a"), LG_KILL);
}

static void test_max0_is_off(void **state)
{
	struct fixture *fx = *state;

	for (int i = 0; i < 100; i++)
		assert_int_equal(feed_at(fx, (uint64_t)i, "/p/a"), LG_ALLOW);
	assert_int_equal(fx->out.n, 0);
	assert_int_equal(lg_same_target_tracked(fx->d), 0);
}

static void test_max1_trips_every_time(void **state)
{
	struct fixture *fx = *state;

	assert_int_equal(feed_at(fx, 0, "/p/a"), LG_DENY);
	assert_int_equal(fx->out.n, 1);
	assert_string_equal(fx->out.f[0].reason, "loop_detected");
	assert_int_equal(feed_at(fx, 1, "/p/b"), LG_DENY);
	assert_non_null(strstr(fx->out.f[0].summary, "/p/b"));
}

/* Many live targets at once: the table grows and loses nothing. */
static void test_many_live_targets(void **state)
{
	struct fixture *fx = *state;
	const int n = 5000;
	char t[32];

	for (int round = 0; round < 2; round++) {
		for (int i = 0; i < n; i++) {
			snprintf(t, sizeof(t), "/p/f%d", i);
			if (feed_at(fx, 1000, t) != LG_ALLOW)
				fail_msg("round %d: %s tripped", round, t);
		}
	}
	assert_int_equal(lg_same_target_tracked(fx->d), n);
	for (int i = 0; i < n; i += 997) {
		snprintf(t, sizeof(t), "/p/f%d", i);
		assert_int_equal(feed_at(fx, 2000, t), LG_KILL);
		assert_non_null(strstr(fx->out.f[0].summary, t));
	}
}

/* Distinct targets over a long time: expired ones are swept. */
static void test_memory_bounded(void **state)
{
	struct fixture *fx = *state;
	size_t peak = 0;
	char t[32];

	/* one new target every 10 ms: about 6000 live in a 60 s window */
	for (int i = 0; i < 100000; i++) {
		size_t n;

		snprintf(t, sizeof(t), "/p/dir/file%d", i);
		if (feed_at(fx, (uint64_t)i * 10, t) != LG_ALLOW)
			fail_msg("%s tripped", t);
		n = lg_same_target_tracked(fx->d);
		if (n > peak)
			peak = n;
	}
	if (peak > 20000)
		fail_msg("%zu targets tracked at the peak, want <= 20000",
			 peak);
	/* the table still works */
	assert_int_equal(feed_at(fx, 1000000, "/p/x"), LG_ALLOW);
	assert_int_equal(feed_at(fx, 1000001, "/p/x"), LG_ALLOW);
	assert_int_equal(feed_at(fx, 1000002, "/p/x"), LG_KILL);
}

static void test_null_target(void **state)
{
	struct fixture *fx = *state;

	assert_int_equal(feed_op(fx, 0, LG_OP_TOOL_DELETE, NULL), LG_ALLOW);
	assert_int_equal(feed_op(fx, 0, LG_OP_TOOL_DELETE, NULL), LG_ALLOW);
	assert_int_equal(feed_op(fx, 0, LG_OP_TOOL_DELETE, NULL), LG_KILL);
}

#define T(fn, setup) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_third_on_same_target_trips, setup_default),
		T(test_summary_names_the_op, setup_default),
		T(test_different_targets_do_not_trip, setup_default),
		T(test_window_expiry, setup_default),
		T(test_window_edge_inside, setup_default),
		T(test_all_expired, setup_default),
		T(test_clock_backwards, setup_default),
		T(test_counts_restored_targets, setup_default),
		T(test_count_starts_over_after_trip, setup_warn),
		T(test_other_classes_never_count, setup_default),
		T(test_max0_is_off, setup_max0),
		T(test_max1_trips_every_time, setup_max1),
		T(test_many_live_targets, setup_default),
		T(test_memory_bounded, setup_default),
		T(test_null_target, setup_default),
	};

	return cmocka_run_group_tests_name("same_target", tests, NULL, NULL);
}
