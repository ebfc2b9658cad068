// SPDX-License-Identifier: MIT
/* Unit tests for guard/failures.c: failing again and again on one path. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "guard/detectors.h"

struct fixture {
	struct lg_failures *d;
	struct lg_guard_env env;
	struct lg_findings out;
};

static int fx_setup_at(void **state, unsigned max, enum lg_verdict action,
		       unsigned steer_at)
{
	static struct fixture fx;
	struct lg_failures_cfg cfg = { max, action, steer_at };

	memset(&fx, 0, sizeof(fx));
	fx.d = lg_failures_new(&cfg);
	if (!fx.d)
		return -1;
	*state = &fx;
	return 0;
}

static int fx_setup(void **state, unsigned max, enum lg_verdict action)
{
	return fx_setup_at(state, max, action, 0);
}

static int setup_default(void **state)
{
	return fx_setup(state, 4, LG_WARN);
}

static int setup_off(void **state)
{
	return fx_setup(state, 0, LG_WARN);
}

static int setup_one(void **state)
{
	return fx_setup(state, 1, LG_DENY);
}

static int setup_high(void **state)
{
	return fx_setup(state, 100, LG_KILL);
}

static int setup_kill(void **state)
{
	return fx_setup(state, 4, LG_KILL);
}

static int setup_deny_at2(void **state)
{
	return fx_setup_at(state, 4, LG_DENY, 2);
}

static int setup_warn_at2(void **state)
{
	return fx_setup_at(state, 4, LG_WARN, 2);
}

static int setup_kill_at9(void **state)
{
	return fx_setup_at(state, 4, LG_KILL, 9);
}

static int teardown(void **state)
{
	struct fixture *fx = *state;

	lg_failures_free(fx->d);
	return 0;
}

static enum lg_verdict result(struct fixture *fx, enum lg_op op,
			      const char *path, int err)
{
	struct lg_event ev = { .kind = LG_EV_OP_RESULT,
			       .source = LG_SRC_SHIM,
			       .op = op,
			       .pid = 42,
			       .exe = "node",
			       .target = path,
			       .result = err };

	fx->out.n = 0;
	return lg_failures_feed(fx->d, &ev, &fx->env, &fx->out);
}

static enum lg_verdict failed(struct fixture *fx, const char *path)
{
	return result(fx, LG_OP_WRITE, path, EACCES);
}

static enum lg_verdict ok(struct fixture *fx, const char *path)
{
	return result(fx, LG_OP_WRITE, path, 0);
}

static void test_fourth_failure_trips(void **state)
{
	struct fixture *fx = *state;
	const struct lg_finding *f = &fx->out.f[0];

	for (unsigned i = 1; i <= 3; i++) {
		assert_int_equal(failed(fx, "/p/app.py"), LG_ALLOW);
		assert_int_equal(fx->out.n, 0);
		assert_int_equal(lg_failures_count(fx->d, "/p/app.py"), i);
	}
	assert_int_equal(result(fx, LG_OP_WRITE, "/p/app.py", EROFS), LG_WARN);
	assert_int_equal(fx->out.n, 1);
	assert_int_equal(f->action, LG_WARN);
	assert_string_equal(f->rule, "failures");
	assert_string_equal(f->reason, "write_failures");
	assert_string_equal(
		f->summary,
		"write_failures, 4 failed writes on /p/app.py in a row (last: EROFS)");
}

/*
 * git's bookkeeping in its own .git/ (ENOENT probing .git/logs/ORIG_HEAD)
 * is no agent patching a file: neither counted nor told to the model.
 */
static void test_git_dir_is_neutral(void **state)
{
	struct fixture *fx = *state;

	for (unsigned i = 1; i <= 6; i++) {
		assert_int_equal(result(fx, LG_OP_WRITE,
					"/r/.git/logs/ORIG_HEAD", ENOENT),
				 LG_ALLOW);
		assert_int_equal(fx->out.n, 0);
	}
	assert_int_equal(lg_failures_count(fx->d, "/r/.git/logs/ORIG_HEAD"), 0);
	/* a file named .gitignore, or a work tree file, still counts */
	assert_int_equal(failed(fx, "/r/.gitignore"), LG_ALLOW);
	assert_int_equal(lg_failures_count(fx->d, "/r/.gitignore"), 1);
}

/*
 * Devices and the kernel's files are no file the agent patches: a shell
 * without a terminal (Codex's) fails to open /dev/tty at each command.
 */
