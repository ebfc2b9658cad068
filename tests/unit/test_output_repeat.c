// SPDX-License-Identifier: MIT
/* Unit tests for guard/output_repeat.c: the model repeating its own text. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "config/config.h"
#include "guard/detectors.h"
#include "lib/text.h"

/* 60 characters, no repetition inside. */
static const char s60[] =
	"The build failed again, so I will run the same command now. ";
/* 100 and 170 characters. */
static const char s100[] =
	"Checking the configuration file for the missing option; it belongs "
	"under the section [paths] here.  ";
static const char s170[] =
	"I looked at the migration script once more: the column rename runs "
	"before the table copy, which is why the copy cannot find the old "
	"name at all. Let me look at it again. ";

struct fixture {
	struct lg_output_repeat *d;
	struct lg_guard_env env;
	struct lg_findings out;
	unsigned warnings; /* feeds that returned a finding */
};

static struct fixture the_fx;

static struct lg_output_repeat_cfg default_cfg(void)
{
	struct lg_config c;

	lg_config_init(&c);
	return c.guard.output_repeat;
}

static struct fixture *fx_new(void **state,
			      const struct lg_output_repeat_cfg *cfg)
{
	struct fixture *fx = &the_fx;

	memset(fx, 0, sizeof(*fx));
	fx->d = lg_output_repeat_new(cfg);
	assert_non_null(fx->d);
	*state = fx;
	return fx;
}

static struct fixture *fx_default(void **state)
{
	struct lg_output_repeat_cfg cfg = default_cfg();

	return fx_new(state, &cfg);
}

static int teardown(void **state)
{
	struct fixture *fx = *state;

	if (fx)
		lg_output_repeat_free(fx->d);
	return 0;
}

static enum lg_verdict delta(struct fixture *fx, const char *p, size_t n)
{
	struct lg_event ev = { .kind = LG_EV_TEXT,
			       .source = LG_SRC_PROXY,
			       .text = p,
			       .text_len = n };
	enum lg_verdict v;

	fx->out.n = 0;
	v = lg_output_repeat_feed(fx->d, &ev, &fx->env, &fx->out);
	/* a verdict comes with exactly one finding, and only then */
	assert_int_equal(fx->out.n, v == LG_ALLOW ? 0 : 1);
	if (v != LG_ALLOW)
		fx->warnings++;
	return v;
}

static enum lg_verdict turn(struct fixture *fx)
{
	struct lg_event ev = { .kind = LG_EV_TURN,
			       .source = LG_SRC_PROXY,
			       .turn_text = "" };

	fx->out.n = 0;
	return lg_output_repeat_feed(fx->d, &ev, &fx->env, &fx->out);
}

static size_t cps(const char *p, size_t n)
{
	size_t c = 0;

	for (size_t i = 0; i < n; i++)
		c += ((unsigned char)p[i] & 0xc0) != 0x80;
	return c;
}

/* n copies of s, malloc'ed. */
static char *copies(const char *s, size_t n)
{
	size_t l = strlen(s);
	char *b = malloc(l * n + 1);

	assert_non_null(b);
	for (size_t i = 0; i < n; i++)
		memcpy(b + i * l, s, l);
	b[l * n] = '\0';
	return b;
}

static uint32_t rnd(uint32_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return *s;
}

/*
 * Feeds text in deltas of 1 to maxd bytes (byte by byte when maxd is 1),
 * cut anywhere, in the middle of UTF-8 sequences too. Returns the number
 * of code points fed up to the end of the delta that tripped first (0:
 * none) and in *before those fed before that delta.
 */
static size_t stream(struct fixture *fx, const char *text, uint32_t seed,
		     size_t maxd, size_t *before)
{
	size_t len = strlen(text), off = 0, fed = 0, hit = 0;

	*before = 0;
	while (off < len) {
		size_t n = maxd == 1 ? 1 : 1 + rnd(&seed) % maxd;

		if (n > len - off)
			n = len - off;
		if (delta(fx, text + off, n) != LG_ALLOW && !hit) {
			*before = fed;
			hit = fed + cps(text + off, n);
		}
		fed += cps(text + off, n);
		off += n;
	}
	return hit;
}

