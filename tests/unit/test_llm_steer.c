// SPDX-License-Identifier: MIT
/*
 * Unit tests for supervisor/llm/steer.c: lgrun's notes put into the real
 * request bodies of Claude Code, Codex (HTTP and websocket) and gemini-cli
 * (Gemini API and Code Assist), captured from the CLIs
 * (tests/unit/samples/requests/, see its README), and into made ones (Chat
 * Completions): the result is a request of that API, the note sits where
 * the at says, the tool results are the same ones, and the later request of
 * the conversation gets the note at the same place. Bodies that are not
 * the API's stay untouched.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <jansson.h>

#include "llm/llm.h"
#include "llm/steer.h"

#define DIR "tests/unit/samples/requests/"
#define NOTE "lgrun: a note for the model"
#define NOTE2 "lgrun: a second note"

struct body {
	char *p;
	size_t n;
};

static struct body read_sample(const char *name)
{
	char path[256];
	struct body b = { 0 };
	FILE *f;
	long n;

	snprintf(path, sizeof(path), DIR "%s", name);
	f = fopen(path, "rb");
	if (!f)
		fail_msg(
			"%s: cannot open (run the unit tests from the source tree)",
			path);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	b.p = malloc((size_t)n + 1);
	assert_non_null(b.p);
	assert_int_equal(fread(b.p, 1, (size_t)n, f), (size_t)n);
	b.p[n] = '\0';
	b.n = (size_t)n;
	fclose(f);
	return b;
}

/* The conversation's array in a parsed request (borrowed). */
static json_t *conv(enum lg_llm_api api, json_t *root)
{
	json_t *req = json_object_get(root, "request");

	switch (api) {
	case LG_LLM_ANTHROPIC:
	case LG_LLM_OPENAI_CHAT:
		return json_object_get(root, "messages");
	case LG_LLM_OPENAI_RESPONSES:
		return json_object_get(root, "input");
	default:
		if (json_is_object(req) && !json_object_get(root, "contents"))
			return json_object_get(req, "contents");
		return json_object_get(root, "contents");
	}
}

/* --- the tool results, as the proxy reads them --------------------------- */

struct results {
	char log[65536];
	size_t n;
};

static void on_result(void *ctx, const struct lg_llm_result *r)
{
	struct results *rs = ctx;
	int k = snprintf(rs->log + rs->n, sizeof(rs->log) - rs->n,
			 "[%s|%s|%d|%s]", r->call_id, r->name, r->is_error,
			 r->content);

	assert_true(k > 0 && (size_t)k < sizeof(rs->log) - rs->n);
	rs->n += (size_t)k;
}

/*
 * The results are the same ones, and those answering the last turn are
 * still found: all of them, or (Responses, whose items of several turns
 * run together when a note does not stand between them) the last ones.
 */
static void same_results(enum lg_llm_api api, const struct body *a,
			 const char *b, size_t bn)
{
	struct results *ra = calloc(1, sizeof(*ra)),
		       *rb = calloc(1, sizeof(*rb));
	char ma[128], mb[128];
	int na, nb;

	assert_non_null(ra);
	assert_non_null(rb);
	na = lg_llm_request_last_results(api, a->p, a->n, on_result, ra, ma,
					 sizeof(ma));
	nb = lg_llm_request_last_results(api, b, bn, on_result, rb, mb,
					 sizeof(mb));
	assert_true(na > 0);
	assert_true(nb > 0 && nb <= na);
	assert_true(rb->n <= ra->n);
	assert_string_equal(ra->log + ra->n - rb->n, rb->log);
	assert_string_equal(ma, mb);
	memset(ra, 0, sizeof(*ra));
	memset(rb, 0, sizeof(*rb));
	na = lg_llm_request_results(api, a->p, a->n, on_result, ra, NULL, 0);
	nb = lg_llm_request_results(api, b, bn, on_result, rb, NULL, 0);
	assert_int_equal(na, nb);
	assert_string_equal(ra->log, rb->log);
	free(ra);
	free(rb);
}

/* --- where the note went ------------------------------------------------- */

