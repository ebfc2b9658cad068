// SPDX-License-Identifier: MIT
/* Unit tests for classify.c: what a destructive attempt would destroy. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "guard/classify.h"
#include "lib/glob.h"
#include "config/config.h"

#define SEC 1000000000LL
#define START (1700000000LL * SEC) /* session start, CLOCK_REALTIME ns */
#define BEFORE (START - 3600 * SEC)
#define AFTER (START + 5 * SEC)

/* A regular pre-existing, non-empty file on a filesystem with birth times. */
static struct lg_facts old_file(void)
{
	return (struct lg_facts){
		.exists = true,
		.has_btime = true,
		.btime_ns = BEFORE,
		.ctime_ns = BEFORE,
		.mtime_ns = BEFORE,
		.size = 4096,
	};
}

static enum lg_class classify(enum lg_op op, const struct lg_facts *f,
			      const char *path, const char *exe)
{
	return lg_classify(op, f, path, exe, NULL, 0, START);
}

/* Up to four rules built the way the config builds them. */
struct ruleset {
	struct lg_ignore_rule r[4];
	size_t n;
};

static void rules_add(struct ruleset *rs, const char *program, const char *glob)
{
	assert_true(rs->n < sizeof(rs->r) / sizeof(rs->r[0]));
	assert_int_equal(lg_ignore_rule_init(&rs->r[rs->n], program, glob), 0);
	rs->n++;
}

static void rules_free(struct ruleset *rs)
{
	for (size_t i = 0; i < rs->n; i++)
		lg_ignore_rule_free(&rs->r[i]);
	rs->n = 0;
}

static void test_missing(void **state)
{
	struct lg_facts f = old_file();

	(void)state;
	f.exists = false;
	assert_int_equal(classify(LG_OP_UNLINK, &f, "/p/a", "rm"),
			 LG_CLASS_MISSING);
	assert_int_equal(classify(LG_OP_RMDIR, &f, "/p/d", "rmdir"),
			 LG_CLASS_MISSING);
	assert_int_equal(classify(LG_OP_TRUNCATE, &f, "/p/a", "sh"),
			 LG_CLASS_MISSING);
	/* missing wins over an ignore rule: the op will fail anyway */
	{
		struct ruleset rs = { .n = 0 };

		rules_add(&rs, NULL, "*.o");
		assert_int_equal(lg_classify(LG_OP_UNLINK, &f, "/p/a.o", "rm",
					     rs.r, rs.n, START),
				 LG_CLASS_MISSING);
		rules_free(&rs);
	}
}

static void test_destroy(void **state)
{
	static const enum lg_op ops[] = { LG_OP_UNLINK, LG_OP_RMDIR,
					  LG_OP_TRUNCATE, LG_OP_OPEN_TRUNC };
	struct lg_facts f = old_file();

	(void)state;
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		assert_int_equal(classify(ops[i], &f, "/p/a", "rm"),
				 LG_CLASS_DESTROY);
	/* an empty directory's removal too: a layout someone kept */
	f.is_dir = true;
	assert_int_equal(classify(LG_OP_RMDIR, &f, "/p/d", "rm"),
			 LG_CLASS_DESTROY);
}

/*
 * A name with no data behind it (issue 13: Codex clears its stale runtime
 * links at start): a symlink, an empty file. Their truncation is harmless
 * as before; an attempt on them is still an attempt (same target).
 */
static void test_no_data(void **state)
{
	struct lg_facts f = old_file();

	(void)state;
	f.size = 0;
	assert_int_equal(classify(LG_OP_UNLINK, &f, "/p/.lock", "codex"),
			 LG_CLASS_NO_DATA);
	assert_int_equal(classify(LG_OP_TRUNCATE, &f, "/p/.lock", "sh"),
			 LG_CLASS_HARMLESS);
	f = old_file();
	f.is_symlink = true;
	f.size = 119; /* the length of its target's path */
	assert_int_equal(classify(LG_OP_UNLINK, &f, "/p/apply_patch", "codex"),
			 LG_CLASS_NO_DATA);
	/* the session's own, ignored and missing come first */
	f.btime_ns = AFTER;
	assert_int_equal(classify(LG_OP_UNLINK, &f, "/p/apply_patch", "codex"),
			 LG_CLASS_SESSION);
	assert_string_equal(lg_class_name(LG_CLASS_NO_DATA), "no_data");
}

/*
 * Emptying is destroying (issue 27): a pre-existing file the session
 * emptied with an O_TRUNC open that no rule counted (its content is kept)
 * is still pre-existing data when it is removed, empty as it looks.
 */
static void test_emptied_then_removed(void **state)
{
	struct lg_facts f = old_file();

	(void)state;
	f.size = 0;
	f.emptied = true;
	assert_int_equal(classify(LG_OP_UNLINK, &f, "/p/data.csv", "rm"),
			 LG_CLASS_DESTROY);
	/* another name still holds it, or the session made it: as before */
	f.nlink = 2;
	assert_int_equal(classify(LG_OP_UNLINK, &f, "/p/data.csv", "rm"),
			 LG_CLASS_LINKED);
	f.nlink = 1;
	f.btime_ns = AFTER;
	assert_int_equal(classify(LG_OP_UNLINK, &f, "/p/data.csv", "rm"),
			 LG_CLASS_SESSION);
	/* truncating it again loses nothing more */
	f = old_file();
	f.size = 0;
	f.emptied = true;
	assert_int_equal(classify(LG_OP_TRUNCATE, &f, "/p/data.csv", "sh"),
			 LG_CLASS_HARMLESS);
}

static void test_session_created_btime(void **state)
{
	struct lg_facts f = old_file();

	(void)state;
	f.btime_ns = AFTER;
	assert_int_equal(classify(LG_OP_UNLINK, &f, "/p/a", "rm"),
			 LG_CLASS_SESSION);
	assert_int_equal(classify(LG_OP_TRUNCATE, &f, "/p/a", "rm"),
			 LG_CLASS_SESSION);
	/* with a birth time, a recent ctime does not make it the session's */
	f = old_file();
	f.ctime_ns = AFTER;
	assert_int_equal(classify(LG_OP_UNLINK, &f, "/p/a", "rm"),
			 LG_CLASS_DESTROY);
	/* one ns either side of the start */
	f = old_file();
	f.btime_ns = START - 1;
	assert_int_equal(classify(LG_OP_UNLINK, &f, "/p/a", "rm"),
			 LG_CLASS_DESTROY);
	f.btime_ns = START + 1;
	assert_int_equal(classify(LG_OP_UNLINK, &f, "/p/a", "rm"),
			 LG_CLASS_SESSION);
}

static void test_session_created_ctime_fallback(void **state)
{
	struct lg_facts f = old_file();

	(void)state;
	f.has_btime = false;
	f.btime_ns = BEFORE; /* ignored without has_btime */
	f.ctime_ns = AFTER;
	assert_int_equal(classify(LG_OP_UNLINK, &f, "/p/a", "rm"),
			 LG_CLASS_SESSION);
	f.ctime_ns = BEFORE;
	f.btime_ns = AFTER; /* ignored without has_btime */
	assert_int_equal(classify(LG_OP_UNLINK, &f, "/p/a", "rm"),
			 LG_CLASS_DESTROY);
}

static void test_preexisting(void **state)
{
	static const struct {
		bool has_btime;
		int64_t btime, ctime;
		bool want;
	} tc[] = {
		{ true, BEFORE, BEFORE, true },	 { true, BEFORE, AFTER, true },
		{ true, AFTER, BEFORE, false },	 { true, AFTER, AFTER, false },
		{ false, BEFORE, BEFORE, true }, { false, AFTER, BEFORE, true },
		{ false, BEFORE, AFTER, false }, { false, AFTER, AFTER, false },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(tc) / sizeof(tc[0]); i++) {
		struct lg_facts f = { .exists = true,
				      .has_btime = tc[i].has_btime,
				      .btime_ns = tc[i].btime,
				      .ctime_ns = tc[i].ctime };

		if (lg_facts_preexisting(&f, START) != tc[i].want)
			fail_msg("case %zu: want %d", i, tc[i].want);
	}
}