static void test_defaults(void **state)
{
	struct lg_output_repeat_cfg cfg = default_cfg();

	(void)state;
	assert_true(cfg.enabled);
	assert_int_equal(cfg.window, 200);
	assert_int_equal(cfg.threshold, 3);
	assert_int_equal(cfg.sizes[0], 50);
	assert_int_equal(cfg.sizes[1], 80);
	assert_int_equal(cfg.sizes[2], 120);
	assert_int_equal(cfg.sizes[3], 0);
	assert_int_equal(cfg.action, LG_WARN);
}

/*
 * A 60-character sentence, one character at a time: the last 50
 * characters occur a third time at character 170 (2 * 60 + 50), not one
 * character earlier.
 */
static void test_sentence_bytewise(void **state)
{
	struct fixture *fx = fx_default(state);
	char *text = copies(s60, 5);
	char want[LG_SUMMARY_MAX];
	size_t before, hit;

	assert_int_equal(strlen(s60), 60);
	hit = stream(fx, text, 0, 1, &before);
	free(text);
	assert_int_equal(hit, 170);
	assert_int_equal(before, 169);
	assert_int_equal(fx->warnings, 1);
	/* the finding came with the delta that tripped: redo to read it */
	lg_output_repeat_free(fx->d);
	fx = fx_default(state);
	text = copies(s60, 3);
	assert_int_equal(delta(fx, text, 169), LG_ALLOW);
	assert_int_equal(delta(fx, text + 169, 1), LG_WARN);
	free(text);
	assert_int_equal(fx->out.f[0].action, LG_WARN);
	assert_string_equal(fx->out.f[0].rule, "output_repeat");
	assert_string_equal(fx->out.f[0].reason, "output_repeat");
	/* the chunk is characters 120..169: the sentence's first 50 */
	snprintf(want, sizeof(want),
		 "output_repeat, the model's text repeats \"%.50s\" (50 "
		 "characters) 3 times in its last 170 characters",
		 s60);
	assert_string_equal(fx->out.f[0].summary, want);
}

/*
 * The same in random deltas, from 1 byte to a few hundred: it trips in the
 * delta that brings character 170, whatever the cuts, and once.
 */
static void test_sentence_random_deltas(void **state)
{
	char *text = copies(s60, 12);

	for (uint32_t seed = 1; seed <= 200; seed++) {
		struct fixture *fx = fx_default(state);
		size_t maxd = seed % 4 == 0 ? 400 : seed % 4 == 1 ? 7 : 40;
		size_t before, hit = stream(fx, text, seed, maxd, &before);

		if (!(hit >= 170 && before < 170) || fx->warnings != 1) {
			free(text);
			fail_msg(
				"seed %u (deltas up to %zu): tripped %u times, first in the delta of characters %zu..%zu",
				seed, maxd, fx->warnings, before, hit);
		}
		lg_output_repeat_free(fx->d);
		fx->d = NULL;
	}
	free(text);
	*state = NULL;
}

/*
 * One delta holding prose, a loop and prose again (a whole response that
 * was not streamed): checked within the delta, not only at its end.
 */
static void test_loop_inside_one_delta(void **state)
{
	struct fixture *fx = fx_default(state);
	char *loop = copies(s60, 4);
	char text[2048];

	snprintf(text, sizeof(text),
		 "Here is what I found while reading the logs. %s"
		 "After that, the job finished and reported success for every "
		 "step, with a summary of the timings at the end of the run.",
		 loop);
	free(loop);
	assert_int_equal(delta(fx, text, strlen(text)), LG_WARN);
	assert_non_null(
		strstr(fx->out.f[0].summary, "(50 characters) 3 times"));
	/* and only the end, with the loop scrolled out: nothing */
	lg_output_repeat_free(fx->d);
	fx = fx_default(state);
	assert_int_equal(delta(fx, text + strlen(text) - 120, 120), LG_ALLOW);
}