static void test_kernel_files_are_neutral(void **state)
{
	struct fixture *fx = *state;
	static const char *const paths[] = { "/dev/tty", "/dev/pts/3",
					     "/proc/self/oom_score_adj",
					     "/sys/kernel/mm/x" };

	for (size_t p = 0; p < sizeof(paths) / sizeof(paths[0]); p++)
		for (unsigned i = 1; i <= 6; i++) {
			assert_int_equal(result(fx, LG_OP_WRITE, paths[p],
						ENXIO),
					 LG_ALLOW);
			assert_int_equal(fx->out.n, 0);
		}
	assert_int_equal(lg_failures_tracked(fx->d), 0);
	/* a path that only starts like one counts */
	for (unsigned i = 1; i < 4; i++)
		assert_int_equal(failed(fx, "/device/f"), LG_ALLOW);
	assert_int_equal(failed(fx, "/device/f"), LG_WARN);
	assert_int_equal(fx->out.n, 1);
}

/* A success takes one off: the path is still suspect, not cleared. */
static void test_success_decrements(void **state)
{
	struct fixture *fx = *state;

	assert_int_equal(failed(fx, "/p/a"), LG_ALLOW);
	assert_int_equal(failed(fx, "/p/a"), LG_ALLOW);
	assert_int_equal(failed(fx, "/p/a"), LG_ALLOW);
	assert_int_equal(ok(fx, "/p/a"), LG_ALLOW);
	assert_int_equal(lg_failures_count(fx->d, "/p/a"), 2);
	/* fail, fail, fail, ok, fail: 3, not 4 */
	assert_int_equal(failed(fx, "/p/a"), LG_ALLOW);
	assert_int_equal(fx->out.n, 0);
	assert_int_equal(lg_failures_count(fx->d, "/p/a"), 3);
	/* fail x3, ok, fail, fail: 4 */
	assert_int_equal(failed(fx, "/p/a"), LG_WARN);
	assert_int_equal(fx->out.n, 1);
	assert_non_null(strstr(fx->out.f[0].summary, "4 failed writes"));
}

/* Successes do not bank credit: the count stops at 0. */
static void test_floor_zero(void **state)
{
	struct fixture *fx = *state;

	for (int i = 0; i < 10; i++)
		assert_int_equal(ok(fx, "/p/a"), LG_ALLOW);
	assert_int_equal(lg_failures_tracked(fx->d), 0);
	assert_int_equal(failed(fx, "/p/a"), LG_ALLOW);
	assert_int_equal(ok(fx, "/p/a"), LG_ALLOW);
	assert_int_equal(ok(fx, "/p/a"), LG_ALLOW);
	assert_int_equal(ok(fx, "/p/a"), LG_ALLOW);
	/* a path back at 0 is not kept */
	assert_int_equal(lg_failures_count(fx->d, "/p/a"), 0);
	assert_int_equal(lg_failures_tracked(fx->d), 0);
	assert_int_equal(failed(fx, "/p/a"), LG_ALLOW);
	assert_int_equal(failed(fx, "/p/a"), LG_ALLOW);
	assert_int_equal(failed(fx, "/p/a"), LG_ALLOW);
	assert_int_equal(failed(fx, "/p/a"), LG_WARN);
}

static void test_paths_isolated(void **state)
{
	struct fixture *fx = *state;

	for (int i = 0; i < 3; i++) {
		assert_int_equal(failed(fx, "/p/a"), LG_ALLOW);
		assert_int_equal(failed(fx, "/p/b"), LG_ALLOW);
		/* a success elsewhere does not help /p/a or /p/b */
		assert_int_equal(ok(fx, "/p/c"), LG_ALLOW);
		/* nor does a near name */
		assert_int_equal(ok(fx, "/p/a/"), LG_ALLOW);
		assert_int_equal(ok(fx, "/p/aa"), LG_ALLOW);
	}
	assert_int_equal(fx->out.n, 0);
	assert_int_equal(lg_failures_tracked(fx->d), 2);
	assert_int_equal(failed(fx, "/p/a"), LG_WARN);
	assert_non_null(strstr(fx->out.f[0].summary, " on /p/a in a row"));
	assert_int_equal(lg_failures_count(fx->d, "/p/b"), 3);
	assert_int_equal(failed(fx, "/p/b"), LG_WARN);
	assert_non_null(strstr(fx->out.f[0].summary, " on /p/b in a row"));
}