static void test_harmless(void **state)
{
	struct lg_facts f = old_file();

	(void)state;
	/* truncating an empty file loses nothing */
	f.size = 0;
	assert_int_equal(classify(LG_OP_TRUNCATE, &f, "/p/a", "sh"),
			 LG_CLASS_HARMLESS);
	assert_int_equal(classify(LG_OP_OPEN_TRUNC, &f, "/p/a", "sh"),
			 LG_CLASS_HARMLESS);
	/* ... but a non-empty one does */
	f.size = 1;
	assert_int_equal(classify(LG_OP_TRUNCATE, &f, "/p/a", "sh"),
			 LG_CLASS_DESTROY);
	assert_int_equal(classify(LG_OP_OPEN_TRUNC, &f, "/p/a", "sh"),
			 LG_CLASS_DESTROY);
	/* shrinking keeps data */
	f.size = 1 << 20;
	assert_int_equal(classify(LG_OP_SHRINK, &f, "/p/a", "sh"),
			 LG_CLASS_HARMLESS);
	/* ftruncate on a file that is already unlinked */
	f.fd_deleted = true;
	assert_int_equal(classify(LG_OP_TRUNCATE, &f, "/p/a", "sh"),
			 LG_CLASS_HARMLESS);
	/* rmdir of a non-empty directory fails and destroys nothing */
	f = old_file();
	f.nonempty_dir = true;
	assert_int_equal(classify(LG_OP_RMDIR, &f, "/p/d", "rmdir"),
			 LG_CLASS_HARMLESS);
	f.nonempty_dir = false;
	assert_int_equal(classify(LG_OP_RMDIR, &f, "/p/d", "rmdir"),
			 LG_CLASS_DESTROY);
	/* another hard link holds the data; the last name counts */
	f = old_file();
	f.nlink = 2;
	assert_int_equal(classify(LG_OP_UNLINK, &f, "/p/a", "rm"),
			 LG_CLASS_LINKED);
	f.nlink = 1;
	assert_int_equal(classify(LG_OP_UNLINK, &f, "/p/a", "rm"),
			 LG_CLASS_DESTROY);
	/* truncating one name empties every name */
	f.nlink = 2;
	assert_int_equal(classify(LG_OP_TRUNCATE, &f, "/p/a", "sh"),
			 LG_CLASS_DESTROY);
}

static void test_ignored(void **state)
{
	struct ruleset rs = { .n = 0 };
	const struct lg_ignore_rule *rules = rs.r;
	struct lg_facts f = old_file();

	(void)state;
	rules_add(&rs, NULL, "*.o");
	rules_add(&rs, NULL, "/tmp/**");
	assert_int_equal(lg_classify(LG_OP_UNLINK, &f, "/p/x.o", "rm", rules, 2,
				     START),
			 LG_CLASS_IGNORED);
	assert_int_equal(lg_classify(LG_OP_UNLINK, &f, "/tmp/a/b", NULL, rules,
				     2, START),
			 LG_CLASS_IGNORED);
	assert_int_equal(lg_classify(LG_OP_UNLINK, &f, "/p/x.c", "rm", rules, 2,
				     START),
			 LG_CLASS_DESTROY);
	/* ignored wins over harmless */
	f.size = 0;
	assert_int_equal(lg_classify(LG_OP_TRUNCATE, &f, "/p/x.o", "rm", rules,
				     2, START),
			 LG_CLASS_IGNORED);
	/* session-created or ignored: either way it does not count */
	f.btime_ns = AFTER;
	assert_int_not_equal(lg_classify(LG_OP_UNLINK, &f, "/p/x.o", "rm",
					 rules, 2, START),
			     LG_CLASS_DESTROY);
	/* no rules at all */
	f = old_file();
	assert_int_equal(lg_classify(LG_OP_UNLINK, &f, "/p/x.o", "rm", NULL, 0,
				     START),
			 LG_CLASS_DESTROY);
	rules_free(&rs);
}

static void test_program_scoped_rule(void **state)
{
	struct ruleset rs = { .n = 0 };
	const struct lg_ignore_rule *rules = rs.r;
	struct lg_facts f = old_file();
	const char *obj = "/r/.git/objects/ab/cdef";

	(void)state;
	rules_add(&rs, "git", "**/.git/**");
	rules_add(&rs, NULL, "*.lock");
	assert_int_equal(lg_classify(LG_OP_UNLINK, &f, obj, "git", rules, 2,
				     START),
			 LG_CLASS_IGNORED);
	assert_int_equal(lg_classify(LG_OP_UNLINK, &f, obj, "rm", rules, 2,
				     START),
			 LG_CLASS_DESTROY);
	assert_int_equal(lg_classify(LG_OP_UNLINK, &f, obj, NULL, rules, 2,
				     START),
			 LG_CLASS_DESTROY);
	/* a program name is matched exactly */
	assert_int_equal(lg_classify(LG_OP_UNLINK, &f, obj, "gitk", rules, 2,
				     START),
			 LG_CLASS_DESTROY);
	/* git's rule covers only what its glob covers */
	assert_int_equal(lg_classify(LG_OP_UNLINK, &f, "/r/src/main.c", "git",
				     rules, 2, START),
			 LG_CLASS_DESTROY);

	/* lg_ignored returns the first rule that covers */
	assert_ptr_equal(lg_ignored(rules, 2, obj, "git"), &rules[0]);
	assert_null(lg_ignored(rules, 2, obj, "rm"));
	assert_ptr_equal(lg_ignored(rules, 2, "/r/.git/index.lock", "rm"),
			 &rules[1]);
	assert_ptr_equal(lg_ignored(rules, 2, "/r/.git/index.lock", "git"),
			 &rules[0]);
	assert_null(lg_ignored(rules, 0, obj, "git"));

	/* whether the program matters for a path */
	assert_true(lg_ignored_by_program_rule(rules, 2, LG_OP_UNLINK, obj));
	assert_false(lg_ignored_by_program_rule(rules, 2, LG_OP_UNLINK,
						"/r/x.lock"));
	assert_false(lg_ignored_by_program_rule(rules, 2, LG_OP_UNLINK,
						"/r/src/main.c"));
	rules_free(&rs);
}

/*
 * The memo f.unignored (the session's second classification of a removal):
 * without a program, the rules are not matched again; a program's scoped
 * rules still are.
 */
static void test_unignored_memo(void **state)
{
	struct ruleset rs = { .n = 0 };
	const struct lg_ignore_rule *rules = rs.r;
	struct lg_facts f = old_file();
	const char *obj = "/r/.git/objects/ab/cdef";

	(void)state;
	rules_add(&rs, "git", "**/.git/**");
	rules_add(&rs, NULL, "*.o");
	assert_int_equal(lg_classify(LG_OP_UNLINK, &f, "/p/x.o", NULL, rules, 2,
				     START),
			 LG_CLASS_IGNORED);
	f.unignored = true; /* what the memo says is what is believed */
	assert_int_equal(lg_classify(LG_OP_UNLINK, &f, "/p/x.o", NULL, rules, 2,
				     START),
			 LG_CLASS_DESTROY);
	assert_int_equal(lg_classify(LG_OP_UNLINK, &f, obj, "git", rules, 2,
				     START),
			 LG_CLASS_IGNORED);
	rules_free(&rs);
}

static void test_tool_delete_always_destroys(void **state)
{
	struct ruleset rs = { .n = 0 };
	const struct lg_ignore_rule *r = rs.r;
	struct lg_facts f = { 0 }; /* nothing known: a tool-level target */

	(void)state;
	rules_add(&rs, NULL, "**");
	assert_int_equal(lg_classify(LG_OP_TOOL_DELETE, &f, "bucket/key",
				     "agent", r, 1, START),
			 LG_CLASS_DESTROY);
	f = old_file();
	f.btime_ns = AFTER;
	f.size = 0;
	assert_int_equal(lg_classify(LG_OP_TOOL_DELETE, &f, "/p/x.o", "agent",
				     r, 1, START),
			 LG_CLASS_DESTROY);
	/* the same rule does cover it for an unlink */
	f = old_file();
	assert_int_equal(lg_classify(LG_OP_UNLINK, &f, "/p/x.o", "rm", r, 1,
				     START),
			 LG_CLASS_IGNORED);
	rules_free(&rs);
}

/* The shipped ignore list, as lgrun uses it: set up per test. */
static int defaults_setup(void **state)
{
	static struct lg_config c;
	struct lg_error err;

	lg_config_init(&c);
	if (lg_config_finish(&c, &err) < 0)
		return -1;
	*state = &c;
	return 0;
}

static int defaults_teardown(void **state)
{
	lg_config_free(*state);
	return 0;
}

