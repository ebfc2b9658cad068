// SPDX-License-Identifier: MIT
/* Unit tests for glob.c: the ignore-rule path globs. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "lib/glob.h"

struct glob_case {
	const char *pattern;
	const char *path;
	bool match;
};

/*
 * Checks each case, and that the literal prefilter (lg_glob_literal) never
 * rules out a path the glob matches: the literal must be in the path.
 */
static void run_cases(const struct glob_case *tc, size_t n)
{
	int bad = 0;

	for (size_t i = 0; i < n; i++) {
		bool got = lg_glob_match_path(tc[i].pattern, tc[i].path);
		char lit[48];

		if (got != tc[i].match) {
			print_error("pattern '%s' path '%s': got %d, want %d\n",
				    tc[i].pattern, tc[i].path, got,
				    tc[i].match);
			bad++;
		}
		lg_glob_literal(tc[i].pattern, lit, sizeof(lit));
		if (got && !strstr(tc[i].path, lit)) {
			print_error(
				"pattern '%s' matches '%s' but its literal '%s' is not in it\n",
				tc[i].pattern, tc[i].path, lit);
			bad++;
		}
	}
	assert_int_equal(bad, 0);
}

#define RUN(tbl) run_cases(tbl, sizeof(tbl) / sizeof(tbl[0]))

/* A pattern without '/' matches the target's own name, at any depth. */
static void test_name_patterns(void **state)
{
	static const struct glob_case tc[] = {
		{ "*.o", "/foo.o", true },
		{ "*.o", "/x/foo.o", true },
		{ "*.o", "/a/b/c/d/e/foo.o", true },
		{ "*.o", "/x/.o", true },
		{ "*.o", "/x/foo.org", false },
		{ "*.o", "/x/foo.c", false },
		{ "*.o", "/x/foo.o.bak", false },
		{ "node_modules", "/p/node_modules", true },
		{ "node_modules", "/home/u/p/web/node_modules", true },
		{ "node_modules", "/p/node_modules_old", false },
		{ "node_modules", "/p/my_node_modules", false },
		{ "__pycache__", "/p/pkg/__pycache__", true },
		{ "__pycache__", "/p/pkg/__pycache__x", false },
		{ "*~", "/p/file.c~", true },
		{ "*~", "/p/~", true },
		{ "*~", "/p/file.c", false },
		{ "*~", "/p/~file", false },
		{ "build", "/x/build", true },
		{ "build", "/build", true },
		{ "build", "/x/rebuild/y", false },
		{ "build", "/x/builder/y", false },
		{ "build", "/x/build.sh", false },
		{ "*", "/anything/at/all", true },
		/* only the own name: not a directory on the way */
		{ "*.o", "/x/odd.o/inner/file.c", false },
		{ "node_modules", "/p/node_modules/a/index.js", false },
		{ "build", "/x/build/y", false },
		/* relative paths work too */
		{ "*.o", "foo.o", true },
		{ "*.o", "dir/foo.o", true },
	};

	(void)state;
	RUN(tc);
}

/* "name/" matches a directory on the way: it covers everything below. */
static void test_dir_patterns_cover_subtree(void **state)
{
	static const struct glob_case tc[] = {
		{ "node_modules/", "/p/node_modules/a", true },
		{ "node_modules/", "/p/node_modules/a/b/c/index.js", true },
		{ "node_modules/", "/p/web/node_modules/.bin/x", true },
		{ "__pycache__/", "/p/pkg/__pycache__/m.cpython-311.pyc",
		  true },
		{ "build/", "/x/build/y", true },
		{ "build/", "/x/build/deep/er/z.txt", true },
		{ "build/", "/x/rebuild/y", false },
		{ "build/", "/x/builder/y", false },
		{ "*~/", "/p/dir~/keep.c", true },
		{ "*.egg-info/", "/p/foo.egg-info/PKG-INFO", true },
		{ "node_modules/", "/p/node_modulesx/a/b", false },
		{ "node_modules/", "/p/src/a.js", false },
	};

	(void)state;
	RUN(tc);
}

