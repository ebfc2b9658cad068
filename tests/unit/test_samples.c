// SPDX-License-Identifier: MIT
/*
 * Real tool calls and results of Claude Code, gemini-cli and Codex
 * (tests/unit/samples/, captured from the CLIs: see its README) through
 * the signature the repeat detector compares: the same `ls d` three times
 * is one signature, `ls a` and `ls b` are two.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <jansson.h>

#include "../../preload/volatile.h"
#include "lib/canon.h"
#include "llm/llm.h"

#define DIR "tests/unit/samples/"

static json_t *load(const char *agent, const char *kind, const char *which)
{
	char path[256];
	json_error_t e;
	json_t *j;

	snprintf(path, sizeof(path), DIR "%s_bash_%s_%s.json", agent, kind,
		 which);
	j = json_load_file(path, 0, &e);
	if (!j)
		fail_msg("%s: %s (run the unit tests from the source tree)",
			 path, e.text);
	return j;
}

/* The call's signature arguments, as the proxy makes them. */
static void call_sig(const char *agent, const char *which, char *out,
		     size_t size)
{
	json_t *c = load(agent, "call", which), *args;
	const char *name;
	char *text;

	if (strcmp(agent, "gemini") == 0) {
		json_t *fc = json_object_get(c, "functionCall");

		name = json_string_value(json_object_get(fc, "name"));
		args = json_object_get(fc, "args");
		text = json_dumps(args, JSON_COMPACT);
	} else if (strcmp(agent, "codex") == 0) {
		name = json_string_value(json_object_get(c, "name"));
		text = strdup(
			json_string_value(json_object_get(c, "arguments")));
	} else {
		name = json_string_value(json_object_get(c, "name"));
		text = json_dumps(json_object_get(c, "input"), JSON_COMPACT);
	}
	assert_non_null(name);
	assert_non_null(text);
	assert_true(lg_canon_call(name, text, strlen(text),
				  LG_DEFAULT_IGNORE_KEYS, out, size) > 0);
	free(text);
	json_decref(c);
}

struct got {
	char content[4096];
	int n;
};

static void on_result(void *ctx, const struct lg_llm_result *r)
{
	struct got *g = ctx;

	g->n++;
	lg_volatile_mask(r->content, strlen(r->content), g->content,
			 sizeof(g->content));
}

/* The result as the proxy reads it from the next request, masked. */
static void result_sig(const char *agent, const char *which, char *out,
		       size_t size)
{
	json_t *r = load(agent, "result", which), *req;
	enum lg_llm_api api;
	struct got g = { "", 0 };
	char model[64];
	char *body;

	if (strcmp(agent, "gemini") == 0) {
		api = LG_LLM_GEMINI;
		req = json_pack("{s:[{s:s,s:[O]}]}", "contents", "role", "user",
				"parts", r);
	} else if (strcmp(agent, "codex") == 0) {
		api = LG_LLM_OPENAI_RESPONSES;
		req = json_pack("{s:s,s:[O]}", "model", "gpt-5.5", "input", r);
	} else {
		api = LG_LLM_ANTHROPIC;
		req = json_pack("{s:s,s:[{s:s,s:[O]}]}", "model", "claude",
				"messages", "role", "user", "content", r);
	}
	body = json_dumps(req, JSON_COMPACT);
	assert_non_null(body);
	lg_llm_request_last_results(api, body, strlen(body), on_result, &g,
				    model, sizeof(model));
	assert_int_equal(g.n, 1);
	snprintf(out, size, "%s", g.content);
	free(body);
	json_decref(req);
	json_decref(r);
}

static void same_and_different(const char *agent)
{
	char a[4096], b[4096], x[4096];

	call_sig(agent, "1", a, sizeof(a));
	call_sig(agent, "2", b, sizeof(b));
	assert_string_equal(a, b);
	call_sig(agent, "3", b, sizeof(b));
	assert_string_equal(a, b);
	call_sig(agent, "ls_a", a, sizeof(a));
	call_sig(agent, "ls_b", b, sizeof(b));
	assert_string_not_equal(a, b);

	result_sig(agent, "1", a, sizeof(a));
	result_sig(agent, "2", b, sizeof(b));
	assert_string_equal(a, b);
	result_sig(agent, "3", x, sizeof(x));
	assert_string_equal(a, x);
	result_sig(agent, "ls_a", a, sizeof(a));
	result_sig(agent, "ls_b", b, sizeof(b));
	assert_string_not_equal(a, b);
}

static void test_claude(void **state)
{
	(void)state;
	same_and_different("claude");
}

static void test_gemini(void **state)
{
	(void)state;
	same_and_different("gemini");
}

static void test_codex(void **state)
{
	char a[4096], b[4096];

	(void)state;
	same_and_different("codex");
	/* a command that took time: its Wall time is not progress */
	result_sig("codex", "1", a, sizeof(a));
	result_sig("codex", "slow", b, sizeof(b));
	assert_string_equal(a, b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_claude),
		cmocka_unit_test(test_gemini),
		cmocka_unit_test(test_codex),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