/* The ignore rules without any prefilter: what lg_ignored must answer. */
static const struct lg_ignore_rule *
ignored_plain(const struct lg_ignore_rule *r, size_t n, const char *path,
	      const char *exe)
{
	for (size_t i = 0; i < n; i++)
		if ((!r[i].program || (exe && !strcmp(r[i].program, exe))) &&
		    lg_glob_match_path(r[i].glob, path))
			return &r[i];
	return NULL;
}

/*
 * The prefilter (the literal's bytes, then the literal) never turns away
 * a rule that covers: 200,000 paths made of pieces the shipped rules and
 * a few of the test's own name (bytes above 127 among them), each answered
 * as the rules alone answer it.
 */
static void test_ignored_prefilter_exact(void **state)
{
	static const char *const piece[] = {
		"src",
		"node_modules",
		".git",
		"objects",
		"a.o",
		"x.pyc",
		"__pycache__",
		"build",
		"target",
		".venv",
		"f1234",
		"d\xc3\xb6n",
		"d\xc3\xb6nn.tmp",
		"~",
		"a~",
		".#x",
		"core",
		"dist",
		"é",
		"\xff\xfe",
		".cache",
		"tmp",
		"x.swp",
		"lib",
		".o",
		"o.",
		"-",
		"b1~",
		"x*y",
		"auild",
		"Q[z",
		"#a#",
	};
	struct lg_config *defaults = *state;
	struct lg_ignore_rule r[80];
	size_t n = 0, hits = 0;
	unsigned seed = 12345;
	char path[256];

	for (size_t i = 0; i < defaults->n_ignore && n < 70; i++)
		assert_int_equal(lg_ignore_rule_init(
					 &r[n++], defaults->ignore[i].program,
					 defaults->ignore[i].glob),
				 0);
	assert_int_equal(lg_ignore_rule_init(&r[n++], NULL, "d\xc3\xb6nn*"), 0);
	assert_int_equal(lg_ignore_rule_init(&r[n++], "rm", "**/\xff\xfe/"), 0);
	assert_int_equal(lg_ignore_rule_init(&r[n++], NULL, "/tmp/**/core"), 0);
	/* classes, escapes and an unclosed '[' (a literal) */
	assert_int_equal(lg_ignore_rule_init(&r[n++], NULL, "*[0-9]~"), 0);
	assert_int_equal(lg_ignore_rule_init(&r[n++], NULL, "x\\*y"), 0);
	assert_int_equal(lg_ignore_rule_init(&r[n++], NULL, "[ab]uild/"), 0);
	assert_int_equal(lg_ignore_rule_init(&r[n++], NULL, "Q[z"), 0);
	for (int t = 0; t < 200000; t++) {
		size_t len = 0;
		int parts =
			1 + (int)((seed = seed * 1103515245 + 12345) >> 16) % 6;
		const char *exe = (seed >> 8) % 3 == 0 ? "git" :
				  (seed >> 8) % 3 == 1 ? "rm" :
							 NULL;

		path[0] = '\0';
		for (int k = 0; k < parts; k++) {
			seed = seed * 1103515245 + 12345;
			len += (size_t)snprintf(
				path + len, sizeof(path) - len, "/%s",
				piece[(seed >> 16) %
				      (sizeof(piece) / sizeof(piece[0]))]);
		}
		assert_ptr_equal(lg_ignored(r, n, path, exe),
				 ignored_plain(r, n, path, exe));
		hits += lg_ignored(r, n, path, exe) != NULL;
	}
	assert_true(hits > 1000); /* the rules were matched, not only refused */
	for (size_t i = 0; i < n; i++)
		lg_ignore_rule_free(&r[i]);
}

/*
 * With the shipped ignore list, removing a whole pre-existing build or
 * dependency tree (rm -rf node_modules) is not lost data, down to the final
 * rmdir of the (now empty) directory itself. Otherwise
 * "rm -rf node_modules dist build" counts three destroys and trips the
 * default volumetric limit.
 */
static void test_default_ignores_cover_whole_tree(void **state)
{
	static const char *const trees[] = { "/p/node_modules", "/p/build",
					     "/p/dist", "/p/pkg/__pycache__",
					     "/p/.pytest_cache" };
	const struct lg_config *c = *state;
	struct lg_facts f = old_file();

	for (size_t i = 0; i < sizeof(trees) / sizeof(trees[0]); i++) {
		char below[256];

		snprintf(below, sizeof(below), "%s/sub/file", trees[i]);
		assert_int_equal(lg_classify(LG_OP_UNLINK, &f, below, "rm",
					     c->ignore, c->n_ignore, START),
				 LG_CLASS_IGNORED);
		snprintf(below, sizeof(below), "%s/sub", trees[i]);
		assert_int_equal(lg_classify(LG_OP_RMDIR, &f, below, "rm",
					     c->ignore, c->n_ignore, START),
				 LG_CLASS_IGNORED);
		if (lg_classify(LG_OP_RMDIR, &f, trees[i], "rm", c->ignore,
				c->n_ignore, START) != LG_CLASS_IGNORED)
			fail_msg("rmdir %s: not ignored", trees[i]);
	}
}

/* A regular file that happens to be named like a build dir still counts. */
static void test_default_ignores_dir_only(void **state)
{
	const struct lg_config *c = *state;
	struct lg_facts f = old_file();

	assert_int_equal(lg_classify(LG_OP_UNLINK, &f, "/p/build", "rm",
				     c->ignore, c->n_ignore, START),
			 LG_CLASS_DESTROY);
	assert_int_equal(lg_classify(LG_OP_TRUNCATE, &f, "/p/dist", "sh",
				     c->ignore, c->n_ignore, START),
			 LG_CLASS_DESTROY);
	assert_int_equal(lg_classify(LG_OP_UNLINK, &f, "/p/x.o", "rm",
				     c->ignore, c->n_ignore, START),
			 LG_CLASS_IGNORED);
}

/* Package managers prune their own caches and logs (npm on every run). */
static void test_default_ignores_package_caches(void **state)
{
	const struct lg_config *c = *state;
	struct lg_facts f = old_file();
	static const char *const ignored[] = {
		"/root/.npm/_logs/2026-11-22T00_01_33_949Z-debug-0.log",
		"/home/u/.npm/_cacache/tmp/x",
		"/home/u/.cargo/registry/cache/a.crate",
		"/home/u/.m2/repository/org/x.jar",
		"/w/.pnpm-store/v3/files/aa",
	};

	for (size_t i = 0; i < sizeof(ignored) / sizeof(ignored[0]); i++)
		if (lg_classify(LG_OP_UNLINK, &f, ignored[i], "node", c->ignore,
				c->n_ignore, START) != LG_CLASS_IGNORED)
			fail_msg("not ignored: %s", ignored[i]);
	/* a file named like a cache is not a cache */
	assert_int_equal(lg_classify(LG_OP_UNLINK, &f, "/p/.npmrc", "rm",
				     c->ignore, c->n_ignore, START),
			 LG_CLASS_DESTROY);
}

/* The shipped git rule: git may manage .git, nobody else may remove it. */
static void test_default_ignores_git(void **state)
{
	const struct lg_config *c = *state;
	struct lg_facts f = old_file();

	assert_int_equal(lg_classify(LG_OP_UNLINK, &f, "/r/.git/objects/ab/cd",
				     "git", c->ignore, c->n_ignore, START),
			 LG_CLASS_IGNORED);
	assert_int_equal(lg_classify(LG_OP_UNLINK, &f, "/r/.git/objects/ab/cd",
				     "rm", c->ignore, c->n_ignore, START),
			 LG_CLASS_DESTROY);
	assert_int_equal(lg_classify(LG_OP_RMDIR, &f, "/r/.git", "rm",
				     c->ignore, c->n_ignore, START),
			 LG_CLASS_DESTROY);
	assert_int_equal(lg_classify(LG_OP_UNLINK, &f, "/r/.git/index.lock",
				     "rm", c->ignore, c->n_ignore, START),
			 LG_CLASS_IGNORED);
	assert_int_equal(lg_classify(LG_OP_UNLINK, &f,
				     "/r/.git/refs/heads/main.lock", "rm",
				     c->ignore, c->n_ignore, START),
			 LG_CLASS_IGNORED);
	assert_int_equal(lg_classify(LG_OP_UNLINK, &f, "/r/src/main.c", "git",
				     c->ignore, c->n_ignore, START),
			 LG_CLASS_DESTROY);
}

/*
 * Truncation loses content. A touch or an append since the start (the
 * modification time) does not make it the session's (issue 12): bytes from
 * before the start are still there until the session truncates the file.
 * Once it did (WAL checkpoints, state files updated with ftruncate +
 * write), the next truncation, or its removal, loses only the session's
 * own writes.
 */
