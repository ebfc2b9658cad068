// SPDX-License-Identifier: MIT
/* Unit tests for canon.c: canonical JSON of tool-call arguments. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "lib/canon.h"
#include "lib/text.h"

#define BIG 4096

/* Canonical form of s, which must be valid. */
static const char *canon(const char *s)
{
	static char out[BIG];
	int r = lg_canon_args(s, strlen(s), out, sizeof(out));

	if (r < 0)
		fail_msg("'%s': %d", s, r);
	assert_int_equal(strlen(out), (size_t)r);
	return out;
}

static void check(const char *in, const char *want)
{
	const char *got = canon(in);

	if (strcmp(got, want) != 0)
		fail_msg("'%s':\n got '%s'\nwant '%s'", in, got, want);
}

static void test_key_order_independent(void **state)
{
	static const char *const spellings[] = {
		"{\"b\":2,\"a\":1,\"c\":3}",
		"{\"c\":3,\"b\":2,\"a\":1}",
		"{ \"a\" : 1 ,\n\t\"c\":3, \"b\" :2 }",
		"{\"\\u0061\":1,\"b\":2,\"c\":3}",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(spellings) / sizeof(spellings[0]); i++)
		check(spellings[i], "{\"a\":1,\"b\":2,\"c\":3}");
	/* different values are different */
	assert_string_not_equal(canon("{\"a\":1,\"b\":2,\"c\":4}"),
				"{\"a\":1,\"b\":2,\"c\":3}");
}

static void test_nested(void **state)
{
	(void)state;
	/* objects sorted at every level, arrays keep their order */
	check("{\"z\":{\"y\":[3,1,{\"k2\":null,\"k1\":true}],\"x\":{}},"
	      "\"a\":[{\"b\":1,\"a\":2},[]]}",
	      "{\"a\":[{\"a\":2,\"b\":1},[]],"
	      "\"z\":{\"x\":{},\"y\":[3,1,{\"k1\":true,\"k2\":null}]}}");
	assert_string_not_equal(canon("[1,2]"), "[2,1]");
	check("[ 1 , [ 2 , [ 3 ] ] ]", "[1,[2,[3]]]");
	/* keys sort by code point: upper case before lower, ASCII first */
	check("{\"\xc3\xa9\":1,\"b\":2,\"B\":3,\"_\":4}",
	      "{\"B\":3,\"_\":4,\"b\":2,\"\xc3\xa9\":1}");
}

static void test_scalars_and_text(void **state)
{
	char big[BIG];

	(void)state;
	check("\"x\"", "\"x\"");
	check(" 42 ", "42");
	check("true", "true");
	check("null", "null");
	check("1.5", "1.5");
	check("1.0", "1.0");
	check("-7", "-7");
	/* non-ASCII stays UTF-8, escapes become the characters */
	check("{\"p\":\"caf\\u00e9 \\ud83d\\ude00\"}",
	      "{\"p\":\"caf\xc3\xa9 \xf0\x9f\x98\x80\"}");
	/* what JSON needs escaped stays escaped; '/' does not need it */
	check("{\"p\":\"a\\/b\\n\\\"q\\\"\\\\\"}",
	      "{\"p\":\"a/b\\n\\\"q\\\"\\\\\"}");
	/* a NUL inside a string value is kept */
	check("[\"a\\u0000b\"]", "[\"a\\u0000b\"]");
	/* duplicated key: the last wins */
	check("{\"a\":1,\"a\":2}", "{\"a\":2}");
	/* too big for 64 bits: still one stable answer, and not another's */
	strcpy(big, canon("{\"id\":99999999999999999999}"));
	assert_string_equal(big, canon("{ \"id\" : 99999999999999999999 }"));
	assert_string_not_equal(big, canon("{\"id\":99999999999999999998999}"));
	assert_string_not_equal(big, canon("{\"id\":9999999999999999999}"));
}