enum where {
	APPENDED, /* the last block of item idx */
	INSERTED, /* item idx is a new user message of the note */
};

static const char *text_of_block(enum lg_llm_api api, const json_t *b)
{
	if (api == LG_LLM_ANTHROPIC)
		assert_string_equal(
			json_string_value(json_object_get(b, "type")), "text");
	if (api == LG_LLM_OPENAI_RESPONSES)
		assert_string_equal(
			json_string_value(json_object_get(b, "type")),
			"input_text");
	return json_string_value(json_object_get(b, "text"));
}

static json_t *blocks(enum lg_llm_api api, const json_t *m)
{
	return json_object_get(m, api == LG_LLM_GEMINI ? "parts" : "content");
}

static void note_at(enum lg_llm_api api, const json_t *a, size_t idx,
		    enum where w, const char *text)
{
	const json_t *m = json_array_get(a, idx), *bl;

	assert_non_null(m);
	if (api == LG_LLM_GEMINI || api == LG_LLM_ANTHROPIC ||
	    api == LG_LLM_OPENAI_RESPONSES)
		if (w == INSERTED || api != LG_LLM_GEMINI)
			assert_string_equal(
				json_string_value(json_object_get(m, "role")),
				"user");
	if (api == LG_LLM_OPENAI_CHAT) {
		assert_int_equal(w, INSERTED);
		assert_string_equal(
			json_string_value(json_object_get(m, "content")), text);
		assert_int_equal(json_object_size(m), 2);
		return;
	}
	if (api == LG_LLM_OPENAI_RESPONSES && w == INSERTED)
		assert_string_equal(
			json_string_value(json_object_get(m, "type")),
			"message");
	bl = blocks(api, m);
	assert_true(json_is_array(bl));
	if (w == INSERTED)
		assert_int_equal(json_array_size(bl), 1);
	assert_string_equal(
		text_of_block(api, json_array_get(bl, json_array_size(bl) - 1)),
		text);
}

/* Item m carries a tool result first (the note never goes before it). */
static void results_first(enum lg_llm_api api, const json_t *m)
{
	const json_t *b0 = json_array_get(blocks(api, m), 0);

	if (api == LG_LLM_ANTHROPIC)
		assert_string_equal(
			json_string_value(json_object_get(b0, "type")),
			"tool_result");
	else
		assert_non_null(json_object_get(b0, "functionResponse"));
}

/* Claude Code moves its cache breakpoint to the newest block: not content. */
static void strip_cache(json_t *v)
{
	const char *k;
	json_t *x;
	size_t i;

	if (json_is_object(v)) {
		json_object_del(v, "cache_control");
		json_object_foreach(v, k, x)
		{
			strip_cache(x);
		}
	} else if (json_is_array(v)) {
		json_array_foreach(v, i, x)
		{
			strip_cache(x);
		}
	}
}

/* --- one API, on its two requests ---------------------------------------- */

struct steer_case {
	enum lg_llm_api api;
	const char *first, *later; /* a request with a result, and the next */
	size_t items; /* the agent's items in first */
	bool stateful;
	/* the note at the end: where it goes */
	enum where end_where;
	size_t end_idx;
	/* and at an earlier at */
	size_t early_at;
	enum where early_where;
	size_t early_idx;
};

static json_t *apply(const struct steer_case *c, const struct body *b,
		     const struct lg_steer_note *notes, size_t n, int expect)
{
	char *out = NULL;
	size_t len = 0;
	json_t *root;

	assert_int_equal(lg_llm_steer_apply(c->api, b->p, b->n, notes, n, &out,
					    &len),
			 expect);
	assert_non_null(out);
	assert_int_equal(strlen(out), len);
	root = json_loadb(out, len, 0, NULL);
	assert_true(json_is_object(root));
	same_results(c->api, b, out, len);
	free(out);
	return root;
}