static void test_truncate_needs_preexisting_content(void **state)
{
	struct lg_facts f = old_file();

	(void)state;
	assert_int_equal(classify(LG_OP_TRUNCATE, &f, "/d/state.json", NULL),
			 LG_CLASS_DESTROY);
	f.mtime_ns = AFTER; /* touch, or a one-byte append */
	assert_int_equal(classify(LG_OP_TRUNCATE, &f, "/d/state.json", NULL),
			 LG_CLASS_DESTROY);
	assert_int_equal(classify(LG_OP_OPEN_TRUNC, &f, "/d/state.json", NULL),
			 LG_CLASS_DESTROY);
	assert_true(lg_facts_content_preexisting(&f, START));
	f.rewritten = true; /* truncated by the session before */
	assert_int_equal(classify(LG_OP_TRUNCATE, &f, "/d/state.json", NULL),
			 LG_CLASS_SESSION);
	assert_int_equal(classify(LG_OP_OPEN_TRUNC, &f, "/d/state.json", NULL),
			 LG_CLASS_SESSION);
	assert_int_equal(classify(LG_OP_UNLINK, &f, "/d/state.json", NULL),
			 LG_CLASS_SESSION);
	assert_false(lg_facts_preexisting(&f, START));
	assert_false(lg_facts_content_preexisting(&f, START));
}

/*
 * sed -i, perl -i, a save by rename: the file at the path is new, born in
 * the session, and holds pre-existing content (inherited).
 */
static void test_inherited_content_counts(void **state)
{
	struct lg_facts f = old_file();

	(void)state;
	f.btime_ns = AFTER;
	f.mtime_ns = AFTER;
	assert_int_equal(classify(LG_OP_UNLINK, &f, "/d/a.txt", NULL),
			 LG_CLASS_SESSION);
	f.inherited = true;
	assert_int_equal(classify(LG_OP_UNLINK, &f, "/d/a.txt", NULL),
			 LG_CLASS_DESTROY);
	assert_int_equal(classify(LG_OP_TRUNCATE, &f, "/d/a.txt", NULL),
			 LG_CLASS_DESTROY);
	f.rewritten = true; /* then the session wrote it from scratch */
	assert_int_equal(classify(LG_OP_UNLINK, &f, "/d/a.txt", NULL),
			 LG_CLASS_SESSION);
}

/* unlink of a directory fails (EISDIR): nothing is lost, however often. */
static void test_unlink_of_dir_is_harmless(void **state)
{
	struct lg_facts f = old_file();

	(void)state;
	f.is_dir = true;
	assert_int_equal(classify(LG_OP_UNLINK, &f, "/d/sub", NULL),
			 LG_CLASS_HARMLESS);
	assert_int_equal(classify(LG_OP_RMDIR, &f, "/d/sub", NULL),
			 LG_CLASS_DESTROY);
}

/* mv to another filesystem: the source's removal after the copy. */
static void test_moved_is_not_lost(void **state)
{
	struct lg_facts f = old_file();

	(void)state;
	f.moved = true;
	assert_int_equal(classify(LG_OP_UNLINK, &f, "/d/a.txt", NULL),
			 LG_CLASS_MOVED);
	f.is_dir = true;
	assert_int_equal(classify(LG_OP_RMDIR, &f, "/d", NULL), LG_CLASS_MOVED);
	/* a truncation is never a move */
	f.is_dir = false;
	assert_int_equal(classify(LG_OP_TRUNCATE, &f, "/d/a.txt", NULL),
			 LG_CLASS_DESTROY);
}

/* A fake object database: what it answers, and how often it was asked. */
struct fake_odb {
	int answer;
	unsigned asked;
	enum lg_op op;
	char path[256];
};

static int fake_recoverable(void *ctx, enum lg_op op, const char *path)
{
	struct fake_odb *db = ctx;

	db->asked++;
	db->op = op;
	snprintf(db->path, sizeof(db->path), "%s", path);
	return db->answer;
}

/*
 * git's own removals of what its object database holds are recoverable;
 * everything else is as before, and the database is asked only about
 * git's unlinks and rmdirs outside .git that would count otherwise.
 */
static void test_git_recoverable(void **state)
{
	static const struct {
		enum lg_op op;
		const char *path, *exe;
		int answer; /* the database's */
		bool session, nonempty, missing;
		enum lg_class want;
		unsigned asked;
	} cases[] = {
		{ LG_OP_UNLINK, "/r/src/a.c", "git", 1, false, false, false,
		  LG_CLASS_RECOVERABLE, 1 },
		{ LG_OP_UNLINK, "/r/src/a.c", "git", 0, false, false, false,
		  LG_CLASS_DESTROY, 1 },
		{ LG_OP_UNLINK, "/r/src/a.c", "git", -EFBIG, false, false,
		  false, LG_CLASS_DESTROY, 1 },
		{ LG_OP_UNLINK, "/r/src/a.c", "rm", 1, false, false, false,
		  LG_CLASS_DESTROY, 0 },
		{ LG_OP_UNLINK, "/r/src/a.c", NULL, 1, false, false, false,
		  LG_CLASS_DESTROY, 0 },
		{ LG_OP_UNLINK, "/r/src/a.c", "git-lfs", 1, false, false, false,
		  LG_CLASS_DESTROY, 0 },
		/* git's own data is never recoverable from itself */
		{ LG_OP_UNLINK, "/r/.git/config", "git", 1, false, false, false,
		  LG_CLASS_DESTROY, 0 },
		{ LG_OP_UNLINK, "/r/.git", "git", 1, false, false, false,
		  LG_CLASS_DESTROY, 0 },
		{ LG_OP_RMDIR, "/r/.git", "git", 1, false, false, false,
		  LG_CLASS_DESTROY, 0 },
		{ LG_OP_UNLINK, "/r/.git/modules/s/HEAD", "git", 1, false,
		  false, false, LG_CLASS_DESTROY, 0 },
		/* names that merely start or end like it are work tree files */
		{ LG_OP_UNLINK, "/r/.gitignore", "git", 1, false, false, false,
		  LG_CLASS_RECOVERABLE, 1 },
		{ LG_OP_UNLINK, "/r/.github/ci.yml", "git", 1, false, false,
		  false, LG_CLASS_RECOVERABLE, 1 },
		{ LG_OP_UNLINK, "/r/x.git/a", "git", 1, false, false, false,
		  LG_CLASS_RECOVERABLE, 1 },
		/* an empty directory of a work tree that git removes */
		{ LG_OP_RMDIR, "/r/src", "git", 1, false, false, false,
		  LG_CLASS_RECOVERABLE, 1 },
		{ LG_OP_RMDIR, "/r/src", "git", 0, false, false, false,
		  LG_CLASS_DESTROY, 1 },
		{ LG_OP_RMDIR, "/r/src", "git", 1, false, true, false,
		  LG_CLASS_HARMLESS, 0 },
		/* truncation is not a removal git makes when switching */
		{ LG_OP_TRUNCATE, "/r/a", "git", 1, false, false, false,
		  LG_CLASS_DESTROY, 0 },
		{ LG_OP_OPEN_TRUNC, "/r/a", "git", 1, false, false, false,
		  LG_CLASS_DESTROY, 0 },
		/* cheaper classes come first: nothing is read */
		{ LG_OP_UNLINK, "/r/a", "git", 1, true, false, false,
		  LG_CLASS_SESSION, 0 },
		{ LG_OP_UNLINK, "/r/a", "git", 1, false, false, true,
		  LG_CLASS_MISSING, 0 },
		{ LG_OP_UNLINK, "/r/a.o", "git", 1, false, false, false,
		  LG_CLASS_IGNORED, 0 },
	};
	struct ruleset rs = { .n = 0 };

	(void)state;
	rules_add(&rs, NULL, "*.o");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct fake_odb db = { .answer = cases[i].answer };
		struct lg_facts f = old_file();

		f.git_recoverable = fake_recoverable;
		f.git_ctx = &db;
		if (cases[i].session)
			f.btime_ns = AFTER;
		f.nonempty_dir = cases[i].nonempty;
		f.exists = !cases[i].missing;
		if (lg_classify(cases[i].op, &f, cases[i].path, cases[i].exe,
				rs.r, rs.n, START) != cases[i].want ||
		    db.asked != cases[i].asked)
			fail_msg("case %zu: %s %s by %s: class %s, asked %u", i,
				 lg_op_name(cases[i].op), cases[i].path,
				 cases[i].exe ? cases[i].exe : "(null)",
				 lg_class_name(lg_classify(
					 cases[i].op, &f, cases[i].path,
					 cases[i].exe, rs.r, rs.n, START)),
				 db.asked);
		if (db.asked) {
			assert_int_equal(db.op, cases[i].op);
			assert_string_equal(db.path, cases[i].path);
		}
	}
	rules_free(&rs);
}

