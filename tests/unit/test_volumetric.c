// SPDX-License-Identifier: MIT
/* Unit tests for guard/volumetric.c: destroyed data in a sliding window. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "guard/detectors.h"

/* The world as the guard sees it: which removed targets exist again. */
struct world {
	const char *back[8];
	size_t nback;
	unsigned calls;
	char last_target[64]; /* a copy: the detector frees its own */
	enum lg_op last_op;
	uint64_t last_ino;
};

static bool world_restored(void *ctx, const char *target, enum lg_op op,
			   const struct lg_target_id *id)
{
	struct world *w = ctx;

	w->calls++;
	w->last_ino = id->ino;
	snprintf(w->last_target, sizeof(w->last_target), "%s", target);
	w->last_op = op;
	for (size_t i = 0; i < w->nback; i++)
		if (strcmp(w->back[i], target) == 0)
			return true;
	return false;
}

static void world_restore(struct world *w, const char *target)
{
	assert_true(w->nback < sizeof(w->back) / sizeof(w->back[0]));
	w->back[w->nback++] = target;
}

struct fixture {
	struct lg_volumetric *d;
	struct world w;
	struct lg_guard_env env;
	struct lg_findings out;
};

static struct lg_event destroy(enum lg_op op, const char *target)
{
	return (struct lg_event){ .kind = LG_EV_DESTRUCTIVE,
				  .source = LG_SRC_SECCOMP,
				  .op = op,
				  .cls = LG_CLASS_DESTROY,
				  .pid = 42,
				  .exe = "rm",
				  .target = target };
}

/* Feeds an unlink of target at time t. */
static enum lg_verdict feed_at(struct fixture *fx, uint64_t t,
			       const char *target)
{
	struct lg_event ev = destroy(LG_OP_UNLINK, target);

	fx->out.n = 0;
	fx->env.now_ms = t;
	return lg_volumetric_feed(fx->d, &ev, &fx->env, &fx->out);
}

static int fx_setup_cfg(void **state, unsigned max, uint64_t window,
			enum lg_verdict action)
{
	static struct fixture fx;
	/* steer_at = max: no notes here (test_note_one_short covers them) */
	struct lg_detector_cfg cfg = { max, window, action, max };

	memset(&fx, 0, sizeof(fx));
	fx.d = lg_volumetric_new(&cfg);
	if (!fx.d)
		return -1;
	fx.env.restored = world_restored;
	fx.env.ctx = &fx.w;
	*state = &fx;
	return 0;
}

/* The shipped defaults: 3 per 60 s, kill. */
static int setup_default(void **state)
{
	return fx_setup_cfg(state, 3, 60000, LG_KILL);
}

/* Observe mode: the action is only a warning and the run goes on. */
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

	lg_volumetric_free(fx->d);
	return 0;
}

/*
 * Steer (issue 28): the count one short of max tells the model, once, and
 * refuses nothing; the trip stays at max.
 */
static void test_note_one_short(void **state)
{
	struct lg_detector_cfg cfg = { 3, 60000, LG_KILL, 0 };
	struct fixture *fx = *state;
	struct lg_volumetric *d = lg_volumetric_new(&cfg);
	struct lg_event ev = destroy(LG_OP_UNLINK, "/p/a");

	assert_non_null(d);
	fx->env.now_ms = 1000;
	fx->out.n = 0;
	assert_int_equal(lg_volumetric_feed(d, &ev, &fx->env, &fx->out),
			 LG_ALLOW);
	assert_int_equal(fx->out.n, 0);
	ev.target = "/p/b";
	assert_int_equal(lg_volumetric_feed(d, &ev, &fx->env, &fx->out),
			 LG_ALLOW);
	assert_int_equal(fx->out.n, 1);
	assert_true(fx->out.f[0].note);
	assert_int_equal(fx->out.f[0].action, LG_ALLOW);
	assert_string_equal(fx->out.f[0].reason, "volume_near");
	assert_non_null(strstr(fx->out.f[0].summary, "at 3, lgrun stops"));
	assert_true(lg_finding_steers(&fx->out.f[0]));
	fx->out.n = 0;
	ev.target = "/p/c";
	assert_int_equal(lg_volumetric_feed(d, &ev, &fx->env, &fx->out),
			 LG_KILL);
	assert_int_equal(fx->out.n, 1);
	assert_false(fx->out.f[0].note);
	lg_volumetric_free(d);
	/* a removal whose target came back is no step toward it: no note */
	d = lg_volumetric_new(&cfg);
	fx->out.n = 0;
	ev.target = "/p/x";
	lg_volumetric_feed(d, &ev, &fx->env, &fx->out);
	world_restore(&fx->w, "/p/x");
	ev.target = "/p/y";
	assert_int_equal(lg_volumetric_feed(d, &ev, &fx->env, &fx->out),
			 LG_ALLOW);
	assert_int_equal(fx->out.n, 0);
	lg_volumetric_free(d);
	/* steer_at 1: at the first; steer_at >= max: never */
	cfg.steer_at = 1;
	d = lg_volumetric_new(&cfg);
	fx->out.n = 0;
	ev.target = "/p/d";
	lg_volumetric_feed(d, &ev, &fx->env, &fx->out);
	assert_int_equal(fx->out.n, 1);
	assert_true(fx->out.f[0].note);
	lg_volumetric_free(d);
}