/* n times the UTF-8 character c, in a JSON string, in an object. */
static char *args_with(const char *prefix, size_t n, const char *c,
		       const char *suffix)
{
	size_t cl = strlen(c);
	char *s = malloc(strlen(prefix) + n * cl + strlen(suffix) + 16);
	char *p;

	assert_non_null(s);
	p = s + sprintf(s, "{\"v\":\"%s", prefix);
	for (size_t i = 0; i < n; i++, p += cl)
		memcpy(p, c, cl);
	sprintf(p, "%s\"}", suffix);
	return s;
}

/* The string value of {"v":"..."} in canonical form, and its code points. */
static size_t value_chars(const char *canonical, size_t *bytes)
{
	const char *v = canonical + strlen("{\"v\":\"");
	size_t len = strlen(v) - 2, chars = 0;

	assert_true(strncmp(canonical, "{\"v\":\"", 6) == 0);
	assert_string_equal(v + len, "\"}");
	for (size_t i = 0; i < len;) {
		size_t l = lg_utf8_seq_len((const unsigned char *)v + i);

		if (!l)
			fail_msg("invalid UTF-8 at byte %zu", i);
		i += l;
		chars++;
	}
	*bytes = len;
	return chars;
}

static void test_truncation(void **state)
{
	char *s, *want;
	size_t bytes;

	(void)state;
	assert_int_equal(LG_CANON_MAX_STRING, 200);
	/* 200 is kept whole, 201 is cut to 200 */
	s = args_with("", 200, "a", "");
	check(s, s);
	free(s);
	s = args_with("", 201, "a", "");
	want = args_with("", 200, "a", "");
	check(s, want);
	free(s);
	free(want);

	/* a 2-byte character straddles byte 200: it is kept whole */
	s = args_with("", 199, "a", "\xc3\xa9\xc3\xa9zz");
	assert_int_equal(value_chars(canon(s), &bytes), 200);
	assert_int_equal(bytes, 201);
	want = args_with("", 199, "a", "\xc3\xa9");
	check(s, want);
	free(s);
	free(want);

	/* 4-byte characters throughout: 200 of them, 800 bytes */
	s = args_with("", 300, "\xf0\x9f\x98\x80", "");
	assert_int_equal(value_chars(canon(s), &bytes), 200);
	assert_int_equal(bytes, 800);
	free(s);

	/* exactly 200 code points ending in a multi-byte one: whole */
	s = args_with("", 199, "b", "\xe2\x82\xac");
	check(s, s);
	free(s);

	/* an escaped character counts as one */
	s = args_with("\\u00e9", 250, "x", "");
	want = args_with("\xc3\xa9", 199, "x", "");
	check(s, want);
	free(s);
	free(want);
}

/* Calls that differ only past 200 code points are the same call. */
static void test_truncation_makes_equal(void **state)
{
	char *a = args_with("", 200, "q", "tail one");
	char *b = args_with("", 200, "q", "another tail");
	char *c = args_with("", 199, "q", "different at 200");
	char ca[BIG];

	(void)state;
	strcpy(ca, canon(a));
	assert_string_equal(ca, canon(b));
	assert_string_not_equal(ca, canon(c));
	free(a);
	free(b);
	free(c);
}

/* Values in arrays and nested objects are cut; keys are not. */
static void test_truncation_where(void **state)
{
	char key[260], in[2048], want[2048], *p;
	char v250[251], v200[201];

	(void)state;
	memset(key, 'k', 250);
	key[250] = '\0';
	memset(v250, 'v', 250);
	v250[250] = '\0';
	memset(v200, 'v', 200);
	v200[200] = '\0';
	p = in +
	    sprintf(in, "{\"%s\":[\"%s\",{\"n\":\"%s\"}]}", key, v250, v250);
	assert_true(p < in + sizeof(in));
	snprintf(want, sizeof(want), "{\"%s\":[\"%s\",{\"n\":\"%s\"}]}", key,
		 v200, v200);
	check(in, want);
}