/* Without the question (shim, bpf, tests), git's removals count. */
static void test_git_without_odb(void **state)
{
	struct lg_facts f = old_file();

	(void)state;
	assert_int_equal(classify(LG_OP_UNLINK, &f, "/r/src/a.c", "git"),
			 LG_CLASS_DESTROY);
	assert_false(lg_classify_needs_program(NULL, 0, LG_OP_UNLINK, &f,
					       "/r/src/a.c"));
}

/* When the session must read the program before classifying again. */
static void test_needs_program(void **state)
{
	const struct lg_config *c = *state;
	struct fake_odb db = { .answer = 1 };
	struct lg_facts f = old_file();

	f.git_recoverable = fake_recoverable;
	f.git_ctx = &db;
	assert_true(lg_classify_needs_program(c->ignore, c->n_ignore,
					      LG_OP_UNLINK, &f, "/r/a.c"));
	assert_true(lg_classify_needs_program(c->ignore, c->n_ignore,
					      LG_OP_RMDIR, &f, "/r/src"));
	assert_false(lg_classify_needs_program(c->ignore, c->n_ignore,
					       LG_OP_TRUNCATE, &f, "/r/a.c"));
	/* .git: for the program-scoped ignore rule, not for the database */
	assert_true(lg_classify_needs_program(c->ignore, c->n_ignore,
					      LG_OP_UNLINK, &f,
					      "/r/.git/objects/ab/cd"));
	assert_false(lg_classify_needs_program(NULL, 0, LG_OP_UNLINK, &f,
					       "/r/.git/objects/ab/cd"));
	assert_int_equal(db.asked, 0);
	/* git in .git stays ignored; the database is not asked */
	assert_int_equal(lg_classify(LG_OP_UNLINK, &f, "/r/.git/objects/ab/cd",
				     "git", c->ignore, c->n_ignore, START),
			 LG_CLASS_IGNORED);
	assert_int_equal(db.asked, 0);
}

/*
 * A removal by git of content not in its database must not pass for an
 * overwrite when git writes the path again: only that, nothing wider.
 */