static void test_third_trips(void **state)
{
	struct fixture *fx = *state;
	const struct lg_finding *f = &fx->out.f[0];

	assert_int_equal(feed_at(fx, 1000, "/p/a"), LG_ALLOW);
	assert_int_equal(fx->out.n, 0);
	assert_int_equal(feed_at(fx, 2000, "/p/b"), LG_ALLOW);
	assert_int_equal(fx->out.n, 0);
	assert_int_equal(feed_at(fx, 3000, "/p/c"), LG_KILL);
	assert_int_equal(fx->out.n, 1);
	assert_int_equal(f->action, LG_KILL);
	assert_string_equal(f->rule, "volumetric");
	assert_string_equal(f->reason, "volume_exceeded");
	/* the summary names the count and the refused target */
	assert_true(strncmp(f->summary, "volume_exceeded, 3 deletes ", 27) ==
		    0);
	assert_non_null(strstr(f->summary, "unlink /p/c"));
	assert_non_null(strstr(f->summary, "limit 3 per 60s"));
}

static void test_summary_names_the_op(void **state)
{
	struct fixture *fx = *state;
	struct lg_event ev = destroy(LG_OP_TRUNCATE, "/p/t");

	fx->env.now_ms = 0;
	for (int i = 0; i < 2; i++)
		assert_int_equal(lg_volumetric_feed(fx->d, &ev, &fx->env,
						    &fx->out),
				 LG_ALLOW);
	ev = destroy(LG_OP_RMDIR, "/p/dir");
	assert_int_equal(lg_volumetric_feed(fx->d, &ev, &fx->env, &fx->out),
			 LG_KILL);
	assert_int_equal(fx->out.n, 1);
	/* two truncations and a removal are not "3 directory removals" */
	assert_non_null(strstr(fx->out.f[0].summary,
			       "3 removals of pre-existing files"));
	assert_non_null(strstr(fx->out.f[0].summary, "rmdir /p/dir"));

	/* the same op three times is named */
	fx->out.n = 0;
	for (int i = 0; i < 3; i++)
		lg_volumetric_feed(fx->d, &ev, &fx->env, &fx->out);
	assert_int_equal(fx->out.n, 1);
	assert_non_null(strstr(fx->out.f[0].summary,
			       "3 directory removals of pre-existing files"));
}

/* Tool deletes are never called files, nor files tool deletes. */
static void test_summary_tool_deletes(void **state)
{
	struct fixture *fx = *state;
	struct lg_event ev = destroy(LG_OP_TOOL_DELETE, "asset_id=a");

	fx->env.now_ms = 0;
	for (int i = 0; i < 3; i++)
		lg_volumetric_feed(fx->d, &ev, &fx->env, &fx->out);
	assert_int_equal(fx->out.n, 1);
	assert_non_null(strstr(fx->out.f[0].summary,
			       "volume_exceeded, 3 tool deletes in "));
	assert_null(strstr(fx->out.f[0].summary, "files"));

	fx->out.n = 0;
	lg_volumetric_feed(fx->d, &ev, &fx->env, &fx->out);
	ev = destroy(LG_OP_UNLINK, "/p/x");
	lg_volumetric_feed(fx->d, &ev, &fx->env, &fx->out);
	lg_volumetric_feed(fx->d, &ev, &fx->env, &fx->out);
	assert_int_equal(fx->out.n, 1);
	assert_non_null(
		strstr(fx->out.f[0].summary,
		       "3 removals (2 of pre-existing files, 1 tool delete)"));
}

