// SPDX-License-Identifier: MIT
/* Unit tests for text.c: the stable digest and UTF-8-safe previews. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "lib/text.h"

/* Published FNV-1a 64 test vectors: the digest must never change. */
static void test_digest_vectors(void **state)
{
	static const struct {
		const char *s;
		uint64_t h;
	} tc[] = {
		{ "", 0xcbf29ce484222325ULL },
		{ "a", 0xaf63dc4c8601ec8cULL },
		{ "foobar", 0x85944171f73967e8ULL },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(tc) / sizeof(tc[0]); i++) {
		uint64_t h = lg_digest(tc[i].s, strlen(tc[i].s));

		if (h != tc[i].h)
			fail_msg("'%s': got %016llx, want %016llx", tc[i].s,
				 (unsigned long long)h,
				 (unsigned long long)tc[i].h);
	}
}

/* Fed in pieces, the digest is the one of the whole. */
static void test_digest_incremental(void **state)
{
	static const char s[] = "delete_asset\0{\"asset_id\":\"x\"}";
	const size_t n = sizeof(s) - 1;
	uint64_t whole = lg_digest(s, n);

	(void)state;
	for (size_t cut = 0; cut <= n; cut++) {
		struct lg_digest d;

		lg_digest_init(&d);
		lg_digest_update(&d, s, cut);
		lg_digest_update(&d, s + cut, n - cut);
		if (lg_digest_final(&d) != whole)
			fail_msg("split at %zu differs", cut);
	}
	/* the NUL inside counts: not the digest of the prefix */
	assert_true(whole != lg_digest(s, strlen(s)));
	assert_true(lg_digest("ab", 2) != lg_digest("ba", 2));
}

static void test_digest_hex(void **state)
{
	char hex[LG_DIGEST_HEX];

	(void)state;
	memset(hex, 'X', sizeof(hex));
	lg_digest_hex(0xaf63dc4c8601ec8cULL, hex);
	assert_string_equal(hex, "af63dc4c8601ec8c");
	lg_digest_hex(1, hex);
	assert_string_equal(hex, "0000000000000001");
	lg_digest_hex(UINT64_MAX, hex);
	assert_string_equal(hex, "ffffffffffffffff");
}