static const char prose[] =
	"I read the failing test first. It expects the parser to accept a "
	"trailing comma in the argument list, but the grammar only allows "
	"one between two arguments. There are two ways to fix this: change "
	"the grammar, or change the test. The language reference says that a "
	"trailing comma is allowed in calls since version 2.3, so the grammar "
	"is wrong. I changed the rule for argument lists in grammar.y, "
	"regenerated the parser and ran the whole suite again.\n\n"
	"Results: 412 tests passed, none failed, 3 were skipped because they "
	"need a network connection. The skipped ones are marked as such in "
	"the CI configuration as well, so nothing changes there.\n\n"
	"| file | lines changed |\n"
	"|------|---------------|\n"
	"| grammar.y | 4 |\n"
	"| tests/test_calls.py | 12 |\n\n"
	"Next, I would like to add a test for a trailing comma after keyword "
	"arguments, because the same rule covers them and nothing checks it "
	"yet. Should I go ahead, or do you prefer a separate change for it?";

/* Ordinary prose, a small table included, never trips. */
static void test_varied_prose(void **state)
{
	for (uint32_t seed = 1; seed <= 50; seed++) {
		struct fixture *fx = fx_default(state);
		size_t before, hit = stream(fx, prose, seed, 30, &before);

		assert_int_equal(hit, 0);
		assert_int_equal(fx->warnings, 0);
		lg_output_repeat_free(fx->d);
		fx->d = NULL;
	}
	*state = NULL;
}

/*
 * A run of one character repeats any chunk: 150 dashes (3 * 50) trip, 149
 * do not. That is why the default action is warn: tables and progress
 * bars look like this. A ruler of 80 '=' is fine.
 */
static void test_dashes(void **state)
{
	struct fixture *fx = fx_default(state);
	char dashes[201];
	char want[LG_SUMMARY_MAX];

	memset(dashes, '-', 200);
	dashes[200] = '\0';
	assert_int_equal(delta(fx, dashes, 149), LG_ALLOW);
	assert_int_equal(delta(fx, "-", 1), LG_WARN);
	snprintf(want, sizeof(want),
		 "output_repeat, the model's text repeats \"%.50s\" (50 "
		 "characters) 3 times in its last 150 characters",
		 dashes);
	assert_string_equal(fx->out.f[0].summary, want);

	lg_output_repeat_free(fx->d);
	fx = fx_default(state);
	memset(dashes, '=', 80);
	assert_int_equal(delta(fx, dashes, 80), LG_ALLOW);
	assert_int_equal(delta(fx, "\nDone.\n", 7), LG_ALLOW);
	/* 150 in one delta: the count is of every copy in the span */
	lg_output_repeat_free(fx->d);
	fx = fx_default(state);
	memset(dashes, '-', 200);
	assert_int_equal(delta(fx, dashes, 200), LG_WARN);
	assert_non_null(strstr(fx->out.f[0].summary,
			       "(50 characters) 3 times in its last 160"));
}

/*
 * Characters are code points: a 60-character sentence of 74 bytes trips
 * at character 170, fed byte by byte with sequences cut between deltas.
 */
static void test_utf8_code_points(void **state)
{
	static const char s[] =
		"Ça coûte 5 € — naïve café, über straße; déjà vu, señor Mül! ";
	struct fixture *fx = fx_default(state);
	char *text = copies(s, 4);
	size_t before, hit;
	const char *sum;

	assert_int_equal(cps(s, strlen(s)), 60);
	assert_int_equal(strlen(s), 74);
	hit = stream(fx, text, 0, 1, &before);
	assert_int_equal(hit, 170);
	assert_int_equal(before, 169);
	/* the summary shows the characters, whole */
	lg_output_repeat_free(fx->d);
	fx = fx_default(state);
	assert_int_equal(delta(fx, text, strlen(text)), LG_WARN);
	free(text);
	sum = fx->out.f[0].summary;
	assert_non_null(strstr(sum, "5 € — naïve café, über straße; déjà vu"));
	for (const unsigned char *p = (const unsigned char *)sum; *p;) {
		size_t l = lg_utf8_seq_len(p);

		assert_true(l > 0);
		p += l;
	}
}

/*
 * 20 CJK characters (60 bytes) repeated: the 50-character chunk recurs,
 * without overlapping itself, every 60 characters, so it trips at
 * character 170 (510 bytes); counted in bytes, three copies of a chunk
 * could never fit in the 200-byte window.
 */