static void test_invalid(void **state)
{
	static const char *const bad[] = {
		"",
		"   ",
		"{",
		"{\"a\":1",
		"{'a':1}",
		"[1,]",
		"{\"a\":1,}",
		"{} x",
		"{}{}",
		"nul",
		"{\"a\":undefined}",
		"\"\xff\"",
		"\"\xc3\"",
		"{\"a\\u0000b\":1}",
		"[\"\\ud800\"]",
		"1e400",
	};
	char out[64];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int r = lg_canon_args(bad[i], strlen(bad[i]), out, sizeof(out));

		if (r != -EINVAL)
			fail_msg("'%s': got %d, want -EINVAL", bad[i], r);
	}
	assert_int_equal(lg_canon_args(NULL, 0, out, sizeof(out)), -EINVAL);
}

/* Only len bytes are read: the input need not be NUL-terminated. */
static void test_len_bounds_input(void **state)
{
	static const char in[] = "{\"b\":1,\"a\":2}garbage";
	char out[64];

	(void)state;
	assert_int_equal(lg_canon_args(in, 13, out, sizeof(out)), 13);
	assert_string_equal(out, "{\"a\":2,\"b\":1}");
	assert_int_equal(lg_canon_args(in, 12, out, sizeof(out)), -EINVAL);
}

static void test_out_too_small(void **state)
{
	static const char in[] = "{\"b\":1,\"a\":2}";
	const char *want = "{\"a\":2,\"b\":1}";
	const size_t n = strlen(want);
	char out[64];

	(void)state;
	/* exactly the length and its NUL: fits */
	memset(out, 'X', sizeof(out));
	assert_int_equal(lg_canon_args(in, strlen(in), out, n + 1), (int)n);
	assert_string_equal(out, want);
	/* one byte less: no room for the NUL */
	assert_int_equal(lg_canon_args(in, strlen(in), out, n), -ENOSPC);
	assert_int_equal(lg_canon_args(in, strlen(in), out, 1), -ENOSPC);
	assert_int_equal(lg_canon_args(in, strlen(in), NULL, 0), -ENOSPC);
	/* a bad input is reported as such even with no room */
	assert_int_equal(lg_canon_args("{", 1, NULL, 0), -EINVAL);
}

/* The same arguments give the same digest, however they were written. */
static void test_digest_of_canonical(void **state)
{
	char a[BIG];
	const char *b;

	(void)state;
	strcpy(a, canon("{\"path\":\"/x\",\"force\":true}"));
	b = canon("{ \"force\": true, \"path\": \"/x\" }");
	assert_true(lg_digest(a, strlen(a)) == lg_digest(b, strlen(b)));
	b = canon("{ \"force\": false, \"path\": \"/x\" }");
	assert_true(lg_digest(a, strlen(a)) != lg_digest(b, strlen(b)));
}

static int target(const char *json, const char *keys, char *out, size_t n)
{
	return lg_canon_target(json, strlen(json), keys, out, n);
}

static void test_target_keys(void **state)
{
	const char *keys = "asset_id, schema, table, path, id, name";
	char out[64];

	(void)state;
	assert_true(target("{\"name\":\"n\",\"asset_id\":\"fact_sales\"}", keys,
			   out, sizeof(out)) > 0);
	assert_string_equal(out, "asset_id=fact_sales"); /* list order wins */
	assert_true(target("{\"id\":42}", keys, out, sizeof(out)) > 0);
	assert_string_equal(out, "id=42");
	assert_int_equal(target("{\"other\":1}", keys, out, sizeof(out)), 0);
	assert_int_equal(target("[1,2]", keys, out, sizeof(out)), 0);
	assert_int_equal(target("not json", keys, out, sizeof(out)), 0);
	assert_int_equal(target("{\"table\":{\"x\":1}}", keys, out,
				sizeof(out)),
			 0); /* objects are not names */
	assert_int_equal(target("{\"table\":\"a_very_long_table_name\"}", keys,
				out, 8),
			 -ENOSPC);
}

