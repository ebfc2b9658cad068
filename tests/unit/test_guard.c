// SPDX-License-Identifier: MIT
/* Unit tests for guard/guard.c: the detectors together behind one feed. */
#include <stdarg.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include <setjmp.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "config/config.h"
#include "guard/detectors.h"

/* The world: which removed targets exist again. */
struct world {
	const char *back[4];
	size_t nback;
};

static bool world_restored(void *ctx, const char *target, enum lg_op op,
			   const struct lg_target_id *id)
{
	const struct world *w = ctx;

	(void)op;
	(void)id;
	for (size_t i = 0; i < w->nback; i++)
		if (strcmp(w->back[i], target) == 0)
			return true;
	return false;
}

static const struct lg_guard_cfg default_cfg = {
	.volumetric = { 3, 60000, LG_KILL },
	.same_target = { 3, 60000, LG_KILL },
	.budget = { .reserve = 0.2, .action = LG_KILL },
};

struct fixture {
	struct lg_guard *g;
	struct world w;
	struct lg_guard_env env;
	struct lg_findings out;
};

static struct fixture *fx_new(void **state, const struct lg_guard_cfg *cfg,
			      uint64_t start)
{
	static struct fixture fx;

	memset(&fx, 0, sizeof(fx));
	fx.g = lg_guard_new(cfg, start);
	assert_non_null(fx.g);
	fx.env.restored = world_restored;
	fx.env.ctx = &fx.w;
	*state = &fx;
	return &fx;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;

	if (fx)
		lg_guard_free(fx->g);
	return 0;
}

static enum lg_verdict feed_cls(struct fixture *fx, uint64_t t, enum lg_op op,
				enum lg_class cls, const char *target)
{
	struct lg_event ev = { .kind = LG_EV_DESTRUCTIVE,
			       .source = LG_SRC_SECCOMP,
			       .op = op,
			       .cls = cls,
			       .pid = 1234,
			       .exe = "rm",
			       .target = target };

	fx->env.now_ms = t;
	return lg_guard_feed(fx->g, &ev, &fx->env, &fx->out);
}

static enum lg_verdict feed_at(struct fixture *fx, uint64_t t,
			       const char *target)
{
	return feed_cls(fx, t, LG_OP_UNLINK, LG_CLASS_DESTROY, target);
}

static enum lg_verdict tick_at(struct fixture *fx, uint64_t t)
{
	struct lg_event ev = { .kind = LG_EV_TICK, .source = LG_SRC_TIMER };

	fx->env.now_ms = t;
	return lg_guard_feed(fx->g, &ev, &fx->env, &fx->out);
}

static void test_volumetric_through_guard(void **state)
{
	struct fixture *fx = fx_new(state, &default_cfg, 0);

	assert_int_equal(feed_at(fx, 0, "/p/a"), LG_ALLOW);
	assert_int_equal(fx->out.n, 0);
	assert_int_equal(feed_at(fx, 1, "/p/b"), LG_ALLOW);
	assert_int_equal(feed_at(fx, 2, "/p/c"), LG_KILL);
	assert_int_equal(fx->out.n, 1);
	assert_string_equal(fx->out.f[0].rule, "volumetric");
	assert_string_equal(fx->out.f[0].reason, "volume_exceeded");
}

/* The guard hands its env to the detectors: restored targets are dropped. */
static void test_restored_through_guard(void **state)
{
	struct fixture *fx = fx_new(state, &default_cfg, 0);

	assert_int_equal(feed_at(fx, 0, "/p/a"), LG_ALLOW);
	fx->w.back[fx->w.nback++] = "/p/a";
	assert_int_equal(feed_at(fx, 1, "/p/b"), LG_ALLOW);
	assert_int_equal(feed_at(fx, 2, "/p/c"), LG_ALLOW);
	/* two count (a came back): one short of the trip, the model is told */
	assert_int_equal(fx->out.n, 1);
	assert_true(fx->out.f[0].note);
}

/* When both trip on one op, both are reported, same target first. */
static void test_both_trip_same_target_first(void **state)
{
	struct fixture *fx = fx_new(state, &default_cfg, 0);

	assert_int_equal(feed_at(fx, 0, "/p/a"), LG_ALLOW);
	assert_int_equal(feed_at(fx, 1000, "/p/a"), LG_ALLOW);
	assert_int_equal(feed_at(fx, 2000, "/p/a"), LG_KILL);
	assert_int_equal(fx->out.n, 2);
	assert_string_equal(fx->out.f[0].rule, "same_target");
	assert_string_equal(fx->out.f[0].reason, "loop_detected");
	assert_string_equal(fx->out.f[1].rule, "volumetric");
	assert_string_equal(fx->out.f[1].reason, "volume_exceeded");
}