static void test_anchored(void **state)
{
	static const struct glob_case tc[] = {
		{ "/tmp/**", "/tmp/x", true },
		{ "/tmp/**", "/tmp/a/b/c", true },
		{ "/tmp/**", "/tmp/.hidden", true },
		/* a trailing "**" is what is inside, not the directory itself */
		{ "/tmp/**", "/tmp", false },
		{ "/tmp/**", "/var/tmp/x", false },
		{ "/tmp/**", "/tmpfoo/x", false },
		{ "/tmp/**", "/tm/x", false },
		{ "/data/*.csv", "/data/a.csv", true },
		{ "/data/*.csv", "/data/a.csv.gz", false },
		{ "/data/*.csv", "/x/data/a.csv", false },
		/* an anchored directory covers its subtree */
		{ "/srv/cache", "/srv/cache/a/b", true },
		{ "/srv/cache", "/srv/cache", true },
		{ "/srv/cache", "/srv/cachex", false },
		{ "/srv/cache", "/x/srv/cache", false },
	};

	(void)state;
	RUN(tc);
}

/* With a '/' but not at the start: matches from any component. */
static void test_unanchored_with_slash(void **state)
{
	static const struct glob_case tc[] = {
		{ "**/.git/**", "/r/.git/objects/ab/cdef", true },
		{ "**/.git/**", "/r/.git/HEAD", true },
		{ "**/.git/**", "/home/u/src/deep/r/.git/index", true },
		{ "**/.git/**", "/.git/config", true },
		{ "**/.git/**", "/r/.gitignore", false },
		{ "**/.git/**", "/r/.github/workflows/ci.yml", false },
		{ "**/.git/**", "/r/git/x", false },
		{ "**/.git/**", "/r/src/main.c", false },
		{ ".git/*.lock", "/r/.git/index.lock", true },
		{ ".git/*.lock", "/a/b/r/.git/HEAD.lock", true },
		{ ".git/*.lock", "/r/.git/index", false },
		{ ".git/*.lock", "/r/x.git/index.lock", false },
		/* '*' does not cross '/' */
		{ ".git/*.lock", "/r/.git/refs/heads/main.lock", false },
		{ "**/.git/**/*.lock", "/r/.git/refs/heads/main.lock", true },
		{ "**/.git/**/*.lock", "/r/.git/index.lock", true },
		{ "src/gen", "/p/src/gen/a.c", true },
		{ "src/gen", "/p/xsrc/gen/a.c", false },
	};

	(void)state;
	RUN(tc);
}

static void test_wildcards(void **state)
{
	static const struct glob_case tc[] = {
		{ "fo?.c", "/src/foo.c", true },
		{ "fo?.c", "/src/fox.c", true },
		{ "fo?.c", "/src/fo.c", false },
		{ "fo?.c", "/src/fooo.c", false },
		{ "/a?b", "/a/b", false },
		{ "/a?b", "/axb", true },
		{ "file[a-c].txt", "/d/filea.txt", true },
		{ "file[a-c].txt", "/d/fileb.txt", true },
		{ "file[a-c].txt", "/d/filec.txt", true },
		{ "file[a-c].txt", "/d/filed.txt", false },
		{ "file[a-c].txt", "/d/fileA.txt", false },
		{ "file[a-c].txt", "/d/file.txt", false },
		{ "[!x]y", "/d/ay", true },
		{ "[!x]y", "/d/zy", true },
		{ "[!x]y", "/d/xy", false },
		{ "[!x].c", "/q/a.c", true },
		{ "[!x].c", "/q/x.c", false },
		{ "[ab][0-9]", "/q/b7", true },
		{ "[ab][0-9]", "/q/c7", false },
		{ "[ab][0-9]", "/q/bx", false },
		/* a class never matches '/' */
		{ "/a[/]b", "/a/b", false },
	};

	(void)state;
	RUN(tc);
}

/*
 * A leading ']' in a class is a member, for the matcher and for the literal
 * prefilter alike (the prefilter must not take "ab]cd" from "[]ab]cd").
 */
static void test_class_leading_bracket(void **state)
{
	static const struct glob_case tc[] = {
		{ "[]ab]cd", "/p/acd", true },	{ "[]ab]cd", "/p/]cd", true },
		{ "[]ab]cd", "/p/xcd", false }, { "[!]]x", "/p/ax", true },
		{ "[!]]x", "/p/]x", false },
	};

	(void)state;
	RUN(tc);
}

static void test_star_does_not_cross_slash(void **state)
{
	static const struct glob_case tc[] = {
		{ "/src/*.c", "/src/a.c", true },
		{ "/src/*.c", "/src/sub/a.c", false },
		{ "/src/*/a.c", "/src/sub/a.c", true },
		{ "/src/*/a.c", "/src/x/y/a.c", false },
		{ "a*b", "/x/a/b", false },
		{ "a*b", "/x/a-to-b", true },
		{ "/src/**/a.c", "/src/x/y/a.c", true },
	};

	(void)state;
	RUN(tc);
}