/*
 * Remote deletes (issue 38): judged at their answer, so the trip says the
 * last one ran and that remote data cannot be kept; the note one short is
 * flagged remote (its words say nothing was kept); mixed windows spell
 * out the kinds.
 */
static void test_summary_remote_deletes(void **state)
{
	struct lg_detector_cfg cfg = { 3, 60000, LG_KILL, 0 }; /* notes on */
	struct lg_volumetric *d = lg_volumetric_new(&cfg);
	struct lg_guard_env env = { 0 };
	struct lg_findings out = { 0 };
	struct lg_event ev =
		destroy(LG_OP_REMOTE_DELETE, "http://127.0.0.1:8080/items/3");

	(void)state;
	assert_non_null(d);
	ev.happened = true;
	ev.system = "http";
	ev.tool = "DELETE";
	lg_volumetric_feed(d, &ev, &env, &out);
	assert_int_equal(out.n, 0);
	lg_volumetric_feed(d, &ev, &env, &out);
	assert_int_equal(out.n, 1);
	assert_true(out.f[0].note);
	assert_true(out.f[0].remote);
	assert_non_null(strstr(out.f[0].summary,
			       "2 deletes of remote data within 60s"));
	out.n = 0;
	assert_int_equal(lg_volumetric_feed(d, &ev, &env, &out), LG_KILL);
	assert_true(out.f[0].remote);
	assert_non_null(strstr(
		out.f[0].summary,
		"3 deletes of remote data in 0.0s (limit 3 per 60s); the last: DELETE http://127.0.0.1:8080/items/3, answered by its server (http): it ran, and remote data cannot be kept"));
	assert_null(strstr(out.f[0].summary, "refused"));

	/* mixed: the kinds spelled out, and remote all the same */
	out.n = 0;
	lg_volumetric_feed(d, &ev, &env, &out);
	ev = destroy(LG_OP_UNLINK, "/p/x");
	lg_volumetric_feed(d, &ev, &env, &out);
	assert_true(out.n == 1 && out.f[0].note && out.f[0].remote);
	out.n = 0;
	lg_volumetric_feed(d, &ev, &env, &out);
	assert_int_equal(out.n, 1);
	assert_true(out.f[0].remote);
	assert_non_null(strstr(
		out.f[0].summary,
		"3 removals (2 of pre-existing files, 1 of remote data)"));
	/* a window of files alone is not remote */
	out.n = 0;
	for (int i = 0; i < 3; i++)
		lg_volumetric_feed(d, &ev, &env, &out);
	assert_int_equal(out.n, 2);
	assert_false(out.f[0].remote);
	assert_false(out.f[1].remote);
	lg_volumetric_free(d);
}

/*
 * Block devices written over (issue 39 item 8): the trip says what the
 * refused one holds and that a device's content cannot be kept; the
 * finding is flagged device (its note says nothing was kept).
 */
static void test_summary_device_writes(void **state)
{
	struct lg_detector_cfg cfg = { 3, 60000, LG_KILL, 0 }; /* notes on */
	struct lg_volumetric *d = lg_volumetric_new(&cfg);
	struct lg_guard_env env = { 0 };
	struct lg_findings out = { 0 };
	struct lg_event ev = destroy(LG_OP_DEVICE_WRITE, "/dev/loop0");

	(void)state;
	assert_non_null(d);
	ev.system = "an ext4 filesystem";
	ev.exe = "wipefs";
	lg_volumetric_feed(d, &ev, &env, &out);
	ev.target = "/dev/loop1";
	lg_volumetric_feed(d, &ev, &env, &out);
	assert_true(out.n == 1 && out.f[0].note && out.f[0].device);
	assert_false(out.f[0].remote);
	out.n = 0;
	ev.target = "/dev/loop2";
	assert_int_equal(lg_volumetric_feed(d, &ev, &env, &out), LG_KILL);
	assert_true(out.f[0].device);
	assert_non_null(strstr(
		out.f[0].summary,
		"3 writes over block devices holding data in 0.0s (limit 3 per 60s); refused device_write /dev/loop2 (it holds an ext4 filesystem; lgrun cannot keep a block device's content)"));
	/* mixed with files: the kinds spelled out */
	out.n = 0;
	lg_volumetric_feed(d, &ev, &env, &out);
	ev = destroy(LG_OP_UNLINK, "/p/x");
	lg_volumetric_feed(d, &ev, &env, &out);
	out.n = 0;
	lg_volumetric_feed(d, &ev, &env, &out);
	assert_true(out.n == 1 && out.f[0].device);
	assert_non_null(strstr(
		out.f[0].summary,
		"3 removals (2 of pre-existing files, 1 of block devices)"));
	lg_volumetric_free(d);
}