static void test_utf8_cjk(void **state)
{
	static const char s[] = "模型一直在重复同一句话而且没有任何进展了";
	struct fixture *fx = fx_default(state);
	char *text = copies(s, 10);
	size_t before, hit;

	assert_int_equal(cps(s, strlen(s)), 20);
	assert_int_equal(strlen(s), 60);
	hit = stream(fx, text, 0, 1, &before);
	free(text);
	assert_int_equal(hit, 170);
	assert_int_equal(fx->warnings, 1);
}

/* Bytes that are not UTF-8 are one U+FFFD each; a cut sequence is one. */
static void test_invalid_and_cut_utf8(void **state)
{
	struct fixture *fx = fx_default(state);
	unsigned char junk[150];

	memset(junk, 0xff, sizeof(junk));
	assert_int_equal(delta(fx, (const char *)junk, 149), LG_ALLOW);
	assert_int_equal(lg_output_repeat_len(fx->d), 149);
	assert_int_equal(delta(fx, (const char *)junk, 1), LG_WARN);
	assert_non_null(strstr(fx->out.f[0].summary, "\xef\xbf\xbd"));

	assert_int_equal(turn(fx), LG_ALLOW);
	/* "€" in three deltas is one character */
	assert_int_equal(delta(fx, "\xe2", 1), LG_ALLOW);
	assert_int_equal(delta(fx, "\x82", 1), LG_ALLOW);
	assert_int_equal(lg_output_repeat_len(fx->d), 0);
	assert_int_equal(delta(fx, "\xac", 1), LG_ALLOW);
	assert_int_equal(lg_output_repeat_len(fx->d), 1);
	/* a sequence broken by an ASCII byte: U+FFFD, then the byte */
	assert_int_equal(delta(fx, "\xe2\x82x", 3), LG_ALLOW);
	assert_int_equal(lg_output_repeat_len(fx->d), 3);
	/* overlong and surrogate forms are not characters */
	assert_int_equal(delta(fx, "\xc0\xaf\xed\xa0\x80", 5), LG_ALLOW);
	assert_int_equal(lg_output_repeat_len(fx->d), 3 + 2 + 3);
	assert_int_equal(delta(fx, "\xe0\x80\x80", 3), LG_ALLOW);
	assert_int_equal(lg_output_repeat_len(fx->d), 11);
	/* nor is anything past U+10FFFF; U+10FFFF itself is one */
	assert_int_equal(delta(fx, "\xf4\x90\x80\x80", 4), LG_ALLOW);
	assert_int_equal(lg_output_repeat_len(fx->d), 15);
	assert_int_equal(delta(fx, "\xf4\x8f\xbf\xbf", 4), LG_ALLOW);
	assert_int_equal(lg_output_repeat_len(fx->d), 16);
	/* a NUL byte inside a delta is a character, not an end */
	assert_int_equal(delta(fx, "a\0b", 3), LG_ALLOW);
	assert_int_equal(lg_output_repeat_len(fx->d), 19);
	/* empty and NULL deltas change nothing */
	assert_int_equal(delta(fx, NULL, 5), LG_ALLOW);
	assert_int_equal(delta(fx, "abc", 0), LG_ALLOW);
	assert_int_equal(lg_output_repeat_len(fx->d), 19);
}

/* A NUL in the repeated text shows as a space, and the rest after it. */
static void test_nul_in_preview(void **state)
{
	struct fixture *fx = fx_default(state);
	char text[3 * 60];

	for (size_t i = 0; i < 3; i++) {
		memcpy(text + i * 60, s60, 60);
		text[i * 60 + 10] = '\0';
	}
	/* checked at 176: the chunk starts at the sentence's character 6 */
	assert_int_equal(delta(fx, text, sizeof(text)), LG_WARN);
	assert_non_null(strstr(fx->out.f[0].summary,
			       "\"ild  ailed again, so I will run the"));
}

/*
 * The span is exact: threshold 2 and size 50 in a window of 200 find a
 * period of 150 (150 + 50 characters), not one of 151.
 */