static void test_url_targets(void **state)
{
	const char *t = "/assets/{asset_id}, /db/{schema}/tables/{table}";
	char out[64];

	(void)state;
	assert_true(lg_url_target("/assets/fact_sales?force=1", t, out,
				  sizeof(out)) > 0);
	assert_string_equal(out, "asset_id=fact_sales");
	assert_true(lg_url_target("/db/main/tables/orders", t, out,
				  sizeof(out)) > 0);
	assert_string_equal(out, "table=orders");
	assert_int_equal(lg_url_target("/assets/a/b", t, out, sizeof(out)), 0);
	assert_int_equal(lg_url_target("/assets/", t, out, sizeof(out)), 0);
	assert_int_equal(lg_url_target("/other/x", t, out, sizeof(out)), 0);
	assert_int_equal(lg_url_target("/assets/x", NULL, out, sizeof(out)), 0);
}

/* Two calls that do the same thing have one signature; others do not. */
static const struct {
	const char *tool, *a, *b;
	bool same;
} call_cases[] = {
	/* Claude Code rewrites Bash's description on every call */
	{ "Bash",
	  "{\"command\":\"ls /work/d\",\"description\":\"List files in d\"}",
	  "{\"description\":\"Check the directory contents again\",\"command\":\"ls /work/d\"}",
	  true },
	{ "Bash", "{\"command\":\"ls a\",\"description\":\"x\"}",
	  "{\"command\":\"ls b\",\"description\":\"x\"}", false },
	/* gemini-cli */
	{ "run_shell_command",
	  "{\"command\":\"ls d\",\"description\":\"Listing d.\",\"dir_path\":\".\"}",
	  "{\"command\":\"ls d\",\"description\":\"Listing d once more.\",\"dir_path\":\".\"}",
	  true },
	{ "run_shell_command", "{\"command\":\"ls d\",\"dir_path\":\"a\"}",
	  "{\"command\":\"ls d\",\"dir_path\":\"b\"}", false },
	/* Codex: the command is an array, the justification free text */
	{ "shell",
	  "{\"command\":[\"bash\",\"-lc\",\"ls d\"],\"justification\":\"see d\"}",
	  "{\"command\":[\"bash\",\"-lc\",\"ls  d  # again\"],\"justification\":\"look\"}",
	  true },
	/* a tool whose description is real content keeps it */
	{ "create_issue", "{\"title\":\"t\",\"description\":\"one\"}",
	  "{\"title\":\"t\",\"description\":\"two\"}", false },
	/* noise: white space, a counter in a shell comment, key order */
	{ "Bash", "{\"command\":\"rm -f x   # attempt 1\"}",
	  "{\"command\":\"rm -f x # attempt 2\"}", true },
	{ "mcp_tool", "{\"q\":\"  select  1 \",\"n\":2}",
	  "{\"n\":2,\"q\":\"select 1\"}", true },
	/* a '#' inside quotes is the command's, not a comment */
	{ "Bash", "{\"command\":\"echo '# 1'\"}",
	  "{\"command\":\"echo '# 2'\"}", false },
	{ "Bash", "{\"command\":\"grep -c x#1 f\"}",
	  "{\"command\":\"grep -c x#2 f\"}", false },
	/* quoted spaces stay in a shell command */
	{ "Bash", "{\"command\":\"echo 'a  b'\"}",
	  "{\"command\":\"echo 'a b'\"}", false },
	/* ignored everywhere: *:justification */
	{ "anything", "{\"x\":1,\"justification\":\"a\"}",
	  "{\"x\":1,\"justification\":\"b\"}", true },
};

static void test_call_signature(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(call_cases) / sizeof(call_cases[0]);
	     i++) {
		char a[512], b[512];

		assert_true(lg_canon_call(call_cases[i].tool, call_cases[i].a,
					  strlen(call_cases[i].a),
					  LG_DEFAULT_IGNORE_KEYS, a,
					  sizeof(a)) > 0);
		assert_true(lg_canon_call(call_cases[i].tool, call_cases[i].b,
					  strlen(call_cases[i].b),
					  LG_DEFAULT_IGNORE_KEYS, b,
					  sizeof(b)) > 0);
		if ((strcmp(a, b) == 0) != call_cases[i].same)
			fail_msg("case %zu: %s vs %s", i, a, b);
	}
}

