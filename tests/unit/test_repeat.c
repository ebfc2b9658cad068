// SPDX-License-Identifier: MIT
/* Unit tests for guard/repeat.c: the same tool call again and again. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "guard/detectors.h"

struct fixture {
	struct lg_repeat *d;
	struct lg_guard_env env;
	struct lg_findings out;
};

static int fx_setup(void **state, unsigned threshold, bool include_result,
		    enum lg_verdict action)
{
	static struct fixture fx;
	/* steer_at = threshold: no notes in these tests */
	struct lg_repeat_cfg cfg = { threshold, include_result, action,
				     threshold };

	memset(&fx, 0, sizeof(fx));
	fx.d = lg_repeat_new(&cfg);
	if (!fx.d)
		return -1;
	*state = &fx;
	return 0;
}

static int setup_default(void **state)
{
	return fx_setup(state, 3, true, LG_KILL);
}

static int setup_no_result(void **state)
{
	return fx_setup(state, 3, false, LG_KILL);
}

static int setup_warn(void **state)
{
	return fx_setup(state, 3, true, LG_WARN);
}

static int setup_off(void **state)
{
	return fx_setup(state, 0, true, LG_KILL);
}

static int setup_one(void **state)
{
	return fx_setup(state, 1, true, LG_DENY);
}

static int teardown(void **state)
{
	struct fixture *fx = *state;

	lg_repeat_free(fx->d);
	return 0;
}

/* A tool call done: args are canonical JSON; previews for humans. */
static enum lg_verdict call_full(struct fixture *fx, const char *tool,
				 const char *args, const char *digest,
				 const char *args_preview,
				 const char *result_preview)
{
	struct lg_event ev = { .kind = LG_EV_TOOL_DONE,
			       .source = LG_SRC_PROXY,
			       .tool = tool,
			       .args = args,
			       .result_digest = digest,
			       .args_preview = args_preview,
			       .result_preview = result_preview };

	fx->out.n = 0;
	return lg_repeat_feed(fx->d, &ev, &fx->env, &fx->out);
}

static enum lg_verdict call(struct fixture *fx, const char *tool,
			    const char *args, const char *digest)
{
	return call_full(fx, tool, args, digest, args, "result");
}

#define ASSET "{\"asset_id\":\"fact_sales\"}"

static enum lg_verdict delete_asset(struct fixture *fx)
{
	return call_full(fx, "delete_asset", ASSET, "9f2c0d41aa17b3e5", ASSET,
			 "asset still exists");
}

static void test_third_in_a_row_trips(void **state)
{
	struct fixture *fx = *state;
	const struct lg_finding *f = &fx->out.f[0];

	assert_int_equal(delete_asset(fx), LG_ALLOW);
	assert_int_equal(fx->out.n, 0);
	assert_int_equal(lg_repeat_run(fx->d), 1);
	assert_int_equal(delete_asset(fx), LG_ALLOW);
	assert_int_equal(fx->out.n, 0);
	assert_int_equal(lg_repeat_run(fx->d), 2);
	assert_int_equal(delete_asset(fx), LG_KILL);
	assert_int_equal(fx->out.n, 1);
	assert_int_equal(f->action, LG_KILL);
	assert_string_equal(f->rule, "repeat");
	assert_string_equal(f->reason, "repeat");
	assert_string_equal(
		f->summary,
		"repeat, delete_asset({\"asset_id\":\"fact_sales\"})"
		" -> \"asset still exists\" 3 times in a row");
}

/* With include_result, a different result is a different call. */
static void test_changed_result_resets(void **state)
{
	struct fixture *fx = *state;

	assert_int_equal(call(fx, "get", "{}", "r1"), LG_ALLOW);
	assert_int_equal(call(fx, "get", "{}", "r1"), LG_ALLOW);
	assert_int_equal(call(fx, "get", "{}", "r2"), LG_ALLOW);
	assert_int_equal(lg_repeat_run(fx->d), 1);
	assert_int_equal(call(fx, "get", "{}", "r2"), LG_ALLOW);
	/* no result counts as a result of its own */
	assert_int_equal(call(fx, "get", "{}", ""), LG_ALLOW);
	assert_int_equal(call(fx, "get", "{}", "r2"), LG_ALLOW);
	assert_int_equal(call(fx, "get", "{}", "r2"), LG_ALLOW);
	assert_int_equal(fx->out.n, 0);
	assert_int_equal(call(fx, "get", "{}", "r2"), LG_KILL);
	assert_int_equal(fx->out.n, 1);
}