static void test_window_edge_expired(void **state)
{
	struct fixture *fx = *state;

	assert_int_equal(feed_at(fx, 1000, "/p/a"), LG_ALLOW);
	assert_int_equal(feed_at(fx, 2000, "/p/b"), LG_ALLOW);
	/* exactly window_ms after the first: the first no longer counts */
	assert_int_equal(feed_at(fx, 61000, "/p/c"), LG_ALLOW);
	assert_int_equal(fx->out.n, 0);
	/* b and c are still in the window */
	assert_int_equal(feed_at(fx, 61500, "/p/d"), LG_KILL);
}

static void test_window_edge_inside(void **state)
{
	struct fixture *fx = *state;

	assert_int_equal(feed_at(fx, 1000, "/p/a"), LG_ALLOW);
	assert_int_equal(feed_at(fx, 2000, "/p/b"), LG_ALLOW);
	/* one ms before the first expires: it still counts */
	assert_int_equal(feed_at(fx, 60999, "/p/c"), LG_KILL);
	assert_int_equal(fx->out.n, 1);
}

static void test_window_all_expired(void **state)
{
	struct fixture *fx = *state;

	assert_int_equal(feed_at(fx, 0, "/p/a"), LG_ALLOW);
	assert_int_equal(feed_at(fx, 10, "/p/b"), LG_ALLOW);
	assert_int_equal(feed_at(fx, 500000, "/p/c"), LG_ALLOW);
	assert_int_equal(feed_at(fx, 500001, "/p/d"), LG_ALLOW);
	assert_int_equal(feed_at(fx, 500002, "/p/e"), LG_KILL);
}

static void test_clock_backwards(void **state)
{
	struct fixture *fx = *state;

	assert_int_equal(feed_at(fx, 100000, "/p/a"), LG_ALLOW);
	/* the clock steps back: a must not expire (or be lost) */
	assert_int_equal(feed_at(fx, 1000, "/p/b"), LG_ALLOW);
	assert_int_equal(feed_at(fx, 1001, "/p/c"), LG_KILL);
	assert_int_equal(fx->out.n, 1);
}

static void test_clock_backwards_no_unexpire(void **state)
{
	struct fixture *fx = *state;

	assert_int_equal(feed_at(fx, 0, "/p/a"), LG_ALLOW);
	assert_int_equal(feed_at(fx, 1000, "/p/b"), LG_ALLOW);
	/* both expire here */
	assert_int_equal(feed_at(fx, 61000, "/p/c"), LG_ALLOW);
	/* back in time: a and b stay expired, only c counts */
	assert_int_equal(feed_at(fx, 500, "/p/d"), LG_ALLOW);
	assert_int_equal(fx->out.n, 0);
	/* the stepped-back op counts from the latest time seen */
	assert_int_equal(feed_at(fx, 121000, "/p/e"), LG_ALLOW);
	assert_int_equal(feed_at(fx, 121001, "/p/f"), LG_ALLOW);
	assert_int_equal(feed_at(fx, 121002, "/p/g"), LG_KILL);
}

static void test_restored_do_not_count(void **state)
{
	struct fixture *fx = *state;

	assert_int_equal(feed_at(fx, 0, "/p/a"), LG_ALLOW);
	world_restore(&fx->w, "/p/a"); /* a exists again: an overwrite */
	assert_int_equal(feed_at(fx, 10, "/p/b"), LG_ALLOW);
	/* the common path asks the world nothing */
	assert_int_equal(fx->w.calls, 0);
	assert_int_equal(feed_at(fx, 20, "/p/c"), LG_ALLOW);
	assert_int_equal(fx->out.n, 0);
	assert_true(fx->w.calls > 0);
	/* b and c are still gone: the next one trips */
	assert_int_equal(feed_at(fx, 30, "/p/d"), LG_KILL);
	assert_int_equal(fx->out.n, 1);
	assert_non_null(strstr(fx->out.f[0].summary, "3 deletes"));
}