static void test_call_ignore_rules(void **state)
{
	char out[256], bad[64];
	const char *bash = "{\"command\":\"ls\",\"description\":\"d\"}";
	const char *mcp = "{\"path\":\"a\",\"why\":\"w\"}";

	(void)state;
	assert_true(lg_canon_call("Bash", bash, strlen(bash), "", out,
				  sizeof(out)) > 0);
	assert_string_equal(out, "{\"command\":\"ls\",\"description\":\"d\"}");
	assert_true(lg_canon_call("mcp__fs__read", mcp, strlen(mcp),
				  "mcp__*:why", out, sizeof(out)) > 0);
	assert_string_equal(out, "{\"path\":\"a\"}");
	assert_true(lg_canon_ignore_valid(LG_DEFAULT_IGNORE_KEYS, bad,
					  sizeof(bad)));
	assert_true(lg_canon_ignore_valid("", bad, sizeof(bad)));
	assert_false(lg_canon_ignore_valid("Bash:description, reason", bad,
					   sizeof(bad)));
	assert_string_equal(bad, "reason");
	assert_false(lg_canon_ignore_valid("a:b:c", bad, sizeof(bad)));
	assert_false(lg_canon_ignore_valid(":x", bad, sizeof(bad)));
	assert_int_equal(lg_canon_call("t", "{", 1, "", out, sizeof(out)),
			 -EINVAL);
}

/* What a call runs, for a person: the shell command, else nothing. */
static void test_command_of_call(void **state)
{
	static const struct {
		const char *args, *want;
	} cases[] = {
		{ "{\"command\":\"rm -rf sub\",\"description\":\"d\"}",
		  "rm -rf sub" }, /* Claude Code's Bash, gemini-cli's */
		{ "{\"cmd\":\"ls -la\",\"workdir\":\"/p\"}", "ls -la" },
		{ "{\"command\":[\"bash\",\"-lc\",\"mv a b\"]}", "mv a b" },
		{ "{\"command\":[\"git\",\"status\"]}", "git status" },
		{ "{\"file_path\":\"/p/a\",\"content\":\"x\"}", "" },
		{ "{\"command\":\"echo cut", "" }, /* cut at 4 KB: not JSON */
		{ "[\"rm\"]", "" },
		{ "{\"command\":[\"rm\",1]}", "" },
	};
	char out[64], small[8];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int r = lg_canon_command(cases[i].args, strlen(cases[i].args),
					 out, sizeof(out));

		assert_int_equal(r, (int)strlen(cases[i].want));
		if (r)
			assert_string_equal(out, cases[i].want);
	}
	/* cut at a whole character: 7 bytes of room, "abcde" then U+20AC (3) */
	{
		const char *a = "{\"command\":\"abcde\u20ac\u20ac\"}";

		assert_int_equal(lg_canon_command(a, strlen(a), small,
						  sizeof(small)),
				 5);
		assert_string_equal(small, "abcde");
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_key_order_independent),
		cmocka_unit_test(test_nested),
		cmocka_unit_test(test_scalars_and_text),
		cmocka_unit_test(test_truncation),
		cmocka_unit_test(test_truncation_makes_equal),
		cmocka_unit_test(test_truncation_where),
		cmocka_unit_test(test_invalid),
		cmocka_unit_test(test_len_bounds_input),
		cmocka_unit_test(test_out_too_small),
		cmocka_unit_test(test_digest_of_canonical),
		cmocka_unit_test(test_target_keys),
		cmocka_unit_test(test_url_targets),
		cmocka_unit_test(test_call_signature),
		cmocka_unit_test(test_call_ignore_rules),
		cmocka_unit_test(test_command_of_call),
	};

	return cmocka_run_group_tests_name("canon", tests, NULL, NULL);
}
