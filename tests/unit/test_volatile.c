// SPDX-License-Identifier: MIT
/*
 * Unit tests for preload/volatile.c: what two runs of the same tool call
 * may differ in without any progress is masked, nothing else.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "../../preload/volatile.h"

static const struct {
	const char *in, *want;
} mask_cases[] = {
	/* gemini-cli's run_shell_command result */
	{ "Command: ls d\nDirectory: (root)\nOutput: a b\nError: (none)\n"
	  "Exit Code: 0\nSignal: (none)\nBackground PIDs: (none)\n"
	  "Process Group PGID: 48213",
	  "Command: ls d\nDirectory: (root)\nOutput: a b\nError: (none)\n"
	  "Exit Code: 0\nSignal: (none)\nBackground PIDs: (none)\n"
	  "Process Group PGID: <n>" },
	{ "Background PIDs: 1234, 1240", "Background PIDs: <n>" },
	/* Codex's exec output */
	{ "Exit code: 0\nWall time: 0.1 seconds\nOutput:\na\nb\n",
	  "Exit code: 0\nWall time: <n>\nOutput:\na\nb\n" },
	{ "Chunk ID: 3f2a9c\nWall time: 0.0512 seconds\nProcess exited with "
	  "code 0\nOriginal token count: 5\nOutput:\nf1\nf2\n",
	  "Chunk ID: <id>\nWall time: <n>\nProcess exited with code 0\n"
	  "Original token count: 5\nOutput:\nf1\nf2\n" },
	{ "Process running with session ID 12345",
	  "Process running with session ID <id>" },
	{ "{\"pid\": 4242, \"ok\": true}", "{\"pid\": <n>, \"ok\": true}" },
	{ "pid=17 tid=18", "pid=<n> tid=<n>" },
	{ "Done in 0.53s.", "Done in <n>." },
	{ "tests passed (12 ms)", "tests passed (<n>)" },
	{ "took 3.2 seconds", "took <n>" },
	{ "at 2026-11-23T21:52:01.123Z ok", "at <time> ok" },
	{ "2026-11-23 21:52:01+01:00", "<time>" },
	{ "[21:52:01] build", "[<time>] build" },
	{ "request id: req_01ABCdef-9", "request id: <id>" },
	{ "\"request_id\":\"a1b2c3\"", "\"request_id\":\"<id>\"" },
	{ "trace 123e4567-e89b-12d3-a456-426614174000 end",
	  "trace <uuid> end" },
	{ "at 0x7ffd12345678", "at <addr>" },
	{ "wrote /tmp/tmpa8x_k2q9/out.txt", "wrote <tmp>/out.txt" },
	{ "/tmp/lgtest.Ab12Cd", "<tmp>" },
	/* kept: what is content */
	{ "total 12\n-rw-r--r-- 1 root root 5 f1",
	  "total 12\n-rw-r--r-- 1 root root 5 f1" },
	{ "2026-11-23", "2026-11-23" },
	{ "rapid: 5", "rapid: 5" },
	{ "/tmp/notes", "/tmp/notes" },
	{ "/tmp/buildlog", "/tmp/buildlog" },
	{ "version 1.2.3", "version 1.2.3" },
	{ "12s3", "12s3" },
	{ "pid", "pid" },
	{ "", "" },
};

static void test_mask(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(mask_cases) / sizeof(mask_cases[0]);
	     i++) {
		char out[512];

		lg_volatile_mask(mask_cases[i].in, strlen(mask_cases[i].in),
				 out, sizeof(out));
		if (strcmp(out, mask_cases[i].want) != 0)
			fail_msg("case %zu: \"%s\" -> \"%s\", want \"%s\"", i,
				 mask_cases[i].in, out, mask_cases[i].want);
	}
}

/* Two real results that differ in content stay different. */
static void test_content_differs(void **state)
{
	const char *a = "Command: ls a\nOutput: x\nProcess Group PGID: 1";
	const char *b = "Command: ls b\nOutput: x\nProcess Group PGID: 2";
	const char *c = "Command: ls a\nOutput: x\nProcess Group PGID: 77";
	char ma[128], mb[128], mc[128];

	(void)state;
	lg_volatile_mask(a, strlen(a), ma, sizeof(ma));
	lg_volatile_mask(b, strlen(b), mb, sizeof(mb));
	lg_volatile_mask(c, strlen(c), mc, sizeof(mc));
	assert_string_not_equal(ma, mb);
	assert_string_equal(ma, mc);
}

static void test_bounds(void **state)
{
	char out[8];
	const char *s = "pid: 12345 and a long tail";

	(void)state;
	assert_int_equal(lg_volatile_mask(s, strlen(s), out, sizeof(out)), 7);
	assert_string_equal(out, "pid: <n");
	/* a key or a number cut at the end of the buffer */
	assert_int_equal(lg_volatile_mask("pid:", 4, out, sizeof(out)), 4);
	assert_int_equal(lg_volatile_mask("2026-11-2", 9, out, sizeof(out)), 7);
	assert_int_equal(lg_volatile_mask("x", 1, out, 0), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mask),
		cmocka_unit_test(test_content_differs),
		cmocka_unit_test(test_bounds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