static void test_restored_asked_with_op(void **state)
{
	struct fixture *fx = *state;
	struct lg_event ev = destroy(LG_OP_TRUNCATE, "/p/t");

	ev.id = (struct lg_target_id){
		.dev = 8, .ino = 4242, .birth_ns = 5, .mtime_ns = 17
	};
	assert_int_equal(feed_at(fx, 0, "/p/u"), LG_ALLOW);
	fx->env.now_ms = 1;
	assert_int_equal(lg_volumetric_feed(fx->d, &ev, &fx->env, &fx->out),
			 LG_ALLOW);
	assert_int_equal(feed_at(fx, 2, "/p/v"), LG_KILL);
	/* the world was asked about the earlier entries, with their ops */
	assert_int_equal(fx->w.calls, 2);
	assert_string_equal(fx->w.last_target, "/p/t");
	assert_int_equal(fx->w.last_op, LG_OP_TRUNCATE);
	/* and with the file each one was about when it was decided */
	assert_int_equal(fx->w.last_ino, 4242);
}

static void test_restored_all(void **state)
{
	struct fixture *fx = *state;

	/* a tree extracted over itself: every target comes back */
	world_restore(&fx->w, "/p/a");
	world_restore(&fx->w, "/p/b");
	world_restore(&fx->w, "/p/c");
	world_restore(&fx->w, "/p/d");
	for (int i = 0; i < 4; i++) {
		char t[8];

		snprintf(t, sizeof(t), "/p/%c", 'a' + i);
		assert_int_equal(feed_at(fx, (uint64_t)i, t), LG_ALLOW);
	}
	assert_int_equal(fx->out.n, 0);
}

static void test_no_restored_callback(void **state)
{
	struct fixture *fx = *state;

	fx->env.restored = NULL;
	assert_int_equal(feed_at(fx, 0, "/p/a"), LG_ALLOW);
	assert_int_equal(feed_at(fx, 1, "/p/b"), LG_ALLOW);
	assert_int_equal(feed_at(fx, 2, "/p/c"), LG_KILL);
}

static void test_other_classes_never_count(void **state)
{
	static const enum lg_class cls[] = { LG_CLASS_MISSING, LG_CLASS_SESSION,
					     LG_CLASS_IGNORED,
					     LG_CLASS_HARMLESS };
	struct fixture *fx = *state;

	for (size_t i = 0; i < sizeof(cls) / sizeof(cls[0]); i++) {
		for (int k = 0; k < 10; k++) {
			struct lg_event ev = destroy(LG_OP_UNLINK, "/p/x");

			ev.cls = cls[i];
			fx->env.now_ms = (uint64_t)k;
			assert_int_equal(lg_volumetric_feed(fx->d, &ev,
							    &fx->env, &fx->out),
					 LG_ALLOW);
		}
	}
	/* ticks never count either, even with cls left at DESTROY */
	for (int k = 0; k < 10; k++) {
		struct lg_event tick = { .kind = LG_EV_TICK,
					 .source = LG_SRC_TIMER,
					 .cls = LG_CLASS_DESTROY };

		assert_int_equal(lg_volumetric_feed(fx->d, &tick, &fx->env,
						    &fx->out),
				 LG_ALLOW);
	}
	assert_int_equal(fx->out.n, 0);
	/* nothing was counted: the window is empty */
	assert_int_equal(feed_at(fx, 20, "/p/a"), LG_ALLOW);
	assert_int_equal(feed_at(fx, 21, "/p/b"), LG_ALLOW);
	assert_int_equal(feed_at(fx, 22, "/p/c"), LG_KILL);
}

static void test_max0_is_off(void **state)
{
	struct fixture *fx = *state;

	for (int i = 0; i < 1000; i++) {
		char t[32];

		snprintf(t, sizeof(t), "/p/%d", i);
		assert_int_equal(feed_at(fx, (uint64_t)i, t), LG_ALLOW);
	}
	assert_int_equal(fx->out.n, 0);
}