static void run_case(const struct steer_case *c)
{
	struct body b = read_sample(c->first);
	struct lg_steer_note note = { NOTE, 0 };
	json_t *orig = json_loadb(b.p, b.n, 0, NULL), *got, *a;
	size_t items = 0;
	bool stateful = !c->stateful;

	assert_non_null(orig);
	assert_int_equal(
		lg_llm_steer_items(c->api, b.p, b.n, &items, &stateful), 0);
	assert_int_equal(items, c->items);
	assert_int_equal(stateful, c->stateful);

	/* at the end: after the tool results */
	note.at = items;
	got = apply(c, &b, &note, 1, 1);
	a = conv(c->api, got);
	note_at(c->api, a, c->end_idx, c->end_where, NOTE);
	assert_int_equal(json_array_size(a),
			 items + (c->end_where == INSERTED));
	if (c->end_where == APPENDED)
		results_first(c->api, json_array_get(a, c->end_idx));
	/* nothing else changed: the note out, it is the request again */
	if (c->end_where == INSERTED)
		json_array_remove(a, c->end_idx);
	else
		json_array_remove(
			blocks(c->api, json_array_get(a, c->end_idx)),
			json_array_size(
				blocks(c->api, json_array_get(a, c->end_idx))) -
				1);
	assert_true(json_equal(got, orig));
	json_decref(got);

	/* earlier in the conversation */
	note.at = c->early_at;
	got = apply(c, &b, &note, 1, 1);
	a = conv(c->api, got);
	note_at(c->api, a, c->early_idx, c->early_where, NOTE);
	json_decref(got);

	/* past the end (the conversation was cut): the end */
	note.at = items + 40;
	got = apply(c, &b, &note, 1, 1);
	note_at(c->api, conv(c->api, got), c->end_idx, c->end_where, NOTE);
	json_decref(got);

	/*
	 * The later request of the conversation gets it at the same place:
	 * the first request with its note is where the later one starts.
	 */
	if (c->later) {
		struct body l = read_sample(c->later);
		json_t *first, *later, *fa, *la;
		size_t litems = 0;

		note.at = items;
		first = apply(c, &b, &note, 1, 1);
		assert_int_equal(lg_llm_steer_items(c->api, l.p, l.n, &litems,
						    &stateful),
				 0);
		assert_true(litems > items);
		later = apply(c, &l, &note, 1, 1);
		strip_cache(first);
		strip_cache(later);
		fa = conv(c->api, first);
		la = conv(c->api, later);
		assert_int_equal(json_array_size(la),
				 litems + (c->end_where == INSERTED));
		for (size_t i = 0; i < json_array_size(fa); i++)
			assert_true(json_equal(json_array_get(fa, i),
					       json_array_get(la, i)));
		note_at(c->api, la, c->end_idx, c->end_where, NOTE);
		json_decref(first);
		json_decref(later);
		free(l.p);
	}

	/* two notes: the earlier one at its own place, as given */
	{
		struct lg_steer_note two[3] = { { NOTE2, 0 }, { NOTE, 0 } };

		two[0].at = c->early_at;
		two[1].at = items;
		got = apply(c, &b, two, 2, 2);
		a = conv(c->api, got);
		note_at(c->api, a, c->end_idx + (c->early_where == INSERTED),
			c->end_where, NOTE);
		note_at(c->api, a, c->early_idx, c->early_where, NOTE2);
		json_decref(got);
	}
	json_decref(orig);
	free(b.p);
}

/*
 * Claude Code's second request: user (2 text blocks), a "system" message,
 * assistant (tool_use), user (tool_result).
 */