static void test_lost_by_git(void **state)
{
	static const struct {
		enum lg_op op;
		enum lg_class cls;
		const char *path, *exe;
		bool want;
	} cases[] = {
		{ LG_OP_UNLINK, LG_CLASS_DESTROY, "/r/a.c", "git", true },
		{ LG_OP_UNLINK, LG_CLASS_DESTROY, "/r/a.c", "rm", false },
		{ LG_OP_UNLINK, LG_CLASS_DESTROY, "/r/a.c", NULL, false },
		{ LG_OP_UNLINK, LG_CLASS_RECOVERABLE, "/r/a.c", "git", false },
		{ LG_OP_UNLINK, LG_CLASS_SESSION, "/r/a.c", "git", false },
		{ LG_OP_RMDIR, LG_CLASS_DESTROY, "/r/src", "git", false },
		{ LG_OP_TRUNCATE, LG_CLASS_DESTROY, "/r/a.c", "git", false },
		{ LG_OP_UNLINK, LG_CLASS_DESTROY, "/r/.git/index", "git",
		  false },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (lg_classify_lost_by_git(cases[i].op, cases[i].cls,
					    cases[i].path,
					    cases[i].exe) != cases[i].want)
			fail_msg("case %zu: %s", i, cases[i].path);
}

static void test_path_in_git_dir(void **state)
{
	static const struct {
		const char *path;
		bool want;
	} cases[] = {
		{ "/r/.git", true },	      { "/r/.git/", true },
		{ "/r/.git/HEAD", true },     { "/.git", true },
		{ "/a/.git/b/.git/c", true }, { "/r/.gitignore", false },
		{ "/r/.github/x", false },    { "/r/x.git", false },
		{ "/r/x.git/HEAD", false },   { "/r/git/a", false },
		{ "/r/a.git.b/c", false },    { "/r/.gitx/.git", true },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (lg_path_in_git_dir(cases[i].path) != cases[i].want)
			fail_msg("%s: expected %d", cases[i].path,
				 cases[i].want);
}

/*
 * Transforms (issue 29, item 1): a known compressor's removal of the
 * original it wrote out transformed is not a loss; the facts (the sibling
 * and its magic) are the session's, the class is decided here.
 */
static void test_transform_suffixes(void **state)
{
	static const struct {
		const char *exe, *first;
	} cases[] = {
		{ "gzip", ".gz" },	{ "gunzip", ".gz" },
		{ "pigz", ".gz" },	{ "xz", ".xz" },
		{ "unxz", ".xz" },	{ "lzma", ".lzma" },
		{ "bzip2", ".bz2" },	{ "bunzip2", ".bz2" },
		{ "zstd", ".zst" },	{ "unzstd", ".zst" },
		{ "lz4", ".lz4" },	{ "lzip", ".lz" },
		{ "brotli", ".br" },	{ "compress", ".Z" },
		{ "lzop", ".lzo" },	{ "lzip.plzip", ".lz" },
		{ "lzip.lzip", ".lz" }, { "lzip.", NULL },
		{ "rm", NULL },		{ "python3", NULL },
		{ "gzip2", NULL },	{ "", NULL },
		{ NULL, NULL },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *got = lg_transform_suffix(cases[i].exe, 0);

		if (!cases[i].first ? got != NULL :
				      !got || strcmp(got, cases[i].first))
			fail_msg("%s: %s", cases[i].exe ? cases[i].exe : "NULL",
				 got ? got : "NULL");
	}
	assert_string_equal(lg_transform_suffix("xz", 1), ".lzma");
	assert_null(lg_transform_suffix("xz", 2));
	assert_null(lg_transform_suffix("gzip", 1));
	assert_null(lg_transform_suffix("gzip", 99));
}

/* tar --remove-files, zip -m: the archive the session found holds the file */
static void test_archive_holds(void **state)
{
	const int64_t start = 1000000000000LL, now = start + 5000000000LL;
	unsigned char tar[512] = { 0 }, gz[] = { 0x1f, 0x8b, 8, 0 },
		      zip[] = { 'P', 'K', 3, 4, 20, 0 };
	struct lg_archive a = { .f = { .exists = true,
				       .is_reg = true,
				       .has_btime = true,
				       .btime_ns = start + 1,
				       .ctime_ns = now - 1,
				       .size = 10240,
				       .nlink = 1 },
				.head = tar,
				.n = sizeof(tar) };

	(void)state;
	memcpy(tar + 257, "ustar", 5);
	assert_true(lg_archiver("tar") && lg_archiver("zip") &&
		    lg_archiver("7zz") && !lg_archiver("rm"));
	assert_true(lg_archiver_by_name("zip") && !lg_archiver_by_name("tar"));
	assert_true(lg_archive_holds("tar", &a, 9000, start, now));
	assert_false(lg_archive_holds("tar", &a, 20000, start, now));
	assert_false(lg_archive_holds("rmloop", &a, 10, start, now));
	assert_false(lg_archive_holds("zip", &a, 10, start, now));
	a.f.nlink = 0; /* removed while written */
	assert_false(lg_archive_holds("tar", &a, 10, start, now));
	a.f.nlink = 1;
	a.f.btime_ns = start - 1; /* there before the session */
	assert_false(lg_archive_holds("tar", &a, 10, start, now));
	a.f.btime_ns = start + 1;
	a.head = gz;
	a.n = sizeof(gz);
	assert_true(lg_archive_holds("tar", &a, 1 << 30, start, now));
	a.head = zip;
	a.n = sizeof(zip);
	assert_true(lg_archive_holds("zip", &a, 10, start, now));
	assert_false(lg_archive_holds("tar", &a, 10, start, now));
	a.since_ns = now; /* written before the remover started */
	assert_false(lg_archive_holds("zip", &a, 10, start, now));
	a.since_ns = 0;
	a.f.size = 0; /* tar -z: the compressor has not flushed yet */
	a.n = 0;
	assert_false(lg_archive_holds("tar", &a, 10, start, now));
	a.piped = true;
	assert_true(lg_archive_holds("tar", &a, 10, start, now));
	assert_false(lg_archive_holds("zip", &a, 10, start, now));
}

/* tar -z's archive in the making: the compressor, the name it opens */
#define ARGV(s) s, sizeof(s)
static void test_archive_pending(void **state)
{
	static const struct {
		const char *exe;
		const char *argv;
		size_t n;
		const char *want; /* NULL: none */
	} cases[] = {
		{ "tar", ARGV("tar\0czf\0x.tgz\0--remove-files\0d"), "gzip" },
		{ "tar", ARGV("tar\0-cJf\0x.txz\0d"), "xz" },
		{ "tar", ARGV("tar\0-c\0-f\0x\0--zstd\0d"), "zstd" },
		{ "tar", ARGV("tar\0-cjf\0x\0d"), "bzip2" },
		{ "gtar", ARGV("gtar\0-caf\0x.tar.lz\0d"), "*" },
		/* -f's argument is no option: zJ is a name */
		{ "tar", ARGV("tar\0-cfzJ\0d"), NULL },
		{ "tar", ARGV("tar\0-cf\0x.tgz\0d"), NULL },
		{ "tar", ARGV("tar\0-I\0pigz -9\0-cf\0x.tgz\0d"), "pigz" },
		{ "tar",
		  ARGV("tar\0--use-compress-program=/usr/bin/xz\0-cf\0x"),
		  "xz" },
		{ "tar", ARGV("tar\0-cf\0x\0--\0-z"), NULL },
		{ "gzip", ARGV("gzip\0-9"), "gzip" },
		{ "dash", ARGV("/bin/sh\0-c\0gzip"), "gzip" },
		{ "bash", ARGV("sh\0-c\0/usr/bin/zstd -T0"), "zstd" },
		{ "dash", ARGV("sh\0-c\0rm -rf d"), NULL },
		{ "rmloop", ARGV("tar\0czf\0x.tgz"), NULL },
		{ "bsdtar", ARGV("bsdtar\0czf\0x.tgz"), NULL },
	};
	char out[64];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		bool got = lg_archive_compressor(cases[i].exe, cases[i].argv,
						 cases[i].n, out, sizeof(out));

		if (!cases[i].want) {
			assert_false(got);
			continue;
		}
		assert_true(got);
		assert_string_equal(out, cases[i].want);
	}
	assert_true(lg_archive_named_for("gzip", "/w/gz.tgz"));
	assert_true(lg_archive_named_for("gzip", "a/b.tar.gz"));
	assert_true(lg_archive_named_for("pigz", "b.taz"));
	assert_true(lg_archive_named_for("xz", "xz.txz"));
	assert_true(lg_archive_named_for("bzip2", "x.tbz2"));
	assert_true(lg_archive_named_for("zstd", "x.tzst"));
	assert_true(lg_archive_named_for("*", "x.tar.lz"));
	assert_false(lg_archive_named_for("gzip", "x.txz"));
	assert_false(lg_archive_named_for("xz", "x.tgz"));
	assert_false(lg_archive_named_for("gzip", "/dev/null"));
	assert_false(lg_archive_named_for("gzip", ".gz/out"));
	assert_false(lg_archive_named_for("gzip", ".gz"));
	assert_false(lg_archive_named_for("*", "out.tar"));
	assert_false(lg_archive_named_for("rmloop", "out.gz"));
	assert_false(lg_archive_named_for("brotli", "out.br"));
	assert_false(lg_archive_named_for(NULL, "out.gz"));
}

static void test_zip_lists(void **state)
{
	unsigned char cd[2 * 46 + 32] = { 0 };
	size_t off = 0;
	const char *names[] = { "reports/", "reports/r1.csv" };

	(void)state;
	for (int i = 0; i < 2; i++) {
		size_t nl = strlen(names[i]);

		memcpy(cd + off, "PK\x01\x02", 4);
		cd[off + 28] = (unsigned char)nl;
		memcpy(cd + off + 46, names[i], nl);
		off += 46 + nl;
	}
	assert_true(lg_zip_lists(cd, off, "/w/reports/r1.csv"));
	assert_true(lg_zip_lists(cd, off, "/w/reports"));
	assert_false(lg_zip_lists(cd, off, "/w/xreports/r1.csv"));
	assert_false(lg_zip_lists(cd, off, "/w/reports/r2.csv"));
	assert_false(lg_zip_lists(cd, off - 1, "/w/reports/r1.csv"));
}

static void test_transform_magic(void **state)
{
	static const unsigned char gz[] = { 0x1f, 0x8b, 0x08, 0x00 },
				   xz[] = { 0xfd, '7', 'z', 'X', 'Z', 0x00 },
				   bz[] = "BZh91AY",
				   zst[] = { 0x28, 0xb5, 0x2f, 0xfd, 0x24 },
				   lz4[] = { 0x04, 0x22, 0x4d, 0x18 },
				   lz[] = "LZIP\x01", stub[] = "x\n";

	(void)state;
	assert_true(lg_transform_magic(".gz", gz, sizeof(gz)));
	assert_true(lg_transform_magic(".xz", xz, sizeof(xz)));
	assert_true(lg_transform_magic(".bz2", bz, 7));
	assert_true(lg_transform_magic(".zst", zst, sizeof(zst)));
	assert_true(lg_transform_magic(".lz4", lz4, sizeof(lz4)));
	assert_true(lg_transform_magic(".lz", lz, 5));
	/* a stub with no header, a short one, another format's */
	assert_false(lg_transform_magic(".gz", stub, 2));
	assert_false(lg_transform_magic(".gz", gz, 1));
	assert_false(lg_transform_magic(".xz", gz, sizeof(gz)));
	assert_false(lg_transform_magic(".gz", NULL, 0));
	assert_false(lg_transform_magic(".unknown", gz, sizeof(gz)));
	/* brotli has no magic: anything not empty */
	assert_true(lg_transform_magic(".br", stub, 2));
	assert_false(lg_transform_magic(".br", stub, 0));
}

static void test_transform_sibling_fresh(void **state)
{
	struct lg_facts sib = old_file();
	int64_t now = AFTER;

	(void)state;
	sib.is_reg = true;
	sib.btime_ns = sib.ctime_ns = AFTER - SEC;
	assert_true(lg_transform_sibling_fresh(&sib, START, now));
	/* older than the session: not what the compressor just wrote */
	sib.btime_ns = BEFORE;
	assert_false(lg_transform_sibling_fresh(&sib, START, now));
	sib.btime_ns = AFTER - SEC;
	/* empty, not a regular file, missing */
	sib.size = 0;
	assert_false(lg_transform_sibling_fresh(&sib, START, now));
	sib.size = 100;
	sib.is_reg = false;
	assert_false(lg_transform_sibling_fresh(&sib, START, now));
	sib.is_reg = true;
	sib.exists = false;
	assert_false(lg_transform_sibling_fresh(&sib, START, now));
	sib.exists = true;
	/* written long ago in a long session */
	now = AFTER + LG_TRANSFORM_FRESH_NS + SEC;
	assert_false(lg_transform_sibling_fresh(&sib, START, now));
}

static void test_transformed_class(void **state)
{
	struct lg_facts f = old_file();

	(void)state;
	f.is_reg = true;
	f.transformed = true;
	assert_int_equal(classify(LG_OP_UNLINK, &f, "/p/app.log", NULL),
			 LG_CLASS_TRANSFORMED);
	assert_string_equal(lg_class_name(LG_CLASS_TRANSFORMED), "transformed");
	assert_int_equal(lg_class_parse("transformed"), LG_CLASS_TRANSFORMED);
	/* only a removal of a regular file */
	assert_int_equal(classify(LG_OP_TRUNCATE, &f, "/p/app.log", NULL),
			 LG_CLASS_DESTROY);
	f.is_reg = false;
	assert_int_equal(classify(LG_OP_UNLINK, &f, "/p/app.log", NULL),
			 LG_CLASS_DESTROY);
	/* the session's own, missing and other names come first */
	f.is_reg = true;
	f.btime_ns = AFTER;
	assert_int_equal(classify(LG_OP_UNLINK, &f, "/p/app.log", NULL),
			 LG_CLASS_SESSION);
}

/* A venv's own layout (issue 29, item 2), from the nearest root. */
static void test_venv_root(void **state)
{
	static const struct {
		enum lg_op op;
		const char *path;
		const char *roots[3];
	} cases[] = {
		{ LG_OP_UNLINK, "/p/.venv/bin/pip", { "/p/.venv" } },
		{ LG_OP_UNLINK, "/p/lib/x/bin/y", { "/p/lib/x", "/p" } },
		{ LG_OP_UNLINK,
		  "/p/.venv/lib/python3.11/site-packages/x.py",
		  { "/p/.venv" } },
		{ LG_OP_UNLINK, "/p/.venv/pyvenv.cfg", { "/p/.venv" } },
		{ LG_OP_UNLINK, "/p/.venv/.gitignore", { "/p/.venv" } },
		{ LG_OP_RMDIR, "/p/.venv", { "/p/.venv" } },
		{ LG_OP_RMDIR,
		  "/p/.venv/include",
		  { "/p/.venv/include", "/p/.venv" } },
		{ LG_OP_UNLINK, "/p/.venv/Scripts/python.exe", { "/p/.venv" } },
		/* a project's own files beside a venv made at its root */
		{ LG_OP_UNLINK, "/p/src/main.py", { NULL } },
		{ LG_OP_UNLINK, "/p/docs/pyvenv.cfg.md", { NULL } },
		{ LG_OP_UNLINK, "/p/pyvenv.cfg/x", { NULL } },
		{ LG_OP_UNLINK, "/p/binary/x", { NULL } },
		/* the root directory is no venv */
		{ LG_OP_UNLINK, "/bin/ls", { NULL } },
		{ LG_OP_UNLINK, "relative/bin/x", { NULL } },
	};
	char root[64];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t k = 0;

		for (; k < 3 && cases[i].roots[k]; k++) {
			if (lg_venv_root(cases[i].op, cases[i].path, k, root,
					 sizeof(root)) != 1)
				fail_msg("%s: no root %zu", cases[i].path, k);
			if (strcmp(root, cases[i].roots[k]) != 0)
				fail_msg("%s: root %zu is %s, not %s",
					 cases[i].path, k, root,
					 cases[i].roots[k]);
		}
		if (lg_venv_root(cases[i].op, cases[i].path, k, root,
				 sizeof(root)) != 0)
			fail_msg("%s: a root too many: %s", cases[i].path,
				 root);
	}
	/* too long for the buffer: no root */
	assert_int_equal(
		lg_venv_root(LG_OP_UNLINK, "/p/.venv/bin/pip", 0, root, 4), 0);
}