/* The verdict is the most severe action, not the first finding's. */
static void test_worst_verdict(void **state)
{
	struct lg_guard_cfg cfg = default_cfg;
	struct fixture *fx;

	cfg.same_target.action = LG_WARN;
	cfg.volumetric.action = LG_DENY;
	fx = fx_new(state, &cfg, 0);
	assert_int_equal(feed_at(fx, 0, "/p/a"), LG_ALLOW);
	assert_int_equal(feed_at(fx, 1, "/p/a"), LG_ALLOW);
	assert_int_equal(feed_at(fx, 2, "/p/a"), LG_DENY);
	assert_int_equal(fx->out.n, 2);
	assert_int_equal(fx->out.f[0].action, LG_WARN);
	assert_int_equal(fx->out.f[1].action, LG_DENY);
}

static void test_worst_verdict_with_budget(void **state)
{
	struct lg_guard_cfg cfg = default_cfg;
	struct fixture *fx;

	/* volumetric off; the budget warns at op 2 of 3, trips at 4 */
	cfg.volumetric.max = 0;
	cfg.budget.max_destructive_ops = 3;
	cfg.budget.reserve = 0.5;
	cfg.budget.action = LG_DENY;
	cfg.same_target.action = LG_KILL;
	fx = fx_new(state, &cfg, 0);
	assert_int_equal(feed_at(fx, 0, "/p/x"), LG_ALLOW);
	assert_int_equal(feed_at(fx, 1, "/p/y"), LG_WARN);
	assert_int_equal(fx->out.n, 1);
	assert_string_equal(fx->out.f[0].reason, "budget_reserve");
	assert_int_equal(feed_at(fx, 2, "/p/x"), LG_ALLOW);
	/* budget_exceeded (deny) and loop_detected (kill) on one op */
	assert_int_equal(feed_at(fx, 3, "/p/x"), LG_KILL);
	assert_int_equal(fx->out.n, 2);
	assert_string_equal(fx->out.f[0].reason, "loop_detected");
	assert_string_equal(fx->out.f[1].reason, "budget_exceeded");
}

/* Findings do not carry over from one feed to the next. */
static void test_findings_reset(void **state)
{
	struct fixture *fx = fx_new(state, &default_cfg, 0);

	feed_at(fx, 0, "/p/a");
	feed_at(fx, 1, "/p/b");
	assert_int_equal(feed_at(fx, 2, "/p/c"), LG_KILL);
	assert_int_equal(fx->out.n, 1);
	assert_int_equal(feed_at(fx, 3, "/p/d"), LG_ALLOW);
	assert_int_equal(fx->out.n, 0);
	assert_int_equal(tick_at(fx, 4), LG_ALLOW);
	assert_int_equal(fx->out.n, 0);
}

static void test_verdict_names(void **state)
{
	static const struct {
		const char *name;
		enum lg_verdict v;
	} tc[] = {
		{ "allow", LG_ALLOW },
		{ "warn", LG_WARN },
		{ "deny", LG_DENY },
		{ "kill", LG_KILL },
	};
	static const char *const bad[] = { "",	    "KILL",  "Kill", "kill ",
					   "block", "killx", "al" };
	enum lg_verdict v;

	(void)state;
	for (size_t i = 0; i < sizeof(tc) / sizeof(tc[0]); i++) {
		v = (enum lg_verdict)99;
		assert_int_equal(lg_verdict_parse(tc[i].name, &v), 0);
		assert_int_equal(v, tc[i].v);
		assert_string_equal(lg_verdict_name(tc[i].v), tc[i].name);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		v = LG_WARN;
		assert_int_equal(lg_verdict_parse(bad[i], &v), -1);
		assert_int_equal(v, LG_WARN); /* untouched */
	}
	assert_string_equal(lg_verdict_name((enum lg_verdict)42), "?");
	/* severity order */
	assert_true(LG_ALLOW < LG_WARN && LG_WARN < LG_DENY &&
		    LG_DENY < LG_KILL);
}