static void test_window_edge(void **state)
{
	struct lg_output_repeat_cfg cfg = default_cfg();
	char unit[152];
	char *text;
	struct fixture *fx;
	size_t before, hit;

	cfg.threshold = 2;
	cfg.sizes[1] = cfg.sizes[2] = 0;
	for (size_t period = 150; period <= 151; period++) {
		snprintf(unit, sizeof(unit), "%s%.*s", s100,
			 (int)(period - 100), s60);
		assert_int_equal(strlen(unit), period);
		text = copies(unit, 4);
		fx = fx_new(state, &cfg);
		hit = stream(fx, text, 0, 1, &before);
		free(text);
		assert_int_equal(hit, period == 150 ? 200 : 0);
		lg_output_repeat_free(fx->d);
		fx->d = NULL;
	}
	*state = NULL;
}

/* The count is of every copy in the span, not the threshold. */
static void test_count_all_copies(void **state)
{
	struct lg_output_repeat_cfg cfg = default_cfg();
	struct fixture *fx;
	char dashes[32];

	cfg.threshold = 2;
	cfg.sizes[0] = 10;
	cfg.sizes[1] = cfg.sizes[2] = 0;
	fx = fx_new(state, &cfg);
	memset(dashes, '-', sizeof(dashes));
	/* checked at character 16 (too few), then at 32: 3 copies of 10 */
	assert_int_equal(delta(fx, dashes, sizeof(dashes)), LG_WARN);
	assert_non_null(strstr(fx->out.f[0].summary,
			       "(10 characters) 3 times in its last 32"));
}

/* A loop written while the buffer is trimmed is found all the same. */
static void test_loop_across_trim(void **state)
{
	struct fixture *fx = fx_default(state);
	char *text = copies(s60, 4);
	uint32_t seed = 7;
	size_t before;

	while (lg_output_repeat_len(fx->d) < 4 * 480 - 100) {
		char buf[16];
		int n = snprintf(buf, sizeof(buf), "%u ", rnd(&seed));

		for (int i = 0;
		     i < n && lg_output_repeat_len(fx->d) < 4 * 480 - 100; i++)
			assert_int_equal(delta(fx, buf + i, 1), LG_ALLOW);
	}
	assert_int_equal(stream(fx, text, 0, 1, &before), 170);
	assert_true(lg_output_repeat_len(fx->d) == 0);
	free(text);
}

/* A turn starts the text over: a new response is not the old one. */
static void test_reset_at_turn(void **state)
{
	struct fixture *fx = fx_default(state);
	char *text = copies(s60, 6);
	size_t before, hit;

	/* without a turn, character 170 trips */
	assert_int_equal(delta(fx, text, 160), LG_ALLOW);
	assert_int_equal(delta(fx, text + 160, 10), LG_WARN);
	lg_output_repeat_free(fx->d);

	fx = fx_default(state);
	assert_int_equal(delta(fx, text, 160), LG_ALLOW);
	assert_int_equal(lg_output_repeat_len(fx->d), 160);
	assert_int_equal(turn(fx), LG_ALLOW);
	assert_int_equal(fx->out.n, 0);
	assert_int_equal(lg_output_repeat_len(fx->d), 0);
	assert_int_equal(delta(fx, text + 160, 10), LG_ALLOW);
	/* 170 characters after the turn, wherever the sentence starts */
	hit = stream(fx, text + 170, 0, 1, &before);
	assert_int_equal(hit, 160);
	free(text);

	/* half a UTF-8 sequence does not outlive its response */
	assert_int_equal(turn(fx), LG_ALLOW);
	assert_int_equal(delta(fx, "\xe2\x82", 2), LG_ALLOW);
	assert_int_equal(turn(fx), LG_ALLOW);
	assert_int_equal(delta(fx, "\xac", 1), LG_ALLOW);
	assert_int_equal(lg_output_repeat_len(fx->d), 1); /* U+FFFD */
}

/* After a trip: quiet until the next turn, then armed again. */
static void test_one_finding_per_response(void **state)
{
	struct fixture *fx = fx_default(state);
	char *text = copies(s60, 40);
	size_t before, hit;

	hit = stream(fx, text, 7, 25, &before);
	assert_true(hit >= 170 && before < 170);
	assert_int_equal(fx->warnings, 1);
	assert_int_equal(lg_output_repeat_len(fx->d), 0);
	assert_int_equal(turn(fx), LG_ALLOW);
	hit = stream(fx, text, 9, 25, &before);
	assert_true(hit >= 170 && before < 170);
	assert_int_equal(fx->warnings, 2);
	free(text);
}