static void test_include_result_off_ignores_results(void **state)
{
	struct fixture *fx = *state;

	assert_int_equal(call_full(fx, "get", "{\"k\":1}", "r1", "k=1", "one"),
			 LG_ALLOW);
	assert_int_equal(call_full(fx, "get", "{\"k\":1}", "r2", "k=1", "two"),
			 LG_ALLOW);
	assert_int_equal(call_full(fx, "get", "{\"k\":1}", "", "k=1", "three"),
			 LG_KILL);
	/* the result is not part of it: not in the summary either */
	assert_string_equal(fx->out.f[0].summary,
			    "repeat, get(k=1) 3 times in a row");
	/* but the arguments still are */
	assert_int_equal(call(fx, "get", "{\"k\":1}", "r1"), LG_ALLOW);
	assert_int_equal(call(fx, "get", "{\"k\":2}", "r1"), LG_ALLOW);
	assert_int_equal(call(fx, "get", "{\"k\":1}", "r1"), LG_ALLOW);
	assert_int_equal(fx->out.n, 0);
}

/* Another call in between breaks the run: "in a row" means that. */
static void test_interleaved_call_resets(void **state)
{
	struct fixture *fx = *state;

	assert_int_equal(delete_asset(fx), LG_ALLOW);
	assert_int_equal(delete_asset(fx), LG_ALLOW);
	assert_int_equal(call(fx, "list_assets", "{}", "x"), LG_ALLOW);
	assert_int_equal(lg_repeat_run(fx->d), 1);
	assert_int_equal(delete_asset(fx), LG_ALLOW);
	assert_int_equal(delete_asset(fx), LG_ALLOW);
	/* same tool, other arguments: also another call */
	assert_int_equal(call_full(fx, "delete_asset", "{\"asset_id\":\"dim\"}",
				   "9f2c0d41aa17b3e5", "", ""),
			 LG_ALLOW);
	assert_int_equal(delete_asset(fx), LG_ALLOW);
	assert_int_equal(delete_asset(fx), LG_ALLOW);
	/* other tool, same arguments and result */
	assert_int_equal(call_full(fx, "archive_asset", ASSET,
				   "9f2c0d41aa17b3e5", "", ""),
			 LG_ALLOW);
	assert_int_equal(delete_asset(fx), LG_ALLOW);
	assert_int_equal(delete_asset(fx), LG_ALLOW);
	assert_int_equal(fx->out.n, 0);
	assert_int_equal(delete_asset(fx), LG_KILL);
}

/* Alternating between two calls is never a run. */
static void test_alternating_never_trips(void **state)
{
	struct fixture *fx = *state;

	for (int i = 0; i < 50; i++) {
		assert_int_equal(call(fx, "a", "{}", "r"), LG_ALLOW);
		assert_int_equal(call(fx, "b", "{}", "r"), LG_ALLOW);
	}
	assert_int_equal(fx->out.n, 0);
}

/* The parts cannot run into each other: tool "ab" is not tool "a" + "b". */
static void test_parts_are_separate(void **state)
{
	struct fixture *fx = *state;

	assert_int_equal(call(fx, "a", "bc", "d"), LG_ALLOW);
	assert_int_equal(call(fx, "ab", "c", "d"), LG_ALLOW);
	assert_int_equal(call(fx, "a", "bcd", ""), LG_ALLOW);
	assert_int_equal(call(fx, "a", "bc", "d"), LG_ALLOW);
	assert_int_equal(call(fx, "abc", "", "d"), LG_ALLOW);
	assert_int_equal(fx->out.n, 0);
	assert_int_equal(lg_repeat_run(fx->d), 1);
}