static void test_op_plural(void **state)
{
	(void)state;
	assert_string_equal(lg_op_plural(LG_OP_UNLINK), "deletes");
	assert_string_equal(lg_op_plural(LG_OP_TOOL_DELETE), "tool deletes");
	assert_string_equal(lg_op_plural(LG_OP_RMDIR), "directory removals");
	assert_string_equal(lg_op_plural(LG_OP_TRUNCATE), "truncations");
	assert_string_equal(lg_op_plural(LG_OP_OPEN_TRUNC), "truncations");
}

static void test_findings_add_caps(void **state)
{
	struct lg_findings out = { 0 };
	char big[LG_SUMMARY_MAX * 2];

	(void)state;
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	for (int i = 0; i < LG_MAX_FINDINGS; i++)
		assert_non_null(
			lg_findings_add(&out, LG_WARN, "r", "why", "n=%d", i));
	assert_null(lg_findings_add(&out, LG_KILL, "r", "why", "over"));
	assert_int_equal(out.n, LG_MAX_FINDINGS);
	assert_string_equal(out.f[3].summary, "n=3");
	/* a long summary is truncated, not overflowed */
	out.n = 0;
	assert_non_null(lg_findings_add(&out, LG_WARN, "r", "why", "%s", big));
	assert_int_equal(strlen(out.f[0].summary), LG_SUMMARY_MAX - 1);
}

/* Ticks let time pass; they are never destructive. */
static void test_ticks_do_not_count(void **state)
{
	struct fixture *fx = fx_new(state, &default_cfg, 0);
	struct lg_guard_stats st;

	for (int i = 0; i < 10; i++) {
		struct lg_event ev = { .kind = LG_EV_TICK,
				       .source = LG_SRC_TIMER,
				       .op = LG_OP_UNLINK,
				       .cls = LG_CLASS_DESTROY,
				       .target = "/p/a" };

		fx->env.now_ms = (uint64_t)i;
		assert_int_equal(lg_guard_feed(fx->g, &ev, &fx->env, &fx->out),
				 LG_ALLOW);
		assert_int_equal(fx->out.n, 0);
	}
	lg_guard_stats(fx->g, &st);
	assert_int_equal(st.events, 10);
	assert_int_equal(st.counted, 0);
	assert_int_equal(st.trips, 0);
	/* the detectors counted nothing either */
	assert_int_equal(feed_at(fx, 20, "/p/a"), LG_ALLOW);
	assert_int_equal(feed_at(fx, 21, "/p/a"), LG_ALLOW);
	assert_int_equal(feed_at(fx, 22, "/p/a"), LG_KILL);
}

static void test_stats(void **state)
{
	struct fixture *fx = fx_new(state, &default_cfg, 0);
	struct lg_guard_stats st;

	lg_guard_stats(fx->g, &st);
	assert_int_equal(st.events, 0);
	assert_int_equal(st.counted, 0);
	assert_int_equal(st.trips, 0);

	feed_cls(fx, 0, LG_OP_UNLINK, LG_CLASS_MISSING, "/p/m");
	feed_cls(fx, 0, LG_OP_UNLINK, LG_CLASS_SESSION, "/p/s");
	feed_cls(fx, 0, LG_OP_UNLINK, LG_CLASS_IGNORED, "/p/x.o");
	feed_cls(fx, 0, LG_OP_SHRINK, LG_CLASS_HARMLESS, "/p/h");
	tick_at(fx, 1);
	lg_guard_stats(fx->g, &st);
	assert_int_equal(st.events, 5);
	assert_int_equal(st.counted, 0);
	assert_int_equal(st.trips, 0);

	/* a, b; then a trip of volumetric on c */
	feed_at(fx, 2, "/p/a");
	feed_at(fx, 3, "/p/b");
	assert_int_equal(feed_at(fx, 4, "/p/c"), LG_KILL);
	lg_guard_stats(fx->g, &st);
	assert_int_equal(st.events, 8);
	assert_int_equal(st.counted, 3);
	assert_int_equal(st.trips, 1);

	/* one op that trips two detectors: two trips */
	feed_at(fx, 5, "/p/d");
	feed_at(fx, 6, "/p/d");
	assert_int_equal(feed_at(fx, 7, "/p/d"), LG_KILL);
	assert_int_equal(fx->out.n, 2);
	lg_guard_stats(fx->g, &st);
	assert_int_equal(st.events, 11);
	assert_int_equal(st.counted, 6);
	assert_int_equal(st.trips, 3);
}

