// SPDX-License-Identifier: MIT
/* Unit tests for termtext.c: terminal output reduced to the text it shows. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "termtext.h"

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plain_and_crlf),
		cmocka_unit_test(test_ansi_removed),
		cmocka_unit_test(test_redraws),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