/* Events that are not tool calls neither count nor break the run. */
static void test_other_events_ignored(void **state)
{
	static const enum lg_event_kind kinds[] = { LG_EV_DESTRUCTIVE,
						    LG_EV_TICK,
						    LG_EV_OP_RESULT };
	struct fixture *fx = *state;

	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		for (int k = 0; k < 5; k++) {
			struct lg_event ev = { .kind = kinds[i],
					       .op = LG_OP_UNLINK,
					       .target = "/p/a",
					       .tool = "delete_asset",
					       .args = ASSET,
					       .result_digest = "x" };

			assert_int_equal(lg_repeat_feed(fx->d, &ev, &fx->env,
							&fx->out),
					 LG_ALLOW);
		}
	}
	assert_int_equal(fx->out.n, 0);
	assert_int_equal(lg_repeat_run(fx->d), 0);
	assert_int_equal(delete_asset(fx), LG_ALLOW);
	assert_int_equal(delete_asset(fx), LG_ALLOW);
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		struct lg_event ev = { .kind = kinds[i], .tool = "other" };

		assert_int_equal(lg_repeat_feed(fx->d, &ev, &fx->env, &fx->out),
				 LG_ALLOW);
	}
	assert_int_equal(delete_asset(fx), LG_KILL);
}

/* Warn (and observe) go on: after a trip the run starts over. */
static void test_run_starts_over_after_trip(void **state)
{
	struct fixture *fx = *state;

	assert_int_equal(delete_asset(fx), LG_ALLOW);
	assert_int_equal(delete_asset(fx), LG_ALLOW);
	assert_int_equal(delete_asset(fx), LG_WARN);
	assert_int_equal(fx->out.f[0].action, LG_WARN);
	assert_int_equal(lg_repeat_run(fx->d), 0);
	assert_int_equal(delete_asset(fx), LG_ALLOW);
	assert_int_equal(fx->out.n, 0);
	assert_int_equal(delete_asset(fx), LG_ALLOW);
	assert_int_equal(delete_asset(fx), LG_WARN);
	assert_non_null(strstr(fx->out.f[0].summary, " 3 times in a row"));
}

static void test_threshold0_is_off(void **state)
{
	struct fixture *fx = *state;

	for (int i = 0; i < 100; i++)
		assert_int_equal(delete_asset(fx), LG_ALLOW);
	assert_int_equal(fx->out.n, 0);
	assert_int_equal(lg_repeat_run(fx->d), 0);
}

static void test_threshold1_trips_at_once(void **state)
{
	struct fixture *fx = *state;

	assert_int_equal(delete_asset(fx), LG_DENY);
	assert_int_equal(fx->out.n, 1);
	assert_string_equal(
		fx->out.f[0].summary,
		"repeat, delete_asset({\"asset_id\":\"fact_sales\"})"
		" -> \"asset still exists\" 1 times in a row");
	assert_int_equal(call(fx, "other", "{}", ""), LG_DENY);
	assert_non_null(strstr(fx->out.f[0].summary, "repeat, other({}) -> "));
}

/* What the summary shows when parts are missing. */
static void test_summary_fallbacks(void **state)
{
	struct fixture *fx = *state;

	/* no args preview: the canonical args; no result preview: no arrow */
	call_full(fx, "t", "{\"a\":1}", "d", "", "");
	call_full(fx, "t", "{\"a\":1}", "d", NULL, NULL);
	assert_int_equal(call_full(fx, "t", "{\"a\":1}", "d", NULL, ""),
			 LG_KILL);
	assert_string_equal(fx->out.f[0].summary,
			    "repeat, t({\"a\":1}) 3 times in a row");
	/* nothing at all */
	call_full(fx, NULL, NULL, NULL, NULL, NULL);
	call_full(fx, NULL, NULL, NULL, NULL, NULL);
	assert_int_equal(call_full(fx, NULL, NULL, NULL, NULL, NULL), LG_KILL);
	assert_string_equal(fx->out.f[0].summary,
			    "repeat, ?() 3 times in a row");
	/* NULL and "" are the same empty part */
	call_full(fx, "t", NULL, NULL, NULL, NULL);
	call_full(fx, "t", "", "", NULL, NULL);
	assert_int_equal(call_full(fx, "t", NULL, "", NULL, NULL), LG_KILL);
}