/* Warnings are findings, not trips. */
static void test_stats_warn_is_not_a_trip(void **state)
{
	struct lg_guard_cfg cfg = default_cfg;
	struct lg_guard_stats st;
	struct fixture *fx;

	cfg.volumetric.action = LG_WARN;
	fx = fx_new(state, &cfg, 0);
	feed_at(fx, 0, "/p/a");
	feed_at(fx, 1, "/p/b");
	assert_int_equal(feed_at(fx, 2, "/p/c"), LG_WARN);
	assert_int_equal(fx->out.n, 1);
	lg_guard_stats(fx->g, &st);
	assert_int_equal(st.trips, 0);
	assert_int_equal(st.counted, 3);
}

static void test_next_deadline(void **state)
{
	struct lg_guard_cfg cfg = default_cfg;
	struct fixture *fx;

	cfg.budget.timeout_ms = 10000;
	cfg.budget.reserve = 0.2;
	fx = fx_new(state, &cfg, 0);
	assert_int_equal(lg_guard_next_deadline(fx->g), 8000);
	assert_int_equal(tick_at(fx, 7999), LG_ALLOW);
	assert_int_equal(lg_guard_next_deadline(fx->g), 8000);
	assert_int_equal(tick_at(fx, 8000), LG_WARN);
	assert_int_equal(fx->out.n, 1);
	assert_string_equal(fx->out.f[0].reason, "timeout_reserve");
	assert_int_equal(lg_guard_next_deadline(fx->g), 10000);
	assert_int_equal(tick_at(fx, 9000), LG_ALLOW);
	assert_int_equal(tick_at(fx, 10000), LG_KILL);
	assert_string_equal(fx->out.f[0].reason, "timeout");
	assert_int_equal(lg_guard_next_deadline(fx->g), 0);
}

static void test_no_deadline_by_default(void **state)
{
	struct fixture *fx = fx_new(state, &default_cfg, 123456);

	assert_int_equal(lg_guard_next_deadline(fx->g), 0);
	assert_int_equal(tick_at(fx, 1000ULL * 86400 * 30), LG_ALLOW);
}

static enum lg_verdict tool_done(struct fixture *fx, uint64_t t,
				 const char *tool, const char *args,
				 const char *digest)
{
	struct lg_event ev = { .kind = LG_EV_TOOL_DONE,
			       .source = LG_SRC_SHIM,
			       .pid = 1234,
			       .exe = "node",
			       .tool = tool,
			       .args = args,
			       .result_digest = digest,
			       .args_preview = args,
			       .result_preview = "still there" };

	fx->env.now_ms = t;
	return lg_guard_feed(fx->g, &ev, &fx->env, &fx->out);
}

static enum lg_verdict op_result(struct fixture *fx, uint64_t t, enum lg_op op,
				 const char *target, int err)
{
	struct lg_event ev = { .kind = LG_EV_OP_RESULT,
			       .source = LG_SRC_SHIM,
			       .op = op,
			       .pid = 1234,
			       .exe = "node",
			       .target = target,
			       .result = err };

	fx->env.now_ms = t;
	return lg_guard_feed(fx->g, &ev, &fx->env, &fx->out);
}