static void test_anthropic(void **state)
{
	const struct steer_case c = {
		LG_LLM_ANTHROPIC,
		"anthropic_2.json",
		"anthropic_3.json",
		4,
		false,
		APPENDED,
		3,
		/* at 2: after the "system" message, a user message of its own */
		2,
		INSERTED,
		2,
	};
	struct body b = read_sample(c.first);
	struct lg_steer_note n = { NOTE, 1 };
	json_t *got, *a;

	(void)state;
	run_case(&c);
	/* at 1: the first user message, its third block */
	got = apply(&c, &b, &n, 1, 1);
	a = conv(c.api, got);
	note_at(c.api, a, 0, APPENDED, NOTE);
	assert_int_equal(json_array_size(blocks(c.api, json_array_get(a, 0))),
			 3);
	json_decref(got);
	/*
	 * at 3: after the assistant's tool_use comes its tool_result message,
	 * nothing in between (the API refuses it): the note joins it, last.
	 */
	n.at = 3;
	got = apply(&c, &b, &n, 1, 1);
	a = conv(c.api, got);
	assert_int_equal(json_array_size(a), 4);
	note_at(c.api, a, 3, APPENDED, NOTE);
	results_first(c.api, json_array_get(a, 3));
	json_decref(got);
	free(b.p);
}

/* A user message whose content is a string: made a text block first. */
static void test_anthropic_string_content(void **state)
{
	static const char body[] =
		"{\"model\":\"m\",\"max_tokens\":5,\"messages\":"
		"[{\"role\":\"user\",\"content\":\"hi\"}],\"stream\":true}";
	static const char want[] =
		"{\"model\":\"m\",\"max_tokens\":5,\"messages\":"
		"[{\"role\":\"user\",\"content\":[{\"type\":\"text\","
		"\"text\":\"hi\"},{\"type\":\"text\",\"text\":\"" NOTE
		"\"}]}],\"stream\":true}";
	struct lg_steer_note n = { NOTE, 1 };
	char *out;
	size_t len;

	(void)state;
	assert_int_equal(lg_llm_steer_apply(LG_LLM_ANTHROPIC, body,
					    sizeof(body) - 1, &n, 1, &out,
					    &len),
			 1);
	assert_string_equal(out, want);
	free(out);
}

/* Made (no CLI here speaks it): system, user, assistant, tool. */
static void test_chat(void **state)
{
	const struct steer_case c = {
		LG_LLM_OPENAI_CHAT,
		"chat_2.json",
		"chat_3.json",
		4,
		false,
		INSERTED,
		4,
		/* at 3 is between the call and its tool message: after it */
		3,
		INSERTED,
		4,
	};
	struct body b = read_sample(c.first);
	struct lg_steer_note n = { NOTE, 2 };
	json_t *got;

	(void)state;
	run_case(&c);
	/* at 2: after the user's prompt, before the assistant */
	got = apply(&c, &b, &n, 1, 1);
	note_at(c.api, conv(c.api, got), 2, INSERTED, NOTE);
	json_decref(got);
	free(b.p);
}

/*
 * Codex over HTTP: developer, developer, user, user, function_call,
 * function_call_output.
 */
static void test_responses(void **state)
{
	const struct steer_case c = {
		LG_LLM_OPENAI_RESPONSES,
		"responses_2.json",
		"responses_3.json",
		6,
		false,
		INSERTED,
		6,
		/* before the model's call */
		4,
		INSERTED,
		4,
	};

	(void)state;
	run_case(&c);
}

/* A response.create that continues a stored response: only new items. */
static void test_responses_ws(void **state)
{
	const struct steer_case c = {
		LG_LLM_OPENAI_RESPONSES,
		"responses_ws_2.json",
		NULL,
		1,
		true,
		INSERTED,
		1,
		/* at 0: before the function_call_output is after it */
		0,
		INSERTED,
		1,
	};
	struct body b = read_sample(c.first);
	struct lg_steer_note n = { NOTE, 1 };
	char *out;
	size_t len;
	json_t *got;

	(void)state;
	run_case(&c);
	/* the frame keeps its type and its previous_response_id */
	assert_int_equal(lg_llm_steer_apply(c.api, b.p, b.n, &n, 1, &out, &len),
			 1);
	got = json_loadb(out, len, 0, NULL);
	assert_string_equal(json_string_value(json_object_get(got, "type")),
			    "response.create");
	assert_non_null(json_string_value(
		json_object_get(got, "previous_response_id")));
	assert_memory_equal(out, "{\"type\":\"response.create\"", 25);
	json_decref(got);
	free(out);
	free(b.p);
}

