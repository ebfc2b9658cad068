// SPDX-License-Identifier: MIT
/* Unit tests for audit.c's JSON: always valid UTF-8, nothing lost. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "record/audit.h"
#include "lib/json.h"

static const char *one(struct lg_json *j, const char *key, const char *val)
{
	lg_json_begin(j);
	lg_json_str(j, key, val);
	return lg_json_end(j);
}

static void test_valid_text_as_is(void **state)
{
	struct lg_json j = { 0 };

	(void)state;
	assert_string_equal(
		one(&j, "target", "/data/caf\xc3\xa9 \xf0\x9f\x98\x80"),
		"{\"target\":\"/data/caf\xc3\xa9 \xf0\x9f\x98\x80\"}");
	assert_string_equal(one(&j, "s", "q\"b\\"), "{\"s\":\"q\\\"b\\\\\"}");
	lg_json_free(&j);
}

static void test_controls_escaped(void **state)
{
	struct lg_json j = { 0 };

	(void)state;
	assert_string_equal(one(&j, "s", "a\nb\x1b]0;t\x07\x7f"),
			    "{\"s\":\"a\\u000ab\\u001b]0;t\\u0007\\u007f\"}");
	/* C1 controls and the JavaScript line separators, as code points */
	assert_string_equal(one(&j, "s", "\xc2\x9b\xe2\x80\xa8"),
			    "{\"s\":\"\\u009b\\u2028\"}");
	lg_json_free(&j);
}

/* Not UTF-8: U+FFFD in the value, the exact bytes in <key>_b64. */
static void test_invalid_bytes(void **state)
{
	struct lg_json j = { 0 };

	(void)state;
	assert_string_equal(one(&j, "target", "/x/\xff\xfe"),
			    "{\"target\":\"/x/\xef\xbf\xbd\xef\xbf\xbd\","
			    "\"target_b64\":\"L3gv//4=\"}");
	/* overlong, surrogate, cut short */
	assert_string_equal(
		one(&j, "t", "\xc0\xaf"),
		"{\"t\":\"\xef\xbf\xbd\xef\xbf\xbd\",\"t_b64\":\"wK8=\"}");
	assert_string_equal(one(&j, "t", "\xed\xa0\x80"),
			    "{\"t\":\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\","
			    "\"t_b64\":\"7aCA\"}");
	assert_string_equal(
		one(&j, "t", "ab\xe2\x82"),
		"{\"t\":\"ab\xef\xbf\xbd\xef\xbf\xbd\",\"t_b64\":\"YWLigg==\"}");
	lg_json_free(&j);
}

/* integers by hand: the extremes, and keys that need escaping */
static void test_ints_and_keys(void **state)
{
	static const long long v[] = { 0,	  7,	    -1,
				       10,	  -10,	    1234567890123LL,
				       LLONG_MAX, LLONG_MIN };
	struct lg_json j = { 0 };
	char want[64];

	(void)state;
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		lg_json_begin(&j);
		lg_json_int(&j, "n", v[i]);
		snprintf(want, sizeof(want), "{\"n\":%lld}", v[i]);
		assert_string_equal(lg_json_end(&j), want);
	}
	lg_json_begin(&j);
	lg_json_int(&j, "a\"b\n", 1);
	lg_json_int(&j, "caf\xc3\xa9", 2);
	assert_string_equal(lg_json_end(&j),
			    "{\"a\\\"b\\u000a\":1,\"caf\xc3\xa9\":2}");
	lg_json_free(&j);
}

static void test_field_unescapes(void **state)
{
	struct lg_json j = { 0 };
	char out[128];

	(void)state;
	lg_json_field(one(&j, "s", "a\x1b[2J\"q\\"), "s", out, sizeof(out));
	assert_string_equal(out, "a\x1b[2J\"q\\");
	lg_json_field("{\"s\":\"\\u00e9\\ud83d\\ude00\\n\"}", "s", out,
		      sizeof(out));
	assert_string_equal(out, "\xc3\xa9\xf0\x9f\x98\x80\n");
	lg_json_field("{\"n\":42,\"s\":\"x\"}", "n", out, sizeof(out));
	assert_string_equal(out, "42");
	/* a lone surrogate is U+FFFD, never invalid UTF-8 */
	lg_json_field("{\"s\":\"\\ud800x\"}", "s", out, sizeof(out));
	assert_string_equal(out, "\xef\xbf\xbdx");
	/* cut at a whole character when out is small */
	lg_json_field("{\"s\":\"ab\\u00e9\"}", "s", out, 4);
	assert_string_equal(out, "ab");
	lg_json_free(&j);
}

static void test_begin_ids(void **state)
{
	struct lg_json j = { 0 };
	char id[64];

	(void)state;
	/* 2026-11-25T17:00:00.123Z */
	lg_audit_begin(&j, 1795626000123456789LL, "s-1", "7", id, sizeof(id));
	assert_string_equal(id, "s-1#7");
	assert_string_equal(
		lg_json_end(&j),
		"{\"time\":\"2026-11-25T17:00:00.123Z\",\"id\":\"s-1#7\",\"session\":\"s-1\"}");
	lg_json_free(&j);
	/* lgctl's records: the time in ms */
	lg_audit_begin(&j, 1795626000123456789LL, "s-1", NULL, id, sizeof(id));
	assert_string_equal(id, "s-1#1795626000123");
	lg_json_free(&j);
}

/* The record's time, made without libc's time zone code, is gmtime's. */
static void test_time_iso_is_gmtime(void **state)
{
	static const int64_t at[] = {
		0,	     -1,	 951782400,  951868799,	 4107542400,
		-2208988800, 9000000000, 1795626000, 1709164800, -5000000000,
	};
	char got[40], want[64];

	(void)state;
	for (int64_t i = 0; i < 4000; i++) {
		/* every day of ~11 years around 2000 and 2100, then the table */
		int64_t s = i < 2000 ? 946684800 + (i - 1000) * 86400 + i * 7 :
			    i < 3990 ? 4102444800 + (i - 3000) * 86400 + i :
				       at[i - 3990];
		time_t t = (time_t)s;
		struct tm tm;
		int64_t ns = s * 1000000000LL + 987654321;

		gmtime_r(&t, &tm);
		snprintf(want, sizeof(want),
			 "%04d-%02d-%02dT%02d:%02d:%02d.987Z",
			 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
			 tm.tm_hour, tm.tm_min, tm.tm_sec);
		lg_time_iso(ns, got, sizeof(got));
		assert_string_equal(got, want);
	}
	/* before 1970 the milliseconds still count up from the second */
	lg_time_iso(-1, got, sizeof(got));
	assert_string_equal(got, "1969-12-31T23:59:59.999Z");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid_text_as_is),
		cmocka_unit_test(test_controls_escaped),
		cmocka_unit_test(test_invalid_bytes),
		cmocka_unit_test(test_ints_and_keys),
		cmocka_unit_test(test_field_unescapes),
		cmocka_unit_test(test_begin_ids),
		cmocka_unit_test(test_time_iso_is_gmtime),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