static void test_max1_trips_on_first(void **state)
{
	struct fixture *fx = *state;

	assert_int_equal(feed_at(fx, 0, "/p/a"), LG_DENY);
	assert_int_equal(fx->out.n, 1);
	assert_int_equal(fx->out.f[0].action, LG_DENY);
	assert_true(strncmp(fx->out.f[0].summary, "volume_exceeded, 1 ", 19) ==
		    0);
	assert_int_equal(feed_at(fx, 1, "/p/b"), LG_DENY);
}

/* Observe mode: after a trip the window starts over. */
static void test_window_starts_over_after_trip(void **state)
{
	struct fixture *fx = *state;

	assert_int_equal(feed_at(fx, 0, "/p/a"), LG_ALLOW);
	assert_int_equal(feed_at(fx, 1, "/p/b"), LG_ALLOW);
	assert_int_equal(feed_at(fx, 2, "/p/c"), LG_WARN);
	assert_int_equal(fx->out.f[0].action, LG_WARN);
	assert_int_equal(feed_at(fx, 3, "/p/d"), LG_ALLOW);
	assert_int_equal(fx->out.n, 0);
	assert_int_equal(feed_at(fx, 4, "/p/e"), LG_ALLOW);
	assert_int_equal(feed_at(fx, 5, "/p/f"), LG_WARN);
	assert_non_null(strstr(fx->out.f[0].summary, "3 deletes"));
	assert_non_null(strstr(fx->out.f[0].summary, "/p/f"));
}

/* Many ops over a long time: only the window is kept. */
static void test_long_run(void **state)
{
	struct fixture *fx = *state;
	unsigned trips = 0;

	/* one op every 30 s never has 3 in a 60 s window */
	for (int i = 0; i < 10000; i++) {
		char t[32];

		snprintf(t, sizeof(t), "/p/%d", i);
		if (feed_at(fx, (uint64_t)i * 30000, t) != LG_ALLOW)
			trips++;
	}
	assert_int_equal(trips, 0);
}

static void test_null_target(void **state)
{
	struct fixture *fx = *state;
	struct lg_event ev = destroy(LG_OP_TOOL_DELETE, NULL);

	fx->env.now_ms = 0;
	assert_int_equal(lg_volumetric_feed(fx->d, &ev, &fx->env, &fx->out),
			 LG_ALLOW);
	assert_int_equal(lg_volumetric_feed(fx->d, &ev, &fx->env, &fx->out),
			 LG_ALLOW);
	ev.target = "bucket/key";
	assert_int_equal(lg_volumetric_feed(fx->d, &ev, &fx->env, &fx->out),
			 LG_KILL);
}

#define T(fn, setup) cmocka_unit_test_setup_teardown(fn, setup, teardown)

/*
 * A shared window as a store keeps it (one list, the store's clock), for
 * two supervisors of one session. down: the store does not answer.
 */
struct fake_store {
	char members[16][48];
	uint64_t t[16];
	size_t n;
	uint64_t now;
	bool down;
	unsigned resets;
};

static long fake_count(struct fake_store *f, uint64_t window_ms)
{
	size_t keep = 0;

	for (size_t i = 0; i < f->n; i++)
		if (f->now - f->t[i] < window_ms) {
			memmove(f->members[keep], f->members[i], 48);
			f->t[keep++] = f->t[i];
		}
	f->n = keep;
	return (long)f->n;
}

static long fake_add(void *ctx, const char *window, const char *member,
		     uint64_t window_ms)
{
	struct fake_store *f = ctx;

	(void)window;
	if (f->down)
		return -1;
	fake_count(f, window_ms);
	snprintf(f->members[f->n], 48, "%s", member);
	f->t[f->n++] = f->now;
	return (long)f->n;
}

static long fake_forget(void *ctx, const char *window,
			const char *const *members, size_t n,
			uint64_t window_ms)
{
	struct fake_store *f = ctx;

	(void)window;
	if (f->down)
		return -1;
	for (size_t k = 0; k < n; k++)
		for (size_t i = 0; i < f->n; i++)
			if (strcmp(f->members[i], members[k]) == 0) {
				f->t[i] = 0; /* expired below */
				f->now = f->now ? f->now : 1;
			}
	return fake_count(f, window_ms);
}