/* Codex's first frame, a prewarm: no previous_response_id, no results. */
static void test_responses_ws_fresh(void **state)
{
	struct body b = read_sample("responses_ws_prewarm.json");
	struct lg_steer_note n = { NOTE, 1 };
	size_t items = 0;
	bool stateful = true;
	char *out;
	size_t len;
	json_t *got;

	(void)state;
	assert_int_equal(lg_llm_steer_items(LG_LLM_OPENAI_RESPONSES, b.p, b.n,
					    &items, &stateful),
			 0);
	assert_int_equal(items, 1);
	assert_false(stateful);
	assert_int_equal(lg_llm_steer_apply(LG_LLM_OPENAI_RESPONSES, b.p, b.n,
					    &n, 1, &out, &len),
			 1);
	got = json_loadb(out, len, 0, NULL);
	note_at(LG_LLM_OPENAI_RESPONSES, conv(LG_LLM_OPENAI_RESPONSES, got), 1,
		INSERTED, NOTE);
	assert_true(json_is_false(json_object_get(got, "generate")));
	json_decref(got);
	free(out);
	free(b.p);
}

/* A string input is one user message: made one, the note after it. */
static void test_responses_string_input(void **state)
{
	static const char body[] = "{\"model\":\"m\",\"input\":\"hi\"}";
	struct lg_steer_note n = { NOTE, 1 };
	size_t items = 0;
	bool stateful = true;
	char *out;
	size_t len;
	json_t *got, *a;

	(void)state;
	assert_int_equal(lg_llm_steer_items(LG_LLM_OPENAI_RESPONSES, body,
					    sizeof(body) - 1, &items,
					    &stateful),
			 0);
	assert_int_equal(items, 1);
	assert_false(stateful);
	assert_int_equal(lg_llm_steer_apply(LG_LLM_OPENAI_RESPONSES, body,
					    sizeof(body) - 1, &n, 1, &out,
					    &len),
			 1);
	got = json_loadb(out, len, 0, NULL);
	a = json_object_get(got, "input");
	assert_int_equal(json_array_size(a), 2);
	assert_string_equal(
		json_string_value(json_object_get(
			json_array_get(json_object_get(json_array_get(a, 0),
						       "content"),
				       0),
			"text")),
		"hi");
	note_at(LG_LLM_OPENAI_RESPONSES, a, 1, INSERTED, NOTE);
	json_decref(got);
	free(out);
}

/* gemini-cli, Gemini API: user, model (functionCall), user (functionResponse). */
static void test_gemini(void **state)
{
	const struct steer_case c = {
		LG_LLM_GEMINI,
		"gemini_2.json",
		"gemini_3.json",
		3,
		false,
		APPENDED,
		2,
		/* the first user content, a part of its own */
		1,
		APPENDED,
		0,
	};
	struct body b = read_sample(c.first);
	struct lg_steer_note n = { NOTE, 2 };
	json_t *got, *a;

	(void)state;
	run_case(&c);
	/* at 2: after the model's call comes its response: joined to it */
	got = apply(&c, &b, &n, 1, 1);
	a = conv(c.api, got);
	assert_int_equal(json_array_size(a), 3);
	note_at(c.api, a, 2, APPENDED, NOTE);
	results_first(c.api, json_array_get(a, 2));
	json_decref(got);
	free(b.p);
}

/* gemini-cli's Google login: the same in {model, project, request}. */
static void test_code_assist(void **state)
{
	const struct steer_case c = {
		LG_LLM_GEMINI,
		"code_assist_2.json",
		"code_assist_3.json",
		3,
		false,
		APPENDED,
		2,
		1,
		APPENDED,
		0,
	};
	struct body b = read_sample(c.first);
	struct lg_steer_note n = { NOTE, 3 };
	char *out;
	size_t len;
	json_t *got;

	(void)state;
	run_case(&c);
	assert_int_equal(lg_llm_steer_apply(c.api, b.p, b.n, &n, 1, &out, &len),
			 1);
	got = json_loadb(out, len, 0, NULL);
	assert_non_null(json_object_get(got, "project"));
	assert_null(json_object_get(got, "contents"));
	json_decref(got);
	free(out);
	free(b.p);
}