/* Huge previews are shortened; the count always makes it in. */
static void test_summary_bounded(void **state)
{
	struct fixture *fx = *state;
	static const char tail[] = "\xe2\x80\xa6\" 3 times in a row";
	char *tool = malloc(2000), *big = malloc(5000);
	const char *s;

	assert_non_null(tool);
	assert_non_null(big);
	memset(tool, 't', 1999);
	tool[1999] = '\0';
	/* 4-byte characters: the worst case for bytes per character */
	for (int i = 0; i < 1249; i++)
		memcpy(big + 4 * i, "\xf0\x9f\x98\x80", 4);
	big[4996] = '\0';
	for (int i = 0; i < 3; i++)
		call_full(fx, tool, big, "d", big, big);
	assert_int_equal(fx->out.n, 1);
	s = fx->out.f[0].summary;
	assert_true(strlen(s) < LG_SUMMARY_MAX - 1);
	assert_true(strncmp(s, "repeat, ttt", 11) == 0);
	assert_non_null(strstr(s, "\xe2\x80\xa6(")); /* tool cut */
	assert_non_null(strstr(s, "\xe2\x80\xa6) -> \"")); /* args cut */
	assert_true(strlen(s) > strlen(tail) &&
		    strcmp(s + strlen(s) - strlen(tail), tail) == 0);
	free(tool);
	free(big);
}

/* Runs are per stream (a conversation, a process): parallel subagents
 * asking the same thing once each are no loop; one of them three times is. */
static void test_runs_are_per_stream(void **state)
{
	struct fixture *fx = *state;
	struct lg_event ev = { .kind = LG_EV_TOOL_DONE,
			       .source = LG_SRC_PROXY,
			       .tool = "get",
			       .args = "{}",
			       .result_digest = "aa" };

	for (uint64_t st = 1; st <= 5; st++) {
		ev.stream = st;
		assert_int_equal(lg_repeat_feed(fx->d, &ev, &fx->env, &fx->out),
				 LG_ALLOW);
	}
	ev.stream = 2; /* the second call of stream 2, interleaved */
	assert_int_equal(lg_repeat_feed(fx->d, &ev, &fx->env, &fx->out),
			 LG_ALLOW);
	ev.stream = 7;
	assert_int_equal(lg_repeat_feed(fx->d, &ev, &fx->env, &fx->out),
			 LG_ALLOW);
	ev.stream = 2; /* its third in a row, whatever others did between */
	fx->out.n = 0;
	assert_int_equal(lg_repeat_feed(fx->d, &ev, &fx->env, &fx->out),
			 LG_KILL);
	assert_int_equal(fx->out.n, 1);
	/* 200 streams later the oldest is forgotten, nothing breaks */
	for (uint64_t st = 100; st < 300; st++) {
		ev.stream = st;
		lg_repeat_feed(fx->d, &ev, &fx->env, &fx->out);
	}
}

#define T(fn, setup) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_third_in_a_row_trips, setup_default),
		T(test_changed_result_resets, setup_default),
		T(test_include_result_off_ignores_results, setup_no_result),
		T(test_interleaved_call_resets, setup_default),
		T(test_alternating_never_trips, setup_default),
		T(test_parts_are_separate, setup_default),
		T(test_other_events_ignored, setup_default),
		T(test_run_starts_over_after_trip, setup_warn),
		T(test_threshold0_is_off, setup_off),
		T(test_threshold1_trips_at_once, setup_one),
		T(test_summary_fallbacks, setup_default),
		T(test_summary_bounded, setup_default),
		T(test_runs_are_per_stream, setup_default),
	};

	return cmocka_run_group_tests_name("repeat", tests, NULL, NULL);
}