/* unlink/rmdir of what is not there: not a failed write; no change. */
static void test_enoent_on_delete_is_neutral(void **state)
{
	struct fixture *fx = *state;

	for (int i = 0; i < 10; i++) {
		assert_int_equal(result(fx, LG_OP_UNLINK, "/p/gone", ENOENT),
				 LG_ALLOW);
		assert_int_equal(result(fx, LG_OP_RMDIR, "/p/gone", ENOENT),
				 LG_ALLOW);
	}
	assert_int_equal(fx->out.n, 0);
	assert_int_equal(lg_failures_tracked(fx->d), 0);
	/* nor does it clear a count */
	assert_int_equal(failed(fx, "/p/a"), LG_ALLOW);
	assert_int_equal(failed(fx, "/p/a"), LG_ALLOW);
	assert_int_equal(failed(fx, "/p/a"), LG_ALLOW);
	assert_int_equal(result(fx, LG_OP_UNLINK, "/p/a", ENOENT), LG_ALLOW);
	assert_int_equal(lg_failures_count(fx->d, "/p/a"), 3);
	assert_int_equal(failed(fx, "/p/a"), LG_WARN);
}

/* Other delete errors count, and ENOENT counts for the other ops. */
static void test_enoent_counts_elsewhere(void **state)
{
	struct fixture *fx = *state;

	assert_int_equal(result(fx, LG_OP_UNLINK, "/p/d", EACCES), LG_ALLOW);
	assert_int_equal(result(fx, LG_OP_RMDIR, "/p/d", ENOTEMPTY), LG_ALLOW);
	assert_int_equal(result(fx, LG_OP_UNLINK, "/p/d", EPERM), LG_ALLOW);
	assert_int_equal(result(fx, LG_OP_RMDIR, "/p/d", EBUSY), LG_WARN);
	assert_non_null(strstr(fx->out.f[0].summary, "(last: EBUSY)"));

	/* writing into a directory that is not there, four times */
	for (int i = 0; i < 3; i++)
		assert_int_equal(result(fx, LG_OP_WRITE, "/p/no/f", ENOENT),
				 LG_ALLOW);
	assert_int_equal(result(fx, LG_OP_WRITE, "/p/no/f", ENOENT), LG_WARN);
	assert_non_null(strstr(fx->out.f[0].summary, "(last: ENOENT)"));
	for (int i = 0; i < 3; i++)
		assert_int_equal(result(fx, LG_OP_RENAME, "/p/r", ENOENT),
				 LG_ALLOW);
	assert_int_equal(result(fx, LG_OP_RENAME, "/p/r", ENOENT), LG_WARN);
}

/* A result spelled as a syscall's -errno means the same. */
static void test_negative_errno(void **state)
{
	struct fixture *fx = *state;

	for (int i = 0; i < 5; i++)
		assert_int_equal(result(fx, LG_OP_UNLINK, "/p/a", -ENOENT),
				 LG_ALLOW);
	assert_int_equal(lg_failures_tracked(fx->d), 0);
	for (int i = 0; i < 3; i++)
		assert_int_equal(result(fx, LG_OP_WRITE, "/p/a", -EACCES),
				 LG_ALLOW);
	assert_int_equal(result(fx, LG_OP_WRITE, "/p/a", -EACCES), LG_WARN);
	assert_non_null(strstr(fx->out.f[0].summary, "(last: EACCES)"));
}

/* EINTR: the op did not run, nothing to count. */
static void test_eintr_is_neutral(void **state)
{
	struct fixture *fx = *state;

	failed(fx, "/p/a");
	for (int i = 0; i < 10; i++)
		assert_int_equal(result(fx, LG_OP_WRITE, "/p/a", EINTR),
				 LG_ALLOW);
	assert_int_equal(lg_failures_count(fx->d, "/p/a"), 1);
}

