// SPDX-License-Identifier: MIT
/* Unit tests for agentenv.c: which command lines run an agent CLI. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "egress/agentenv.h"

static const char *is(const char *a0, const char *a1, const char *a2)
{
	char *argv[4] = { (char *)a0, (char *)a1, (char *)a2, NULL };

	return lg_agentenv_is_agent(argv);
}

static void test_agents(void **state)
{
	(void)state;
	assert_string_equal(is("codex", "exec", "hi"), "codex");
	assert_string_equal(is("/usr/local/bin/claude", "-p", "x"), "claude");
	assert_string_equal(is("timeout", "90", "gemini"), "gemini");
	assert_string_equal(is("npx", "@openai/codex", NULL), "codex");
	assert_string_equal(is("sh", "-c", "exec claude -p 'fix it'"),
			    "claude");
	assert_string_equal(
		is("node",
		   "/home/u/.npm/lib/node_modules/@anthropic-ai/claude-code/cli.js",
		   NULL),
		"claude");
	assert_string_equal(is("cursor-agent", NULL, NULL), "cursor-agent");
}

/* Other commands: no egress proxy, no TLS set-up paid. */
static void test_others(void **state)
{
	(void)state;
	assert_null(is("make", "-j2", NULL));
	assert_null(is("true", NULL, NULL));
	/* a name inside a longer word is not the CLI */
	assert_null(is("./mycodexes", "claudette", NULL));
	assert_null(is("geminis", "codex_tool", "xclaude"));
	assert_null(lg_agentenv_is_agent(NULL));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_agents),
		cmocka_unit_test(test_others),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