/* A model content before the note's place, no results after: a new one. */
static void test_gemini_after_model(void **state)
{
	static const char body[] =
		"{\"contents\":[{\"role\":\"user\",\"parts\":[{\"text\":\"a\"}]},"
		"{\"role\":\"model\",\"parts\":[{\"text\":\"b\"}]}]}";
	static const char want[] =
		"{\"contents\":[{\"role\":\"user\",\"parts\":[{\"text\":\"a\"}]},"
		"{\"role\":\"model\",\"parts\":[{\"text\":\"b\"}]},"
		"{\"role\":\"user\",\"parts\":[{\"text\":\"" NOTE "\"},"
		"{\"text\":\"" NOTE2 "\"}]}]}";
	struct lg_steer_note n[2] = { { NOTE, 2 }, { NOTE2, 2 } };
	char *out;
	size_t len;

	(void)state;
	assert_int_equal(lg_llm_steer_apply(LG_LLM_GEMINI, body,
					    sizeof(body) - 1, n, 2, &out, &len),
			 2);
	assert_string_equal(out, want);
	free(out);
}

/* The body goes on as it was: keys in order, numbers, escapes, Unicode. */
static void test_body_kept(void **state)
{
	static const char body[] =
		"{\"z\":1,\"messages\":[{\"role\":\"tool\",\"content\":\"x\"}],"
		"\"a\":[true,null,-3,1.5],\"s\":\"\\u00e9\\n\\\"\\u0000\","
		"\"stream\":false}";
	static const char want[] =
		"{\"z\":1,\"messages\":[{\"role\":\"tool\",\"content\":\"x\"},"
		"{\"role\":\"user\",\"content\":\"\xc3\xa9 " NOTE "\"}],"
		"\"a\":[true,null,-3,1.5],\"s\":\"\xc3\xa9\\n\\\"\\u0000\","
		"\"stream\":false}";
	struct lg_steer_note n = { "\xc3\xa9 " NOTE, 0 };
	char *out;
	size_t len;

	(void)state;
	/* at 0 is before the tool message: after it, as Chat wants */
	assert_int_equal(lg_llm_steer_apply(LG_LLM_OPENAI_CHAT, body,
					    sizeof(body) - 1, &n, 1, &out,
					    &len),
			 1);
	assert_int_equal(len, sizeof(want) - 1);
	assert_memory_equal(out, want, len);
	free(out);
}

/* Not a request of that API: -EINVAL, nothing made. */
static void test_malformed(void **state)
{
	static const struct {
		enum lg_llm_api api;
		const char *body;
	} bad[] = {
		{ LG_LLM_ANTHROPIC, "" },
		{ LG_LLM_ANTHROPIC, "{" },
		{ LG_LLM_ANTHROPIC, "[]" },
		{ LG_LLM_ANTHROPIC, "\"messages\"" },
		{ LG_LLM_ANTHROPIC, "{\"messages\":{}}" },
		{ LG_LLM_ANTHROPIC, "{\"model\":\"m\"}" },
		{ LG_LLM_ANTHROPIC, "{\"messages\":[]} trailing" },
		{ LG_LLM_OPENAI_CHAT, "{\"messages\":\"hi\"}" },
		{ LG_LLM_OPENAI_RESPONSES, "{\"input\":7}" },
		{ LG_LLM_OPENAI_RESPONSES, "{\"model\":\"m\"}" },
		{ LG_LLM_GEMINI, "{\"contents\":{}}" },
		{ LG_LLM_GEMINI, "{\"request\":{\"contents\":3}}" },
		{ LG_LLM_GEMINI, "{\"messages\":[]}" },
		{ LG_LLM_UNKNOWN, "{\"messages\":[]}" },
		/* an integer jansson cannot hold would not go on as it was */
		{ LG_LLM_OPENAI_CHAT,
		  "{\"seed\":123456789012345678901234567890,\"messages\":[]}" },
		/* not UTF-8 */
		{ LG_LLM_OPENAI_CHAT, "{\"messages\":[],\"x\":\"\xff\"}" },
	};
	struct lg_steer_note n = { NOTE, 0 };

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *out = (char *)1;
		size_t len = 1, items = 9;
		bool st = true;

		assert_int_equal(lg_llm_steer_items(bad[i].api, bad[i].body,
						    strlen(bad[i].body), &items,
						    &st),
				 -EINVAL);
		assert_int_equal(lg_llm_steer_apply(bad[i].api, bad[i].body,
						    strlen(bad[i].body), &n, 1,
						    &out, &len),
				 -EINVAL);
		assert_null(out);
		assert_int_equal(len, 0);
	}
	assert_int_equal(lg_llm_steer_apply(LG_LLM_ANTHROPIC, NULL, 0, &n, 1,
					    &(char *){ NULL }, &(size_t){ 0 }),
			 -EINVAL);
}