/* The shipped defaults, as lg_config_init sets them, reach the guard. */
static void test_repeat_and_failures_wired(void **state)
{
	struct lg_config c;
	struct lg_guard_stats st;
	struct fixture *fx;

	lg_config_init(&c);
	fx = fx_new(state, &c.guard, 0);
	lg_config_free(&c);

	assert_int_equal(tool_done(fx, 0, "rm_asset", "{\"id\":1}", "d1"),
			 LG_ALLOW);
	assert_int_equal(tool_done(fx, 1, "rm_asset", "{\"id\":1}", "d1"),
			 LG_ALLOW);
	/* the 2nd identical call: a note to the model (steer_at default) */
	assert_int_equal(fx->out.n, 1);
	assert_true(fx->out.f[0].note);
	assert_string_equal(fx->out.f[0].reason, "repeat_near");
	assert_int_equal(tool_done(fx, 2, "rm_asset", "{\"id\":1}", "d1"),
			 LG_KILL);
	assert_int_equal(fx->out.n, 1);
	assert_string_equal(fx->out.f[0].rule, "repeat");
	assert_string_equal(fx->out.f[0].reason, "repeat");
	assert_string_equal(fx->out.f[0].summary,
			    "repeat, rm_asset({\"id\":1}) -> \"still there\" "
			    "3 times in a row");

	for (int i = 0; i < 3; i++)
		assert_int_equal(op_result(fx, 3, LG_OP_WRITE, "/p/a", EACCES),
				 LG_ALLOW);
	assert_int_equal(op_result(fx, 4, LG_OP_WRITE, "/p/a", EACCES),
			 LG_WARN);
	assert_int_equal(fx->out.n, 1);
	assert_string_equal(fx->out.f[0].rule, "failures");
	assert_string_equal(fx->out.f[0].reason, "write_failures");

	/* a kill is a trip, a warning is not; neither is a destroyed op */
	lg_guard_stats(fx->g, &st);
	assert_int_equal(st.events, 7);
	assert_int_equal(st.trips, 1);
	assert_int_equal(st.counted, 0);
}

/* Off by config: the guard reports nothing for them. */
static void test_repeat_and_failures_off(void **state)
{
	struct fixture *fx = fx_new(state, &default_cfg, 0);

	for (int i = 0; i < 10; i++) {
		assert_int_equal(tool_done(fx, (uint64_t)i, "t", "{}", ""),
				 LG_ALLOW);
		assert_int_equal(op_result(fx, (uint64_t)i, LG_OP_UNLINK,
					   "/p/a", EPERM),
				 LG_ALLOW);
		assert_int_equal(fx->out.n, 0);
	}
}

/*
 * Tool calls and op results are not destructive attempts: the
 * destructive detectors neither count them nor trip on them, and the
 * other way round.
 */
static void test_new_events_not_destructive(void **state)
{
	struct lg_guard_cfg cfg = default_cfg;
	struct lg_guard_stats st;
	struct fixture *fx;

	cfg.repeat = (struct lg_repeat_cfg){ 3, true, LG_KILL, 0 };
	cfg.failures = (struct lg_failures_cfg){ 4, LG_WARN, 0 };
	fx = fx_new(state, &cfg, 0);
	/* target and class look destructive; the kind says otherwise */
	for (int i = 0; i < 2; i++) {
		struct lg_event ev = { .kind = LG_EV_TOOL_DONE,
				       .op = LG_OP_UNLINK,
				       .cls = LG_CLASS_DESTROY,
				       .target = "/p/a",
				       .tool = "t",
				       .args = "{}" };

		assert_int_equal(lg_guard_feed(fx->g, &ev, &fx->env, &fx->out),
				 LG_ALLOW);
		ev.kind = LG_EV_OP_RESULT;
		ev.result = EACCES;
		assert_int_equal(lg_guard_feed(fx->g, &ev, &fx->env, &fx->out),
				 LG_ALLOW);
	}
	lg_guard_stats(fx->g, &st);
	assert_int_equal(st.counted, 0);
	/* destructive attempts do not feed repeat or failures */
	assert_int_equal(feed_at(fx, 10, "/p/a"), LG_ALLOW);
	assert_int_equal(feed_at(fx, 11, "/p/b"), LG_ALLOW);
	assert_int_equal(fx->out.n, 1); /* the note one short of the trip */
	assert_true(fx->out.f[0].note);
	assert_int_equal(feed_at(fx, 12, "/p/c"), LG_KILL);
	assert_int_equal(fx->out.n, 1);
	assert_string_equal(fx->out.f[0].rule, "volumetric");
	lg_guard_stats(fx->g, &st);
	assert_int_equal(st.counted, 3);
	/* the run of two tool calls is still there: one more trips it */
	assert_int_equal(tool_done(fx, 13, "t", "{}", NULL), LG_KILL);
	assert_int_equal(fx->out.n, 1);
	assert_string_equal(fx->out.f[0].rule, "repeat");
	/* and /p/a's two failures: two more make four */
	assert_int_equal(op_result(fx, 14, LG_OP_WRITE, "/p/a", EACCES),
			 LG_ALLOW);
	assert_int_equal(op_result(fx, 15, LG_OP_WRITE, "/p/a", EACCES),
			 LG_WARN);
	assert_string_equal(fx->out.f[0].rule, "failures");
}

