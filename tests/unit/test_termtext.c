// SPDX-License-Identifier: MIT
/* Unit tests for termtext.c: terminal output reduced to the text it shows. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "lib/termtext.h"

static char got[8192];
static size_t got_len;

static void collect(void *ctx, const char *line, size_t n)
{
	(void)ctx;
	if (got_len + n < sizeof(got)) {
		memcpy(got + got_len, line, n);
		got_len += n;
		got[got_len] = '\0';
	}
}

/* Whole, and one byte at a time: the same text comes out. */
static void check(const char *in, const char *want)
{
	struct lg_termtext t;

	memset(&t, 0, sizeof(t));
	got_len = 0;
	got[0] = '\0';
	lg_termtext_feed(&t, in, strlen(in), collect, NULL);
	lg_termtext_flush(&t, collect, NULL);
	assert_string_equal(got, want);
	memset(&t, 0, sizeof(t));
	got_len = 0;
	got[0] = '\0';
	for (size_t i = 0; in[i]; i++)
		lg_termtext_feed(&t, in + i, 1, collect, NULL);
	lg_termtext_flush(&t, collect, NULL);
	assert_string_equal(got, want);
}

static void test_plain_and_crlf(void **state)
{
	(void)state;
	check("hello\nworld\n", "hello\nworld\n");
	check("a\r\nb\r\n", "a\nb\n");
	check("no newline at the end", "no newline at the end\n");
}

static void test_ansi_removed(void **state)
{
	(void)state;
	check("\x1b[1;31mred\x1b[0m text\n", "red text\n");
	check("\x1b]0;window title\x07shown\n", "shown\n");
	check("\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\\n", "link\n");
	check("\x1b"
	      "7saved\x1b"
	      "8\n",
	      "saved\n");
}

static void test_redraws(void **state)
{
	(void)state;
	/* a progress bar redrawn in place: only its last state remains */
	check("[#   ] 25%\r[##  ] 50%\r[####] 100%\ndone\n",
	      "[####] 100%\ndone\n");
	check("abc\b\bX\n", "aX\n");
	check("bell\x07 and\x01 controls\n", "bell and controls\n");
}

/* in is a literal: its bytes, a NUL inside them too */
#define esc(in, want) esc_n(in, sizeof(in) - 1, want)

static void esc_n(const char *in, size_t n, const char *want)
{
	char out[256];

	lg_term_escape(out, sizeof(out), in, n);
	assert_string_equal(out, want);
}

/* What a name cannot do to the terminal or to our lines. */
static void test_term_escape(void **state)
{
	char small[8];

	(void)state;
	esc("plain name.txt", "plain name.txt");
	esc("caf\xc3\xa9 \xe2\x82\xac", "caf\xc3\xa9 \xe2\x82\xac");
	esc("x\nlgrun: all clear", "x\\nlgrun: all clear");
	esc("a\rb\tc", "a\\rb\tc");
	esc("\x1b]0;pwned\x07", "\\x1b]0;pwned\\x07");
	esc("\x1b[2J\x7f", "\\x1b[2J\\x7f");
	esc("\xc2\x9b"
	    "31m",
	    "\\u009b31m"); /* C1 CSI */
	esc("\xff\xfe", "\\xff\\xfe");
	esc("\xc0\xaf", "\\xc0\\xaf"); /* overlong '/' */
	esc("\xed\xa0\x80", "\\xed\\xa0\\x80"); /* a surrogate */
	esc("\xe2\x82", "\\xe2\\x82"); /* cut short */
	/* full: cut at a whole escape, always terminated */
	lg_term_escape(small, sizeof(small), "ab\x1b\x1b", 4);
	assert_string_equal(small, "ab\\x1b");
}

static void test_utf8_len(void **state)
{
	unsigned cp = 0;

	(void)state;
	assert_int_equal(lg_utf8_len((const unsigned char *)"A", 1, &cp), 1);
	assert_int_equal(cp, 'A');
	assert_int_equal(lg_utf8_len((const unsigned char *)"\xf0\x9f\x98\x80",
				     4, &cp),
			 4);
	assert_int_equal(cp, 0x1f600);
	assert_int_equal(lg_utf8_len((const unsigned char *)"\xf4\x90\x80\x80",
				     4, &cp),
			 0); /* past U+10FFFF */
	assert_int_equal(lg_utf8_len((const unsigned char *)"\x80", 1, &cp), 0);
	assert_int_equal(
		lg_utf8_len((const unsigned char *)"\xe0\x80\x80", 3, &cp), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plain_and_crlf),
		cmocka_unit_test(test_ansi_removed),
		cmocka_unit_test(test_redraws),
		cmocka_unit_test(test_term_escape),
		cmocka_unit_test(test_utf8_len),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