static void test_regenerable_class(void **state)
{
	struct lg_facts f = old_file();

	(void)state;
	f.regenerable = true;
	assert_int_equal(classify(LG_OP_UNLINK, &f, "/p/.venv/bin/pip", "rm"),
			 LG_CLASS_IGNORED);
	f.is_dir = true;
	assert_int_equal(classify(LG_OP_RMDIR, &f, "/p/.venv/lib", "rm"),
			 LG_CLASS_IGNORED);
	/* a truncation is not a venv's recreation */
	f = old_file();
	f.regenerable = true;
	assert_int_equal(classify(LG_OP_TRUNCATE, &f, "/p/.venv/x", "sh"),
			 LG_CLASS_DESTROY);
}

/* One decision, several witnesses (issue 29, item 3). */
static void test_tool_value_names(void **state)
{
	static const struct {
		const char *value, *path;
		bool want;
	} cases[] = {
		{ "/w/p/a.txt", "/w/p/a.txt", true },
		{ "/w/p//./a.txt", "/w/p/a.txt", true },
		{ "file:///w/p/a.txt", "/w/p/a.txt", true },
		{ "/w/p/a.txt/", "/w/p/a.txt", true },
		{ "a.txt", "/w/p/a.txt", true },
		{ "./a.txt", "/w/p/a.txt", true },
		{ "p/a.txt", "/w/p/a.txt", true },
		{ "/w/q/a.txt", "/w/p/a.txt", false },
		{ "/p/a.txt", "/w/p/a.txt", false },
		{ "b/a.txt", "/w/p/a.txt", false },
		{ "xa.txt", "/w/p/a.txt", false },
		{ "../p/a.txt", "/w/p/a.txt", false },
		{ "p/../p/a.txt", "/w/p/a.txt", false },
		{ "", "/w/p/a.txt", false },
		{ ".", "/w/p", false },
		{ "/", "/", false },
		{ "w/p/a.txt", "/w/p/a.txt", true },
		{ "/w/p/a.txt", "/w/p/a.txt.gz", false },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (lg_tool_value_names(cases[i].value, cases[i].path) !=
		    cases[i].want)
			fail_msg("%s names %s: expected %d", cases[i].value,
				 cases[i].path, cases[i].want);
}

static void test_url_last_segment(void **state)
{
	static const struct {
		const char *url, *want;
	} cases[] = {
		{ "/files/old-a.log", "old-a.log" },
		{ "/files/old%20a.log?force=1", "old a.log" },
		{ "/files/dir/", "dir" },
		{ "/files/x#frag", "x" },
		{ "/f", "f" },
		{ "/", NULL },
		{ "", NULL },
		{ "/files/..", NULL },
		{ "/files/a%2Fb", NULL },
		{ "/files/a%00b", NULL },
		{ "/files/%zz", "%zz" },
	};
	char out[64];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int r = lg_url_last_segment(cases[i].url, out, sizeof(out));

		if (!cases[i].want ? r == 0 :
				     r != 0 || strcmp(out, cases[i].want))
			fail_msg("%s: r=%d out=%s", cases[i].url, r,
				 r ? "" : out);
	}
	assert_int_equal(lg_url_last_segment("/files/longname", out, 4),
			 -EINVAL);
}

/* A clean verb's build output (issue 41): not counted, named for replay. */
static void test_cleaned_class(void **state)
{
	struct lg_facts f = old_file();

	(void)state;
	f.is_reg = true;
	f.cleaned = true;
	assert_int_equal(classify(LG_OP_UNLINK, &f, "/p/app", "rm"),
			 LG_CLASS_REGENERABLE);
	assert_string_equal(lg_class_name(LG_CLASS_REGENERABLE), "regenerable");
	assert_int_equal(lg_class_parse("regenerable"), LG_CLASS_REGENERABLE);
	/* a truncation is not the clean's removal */
	assert_int_equal(classify(LG_OP_TRUNCATE, &f, "/p/app", "rm"),
			 LG_CLASS_DESTROY);
	/* rmdir: a directory only */
	f.is_reg = false;
	f.is_dir = true;
	assert_int_equal(classify(LG_OP_RMDIR, &f, "/p/obj", "rm"),
			 LG_CLASS_REGENERABLE);
	f.cleaned = false;
	assert_int_equal(classify(LG_OP_RMDIR, &f, "/p/obj", "rm"),
			 LG_CLASS_DESTROY);
}

static void test_tool_deleted_class(void **state)
{
	struct lg_facts f = old_file();

	(void)state;
	f.tool_deleted = true;
	assert_int_equal(classify(LG_OP_UNLINK, &f, "/p/a.txt", "python3"),
			 LG_CLASS_TOOL_DELETED);
	assert_string_equal(lg_class_name(LG_CLASS_TOOL_DELETED),
			    "tool_deleted");
	assert_int_equal(lg_class_parse("tool_deleted"), LG_CLASS_TOOL_DELETED);
	/* what loses nothing says so first; a truncation is not a removal */
	f.size = 0;
	assert_int_equal(classify(LG_OP_UNLINK, &f, "/p/a.txt", "python3"),
			 LG_CLASS_NO_DATA);
	f = old_file();
	f.tool_deleted = true;
	assert_int_equal(classify(LG_OP_TRUNCATE, &f, "/p/a.txt", "python3"),
			 LG_CLASS_DESTROY);
	/* the tool delete itself always counts */
	assert_int_equal(classify(LG_OP_TOOL_DELETE, &f, "path=a.txt", NULL),
			 LG_CLASS_DESTROY);
}

/*
 * Block devices (issue 39 item 8): what a device's head holds, by the
 * signatures at their offsets; all zeros is an empty device.
 */