/* The worst action wins across old and new detectors alike. */
static void test_failures_action_from_config(void **state)
{
	struct lg_guard_cfg cfg = default_cfg;
	struct fixture *fx;

	cfg.failures = (struct lg_failures_cfg){ 2, LG_DENY, 0 };
	fx = fx_new(state, &cfg, 0);
	assert_int_equal(op_result(fx, 0, LG_OP_RENAME, "/p/a", EXDEV),
			 LG_ALLOW);
	assert_int_equal(op_result(fx, 0, LG_OP_RENAME, "/p/a", EXDEV),
			 LG_DENY);
	assert_int_equal(fx->out.f[0].action, LG_DENY);
	assert_string_equal(
		fx->out.f[0].summary,
		"write_failures, 2 failed writes on /p/a in a row (last: EXDEV)");
}

static enum lg_verdict text(struct fixture *fx, const char *p)
{
	struct lg_event ev = { .kind = LG_EV_TEXT,
			       .source = LG_SRC_PROXY,
			       .text = p,
			       .text_len = strlen(p) };

	return lg_guard_feed(fx->g, &ev, &fx->env, &fx->out);
}

static enum lg_verdict model_turn(struct fixture *fx, uint64_t t,
				  unsigned calls, const char *what)
{
	struct lg_event ev = { .kind = LG_EV_TURN,
			       .source = LG_SRC_PROXY,
			       .tokens_in = 1000,
			       .tokens_out = 200,
			       .turn_tool_calls = calls,
			       .stop_reason = calls ? "tool_use" : "end_turn",
			       .turn_text = what };

	fx->env.now_ms = t;
	return lg_guard_feed(fx->g, &ev, &fx->env, &fx->out);
}

static const char sentence[] =
	"The build failed again, so I will run the same command now. ";

/* The shipped defaults: the model's text and turns reach the guard. */
static void test_model_detectors_wired(void **state)
{
	struct lg_config c;
	struct lg_guard_stats st;
	struct fixture *fx;
	int warned = 0;

	lg_config_init(&c);
	fx = fx_new(state, &c.guard, 0);
	lg_config_free(&c);

	assert_int_equal(model_turn(fx, 0, 2, "Let me run the build."),
			 LG_ALLOW);
	for (int i = 0; i < 5; i++) {
		enum lg_verdict v = text(fx, sentence);

		if (v == LG_ALLOW) {
			assert_int_equal(fx->out.n, 0);
			continue;
		}
		assert_int_equal(v, LG_WARN);
		assert_int_equal(fx->out.n, 1);
		assert_string_equal(fx->out.f[0].rule, "output_repeat");
		assert_string_equal(fx->out.f[0].reason, "output_repeat");
		/* the third copy: characters 120 to 179 */
		assert_int_equal(i, 2);
		warned++;
	}
	assert_int_equal(warned, 1);
	/* the turn that ends it; no tool call, and a greeting next */
	assert_int_equal(model_turn(fx, 1, 1, ""), LG_ALLOW);
	assert_int_equal(model_turn(fx, 2, 0, "Hi there! How can I help?"),
			 LG_WARN);
	assert_int_equal(fx->out.n, 1);
	assert_string_equal(fx->out.f[0].rule, "greeting");
	assert_string_equal(fx->out.f[0].reason, "context_lost");
	/* warnings are not trips, turns are not destructive */
	lg_guard_stats(fx->g, &st);
	assert_int_equal(st.events, 8);
	assert_int_equal(st.trips, 0);
	assert_int_equal(st.counted, 0);
}

/* Zeroed configs (as in default_cfg here) leave them off. */
static void test_model_detectors_off(void **state)
{
	struct fixture *fx = fx_new(state, &default_cfg, 0);

	for (int i = 0; i < 10; i++) {
		assert_int_equal(text(fx, sentence), LG_ALLOW);
		assert_int_equal(fx->out.n, 0);
	}
	for (int i = 0; i < 10; i++) {
		assert_int_equal(model_turn(fx, 0, (unsigned)(i % 2),
					    "Hello! How can I help you today?"),
				 LG_ALLOW);
		assert_int_equal(fx->out.n, 0);
	}
}

/*
 * One turn, four findings: the time, turns and tokens reserves and a
 * greeting; a turn over the limits is a trip, counted as one per finding.
 */