static void test_double_star_zero_dirs(void **state)
{
	static const struct glob_case tc[] = {
		{ "/a/**/b", "/a/b", true },
		{ "/a/**/b", "/a/x/b", true },
		{ "/a/**/b", "/a/x/y/z/b", true },
		{ "/a/**/b", "/a/xb", false },
		{ "/a/**/b", "/a/x/yb", false },
		{ "**/foo", "/foo", true },
		{ "**/foo", "/a/b/foo", true },
		{ "**/foo", "/a/b/xfoo", false },
	};

	(void)state;
	RUN(tc);
}

/* A trailing '/' matches directories only: what is below them. */
static void test_dir_only(void **state)
{
	static const struct glob_case tc[] = {
		{ "build/", "/x/build/y", true },
		{ "build/", "/x/build/a/b", true },
		{ "build/", "/x/build", false },
		{ "build/", "/x/rebuild/y", false },
		{ "node_modules/", "/p/node_modules/a/index.js", true },
		{ "cmake-build-*/", "/p/cmake-build-debug/CMakeCache.txt",
		  true },
		{ "/tmp/", "/tmp/x", true },
		{ "/tmp/", "/tmp", false },
		{ "src/gen/", "/p/src/gen/a.c", true },
		{ "src/gen/", "/p/src/gen", false },
	};

	(void)state;
	RUN(tc);
}

static void test_degenerate(void **state)
{
	char longpat[2048];

	(void)state;
	assert_false(lg_glob_match_path("", "/x"));
	assert_false(lg_glob_match_path("", ""));
	assert_false(lg_glob_match_path("*.o", ""));
	assert_false(lg_glob_match_path("*.o", "/"));
	/* a pattern longer than the internal buffer matches nothing */
	memset(longpat, 'a', sizeof(longpat) - 1);
	longpat[sizeof(longpat) - 1] = '\0';
	assert_false(lg_glob_match_path(longpat, "/aaaa"));
	/* an unclosed '[' is literal */
	assert_true(lg_glob_match_path("a[b", "/x/a[b"));
	assert_false(lg_glob_match_path("a[b", "/x/ab"));
	/* a backslash escapes */
	assert_true(lg_glob_match_path("a\\*b", "/x/a*b"));
	assert_false(lg_glob_match_path("a\\*b", "/x/axb"));
}

/*
 * Stars that cannot match: answered at once, not by trying every split
 * (found by fuzz_path: exponential time before, in the notify thread, on
 * a path the agent chooses). A hang here is the failure.
 */
static void test_no_backtracking_blowup(void **state)
{
	char path[600];

	(void)state;
	memset(path, 'a', sizeof(path) - 1);
	path[0] = '/';
	path[sizeof(path) - 1] = '\0';
	assert_false(lg_glob_match_path("*a*a*a*a*a*a*a*a*a*a*a*b", path));
	assert_false(lg_glob_match_path("/**a**a**a**a**a**a**a**a**b", path));
	assert_false(lg_glob_match_path("/*a*a*a*a*a*a*a*a*a*/x", path));
	assert_true(lg_glob_match_path("*a*a*a*a*a*a*a*a*a*a*a*a", path));
	/* the aborts keep the answers: a '*' stops at '/', "**" crosses it */
	assert_true(lg_glob_match_path("/x/*c*d", "/x/abcxd"));
	assert_false(lg_glob_match_path("/x/*c*d", "/x/ab/cd"));
	assert_true(lg_glob_match_path("/x/**c*d", "/x/ab/cxd"));
	assert_true(lg_glob_match_path("/x/*/**/d", "/x/a/b/c/d"));
	assert_false(lg_glob_match_path("/x/*b*/d", "/x/a/b/d"));
}

/*
 * Many "**" against many components (fuzz_path, a third time: 30 "**" +
 * "/" against 600 components never ended, the aborts above did not cover
 * it). The matcher is now a set of pattern positions advanced once per
 * character, whatever the pattern. A hang is the failure.
 */
