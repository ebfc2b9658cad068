// SPDX-License-Identifier: MIT
/* Unit tests for pathres.c: lexical path resolution. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "seccomp/pathres.h"

struct res_case {
	const char *base;
	const char *path;
	const char *want;
};

static void test_resolve_table(void **state)
{
	static const struct res_case tc[] = {
		/* absolute paths are untouched, the base is not used */
		{ NULL, "/a/b", "/a/b" },
		{ "/base", "/a/b", "/a/b" },
		{ "/base", "/", "/" },
		/* relative paths are joined with the base */
		{ "/home/u", "f.txt", "/home/u/f.txt" },
		{ "/home/u", "d/f", "/home/u/d/f" },
		{ "/home/u/", "f", "/home/u/f" },
		{ "/", "f", "/f" },
		{ "/home/u", ".", "/home/u" },
		/* ".", ".." and "//" are removed */
		{ "/home/u", "./f", "/home/u/f" },
		{ "/home/u", "../f", "/home/f" },
		{ "/home/u", "a/../b/./c", "/home/u/b/c" },
		{ NULL, "/a//b///c", "/a/b/c" },
		{ NULL, "//a", "/a" },
		{ NULL, "/a/./b/.", "/a/b" },
		{ NULL, "/a/b/../c", "/a/c" },
		{ NULL, "/a/b/c/../../d", "/a/d" },
		{ "/x/./y/../z", "f", "/x/z/f" },
		{ "//x//y//", "f", "/x/y/f" },
		/* ".." above the root stays at the root */
		{ "/", "..", "/" },
		{ NULL, "/..", "/" },
		{ NULL, "/../../..", "/" },
		{ NULL, "/../a", "/a" },
		{ "/home/u", "../../../../f", "/f" },
		{ "/a", "../../b/../c", "/c" },
		/* a trailing slash is dropped */
		{ NULL, "/a/b/", "/a/b" },
		{ "/home/u", "d/", "/home/u/d" },
		{ NULL, "/", "/" },
		/* names that only look like dots are names */
		{ NULL, "/a/...", "/a/..." },
		{ NULL, "/a/.hidden", "/a/.hidden" },
		{ NULL, "/a/..b", "/a/..b" },
		{ "/a", "b..", "/a/b.." },
	};
	char out[PATH_MAX];
	int bad = 0;

	(void)state;
	for (size_t i = 0; i < sizeof(tc) / sizeof(tc[0]); i++) {
		int r = lg_path_resolve(tc[i].base, tc[i].path, out,
					sizeof(out));

		if (r < 0 || strcmp(out, tc[i].want) != 0 ||
		    (size_t)r != strlen(tc[i].want)) {
			print_error(
				"base '%s' path '%s': got %d '%s', want '%s'\n",
				tc[i].base ? tc[i].base : "(null)", tc[i].path,
				r, r < 0 ? "" : out, tc[i].want);
			bad++;
		}
	}
	assert_int_equal(bad, 0);
}

static void test_resolve_einval(void **state)
{
	char out[64];

	(void)state;
	/* a relative path with no base, or a relative base */
	assert_int_equal(lg_path_resolve(NULL, "rel", out, sizeof(out)),
			 -EINVAL);
	assert_int_equal(lg_path_resolve("rel/base", "x", out, sizeof(out)),
			 -EINVAL);
	assert_int_equal(lg_path_resolve("", "x", out, sizeof(out)), -EINVAL);
	assert_int_equal(lg_path_resolve(NULL, "", out, sizeof(out)), -EINVAL);
	assert_int_equal(lg_path_resolve("/a", NULL, out, sizeof(out)),
			 -EINVAL);
	assert_int_equal(lg_path_resolve("/a", "b", out, 0), -EINVAL);
}