/* The action comes from the config. */
static void test_action(void **state)
{
	struct lg_output_repeat_cfg cfg = default_cfg();
	struct fixture *fx;
	char *text = copies(s60, 3);

	cfg.action = LG_KILL;
	cfg.steer_at = 0; /* at once, no note first */
	fx = fx_new(state, &cfg);
	assert_int_equal(delta(fx, text, strlen(text)), LG_KILL);
	assert_int_equal(fx->out.f[0].action, LG_KILL);
	assert_false(lg_finding_steers(&fx->out.f[0]));
	free(text);
}

/*
 * The default (warn): every looping response warns and is the note, with
 * nothing after it (issue 28: seed 004's behaviour unchanged).
 */
static void test_warn_notes_each_response(void **state)
{
	struct fixture *fx = fx_default(state);
	const struct lg_finding *f = &fx->out.f[0];
	char *text = copies(s60, 3);

	for (int i = 0; i < 3; i++) {
		assert_int_equal(turn(fx), LG_ALLOW);
		assert_int_equal(delta(fx, text, strlen(text)), LG_WARN);
		assert_true(f->note);
		assert_true(lg_finding_steers(f));
		assert_int_equal(f->then, LG_WARN);
		assert_int_equal(f->left, 0);
	}
	free(text);
}

/*
 * The ladder with kill and the default steer_at (1): the first looping
 * response only warns and is the note (a kill at the next one); the
 * action applies from the second response on, and is no note.
 */
static void test_kill_ladder(void **state)
{
	struct lg_output_repeat_cfg cfg = default_cfg();
	struct fixture *fx;
	const struct lg_finding *f;
	char *text = copies(s60, 3);

	assert_int_equal(cfg.steer_at, 1);
	cfg.action = LG_KILL;
	fx = fx_new(state, &cfg);
	f = &fx->out.f[0];
	assert_int_equal(delta(fx, text, strlen(text)), LG_WARN);
	assert_true(f->note);
	assert_true(lg_finding_steers(f));
	assert_int_equal(f->then, LG_KILL);
	assert_int_equal(f->left, 1);
	/* one finding per response: the rest of this one is quiet */
	assert_int_equal(delta(fx, text, strlen(text)), LG_ALLOW);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(turn(fx), LG_ALLOW);
		assert_int_equal(delta(fx, text, strlen(text)), LG_KILL);
		assert_int_equal(f->action, LG_KILL);
		assert_false(f->note);
		assert_false(lg_finding_steers(f));
	}
	free(text);
}

/*
 * The command's output (--watch-output) has no next response to unmute
 * the detector: no ladder there, the action at once.
 */
static void test_output_acts_at_once(void **state)
{
	struct lg_output_repeat_cfg cfg = default_cfg();
	struct fixture *fx;
	char *text = copies(s60, 3);
	struct lg_event ev = { .kind = LG_EV_TEXT,
			       .source = LG_SRC_OUTPUT,
			       .text = text,
			       .text_len = strlen(text) };

	cfg.action = LG_KILL;
	fx = fx_new(state, &cfg);
	assert_int_equal(lg_output_repeat_feed(fx->d, &ev, &fx->env, &fx->out),
			 LG_KILL);
	assert_int_equal(fx->out.n, 1);
	assert_false(fx->out.f[0].note);
	free(text);
}

/* steer_at 2 with deny: two responses noted, counting down, then deny. */
static void test_deny_steer_at_two(void **state)
{
	struct lg_output_repeat_cfg cfg = default_cfg();
	struct fixture *fx;
	const struct lg_finding *f;
	char *text = copies(s60, 3);

	cfg.action = LG_DENY;
	cfg.steer_at = 2;
	fx = fx_new(state, &cfg);
	f = &fx->out.f[0];
	assert_int_equal(delta(fx, text, strlen(text)), LG_WARN);
	assert_int_equal(f->left, 2);
	assert_int_equal(turn(fx), LG_ALLOW);
	assert_int_equal(delta(fx, text, strlen(text)), LG_WARN);
	assert_int_equal(f->left, 1);
	assert_int_equal(f->then, LG_DENY);
	assert_int_equal(turn(fx), LG_ALLOW);
	assert_int_equal(delta(fx, text, strlen(text)), LG_DENY);
	assert_false(lg_finding_steers(f));
	free(text);
}