/* Every op on a path counts, and they share the path's count. */
static void test_ops(void **state)
{
	static const enum lg_op ops[] = { LG_OP_WRITE,	    LG_OP_RENAME,
					  LG_OP_TRUNCATE,   LG_OP_SHRINK,
					  LG_OP_OPEN_TRUNC, LG_OP_UNLINK,
					  LG_OP_RMDIR };
	struct fixture *fx = *state;
	char path[32];

	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		snprintf(path, sizeof(path), "/p/op%zu", i);
		for (int k = 0; k < 3; k++)
			assert_int_equal(result(fx, ops[i], path, EIO),
					 LG_ALLOW);
		if (result(fx, ops[i], path, EIO) != LG_WARN)
			fail_msg("op %s did not trip", lg_op_name(ops[i]));
	}
	assert_int_equal(result(fx, LG_OP_WRITE, "/p/mix", EIO), LG_ALLOW);
	assert_int_equal(result(fx, LG_OP_RENAME, "/p/mix", EXDEV), LG_ALLOW);
	assert_int_equal(result(fx, LG_OP_TRUNCATE, "/p/mix", EFBIG), LG_ALLOW);
	assert_int_equal(result(fx, LG_OP_UNLINK, "/p/mix", EROFS), LG_WARN);
	/* no path, no count */
	for (int k = 0; k < 10; k++) {
		assert_int_equal(result(fx, LG_OP_NONE, "/p/x", EIO), LG_ALLOW);
		assert_int_equal(result(fx, LG_OP_TOOL_DELETE, "/p/x", EIO),
				 LG_ALLOW);
	}
	assert_int_equal(lg_failures_tracked(fx->d), 0);
}

/* Only op results: a destructive attempt or a tool call is not one. */
static void test_other_events_ignored(void **state)
{
	static const enum lg_event_kind kinds[] = { LG_EV_DESTRUCTIVE,
						    LG_EV_TICK,
						    LG_EV_TOOL_DONE };
	struct fixture *fx = *state;

	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		for (int k = 0; k < 5; k++) {
			struct lg_event ev = { .kind = kinds[i],
					       .op = LG_OP_WRITE,
					       .target = "/p/a",
					       .result = EACCES };

			assert_int_equal(lg_failures_feed(fx->d, &ev, &fx->env,
							  &fx->out),
					 LG_ALLOW);
		}
	}
	assert_int_equal(fx->out.n, 0);
	assert_int_equal(lg_failures_tracked(fx->d), 0);
}

/* After a trip the path starts over (warn and observe go on). */
static void test_reset_after_trip(void **state)
{
	struct fixture *fx = *state;

	for (int round = 0; round < 3; round++) {
		for (int i = 0; i < 3; i++)
			if (failed(fx, "/p/a") != LG_ALLOW)
				fail_msg("round %d: tripped at %d", round,
					 i + 1);
		assert_int_equal(failed(fx, "/p/a"), LG_WARN);
		assert_int_equal(lg_failures_count(fx->d, "/p/a"), 0);
		assert_int_equal(lg_failures_tracked(fx->d), 0);
	}
}

static void test_max0_is_off(void **state)
{
	struct fixture *fx = *state;

	for (int i = 0; i < 100; i++)
		assert_int_equal(failed(fx, "/p/a"), LG_ALLOW);
	assert_int_equal(fx->out.n, 0);
	assert_int_equal(lg_failures_tracked(fx->d), 0);
}

static void test_max1_trips_every_failure(void **state)
{
	struct fixture *fx = *state;

	assert_int_equal(ok(fx, "/p/a"), LG_ALLOW);
	assert_int_equal(failed(fx, "/p/a"), LG_DENY);
	assert_string_equal(
		fx->out.f[0].summary,
		"write_failures, 1 failed writes on /p/a in a row (last: EACCES)");
	assert_int_equal(failed(fx, "/p/a"), LG_DENY);
	assert_int_equal(lg_failures_tracked(fx->d), 0);
}