/* A note that is empty or not UTF-8 is left out; the others go. */
static void test_bad_notes(void **state)
{
	static const char body[] = "{\"messages\":[]}";
	struct lg_steer_note n[3] = { { "", 0 },
				      { "\xff\xfe", 0 },
				      { NOTE, 0 } };
	char *out;
	size_t len;

	(void)state;
	assert_int_equal(lg_llm_steer_apply(LG_LLM_OPENAI_CHAT, body,
					    sizeof(body) - 1, n, 2, &out, &len),
			 0);
	assert_string_equal(out, body);
	free(out);
	assert_int_equal(lg_llm_steer_apply(LG_LLM_OPENAI_CHAT, body,
					    sizeof(body) - 1, n, 3, &out, &len),
			 1);
	assert_string_equal(out, "{\"messages\":[{\"role\":\"user\","
				 "\"content\":\"" NOTE "\"}]}");
	free(out);
	/* a text filling the whole buffer, no NUL: taken as it is */
	memset(n[0].text, 'x', sizeof(n[0].text));
	assert_int_equal(lg_llm_steer_apply(LG_LLM_OPENAI_CHAT, body,
					    sizeof(body) - 1, n, 1, &out, &len),
			 1);
	assert_int_equal(len, sizeof(body) - 1 + 26 + LG_STEER_TEXT_MAX + 2);
	free(out);
}

/* Side requests (no tools) are not where a new note goes. */
static void test_agentic(void **state)
{
	static const char anth[] =
		"{\"model\":\"m\",\"tools\":[{\"name\":\"Bash\"}],\"messages\":[]}";
	static const char side[] =
		"{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"title?\"}]}";
	static const char ca[] =
		"{\"model\":\"m\",\"project\":\"p\",\"request\":{\"contents\":[],"
		"\"tools\":[{\"functionDeclarations\":[]}]}}";
	static const char empty[] = "{\"tools\":[],\"input\":[]}";

	(void)state;
	assert_true(lg_llm_steer_agentic(LG_LLM_ANTHROPIC, anth, strlen(anth)));
	assert_false(
		lg_llm_steer_agentic(LG_LLM_ANTHROPIC, side, strlen(side)));
	assert_true(lg_llm_steer_agentic(LG_LLM_GEMINI, ca, strlen(ca)));
	assert_false(lg_llm_steer_agentic(LG_LLM_OPENAI_RESPONSES, empty,
					  strlen(empty)));
	assert_false(lg_llm_steer_agentic(LG_LLM_OPENAI_CHAT, "{", 1));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_anthropic),
		cmocka_unit_test(test_anthropic_string_content),
		cmocka_unit_test(test_chat),
		cmocka_unit_test(test_responses),
		cmocka_unit_test(test_responses_ws),
		cmocka_unit_test(test_responses_ws_fresh),
		cmocka_unit_test(test_responses_string_input),
		cmocka_unit_test(test_gemini),
		cmocka_unit_test(test_code_assist),
		cmocka_unit_test(test_gemini_after_model),
		cmocka_unit_test(test_body_kept),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_bad_notes),
		cmocka_unit_test(test_agentic),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