static void test_turn_with_four_findings(void **state)
{
	struct lg_guard_cfg cfg = default_cfg;
	struct lg_guard_stats st;
	struct fixture *fx;

	cfg.budget = (struct lg_budget_cfg){ .timeout_ms = 10000,
					     .max_turns = 3,
					     .max_tokens = 4000,
					     .reserve = 0.4,
					     .action = LG_DENY };
	cfg.greeting = (struct lg_greeting_cfg){ true, LG_WARN, 0 };
	fx = fx_new(state, &cfg, 0);
	assert_int_equal(model_turn(fx, 1000, 3, ""), LG_ALLOW);
	/* 2 of 3 turns, 2400 of 4000 tokens, 6 of 10 s */
	assert_int_equal(model_turn(fx, 6000, 0, "How can I assist you today?"),
			 LG_WARN);
	assert_int_equal(fx->out.n, 4);
	assert_string_equal(fx->out.f[0].reason, "timeout_reserve");
	assert_string_equal(fx->out.f[1].reason, "turns_reserve");
	assert_string_equal(fx->out.f[2].reason, "tokens_reserve");
	assert_string_equal(fx->out.f[3].reason, "context_lost");
	assert_int_equal(model_turn(fx, 7000, 0, "ok"), LG_ALLOW);
	assert_int_equal(fx->out.n, 0);
	/* turn 4, 4800 tokens */
	assert_int_equal(model_turn(fx, 8000, 0, "ok"), LG_DENY);
	assert_int_equal(fx->out.n, 2);
	assert_string_equal(fx->out.f[0].reason, "max_turns");
	assert_string_equal(fx->out.f[1].reason, "max_tokens");
	lg_guard_stats(fx->g, &st);
	assert_int_equal(st.trips, 2);
}

#define T(fn) cmocka_unit_test_teardown(fn, teardown)

/*
 * A store shared by two guards (two hosts of one session): windows by
 * name, each entry counted within its window. add2 is what the guard
 * calls for a destroyed target: one round trip for both windows.
 */
struct fake_windows {
	char name[8][64];
	unsigned count[8];
	size_t n;
	unsigned add2_calls, resets;
	bool down;
};

static unsigned *fw_slot(struct fake_windows *f, const char *w)
{
	for (size_t i = 0; i < f->n; i++)
		if (strcmp(f->name[i], w) == 0)
			return &f->count[i];
	snprintf(f->name[f->n], sizeof(f->name[0]), "%s", w);
	f->count[f->n] = 0;
	return &f->count[f->n++];
}

static long fw_add(void *ctx, const char *w, const char *m, uint64_t ms)
{
	struct fake_windows *f = ctx;

	(void)m;
	(void)ms;
	return f->down ? -1 : (long)++*fw_slot(f, w);
}

static long fw_forget(void *ctx, const char *w, const char *const *m, size_t n,
		      uint64_t ms)
{
	struct fake_windows *f = ctx;
	unsigned *c = fw_slot(f, w);

	(void)m;
	(void)ms;
	*c = *c > n ? *c - (unsigned)n : 0;
	return f->down ? -1 : (long)*c;
}

static void fw_reset(void *ctx, const char *w)
{
	struct fake_windows *f = ctx;

	*fw_slot(f, w) = 0;
	f->resets++;
}

static int fw_add2(void *ctx, const char *wa, const char *ma, uint64_t wa_ms,
		   const char *wb, const char *mb, uint64_t wb_ms, long c[2])
{
	struct fake_windows *f = ctx;

	f->add2_calls++;
	if (f->down)
		return -1;
	c[0] = wa ? fw_add(ctx, wa, ma, wa_ms) : -1;
	c[1] = wb ? fw_add(ctx, wb, mb, wb_ms) : -1;
	return 0;
}