static void test_many_double_stars(void **state)
{
	char pat[200] = "*", path[1300];
	size_t n = 0;

	(void)state;
	for (int i = 0; i < 30; i++)
		strcat(pat, "/**");
	strcat(pat, "/x");
	for (int i = 0; i < 600; i++) {
		path[n++] = '/';
		path[n++] = 'a';
	}
	strcpy(path + n, "/y");
	assert_false(lg_glob_match_path(pat, path));
	strcpy(path + n, "/x");
	assert_true(lg_glob_match_path(pat, path));
	/* what the aborts got wrong: "**" then "**" + "/" matching nothing */
	assert_true(lg_glob_match_path("****/a", "/x/-[[a"));
	assert_true(lg_glob_match_path("x**/a", "/d/xa"));
	assert_true(lg_glob_match_path("x**/a", "/d/x/b/a"));
	assert_false(lg_glob_match_path("x**/a", "/d/xb"));
	/* and the prefilter keeps them: the '/' after "**" is not required */
	{
		char lit[32];

		lg_glob_literal("x**/abc", lit, sizeof(lit));
		assert_string_equal(lit, "abc");
		lg_glob_literal("**/[ab]cd", lit, sizeof(lit));
		assert_string_equal(lit, "cd");
		lg_glob_literal("\\[x]yz", lit, sizeof(lit));
		assert_string_equal(lit, "x]yz");
	}
}

/*
 * A path 2000 directories deep against the shipped "**" patterns: one
 * pass, not one per directory and end (found by fuzz_path: 0.7 s per
 * pattern for 1000 levels before, per removal). A hang is the failure.
 */
static void test_deep_path(void **state)
{
	char path[4200];
	size_t n = 0;

	(void)state;
	for (int i = 0; i < 2000; i++) {
		path[n++] = '/';
		path[n++] = 'a';
	}
	strcpy(path + n, "/x.lock");
	for (int k = 0; k < 200; k++) {
		assert_false(lg_glob_match_path("**/.git/**/*.lock", path));
		assert_false(lg_glob_match_path("**/.git", path));
		assert_false(lg_glob_match_path("a/b/**/c", path));
	}
	assert_true(lg_glob_match_path("**/a/x.lock", path));
	assert_true(lg_glob_match_path("a/a/", path));
	strcpy(path + n, "/.git/refs/heads/main.lock");
	assert_true(lg_glob_match_path("**/.git/**/*.lock", path));
	assert_true(lg_glob_match_path("**/.git", path));
	assert_false(lg_glob_match_path("**/.git/", path + n + 5));
}

static void test_literal(void **state)
{
	static const struct {
		const char *pattern, *lit;
	} tc[] = {
		{ "node_modules", "node_modules" },
		{ "node_modules/", "node_modules" },
		{ "*.o", ".o" },
		{ "*.egg-info/", ".egg-info" },
		{ "**/.git/**", "/.git/" },
		{ "/tmp/**", "/tmp/" },
		{ "pip-install-*/", "pip-install-" },
		{ "file[a-c].txt", "file" },
		/* nothing worth a strstr */
		{ "*", "" },
		{ "**", "" },
		{ "*~", "" },
		{ "[!x]y", "" },
		{ "a?b", "" },
	};
	char lit[48], small[4];

	(void)state;
	for (size_t i = 0; i < sizeof(tc) / sizeof(tc[0]); i++) {
		lg_glob_literal(tc[i].pattern, lit, sizeof(lit));
		if (strcmp(lit, tc[i].lit) != 0)
			fail_msg("'%s': literal '%s', want '%s'", tc[i].pattern,
				 lit, tc[i].lit);
	}
	/* a literal that does not fit is no literal, not a truncated one */
	memset(small, 'x', sizeof(small));
	lg_glob_literal("node_modules", small, sizeof(small));
	assert_string_equal(small, "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_name_patterns),
		cmocka_unit_test(test_dir_patterns_cover_subtree),
		cmocka_unit_test(test_anchored),
		cmocka_unit_test(test_unanchored_with_slash),
		cmocka_unit_test(test_wildcards),
		cmocka_unit_test(test_class_leading_bracket),
		cmocka_unit_test(test_star_does_not_cross_slash),
		cmocka_unit_test(test_double_star_zero_dirs),
		cmocka_unit_test(test_dir_only),
		cmocka_unit_test(test_degenerate),
		cmocka_unit_test(test_no_backtracking_blowup),
		cmocka_unit_test(test_many_double_stars),
		cmocka_unit_test(test_deep_path),
		cmocka_unit_test(test_literal),
	};

	return cmocka_run_group_tests_name("glob", tests, NULL, NULL);
}