static void test_blockdev_holds(void **state)
{
	static unsigned char h[LG_BLOCKDEV_HEAD];
	static const struct {
		size_t off;
		const char *magic;
		size_t len;
		const char *holds;
	} sigs[] = {
		{ 1080, "\x53\xef", 2, "an ext2 filesystem" },
		{ 0, "XFSB", 4, "an XFS filesystem" },
		{ 0x10040, "_BHRfS_M", 8, "a btrfs filesystem" },
		{ 0, "LUKS\xba\xbe", 6, "a LUKS volume" },
		{ 4086, "SWAPSPACE2", 10, "a swap area" },
		{ 65526, "SWAPSPACE2", 10, "a swap area" },
		{ 512, "EFI PART", 8, "a GPT partition table" },
		{ 3, "NTFS    ", 8, "an NTFS filesystem" },
		{ 82, "FAT32   ", 8, "a FAT filesystem" },
		{ 512, "LABELONE", 8, "an LVM physical volume" },
		{ 0x8001, "CD001", 5, "an ISO 9660 filesystem" },
		{ 4096, "\xfc\x4e\x2b\xa9", 4, "an md RAID member" },
	};

	(void)state;
	memset(h, 0, sizeof(h));
	assert_null(lg_blockdev_holds(h, sizeof(h)));
	assert_null(lg_blockdev_holds(h, 0));
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		memset(h, 0, sizeof(h));
		memcpy(h + sigs[i].off, sigs[i].magic, sigs[i].len);
		assert_string_equal(lg_blockdev_holds(h, sizeof(h)),
				    sigs[i].holds);
		/* a head read short of the signature: other bytes, no name */
		if (sigs[i].off > 0)
			assert_null(lg_blockdev_holds(h, sigs[i].off));
	}
	/* ext4 by its features: extents */
	memset(h, 0, sizeof(h));
	memcpy(h + 1080, "\x53\xef", 2);
	h[1024 + 0x60] = 0x40;
	assert_string_equal(lg_blockdev_holds(h, sizeof(h)),
			    "an ext4 filesystem");
	h[1024 + 0x60] = 0;
	h[1024 + 0x5c] = 0x4; /* a journal: ext3 */
	assert_string_equal(lg_blockdev_holds(h, sizeof(h)),
			    "an ext3 filesystem");
	/* an MBR needs a partition entry; 0x55AA alone is other bytes */
	memset(h, 0, sizeof(h));
	h[510] = 0x55;
	h[511] = 0xaa;
	assert_string_equal(lg_blockdev_holds(h, sizeof(h)),
			    "data lgrun does not recognise");
	h[446 + 4] = 0x83;
	h[446 + 12] = 0x10;
	assert_string_equal(lg_blockdev_holds(h, sizeof(h)),
			    "an MBR partition table");
	/* one byte anywhere in the head */
	memset(h, 0, sizeof(h));
	h[sizeof(h) - 1] = 1;
	assert_string_equal(lg_blockdev_holds(h, sizeof(h)),
			    "data lgrun does not recognise");
}

/*
 * A write-open of a block device: destroyed data when it holds some,
 * whenever its node was born (losetup makes one as it attaches); nothing
 * when it is empty; ignore rules still apply.
 */
static void test_device_write(void **state)
{
	struct lg_facts f = { .exists = true,
			      .has_btime = true,
			      .btime_ns = START + 1, /* a node made now */
			      .is_blockdev = true,
			      .blockdev_probed = true,
			      .blockdev_data = true,
			      .blockdev_holds = "an ext4 filesystem" };
	struct ruleset rs = { .n = 0 };

	(void)state;
	assert_int_equal(classify(LG_OP_DEVICE_WRITE, &f, "/dev/loop0", NULL),
			 LG_CLASS_DESTROY);
	rules_add(&rs, NULL, "/dev/loop*");
	assert_int_equal(lg_classify(LG_OP_DEVICE_WRITE, &f, "/dev/loop0", NULL,
				     rs.r, rs.n, START),
			 LG_CLASS_IGNORED);
	for (size_t i = 0; i < rs.n; i++)
		lg_ignore_rule_free(&rs.r[i]);
	f.blockdev_data = false;
	f.blockdev_holds = NULL;
	assert_int_equal(classify(LG_OP_DEVICE_WRITE, &f, "/dev/loop0", NULL),
			 LG_CLASS_NO_DATA);
	f.exists = false;
	assert_int_equal(classify(LG_OP_DEVICE_WRITE, &f, "/dev/loop0", NULL),
			 LG_CLASS_MISSING);
	assert_string_equal(lg_op_name(LG_OP_DEVICE_WRITE), "device_write");
	assert_int_equal(lg_op_parse("device_write"), LG_OP_DEVICE_WRITE);
}

static void test_class_names(void **state)
{
	(void)state;
	assert_string_equal(lg_class_name(LG_CLASS_DESTROY), "destroy");
	assert_string_equal(lg_class_name(LG_CLASS_MISSING), "missing");
	assert_string_equal(lg_class_name(LG_CLASS_SESSION), "session_owned");
	assert_string_equal(lg_class_name(LG_CLASS_IGNORED), "ignored");
	assert_string_equal(lg_class_name(LG_CLASS_HARMLESS), "harmless");
	assert_string_equal(lg_class_name(LG_CLASS_RECOVERABLE), "recoverable");
	assert_string_equal(lg_op_name(LG_OP_UNLINK), "unlink");
	assert_string_equal(lg_op_name(LG_OP_OPEN_TRUNC), "open_trunc");
	assert_string_equal(lg_source_name(LG_SRC_SECCOMP), "seccomp");
}

/* Issue 41: a body cut to a stub. */
static void test_stub_of(void **state)
{
	(void)state;
	assert_true(lg_stub_of(5000, 7)); /* "# TODO\n" over 5 KB */
	assert_true(lg_stub_of(4096, 256));
	assert_false(lg_stub_of(4095, 256)); /* more than a sixteenth */
	assert_false(lg_stub_of(100000, 257)); /* more than a stub */
	assert_false(lg_stub_of(1023, 5)); /* too small a file to say */
	assert_true(lg_stub_of(1024, 64));
	assert_false(lg_stub_of(5000, 0)); /* emptied: not a stub */
	assert_false(lg_stub_of(5000, 4000)); /* an edit */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_missing),
		cmocka_unit_test(test_transform_suffixes),
		cmocka_unit_test(test_transform_magic),
		cmocka_unit_test(test_archive_holds),
		cmocka_unit_test(test_zip_lists),
		cmocka_unit_test(test_archive_pending),
		cmocka_unit_test(test_transform_sibling_fresh),
		cmocka_unit_test(test_transformed_class),
		cmocka_unit_test(test_venv_root),
		cmocka_unit_test(test_regenerable_class),
		cmocka_unit_test(test_tool_value_names),
		cmocka_unit_test(test_url_last_segment),
		cmocka_unit_test(test_tool_deleted_class),
		cmocka_unit_test(test_cleaned_class),
		cmocka_unit_test(test_destroy),
		cmocka_unit_test(test_no_data),
		cmocka_unit_test(test_emptied_then_removed),
		cmocka_unit_test(test_session_created_btime),
		cmocka_unit_test(test_session_created_ctime_fallback),
		cmocka_unit_test(test_preexisting),
		cmocka_unit_test(test_harmless),
		cmocka_unit_test(test_ignored),
		cmocka_unit_test(test_program_scoped_rule),
		cmocka_unit_test(test_unignored_memo),
		cmocka_unit_test(test_tool_delete_always_destroys),
		cmocka_unit_test_setup_teardown(
			test_default_ignores_cover_whole_tree, defaults_setup,
			defaults_teardown),
		cmocka_unit_test_setup_teardown(
			test_default_ignores_package_caches, defaults_setup,
			defaults_teardown),
		cmocka_unit_test_setup_teardown(test_default_ignores_dir_only,
						defaults_setup,
						defaults_teardown),
		cmocka_unit_test_setup_teardown(test_default_ignores_git,
						defaults_setup,
						defaults_teardown),
		cmocka_unit_test(test_truncate_needs_preexisting_content),
		cmocka_unit_test(test_inherited_content_counts),
		cmocka_unit_test(test_moved_is_not_lost),
		cmocka_unit_test(test_unlink_of_dir_is_harmless),
		cmocka_unit_test(test_git_recoverable),
		cmocka_unit_test(test_git_without_odb),
		cmocka_unit_test_setup_teardown(
			test_needs_program, defaults_setup, defaults_teardown),
		cmocka_unit_test_setup_teardown(test_ignored_prefilter_exact,
						defaults_setup,
						defaults_teardown),
		cmocka_unit_test(test_lost_by_git),
		cmocka_unit_test(test_path_in_git_dir),
		cmocka_unit_test(test_blockdev_holds),
		cmocka_unit_test(test_device_write),
		cmocka_unit_test(test_class_names),
		cmocka_unit_test(test_stub_of),
	};

	return cmocka_run_group_tests_name("classify", tests, NULL, NULL);
}