/* Many failing paths: at most LG_FAILURES_MAX_PATHS, the least recent go. */
static void test_memory_bounded(void **state)
{
	struct fixture *fx = *state;
	char path[32];
	unsigned hot = 0;

	assert_int_equal(failed(fx, "/p/hot"), LG_ALLOW);
	hot++;
	for (int i = 0; i < 20000; i++) {
		snprintf(path, sizeof(path), "/p/f%d", i);
		assert_int_equal(failed(fx, path), LG_ALLOW);
		if (lg_failures_tracked(fx->d) > LG_FAILURES_MAX_PATHS)
			fail_msg("%zu paths tracked after %d",
				 lg_failures_tracked(fx->d), i);
		/* a path that keeps failing keeps its count */
		if (i % 500 == 0) {
			assert_int_equal(failed(fx, "/p/hot"), LG_ALLOW);
			hot++;
		}
	}
	assert_int_equal(lg_failures_tracked(fx->d), LG_FAILURES_MAX_PATHS);
	assert_int_equal(lg_failures_count(fx->d, "/p/hot"), hot);
	/* the oldest went, the newest stayed */
	assert_int_equal(lg_failures_count(fx->d, "/p/f0"), 0);
	assert_int_equal(lg_failures_count(fx->d, "/p/f18000"), 0);
	assert_int_equal(lg_failures_count(fx->d, "/p/f19999"), 1);
	assert_int_equal(lg_failures_count(fx->d, "/p/f18977"), 1);
	/* successes make room */
	for (int i = 19000; i < 20000; i++) {
		snprintf(path, sizeof(path), "/p/f%d", i);
		assert_int_equal(ok(fx, path), LG_ALLOW);
	}
	assert_int_equal(lg_failures_tracked(fx->d),
			 LG_FAILURES_MAX_PATHS - 1000);
	/* and the table still counts */
	for (unsigned i = 1; i < 100; i++)
		assert_int_equal(failed(fx, "/p/new"), LG_ALLOW);
	assert_int_equal(failed(fx, "/p/new"), LG_KILL);
}

/* The summary stays whole with a long path; unknown errnos by number. */
static void test_summary_long_path(void **state)
{
	struct fixture *fx = *state;
	char *path = malloc(3002);
	const char *s;

	assert_non_null(path);
	path[0] = '/';
	memset(path + 1, 'd', 3000);
	path[3001] = '\0';
	for (int i = 0; i < 3; i++)
		failed(fx, path);
	assert_int_equal(result(fx, LG_OP_WRITE, path, 4000), LG_WARN);
	s = fx->out.f[0].summary;
	assert_true(strncmp(s, "write_failures, 4 failed writes on /ddd", 39) ==
		    0);
	assert_non_null(strstr(s, "d\xe2\x80\xa6 in a row (last: errno 4000)"));
	assert_true(strlen(s) < LG_SUMMARY_MAX - 1);
	free(path);
}

/*
 * Seed 004 with the default action warn: the firing itself is the note
 * (the correction when it fires), nothing before it.
 */
static void test_warn_notes_at_the_firing(void **state)
{
	struct fixture *fx = *state;
	const struct lg_finding *f = &fx->out.f[0];

	for (unsigned i = 1; i <= 3; i++) {
		assert_int_equal(failed(fx, "/p/app.py"), LG_ALLOW);
		assert_int_equal(fx->out.n, 0);
	}
	assert_int_equal(failed(fx, "/p/app.py"), LG_WARN);
	assert_int_equal(fx->out.n, 1);
	assert_true(f->note);
	assert_true(lg_finding_steers(f));
	assert_int_equal(f->then, LG_WARN);
	assert_int_equal(f->left, 0);
}

/*
 * The ladder (issue 28): with kill, the note comes one failure short of
 * max, saying what comes next; the kill at max is no note. The path starts
 * over after it, and so does its ladder.
 */
static void test_kill_notes_one_short(void **state)
{
	struct fixture *fx = *state;
	const struct lg_finding *f = &fx->out.f[0];

	for (int round = 0; round < 2; round++) {
		for (unsigned i = 1; i <= 2; i++) {
			assert_int_equal(failed(fx, "/p/app.py"), LG_ALLOW);
			assert_int_equal(fx->out.n, 0);
		}
		assert_int_equal(failed(fx, "/p/app.py"), LG_ALLOW);
		assert_int_equal(fx->out.n, 1);
		assert_true(f->note);
		assert_true(lg_finding_steers(f));
		assert_int_equal(f->action, LG_ALLOW);
		assert_string_equal(f->rule, "failures");
		assert_string_equal(f->reason, "write_failures_near");
		assert_int_equal(f->then, LG_KILL);
		assert_int_equal(f->left, 1);
		assert_string_equal(
			f->summary,
			"3 failed writes on /p/app.py in a row (last: EACCES); at 4, lgrun stops the session");
		assert_int_equal(failed(fx, "/p/app.py"), LG_KILL);
		assert_int_equal(fx->out.n, 1);
		assert_false(f->note);
		assert_false(lg_finding_steers(f));
		assert_string_equal(f->reason, "write_failures");
		assert_int_equal(lg_failures_count(fx->d, "/p/app.py"), 0);
	}
	/* a success takes the count below the note's level again */
	for (unsigned i = 1; i <= 2; i++)
		assert_int_equal(failed(fx, "/p/b"), LG_ALLOW);
	assert_int_equal(ok(fx, "/p/b"), LG_ALLOW);
	assert_int_equal(failed(fx, "/p/b"), LG_ALLOW);
	assert_int_equal(fx->out.n, 0);
	assert_int_equal(failed(fx, "/p/b"), LG_ALLOW);
	assert_int_equal(fx->out.n, 1);
	assert_true(f->note);
}