static void test_utf8_seq_len(void **state)
{
	static const struct {
		const char *s;
		size_t len;
	} tc[] = {
		{ "a", 1 },
		{ "\x7f", 1 },
		{ "\xc3\xa9", 2 }, /* é */
		{ "\xe2\x82\xac", 3 }, /* € */
		{ "\xf0\x9f\x98\x80", 4 }, /* 😀 */
		{ "\xf4\x8f\xbf\xbf", 4 }, /* U+10FFFF */
		{ "\x80", 0 }, /* a continuation byte alone */
		{ "\xc0\x80", 0 }, /* overlong NUL */
		{ "\xc1\xbf", 0 },
		{ "\xe0\x80\x80", 0 }, /* overlong */
		{ "\xed\xa0\x80", 0 }, /* a surrogate */
		{ "\xf0\x80\x80\x80", 0 }, /* overlong */
		{ "\xf4\x90\x80\x80", 0 }, /* past U+10FFFF */
		{ "\xf5\x80\x80\x80", 0 },
		{ "\xff", 0 },
		{ "\xc3", 0 }, /* cut short by the NUL */
		{ "\xe2\x82", 0 },
		{ "\xf0\x9f\x98", 0 },
		{ "\xc3z", 0 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(tc) / sizeof(tc[0]); i++) {
		size_t got = lg_utf8_seq_len((const unsigned char *)tc[i].s);

		if (got != tc[i].len)
			fail_msg("case %zu: got %zu, want %zu", i, got,
				 tc[i].len);
	}
}

struct preview_case {
	const char *s;
	size_t size, max_chars;
	const char *want;
};

static void test_preview(void **state)
{
	static const struct preview_case tc[] = {
		{ "short", 64, 10, "short" },
		{ "", 64, 10, "" },
		{ NULL, 64, 10, "" },
		/* exactly max_chars: whole */
		{ "0123456789", 64, 10, "0123456789" },
		/* one more: max_chars - 1 and the ellipsis */
		{ "0123456789a", 64, 10, "012345678\xe2\x80\xa6" },
		/* code points, not bytes */
		{ "\xc3\xa9\xc3\xa9\xc3\xa9", 64, 3,
		  "\xc3\xa9\xc3\xa9\xc3\xa9" },
		{ "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9", 64, 3,
		  "\xc3\xa9\xc3\xa9\xe2\x80\xa6" },
		/* the buffer limits too, at a code point boundary */
		{ "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9", 8, 0,
		  "\xc3\xa9\xc3\xa9\xe2\x80\xa6" },
		{ "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9", 9, 0,
		  "\xc3\xa9\xc3\xa9\xe2\x80\xa6" },
		{ "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9", 10, 0,
		  "\xc3\xa9\xc3\xa9\xc3\xa9\xe2\x80\xa6" },
		{ "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9", 11, 0,
		  "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9" },
		{ "\xf0\x9f\x98\x80\xf0\x9f\x98\x80", 8, 0,
		  "\xf0\x9f\x98\x80\xe2\x80\xa6" },
		/* fits exactly in size with its NUL */
		{ "abc", 4, 0, "abc" },
		{ "abcd", 4, 0, "\xe2\x80\xa6" },
		/* no room for the ellipsis: whole code points only */
		{ "abcdef", 3, 0, "ab" },
		{ "\xc3\xa9\xc3\xa9", 2, 0, "" },
		{ "abcdef", 1, 0, "" },
		{ "ab", 64, 1, "\xe2\x80\xa6" },
		{ "a", 64, 1, "a" },
		/* one line: control characters become spaces */
		{ "a\nb\tc\r\x7f", 64, 0, "a b c  " },
		/* not UTF-8: '?' per bad byte, the rest kept */
		{ "a\xff"
		  "b\xc3(\xed\xa0\x80z",
		  64, 0, "a?b?(???z" },
		{ "\xe2\x82\xac\xe2\x82\xac", 64, 2,
		  "\xe2\x82\xac\xe2\x82\xac" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(tc) / sizeof(tc[0]); i++) {
		char out[64];
		int r;

		memset(out, 'X', sizeof(out));
		r = lg_preview(tc[i].s, out, tc[i].size, tc[i].max_chars);
		if (r != (int)strlen(tc[i].want) || strcmp(out, tc[i].want))
			fail_msg("case %zu: got %d '%s', want '%s'", i, r, out,
				 tc[i].want);
		/* nothing written past size */
		if (tc[i].size < sizeof(out) && out[tc[i].size] != 'X')
			fail_msg("case %zu: wrote past size", i);
	}
}

static void test_preview_no_room(void **state)
{
	char out[4] = "XXX";

	(void)state;
	assert_int_equal(lg_preview("abc", out, 0, 0), -ENOSPC);
	assert_string_equal(out, "XXX");
}

/* Any input gives valid UTF-8 within both limits. */
static void test_preview_always_valid(void **state)
{
	unsigned char in[64];
	char out[32];

	(void)state;
	for (unsigned seed = 1; seed < 2000; seed++) {
		unsigned x = seed;
		size_t max = seed % 12;
		size_t size = 1 + seed % sizeof(out);
		size_t chars = 0;
		int r;

		for (size_t i = 0; i < sizeof(in) - 1; i++) {
			x = x * 1103515245u + 12345u;
			in[i] = (unsigned char)((x >> 16) | 1);
		}
		in[sizeof(in) - 1] = 0;
		r = lg_preview((const char *)in, out, size, max);
		assert_true(r >= 0 && (size_t)r < size);
		assert_int_equal(strlen(out), (size_t)r);
		for (const unsigned char *p = (unsigned char *)out; *p;) {
			size_t len = lg_utf8_seq_len(p);

			if (!len || *p < 0x20 || *p == 0x7f)
				fail_msg("seed %u: bad output", seed);
			p += len;
			chars++;
		}
		if (max && chars > max)
			fail_msg("seed %u: %zu chars, max %zu", seed, chars,
				 max);
	}
}

static void test_price_lookup(void **state)
{
	const char *t =
		"claude-sonnet-*=3/15, gpt-5*=1.25/10 ,gemini-*=0.3/2.5";
	const char *bad = NULL;
	double in = -1, out = -1;

	(void)state;
	assert_int_equal(
		lg_price_lookup(t, "claude-sonnet-4-5", &in, &out, NULL), 1);
	assert_true(in == 3 && out == 15);
	assert_int_equal(lg_price_lookup(t, "gpt-5-mini", &in, &out, NULL), 1);
	assert_true(in == 1.25 && out == 10);
	assert_int_equal(
		lg_price_lookup(t, "gemini-2.5-flash", &in, &out, NULL), 1);
	assert_true(in == 0.3 && out == 2.5);
	assert_int_equal(lg_price_lookup(t, "llama", &in, &out, NULL), 0);
	assert_int_equal(lg_price_lookup(NULL, "x", &in, &out, NULL), 0);
	assert_int_equal(lg_price_lookup(t, NULL, &in, &out, &bad),
			 0); /* valid */
	assert_int_equal(lg_price_lookup("a=1/2, b=oops", NULL, &in, &out,
					 &bad),
			 -EINVAL);
	assert_string_equal(bad, "b=oops");
	assert_int_equal(lg_price_lookup("=1/2", "x", &in, &out, &bad),
			 -EINVAL);
	assert_int_equal(lg_price_lookup("a=1", "a", &in, &out, &bad), -EINVAL);
	assert_int_equal(lg_price_lookup("a=-1/2", "a", &in, &out, &bad),
			 -EINVAL);
}

/* The same bytes as snprintf("%s") and ("%llu"), whatever the room. */
static void test_strtrunc_utoa(void **state)
{
	static const char *const src[] = { "", "a", "abc", "abcdefgh",
					   "\xc3\xa9t\xc3\xa9" };
	static const unsigned long long nums[] = {
		0, 7, 10, 1023, 1024, 4294967295ULL, 18446744073709551615ULL
	};
	char a[16], b[16];

	(void)state;
	for (size_t i = 0; i < sizeof(src) / sizeof(src[0]); i++)
		for (size_t size = 1; size <= sizeof(a); size++) {
			size_t n;

			memset(a, 'x', sizeof(a));
			memset(b, 'x', sizeof(b));
			n = lg_strtrunc(a, size, src[i]);
			snprintf(b, size, "%s", src[i]);
			assert_memory_equal(a, b, sizeof(a));
			assert_int_equal(n, strlen(b));
		}
	for (size_t i = 0; i < sizeof(nums) / sizeof(nums[0]); i++) {
		char u[21];

		snprintf(b, sizeof(b), "%llu", nums[i] % 1000000000000000ULL);
		assert_int_equal(lg_utoa(u, nums[i] % 1000000000000000ULL),
				 strlen(b));
		assert_string_equal(u, b);
	}
	{
		char u[21];

		assert_int_equal(lg_utoa(u, 18446744073709551615ULL), 20);
		assert_string_equal(u, "18446744073709551615");
	}
}

static void test_human_bytes(void **state)
{
	char b[32];

	(void)state;
	lg_human_bytes(0, b, sizeof(b));
	assert_string_equal(b, "0 B");
	lg_human_bytes(999, b, sizeof(b));
	assert_string_equal(b, "999 B");
	lg_human_bytes(1000, b, sizeof(b));
	assert_string_equal(b, "1.0 KB");
	lg_human_bytes(3100000, b, sizeof(b));
	assert_string_equal(b, "3.1 MB");
	lg_human_bytes(999999, b, sizeof(b));
	assert_string_equal(b, "1.0 MB");
	lg_human_bytes(1234567890123ULL, b, sizeof(b));
	assert_string_equal(b, "1.2 TB");
}

/* Issue 41: an emptied file's body found again in another text. */
static void test_lines_sample(void **state)
{
	struct lg_lines_sample smp;
	char body[8192], other[16384];
	size_t n = 0, m = 0;

	(void)state;
	for (int i = 0; i < 100; i++)
		n += (size_t)snprintf(body + n, sizeof(body) - n,
				      "  def handler_%d(req): return %d\n"
				      "\n}\n",
				      i, i * 7);
	lg_lines_sample(body, n, &smp);
	assert_int_equal(smp.n, LG_LINES_SAMPLE);
	/* the whole body, elsewhere and indented otherwise: found */
	m = (size_t)snprintf(other, sizeof(other), "# merged\n");
	for (size_t i = 0; i < n; i++) { /* indented by a tab more */
		if (i == 0 || body[i - 1] == '\n')
			other[m++] = '\t';
		other[m++] = body[i];
	}
	assert_int_equal(lg_lines_found(&smp, other, m), LG_LINES_SAMPLE);
	assert_true(lg_lines_live_on(&smp, LG_LINES_SAMPLE));
	/* half of it: not enough */
	assert_false(lg_lines_live_on(&smp, lg_lines_found(&smp, body, n / 2)));
	assert_true(lg_lines_found(&smp, body, n / 2) >= 3);
	/* short lines only: no sample, nothing lives on */
	lg_lines_sample("}\n\n{\nok\n", 9, &smp);
	assert_int_equal(smp.n, 0);
	assert_false(lg_lines_live_on(&smp, 0));
	/* three distinctive lines: too few to say */
	lg_lines_sample(
		"first line of text\nsecond line of text\nthird line of text",
		58, &smp);
	assert_int_equal(smp.n, 3);
	assert_false(lg_lines_live_on(&smp, 3));
	/* a line repeated is sampled once */
	lg_lines_sample("the same line, again\nthe same line, again\n", 42,
			&smp);
	assert_int_equal(smp.n, 1);
	/* nothing found in an unrelated text */
	lg_lines_sample(body, n, &smp);
	assert_int_equal(lg_lines_found(&smp, "from .core import *\n", 20), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_human_bytes),
		cmocka_unit_test(test_lines_sample),
		cmocka_unit_test(test_strtrunc_utoa),
		cmocka_unit_test(test_digest_vectors),
		cmocka_unit_test(test_digest_incremental),
		cmocka_unit_test(test_digest_hex),
		cmocka_unit_test(test_utf8_seq_len),
		cmocka_unit_test(test_preview),
		cmocka_unit_test(test_preview_no_room),
		cmocka_unit_test(test_preview_always_valid),
		cmocka_unit_test(test_price_lookup),
	};

	return cmocka_run_group_tests_name("text", tests, NULL, NULL);
}