/* Two hosts: one round trip per destroyed target, the third trips. */
static void test_shared_windows_two_hosts(void **state)
{
	struct lg_guard_cfg cfg = {
		.volumetric = { 3, 60000, LG_KILL },
		.same_target = { 3, 60000, LG_KILL },
	};
	struct fake_windows f = { 0 };
	struct lg_shared_windows wa = { fw_add,	 fw_forget, fw_reset,
					fw_add2, &f,	    "A" };
	struct lg_shared_windows wb = { fw_add,	 fw_forget, fw_reset,
					fw_add2, &f,	    "B" };
	struct lg_guard *a = lg_guard_new(&cfg, 0), *b = lg_guard_new(&cfg, 0);
	struct lg_guard_env ea = { .now_ms = 5, .shared = &wa };
	struct lg_guard_env eb = { .now_ms = 5, .shared = &wb };
	struct lg_event ev = { .kind = LG_EV_DESTRUCTIVE,
			       .op = LG_OP_UNLINK,
			       .cls = LG_CLASS_DESTROY };
	struct lg_findings out;

	(void)state;
	ev.target = "/a/1";
	assert_int_equal(lg_guard_feed(a, &ev, &ea, &out), LG_ALLOW);
	ev.target = "/b/1";
	assert_int_equal(lg_guard_feed(b, &ev, &eb, &out), LG_ALLOW);
	assert_int_equal(f.add2_calls, 2);
	ev.target = "/a/2";
	assert_int_equal(lg_guard_feed(a, &ev, &ea, &out), LG_KILL);
	assert_string_equal(out.f[0].reason, "volume_exceeded");
	assert_non_null(strstr(out.f[0].summary, "all supervisors"));
	assert_int_equal(f.add2_calls, 3); /* one per event, both windows */
	assert_int_equal(*fw_slot(&f, "vol"), 0); /* reset after the trip */

	/* the same target attempted on both hosts: the third trips */
	ev.target = "/shared/x";
	assert_int_equal(lg_guard_feed(a, &ev, &ea, &out), LG_ALLOW);
	assert_int_equal(lg_guard_feed(b, &ev, &eb, &out), LG_ALLOW);
	*fw_slot(&f, "vol") = 0; /* keep volumetric out of it */
	assert_int_equal(lg_guard_feed(a, &ev, &ea, &out), LG_KILL);
	assert_string_equal(out.f[0].reason, "loop_detected");

	/*
	 * The store gone: each guard counts on its own entries again. B
	 * holds /b/1 and /shared/x from this window, so /b/2 is its third.
	 */
	f.down = true;
	ev.target = "/b/2";
	assert_int_equal(lg_guard_feed(b, &ev, &eb, &out), LG_KILL);
	assert_string_equal(out.f[0].reason, "volume_exceeded");
	assert_null(strstr(out.f[0].summary, "all supervisors"));
	lg_guard_free(a);
	lg_guard_free(b);
}

/* Events that are not destroyed targets never reach the store. */
static void test_shared_windows_only_for_destroy(void **state)
{
	struct lg_guard_cfg cfg = {
		.volumetric = { 3, 60000, LG_KILL },
		.same_target = { 3, 60000, LG_KILL },
	};
	struct fake_windows f = { 0 };
	struct lg_shared_windows w = { fw_add,	fw_forget, fw_reset,
				       fw_add2, &f,	   "A" };
	struct lg_guard *g = lg_guard_new(&cfg, 0);
	struct lg_guard_env env = { .now_ms = 5, .shared = &w };
	struct lg_event ev = { .kind = LG_EV_DESTRUCTIVE,
			       .op = LG_OP_UNLINK,
			       .cls = LG_CLASS_SESSION,
			       .target = "/tmp/made-here" };
	struct lg_findings out;

	(void)state;
	for (int i = 0; i < 5; i++)
		assert_int_equal(lg_guard_feed(g, &ev, &env, &out), LG_ALLOW);
	assert_int_equal(f.add2_calls, 0);
	lg_guard_free(g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shared_windows_two_hosts),
		cmocka_unit_test(test_shared_windows_only_for_destroy),
		T(test_volumetric_through_guard),
		T(test_restored_through_guard),
		T(test_both_trip_same_target_first),
		T(test_worst_verdict),
		T(test_worst_verdict_with_budget),
		T(test_findings_reset),
		cmocka_unit_test(test_verdict_names),
		cmocka_unit_test(test_op_plural),
		cmocka_unit_test(test_findings_add_caps),
		T(test_ticks_do_not_count),
		T(test_stats),
		T(test_stats_warn_is_not_a_trip),
		T(test_next_deadline),
		T(test_no_deadline_by_default),
		T(test_repeat_and_failures_wired),
		T(test_repeat_and_failures_off),
		T(test_new_events_not_destructive),
		T(test_failures_action_from_config),
		T(test_model_detectors_wired),
		T(test_model_detectors_off),
		T(test_turn_with_four_findings),
	};

	return cmocka_run_group_tests_name("guard", tests, NULL, NULL);
}