static void test_resolve_too_long(void **state)
{
	char out[16];
	char *big;
	int r;

	(void)state;
	/* "/abc/def" is 8 chars: it needs 9 bytes */
	assert_int_equal(lg_path_resolve(NULL, "/abc/def", out, 8),
			 -ENAMETOOLONG);
	assert_int_equal(lg_path_resolve(NULL, "/abc/def", out, 9), 8);
	assert_string_equal(out, "/abc/def");
	/* the same through a join */
	assert_int_equal(lg_path_resolve("/abc", "def", out, 8), -ENAMETOOLONG);
	assert_int_equal(lg_path_resolve("/abc", "def", out, 9), 8);
	assert_string_equal(out, "/abc/def");
	/* the separator itself does not fit */
	assert_int_equal(lg_path_resolve("/abc", "d", out, 5), -ENAMETOOLONG);
	assert_int_equal(lg_path_resolve("/abc", "d", out, 6), -ENAMETOOLONG);
	assert_int_equal(lg_path_resolve("/abc", "d", out, 7), 6);
	/* the first component */
	assert_int_equal(lg_path_resolve(NULL, "/a", out, 2), -ENAMETOOLONG);
	assert_int_equal(lg_path_resolve(NULL, "/a", out, 3), 2);

	/* a result far longer than PATH_MAX */
	big = malloc(3 * PATH_MAX);
	assert_non_null(big);
	big[0] = '/';
	for (size_t i = 1; i < 3 * PATH_MAX - 1; i++)
		big[i] = i % 200 == 0 ? '/' : 'x';
	big[3 * PATH_MAX - 1] = '\0';
	{
		char *o = malloc(PATH_MAX);

		assert_non_null(o);
		r = lg_path_resolve(NULL, big, o, PATH_MAX);
		free(o);
	}
	free(big);
	assert_int_equal(r, -ENAMETOOLONG);
}

/* Nothing is written past size, even when only "/" would be the result. */
static void test_resolve_never_writes_past_size(void **state)
{
	char out[8];
	int r;

	(void)state;
	memset(out, 'x', sizeof(out));
	r = lg_path_resolve(NULL, "/", out, 1);
	assert_int_equal(r, -ENAMETOOLONG);
	assert_int_equal(out[1], 'x');

	memset(out, 'x', sizeof(out));
	r = lg_path_resolve(NULL, "/a/..", out, 1);
	assert_int_equal(r, -ENAMETOOLONG);
	assert_int_equal(out[1], 'x');

	memset(out, 'x', sizeof(out));
	r = lg_path_resolve(NULL, "/", out, 2);
	assert_int_equal(r, 1);
	assert_string_equal(out, "/");
	assert_int_equal(out[2], 'x');

	memset(out, 'x', sizeof(out));
	r = lg_path_resolve("/ab", "cd", out, 6);
	assert_int_equal(r, -ENAMETOOLONG);
	assert_int_equal(out[6], 'x');
}

static void test_strip_deleted(void **state)
{
	static const struct {
		const char *in, *out;
		int ret;
	} tc[] = {
		{ "/tmp/x (deleted)", "/tmp/x", 1 },
		{ "/tmp/a b (deleted)", "/tmp/a b", 1 },
		{ "/tmp/x", "/tmp/x", 0 },
		{ "/tmp/x (deleted) ", "/tmp/x (deleted) ", 0 },
		{ "/tmp/x(deleted)", "/tmp/x(deleted)", 0 },
		{ "", "", 0 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(tc) / sizeof(tc[0]); i++) {
		char buf[64];

		snprintf(buf, sizeof(buf), "%s", tc[i].in);
		assert_int_equal(lg_path_strip_deleted(buf), tc[i].ret);
		assert_string_equal(buf, tc[i].out);
	}
	/* only one suffix is stripped */
	{
		char buf[] = "/a (deleted) (deleted)";

		assert_int_equal(lg_path_strip_deleted(buf), 1);
		assert_string_equal(buf, "/a (deleted)");
	}
}

static void test_basename(void **state)
{
	const char *p = "/home/u/file.txt";

	(void)state;
	assert_string_equal(lg_path_basename("/usr/bin/git"), "git");
	assert_string_equal(lg_path_basename("git"), "git");
	assert_string_equal(lg_path_basename("/git"), "git");
	assert_string_equal(lg_path_basename("./a/b.c"), "b.c");
	assert_string_equal(lg_path_basename(""), "");
	/* no allocation: a pointer into the argument */
	assert_ptr_equal(lg_path_basename(p), p + 8);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_resolve_table),
		cmocka_unit_test(test_resolve_einval),
		cmocka_unit_test(test_resolve_too_long),
		cmocka_unit_test(test_resolve_never_writes_past_size),
		cmocka_unit_test(test_strip_deleted),
		cmocka_unit_test(test_basename),
	};

	return cmocka_run_group_tests_name("pathres", tests, NULL, NULL);
}
