// SPDX-License-Identifier: MIT
/* Unit tests for guard/greeting.c: "how can I help?" in the middle of work. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "config/config.h"
#include "guard/detectors.h"

static const char hello[] = "Hello! How can I help you today?";

struct fixture {
	struct lg_greeting *d;
	struct lg_guard_env env;
	struct lg_findings out;
};

static struct fixture the_fx;

static struct fixture *fx_new(void **state, const struct lg_greeting_cfg *cfg)
{
	struct fixture *fx = &the_fx;

	memset(fx, 0, sizeof(*fx));
	fx->d = lg_greeting_new(cfg);
	assert_non_null(fx->d);
	*state = fx;
	return fx;
}

static struct fixture *fx_default(void **state)
{
	struct lg_config c;

	lg_config_init(&c);
	return fx_new(state, &c.guard.greeting);
}

static int teardown(void **state)
{
	struct fixture *fx = *state;

	if (fx)
		lg_greeting_free(fx->d);
	return 0;
}

static enum lg_verdict turn(struct fixture *fx, unsigned calls,
			    const char *text)
{
	struct lg_event ev = { .kind = LG_EV_TURN,
			       .source = LG_SRC_PROXY,
			       .tokens_in = 100,
			       .tokens_out = 10,
			       .turn_tool_calls = calls,
			       .stop_reason = calls ? "tool_use" : "end_turn",
			       .turn_text = text };
	enum lg_verdict v;

	fx->out.n = 0;
	v = lg_greeting_feed(fx->d, &ev, &fx->env, &fx->out);
	assert_int_equal(fx->out.n, v == LG_ALLOW ? 0 : 1);
	return v;
}

static void test_defaults(void **state)
{
	struct lg_config c;

	(void)state;
	lg_config_init(&c);
	assert_true(c.guard.greeting.enabled);
	assert_int_equal(c.guard.greeting.action, LG_WARN);
}

/* Whole short greetings, in any case, with punctuation and emoji. */
static void test_match(void **state)
{
	static const char *const yes[] = {
		"Hello! How can I help you today?",
		"Hi there! What can I do for you?",
		"How can I assist you today?",
		"HELLO! HOW CAN I HELP YOU TODAY?",
		"  \n hello, how can i help?\n\n",
		"Hi! \xf0\x9f\x91\x8b How can I help you today?",
		"Hello! I\xe2\x80\x99m ready to help. What would you like to "
		"work on?",
		"Hey there \xe2\x80\x94 what can I help you with today?",
		"Hello again! How may I assist you?",
		"How can I help with your code?",
		"Good morning! What would you like me to do?",
		"Hi! I'm here to help. Let me know what you need.",
		"What can I help you with?",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
		if (!lg_greeting_match(yes[i]))
			fail_msg("not a greeting: '%s'", yes[i]);
}

static void test_no_match(void **state)
{
	static const char *const no[] = {
		"",
		"   \n",
		"Hello",
		"Hi there!",
		"Good morning!",
		/* an answer about the work */
		"Hello! I fixed the failing test in the parser; the build "
		"passes now.",
		"Done. How can I help you?",
		/* continuing, not starting over */
		"Is there anything else I can help you with?",
		"How can I help further?",
		"What would you like to do next?",
		"How can I help with this?",
		/* code, digits, paths, quotes */
		"How can I help you with `make test`?",
		"How can I help you with the 3 files?",
		"How can I help with src/main.c?",
		"\"Hello! How can I help you today?\"",
		/* other languages are not on the list */
		"Bonjour ! Comment puis-je vous aider ?",
		"Hallo! Wie kann ich helfen?",
		/* words that may end an offer do not stand on their own */
		"Now your code: how can I help?",
		"Hello, you!",
		/* half an offer */
		"how can i",
		"How can",
		"I'm ready",
	};

	(void)state;
	assert_false(lg_greeting_match(NULL));
	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		if (lg_greeting_match(no[i]))
			fail_msg("taken for a greeting: '%s'", no[i]);
}

/* Short texts only: 200 bytes once trimmed, outer whitespace aside. */
static void test_length_limit(void **state)
{
	char buf[512];
	size_t n;

	(void)state;
	/* "How can I help" and spaces, then "?": exactly 200 bytes */
	n = (size_t)snprintf(buf, sizeof(buf), "  %-199s?  ", "How can I help");
	assert_int_equal(n, 204);
	assert_true(lg_greeting_match(buf));
	n = (size_t)snprintf(buf, sizeof(buf), "  %-200s?  ", "How can I help");
	assert_int_equal(n, 205);
	assert_false(lg_greeting_match(buf));
	/* a long answer that starts with a greeting */
	snprintf(buf, sizeof(buf),
		 "%s I have looked at the repository: the tests fail because "
		 "the fixture directory is missing. I created it, ran the "
		 "suite again and everything passes now. Let me know if you "
		 "want me to commit the change.",
		 hello);
	assert_false(lg_greeting_match(buf));
}

/* After a turn that used tools: the greeting warns, with its details. */
static void test_after_tools(void **state)
{
	struct fixture *fx = fx_default(state);

	assert_int_equal(turn(fx, 2, "Let me look at the failing test."),
			 LG_ALLOW);
	assert_int_equal(turn(fx, 0, hello), LG_WARN);
	assert_int_equal(fx->out.f[0].action, LG_WARN);
	assert_string_equal(fx->out.f[0].rule, "greeting");
	assert_string_equal(fx->out.f[0].reason, "context_lost");
	assert_string_equal(
		fx->out.f[0].summary,
		"context_lost, model turn #2 answered \"Hello! How can I help "
		"you today?\" right after a turn with 2 tool calls: the model "
		"may have lost its context");
	/* a second greeting follows a turn without tools: not again */
	assert_int_equal(turn(fx, 0, hello), LG_ALLOW);
	/* one tool call, said so; the preview is trimmed */
	assert_int_equal(turn(fx, 1, ""), LG_ALLOW);
	assert_int_equal(turn(fx, 0, "\n  Hi there! What can I do for you?\n"),
			 LG_WARN);
	assert_non_null(strstr(fx->out.f[0].summary,
			       "turn #5 answered \"Hi there! What can I do for "
			       "you?\" right after a turn with 1 tool call:"));
}

/* The first answer of a session may well be a greeting. */
static void test_first_turn(void **state)
{
	struct fixture *fx = fx_default(state);

	assert_int_equal(turn(fx, 0, hello), LG_ALLOW);
	assert_int_equal(turn(fx, 0, hello), LG_ALLOW);
}

/* A long answer that starts with "Hello" is an answer. */
static void test_long_answer(void **state)
{
	struct fixture *fx = fx_default(state);

	assert_int_equal(turn(fx, 3, ""), LG_ALLOW);
	assert_int_equal(
		turn(fx, 0,
		     "Hello! I have finished: the three failing tests now pass "
		     "and the linter is clean. How can I help you today?"),
		LG_ALLOW);
}

/* A greeting that calls tools is working; a turn before it without. */
static void test_needs_tools_before_and_none_now(void **state)
{
	struct fixture *fx = fx_default(state);

	assert_int_equal(turn(fx, 0, "I will start with the tests."), LG_ALLOW);
	assert_int_equal(turn(fx, 0, hello), LG_ALLOW);
	assert_int_equal(turn(fx, 4, ""), LG_ALLOW);
	assert_int_equal(turn(fx, 1, hello), LG_ALLOW);
	/* the previous turn is the one that counts, not any before it */
	assert_int_equal(turn(fx, 0, "Working on it."), LG_ALLOW);
	assert_int_equal(turn(fx, 0, hello), LG_ALLOW);
	/* NULL text is no text */
	assert_int_equal(turn(fx, 2, NULL), LG_ALLOW);
	assert_int_equal(turn(fx, 0, NULL), LG_ALLOW);
}

/* Only turns count: tool results in between do not make a tool turn. */
static void test_only_turns(void **state)
{
	struct fixture *fx = fx_default(state);
	struct lg_event ev = { .kind = LG_EV_TOOL_DONE,
			       .tool = "bash",
			       .args = "{}",
			       .turn_tool_calls = 5,
			       .turn_text = hello,
			       .text = hello,
			       .text_len = sizeof(hello) - 1 };

	assert_int_equal(turn(fx, 0, "Sure."), LG_ALLOW);
	assert_int_equal(lg_greeting_feed(fx->d, &ev, &fx->env, &fx->out),
			 LG_ALLOW);
	ev.kind = LG_EV_TEXT;
	assert_int_equal(lg_greeting_feed(fx->d, &ev, &fx->env, &fx->out),
			 LG_ALLOW);
	assert_int_equal(turn(fx, 0, hello), LG_ALLOW);
	/* and the turn number counts turns only: this is #4 */
	assert_int_equal(turn(fx, 1, ""), LG_ALLOW);
	assert_int_equal(turn(fx, 0, hello), LG_WARN);
	assert_non_null(strstr(fx->out.f[0].summary, "model turn #4 "));
}

static void test_action_and_off(void **state)
{
	struct lg_greeting_cfg cfg = { true, LG_DENY, 0 };
	struct fixture *fx = fx_new(state, &cfg);

	assert_int_equal(turn(fx, 1, ""), LG_ALLOW);
	assert_int_equal(turn(fx, 0, hello), LG_DENY);
	assert_int_equal(fx->out.f[0].action, LG_DENY);
	/* steer_at 0: the action at once, no note first */
	assert_false(lg_finding_steers(&fx->out.f[0]));
	lg_greeting_free(fx->d);

	cfg.enabled = false;
	fx = fx_new(state, &cfg);
	assert_int_equal(turn(fx, 1, ""), LG_ALLOW);
	assert_int_equal(turn(fx, 0, hello), LG_ALLOW);
}

/*
 * The default (warn): every greeting warns and is the note, and nothing
 * comes after it (issue 28: seed 004's behaviour unchanged).
 */
static void test_warn_notes_each_firing(void **state)
{
	struct fixture *fx = fx_default(state);
	const struct lg_finding *f = &fx->out.f[0];

	for (int i = 0; i < 3; i++) {
		assert_int_equal(turn(fx, 1, ""), LG_ALLOW);
		assert_int_equal(turn(fx, 0, hello), LG_WARN);
		assert_true(f->note);
		assert_true(lg_finding_steers(f));
		assert_int_equal(f->then, LG_WARN);
		assert_int_equal(f->left, 0);
	}
}

/*
 * The ladder with kill and the default steer_at (1): the first greeting
 * only warns and is the note (what comes next: a kill at the next one);
 * the action applies from the second on, and is no note.
 */
static void test_kill_ladder(void **state)
{
	struct lg_config c;
	struct fixture *fx;
	const struct lg_finding *f;

	lg_config_init(&c);
	c.guard.greeting.action = LG_KILL;
	fx = fx_new(state, &c.guard.greeting);
	f = &fx->out.f[0];
	assert_int_equal(turn(fx, 1, ""), LG_ALLOW);
	assert_int_equal(turn(fx, 0, hello), LG_WARN);
	assert_int_equal(f->action, LG_WARN);
	assert_true(f->note);
	assert_true(lg_finding_steers(f));
	assert_int_equal(f->then, LG_KILL);
	assert_int_equal(f->left, 1);
	assert_string_equal(f->reason, "context_lost");
	for (int i = 0; i < 2; i++) {
		assert_int_equal(turn(fx, 1, ""), LG_ALLOW);
		assert_int_equal(turn(fx, 0, hello), LG_KILL);
		assert_int_equal(f->action, LG_KILL);
		assert_false(f->note);
		assert_false(lg_finding_steers(f));
	}
}

/* steer_at 2 with deny: two notes counting down, then the deny. */
static void test_deny_steer_at_two(void **state)
{
	struct lg_greeting_cfg cfg = { true, LG_DENY, 2 };
	struct fixture *fx = fx_new(state, &cfg);
	const struct lg_finding *f = &fx->out.f[0];

	assert_int_equal(turn(fx, 1, ""), LG_ALLOW);
	assert_int_equal(turn(fx, 0, hello), LG_WARN);
	assert_int_equal(f->left, 2);
	assert_int_equal(f->then, LG_DENY);
	assert_int_equal(turn(fx, 1, ""), LG_ALLOW);
	assert_int_equal(turn(fx, 0, hello), LG_WARN);
	assert_int_equal(f->left, 1);
	assert_int_equal(turn(fx, 1, ""), LG_ALLOW);
	assert_int_equal(turn(fx, 0, hello), LG_DENY);
	assert_false(lg_finding_steers(f));
}

#define T(fn) cmocka_unit_test_teardown(fn, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_match),
		cmocka_unit_test(test_no_match),
		cmocka_unit_test(test_length_limit),
		T(test_after_tools),
		T(test_first_turn),
		T(test_long_answer),
		T(test_needs_tools_before_and_none_now),
		T(test_only_turns),
		T(test_action_and_off),
		T(test_warn_notes_each_firing),
		T(test_kill_ladder),
		T(test_deny_steer_at_two),
	};

	return cmocka_run_group_tests_name("greeting", tests, NULL, NULL);
}