/* An explicit steer_at: the note at that failure, how many are left. */
static void test_steer_at_explicit(void **state)
{
	struct fixture *fx = *state;
	const struct lg_finding *f = &fx->out.f[0];

	assert_int_equal(failed(fx, "/p/a"), LG_ALLOW);
	assert_int_equal(fx->out.n, 0);
	assert_int_equal(failed(fx, "/p/a"), LG_ALLOW);
	assert_int_equal(fx->out.n, 1);
	assert_true(f->note);
	assert_int_equal(f->then, LG_DENY);
	assert_int_equal(f->left, 2);
	assert_string_equal(
		f->summary,
		"2 failed writes on /p/a in a row (last: EACCES); at 4, lgrun records a refusal (the write failed already)");
	assert_int_equal(failed(fx, "/p/a"), LG_ALLOW);
	assert_int_equal(fx->out.n, 0);
	assert_int_equal(failed(fx, "/p/a"), LG_DENY);
	assert_false(f->note);
	assert_false(lg_finding_steers(f));
}

/* With warn and steer_at 2: the note at 2, the warning at 4 says no more. */
static void test_warn_steer_at_earlier(void **state)
{
	struct fixture *fx = *state;
	const struct lg_finding *f = &fx->out.f[0];

	assert_int_equal(failed(fx, "/p/a"), LG_ALLOW);
	assert_int_equal(failed(fx, "/p/a"), LG_ALLOW);
	assert_int_equal(fx->out.n, 1);
	assert_true(f->note);
	assert_int_equal(f->then, LG_WARN);
	assert_int_equal(f->left, 2);
	assert_int_equal(failed(fx, "/p/a"), LG_ALLOW);
	assert_int_equal(failed(fx, "/p/a"), LG_WARN);
	assert_false(lg_finding_steers(f));
}

/* steer_at at or past max: the note comes with the action itself. */
static void test_steer_at_past_max(void **state)
{
	struct fixture *fx = *state;
	const struct lg_finding *f = &fx->out.f[0];

	for (unsigned i = 1; i <= 3; i++) {
		assert_int_equal(failed(fx, "/p/a"), LG_ALLOW);
		assert_int_equal(fx->out.n, 0);
	}
	assert_int_equal(failed(fx, "/p/a"), LG_KILL);
	assert_true(f->note);
	assert_true(lg_finding_steers(f));
	assert_int_equal(f->left, 0);
}

static void test_null_target(void **state)
{
	struct fixture *fx = *state;

	for (int i = 0; i < 3; i++)
		assert_int_equal(failed(fx, NULL), LG_ALLOW);
	assert_int_equal(failed(fx, NULL), LG_WARN);
}

#define T(fn, setup) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_fourth_failure_trips, setup_default),
		T(test_success_decrements, setup_default),
		T(test_floor_zero, setup_default),
		T(test_paths_isolated, setup_default),
		T(test_enoent_on_delete_is_neutral, setup_default),
		T(test_enoent_counts_elsewhere, setup_default),
		T(test_negative_errno, setup_default),
		T(test_eintr_is_neutral, setup_default),
		T(test_ops, setup_default),
		T(test_git_dir_is_neutral, setup_default),
		T(test_kernel_files_are_neutral, setup_default),
		T(test_other_events_ignored, setup_default),
		T(test_reset_after_trip, setup_default),
		T(test_max0_is_off, setup_off),
		T(test_max1_trips_every_failure, setup_one),
		T(test_memory_bounded, setup_high),
		T(test_summary_long_path, setup_default),
		T(test_null_target, setup_default),
		T(test_warn_notes_at_the_firing, setup_default),
		T(test_kill_notes_one_short, setup_kill),
		T(test_steer_at_explicit, setup_deny_at2),
		T(test_warn_steer_at_earlier, setup_warn_at2),
		T(test_steer_at_past_max, setup_kill_at9),
	};

	return cmocka_run_group_tests_name("failures", tests, NULL, NULL);
}