static void test_off(void **state)
{
	struct lg_output_repeat_cfg cfgs[4];
	char *text = copies(s60, 20);

	for (size_t i = 0; i < 4; i++)
		cfgs[i] = default_cfg();
	cfgs[0].enabled = false;
	cfgs[1].threshold = 1;
	cfgs[2].sizes[0] = 0;
	memset(&cfgs[3], 0, sizeof(cfgs[3]));
	for (size_t i = 0; i < 4; i++) {
		struct fixture *fx = fx_new(state, &cfgs[i]);
		size_t before;

		if (stream(fx, text, (uint32_t)i + 1, 50, &before) ||
		    fx->warnings) {
			free(text);
			fail_msg("config %zu tripped", i);
		}
		assert_int_equal(lg_output_repeat_len(fx->d), 0);
		lg_output_repeat_free(fx->d);
		fx->d = NULL;
	}
	free(text);
	*state = NULL;
}

/*
 * Longer loops: a 100-character sentence is caught by the 80-character
 * chunk (it looks at 4 * 80 = 320 characters) at 2 * 100 + 80 = 280, a
 * 170-character one by the 120-character chunk at 2 * 170 + 120 = 460.
 * With only the 200-character window the reference detector uses for
 * every size, neither would ever trip.
 */
static void test_longer_loops(void **state)
{
	struct lg_output_repeat_cfg cfg = default_cfg();
	struct fixture *fx = fx_default(state);
	char *text = copies(s100, 10);
	size_t before, hit;

	assert_int_equal(strlen(s100), 100);
	assert_int_equal(strlen(s170), 170);
	hit = stream(fx, text, 0, 1, &before);
	assert_int_equal(hit, 280);
	lg_output_repeat_free(fx->d);
	fx = fx_default(state);
	assert_int_equal(delta(fx, text, 280), LG_WARN);
	assert_non_null(strstr(fx->out.f[0].summary,
			       "(80 characters) 3 times in its last 280"));
	lg_output_repeat_free(fx->d);

	/* window 200 and only the 50 size, as in the reference */
	cfg.sizes[1] = cfg.sizes[2] = 0;
	fx = fx_new(state, &cfg);
	assert_int_equal(stream(fx, text, 0, 1, &before), 0);
	free(text);
	lg_output_repeat_free(fx->d);

	fx = fx_default(state);
	text = copies(s170, 6);
	hit = stream(fx, text, 0, 1, &before);
	free(text);
	assert_int_equal(hit, 460);
	lg_output_repeat_free(fx->d);
	fx = fx_default(state);
	text = copies(s170, 3);
	assert_int_equal(delta(fx, text, 460), LG_WARN);
	free(text);
	/* the preview is cut to 60 characters */
	assert_non_null(strstr(fx->out.f[0].summary,
			       "\xe2\x80\xa6\" (120 characters) 3 times"));
}

/* A loop longer than 180 characters needs a larger size. */
static void test_too_long_needs_a_size(void **state)
{
	struct lg_output_repeat_cfg cfg = default_cfg();
	char buf[256];
	char *text;
	struct fixture *fx;
	size_t before;

	snprintf(buf, sizeof(buf), "%s%.30s", s170, s60);
	assert_int_equal(strlen(buf), 200);
	text = copies(buf, 8);
	fx = fx_new(state, &cfg);
	assert_int_equal(stream(fx, text, 0, 1, &before), 0);
	lg_output_repeat_free(fx->d);
	cfg.sizes[3] = 200; /* looks at 800 characters */
	fx = fx_new(state, &cfg);
	assert_int_equal(stream(fx, text, 0, 1, &before), 2 * 200 + 200);
	free(text);
}