static void fake_reset(void *ctx, const char *window)
{
	struct fake_store *f = ctx;

	(void)window;
	f->n = 0;
	f->resets++;
}

static bool restored_b1(void *ctx, const char *target, enum lg_op op,
			const struct lg_target_id *id)
{
	(void)ctx;
	(void)op;
	(void)id;
	return strcmp(target, "/b/1") == 0;
}

/* Two supervisors of one session: the third destroy overall trips. */
static void test_shared_window_counts_all_hosts(void **state)
{
	struct lg_detector_cfg cfg = { 3, 60000, LG_KILL, 3 };
	struct fake_store f = { .now = 1000000 };
	struct lg_shared_windows wa = { fake_add, fake_forget, fake_reset,
					NULL,	  &f,	       "hostA" };
	struct lg_shared_windows wb = { fake_add, fake_forget, fake_reset,
					NULL,	  &f,	       "hostB" };
	struct lg_volumetric *a = lg_volumetric_new(&cfg);
	struct lg_volumetric *b = lg_volumetric_new(&cfg);
	struct lg_guard_env ea = { .now_ms = 10, .shared = &wa };
	struct lg_guard_env eb = { .now_ms = 10, .shared = &wb };
	struct lg_event ev = { .kind = LG_EV_DESTRUCTIVE,
			       .op = LG_OP_UNLINK,
			       .cls = LG_CLASS_DESTROY };
	struct lg_findings out = { 0 };

	(void)state;
	ev.target = "/a/1";
	assert_int_equal(lg_volumetric_feed(a, &ev, &ea, &out), LG_ALLOW);
	ev.target = "/b/1";
	assert_int_equal(lg_volumetric_feed(b, &ev, &eb, &out), LG_ALLOW);
	ev.target = "/a/2";
	assert_int_equal(lg_volumetric_feed(a, &ev, &ea, &out), LG_KILL);
	assert_non_null(strstr(out.f[0].summary, "all supervisors"));
	assert_int_equal(f.resets, 1);
	assert_int_equal(f.n, 0);

	/* an overwrite found on B is forgotten by the shared window too */
	out.n = 0;
	ev.target = "/a/3";
	assert_int_equal(lg_volumetric_feed(a, &ev, &ea, &out), LG_ALLOW);
	ev.target = "/b/1";
	assert_int_equal(lg_volumetric_feed(b, &ev, &eb, &out), LG_ALLOW);
	eb.restored = restored_b1;
	ev.target = "/b/2";
	assert_int_equal(lg_volumetric_feed(b, &ev, &eb, &out), LG_ALLOW);
	assert_int_equal(f.n, 2);

	/* the store gone: each host counts its own (B holds /b/2) */
	f.down = true;
	eb.restored = NULL;
	ev.target = "/b/3";
	assert_int_equal(lg_volumetric_feed(b, &ev, &eb, &out), LG_ALLOW);
	ev.target = "/b/4";
	assert_int_equal(lg_volumetric_feed(b, &ev, &eb, &out), LG_KILL);
	lg_volumetric_free(a);
	lg_volumetric_free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shared_window_counts_all_hosts),
		T(test_note_one_short, setup_default),
		T(test_third_trips, setup_default),
		T(test_summary_names_the_op, setup_default),
		T(test_summary_tool_deletes, setup_default),
		cmocka_unit_test(test_summary_device_writes),
		cmocka_unit_test(test_summary_remote_deletes),
		T(test_window_edge_expired, setup_default),
		T(test_window_edge_inside, setup_default),
		T(test_window_all_expired, setup_default),
		T(test_clock_backwards, setup_default),
		T(test_clock_backwards_no_unexpire, setup_default),
		T(test_restored_do_not_count, setup_default),
		T(test_restored_asked_with_op, setup_default),
		T(test_restored_all, setup_default),
		T(test_no_restored_callback, setup_default),
		T(test_other_classes_never_count, setup_default),
		T(test_max0_is_off, setup_max0),
		T(test_max1_trips_on_first, setup_max1),
		T(test_window_starts_over_after_trip, setup_warn),
		T(test_long_run, setup_default),
		T(test_null_target, setup_default),
	};

	return cmocka_run_group_tests_name("volumetric", tests, NULL, NULL);
}