/*
 * A known false-positive shape: lines that differ only in a number share
 * 50 identical characters, which recur once per line.
 */
static void test_numbered_lines_trip(void **state)
{
	struct fixture *fx = fx_default(state);
	char text[1024];
	size_t o = 0, before;

	for (int i = 1; i <= 6; i++)
		o += (size_t)snprintf(text + o, sizeof(text) - o,
				      "Attempt %d: the connection to the "
				      "database server timed out again.\n",
				      i);
	assert_true(stream(fx, text, 0, 1, &before) > 0);
}

/* The buffer stays bounded on a long response without a trip. */
static void test_bounded(void **state)
{
	struct fixture *fx = fx_default(state);
	char buf[64];
	uint32_t seed = 42;

	for (int i = 0; i < 20000; i++) {
		/* distinct numbers: no 50 characters ever recur */
		int n = snprintf(buf, sizeof(buf), "%u ", rnd(&seed));

		assert_int_equal(delta(fx, buf, (size_t)n), LG_ALLOW);
		assert_true(lg_output_repeat_len(fx->d) <= 4 * 480);
	}
	assert_true(lg_output_repeat_len(fx->d) >= 480);
}

/*
 * After the buffer was trimmed many times (its index rebuilt each time), a
 * loop is still found, also one that straddles a trim, and at the same
 * place as a scan of the whole span would: three copies of a 60-character
 * sentence trip at the end of the third.
 */
static void test_found_after_trims(void **state)
{
	struct fixture *fx = fx_default(state);
	char buf[64];
	uint32_t seed = 7;
	size_t before;

	for (int round = 0; round < 3; round++) {
		for (int i = 0; i < 1500 + round * 37; i++) {
			int n = snprintf(buf, sizeof(buf), "%u ", rnd(&seed));

			assert_int_equal(delta(fx, buf, (size_t)n), LG_ALLOW);
		}
		before = lg_output_repeat_len(fx->d);
		assert_int_equal(delta(fx, s60, strlen(s60)), LG_ALLOW);
		assert_int_equal(delta(fx, s60, strlen(s60)), LG_ALLOW);
		assert_int_not_equal(delta(fx, s60, strlen(s60)), LG_ALLOW);
		assert_true(before > 0);
		/* a new response after the finding */
		turn(fx);
	}
}

/* Events other than text and turns are not looked at. */
static void test_other_events(void **state)
{
	struct fixture *fx = fx_default(state);
	char *text = copies(s60, 3);
	struct lg_event ev = { .kind = LG_EV_TOOL_DONE,
			       .tool = "t",
			       .args = "{}",
			       .text = text,
			       .text_len = strlen(text) };

	for (enum lg_event_kind k = LG_EV_DESTRUCTIVE; k <= LG_EV_TOOL_DONE;
	     k++) {
		ev.kind = k;
		assert_int_equal(lg_output_repeat_feed(fx->d, &ev, &fx->env,
						       &fx->out),
				 LG_ALLOW);
	}
	assert_int_equal(lg_output_repeat_len(fx->d), 0);
	assert_int_equal(delta(fx, text, strlen(text)), LG_WARN);
	free(text);
}

#define T(fn) cmocka_unit_test_teardown(fn, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		T(test_sentence_bytewise),
		T(test_sentence_random_deltas),
		T(test_loop_inside_one_delta),
		T(test_varied_prose),
		T(test_dashes),
		T(test_utf8_code_points),
		T(test_utf8_cjk),
		T(test_invalid_and_cut_utf8),
		T(test_nul_in_preview),
		T(test_window_edge),
		T(test_count_all_copies),
		T(test_loop_across_trim),
		T(test_reset_at_turn),
		T(test_one_finding_per_response),
		T(test_action),
		T(test_warn_notes_each_response),
		T(test_kill_ladder),
		T(test_deny_steer_at_two),
		T(test_output_acts_at_once),
		T(test_off),
		T(test_longer_loops),
		T(test_too_long_needs_a_size),
		T(test_numbered_lines_trip),
		T(test_found_after_trims),
		T(test_bounded),
		T(test_other_events),
	};

	return cmocka_run_group_tests_name("output_repeat", tests, NULL, NULL);
}
