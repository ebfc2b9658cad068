// SPDX-License-Identifier: MIT
/*
 * Unit tests for supervisor/llm.c: responses of the four model APIs as the
 * providers stream them (cut anywhere, any line ending), non-streamed
 * bodies, the tool results in requests, error bodies, garbage and limits.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <jansson.h>

#include "llm/llm.h"
#include "llm/api.h"
#include "llm/steer.h"

/* --- a sink that writes what it hears as one string ---------------------- */

struct rec {
	char *log;
	size_t n, cap;
	unsigned texts, calls, turns;
	struct lg_llm_turn turn;
	char turn_model[256], turn_stop[64];
};

static void rec_add(struct rec *r, const char *p, size_t n)
{
	if (r->n + n + 1 > r->cap) {
		r->cap = (r->n + n + 1) * 2;
		r->log = realloc(r->log, r->cap);
		assert_non_null(r->log);
	}
	memcpy(r->log + r->n, p, n);
	r->n += n;
	r->log[r->n] = '\0';
}

static void rec_str(struct rec *r, const char *s)
{
	rec_add(r, s, strlen(s));
}

static void on_text(void *ctx, const char *d, size_t n)
{
	struct rec *r = ctx;

	assert_true(n > 0);
	r->texts++;
	rec_str(r, "T[");
	rec_add(r, d, n);
	rec_str(r, "]");
}

static void on_call(void *ctx, const struct lg_llm_call *c)
{
	struct rec *r = ctx;

	assert_non_null(c->id);
	assert_non_null(c->name);
	assert_non_null(c->input);
	r->calls++;
	rec_str(r, "C[");
	rec_str(r, c->id);
	rec_str(r, "|");
	rec_str(r, c->name);
	rec_str(r, "|");
	rec_str(r, c->input);
	rec_str(r, "]");
}

static void on_turn(void *ctx, const struct lg_llm_turn *t)
{
	struct rec *r = ctx;
	char s[512];

	r->turns++;
	r->turn = *t;
	snprintf(r->turn_model, sizeof(r->turn_model), "%s", t->model);
	snprintf(r->turn_stop, sizeof(r->turn_stop), "%s", t->stop_reason);
	snprintf(s, sizeof(s), "U[%s|%s|%llu|%llu|%u]", t->model,
		 t->stop_reason, (unsigned long long)t->input_tokens,
		 (unsigned long long)t->output_tokens, t->tool_calls);
	rec_str(r, s);
}

static void rec_free(struct rec *r)
{
	free(r->log);
	memset(r, 0, sizeof(*r));
}

/* Feeds p in pieces of `step` bytes (0: whole); returns the error count. */
static unsigned run(enum lg_llm_api api, bool sse, const char *p, size_t n,
		    size_t step, struct rec *r)
{
	struct lg_llm_sink sink = { on_call, on_text, on_turn, r };
	struct lg_llm_stream *s;
	unsigned errors;

	memset(r, 0, sizeof(*r));
	rec_str(r, "");
	s = lg_llm_stream_new(api, sse, &sink);
	assert_non_null(s);
	if (!step)
		step = n ? n : 1;
	for (size_t i = 0; i < n; i += step)
		lg_llm_stream_feed(s, p + i, n - i < step ? n - i : step);
	lg_llm_stream_end(s);
	errors = lg_llm_stream_errors(s);
	lg_llm_stream_free(s);
	assert_int_equal(r->turns, 1);
	return errors;
}

/* Fed in random pieces (seeded: the same run every time). */
static unsigned run_random(enum lg_llm_api api, bool sse, const char *p,
			   size_t n, unsigned seed, struct rec *r)
{
	struct lg_llm_sink sink = { on_call, on_text, on_turn, r };
	struct lg_llm_stream *s;
	unsigned errors;

	memset(r, 0, sizeof(*r));
	rec_str(r, "");
	s = lg_llm_stream_new(api, sse, &sink);
	srand(seed);
	for (size_t i = 0; i < n;) {
		size_t k = 1 + (size_t)rand() % 40;

		if (k > n - i)
			k = n - i;
		lg_llm_stream_feed(s, p + i, k);
		i += k;
	}
	lg_llm_stream_end(s);
	errors = lg_llm_stream_errors(s);
	lg_llm_stream_free(s);
	assert_int_equal(r->turns, 1);
	return errors;
}

/* The text with every "\n" made "\r\n" (crlf) or "\r". */
static char *relined(const char *t, bool crlf)
{
	char *out = malloc(strlen(t) * 2 + 1), *o = out;

	assert_non_null(out);
	for (; *t; t++) {
		if (*t == '\n') {
			*o++ = '\r';
			if (crlf)
				*o++ = '\n';
		} else {
			*o++ = *t;
		}
	}
	*o = '\0';
	return out;
}

/*
 * The transcript gives `want` (and `errors` errors) fed whole, byte by
 * byte, in pieces of several sizes and in random pieces, with its own line
 * endings and (SSE) with CR LF and CR instead.
 */
static void check_transcript(enum lg_llm_api api, bool sse, const char *t,
			     const char *want, unsigned errors)
{
	static const size_t steps[] = { 0, 1, 2, 3, 5, 7, 13, 64, 4096 };
	char *variants[3] = { strdup(t), NULL, NULL };
	size_t nv = 1;
	struct rec r;

	if (sse && !strstr(t, "\r")) {
		variants[nv++] = relined(t, true);
		variants[nv++] = relined(t, false);
	}
	for (size_t v = 0; v < nv; v++) {
		const char *p = variants[v];
		size_t n = strlen(p);

		for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
			unsigned e = run(api, sse, p, n, steps[i], &r);

			if (strcmp(r.log, want) != 0 || e != errors)
				fail_msg("variant %zu, step %zu: %u errors "
					 "(want %u)\n got %s\nwant %s",
					 v, steps[i], e, errors, r.log, want);
			rec_free(&r);
		}
		for (unsigned seed = 1; seed <= 20; seed++) {
			unsigned e = run_random(api, sse, p, n, seed, &r);

			if (strcmp(r.log, want) != 0 || e != errors)
				fail_msg("variant %zu, seed %u: %u errors\n"
					 " got %s\nwant %s",
					 v, seed, e, r.log, want);
			rec_free(&r);
		}
	}
	for (size_t v = 0; v < nv; v++)
		free(variants[v]);
}

/* --- transcripts, as the providers send them ----------------------------- */

/* Anthropic: text, then a tool call whose input streams in pieces. */
static const char anthropic_tool[] =
	"event: message_start\n"
	"data: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_01WHzTHTLxb5UCm7c3zsVMn8\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude-sonnet-4-5-20250929\",\"content\":[],\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":12,\"cache_creation_input_tokens\":1500,\"cache_read_input_tokens\":20000,\"output_tokens\":1,\"service_tier\":\"standard\"}}}\n"
	"\n"
	"event: content_block_start\n"
	"data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n"
	"\n"
	"event: ping\n"
	"data: {\"type\": \"ping\"}\n"
	"\n"
	"event: content_block_delta\n"
	"data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"I'll delete the café \"}}\n"
	"\n"
	"event: content_block_delta\n"
	"data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"assets 🚀 now.\\n\"}}\n"
	"\n"
	"event: content_block_stop\n"
	"data: {\"type\":\"content_block_stop\",\"index\":0}\n"
	"\n"
	"event: content_block_start\n"
	"data: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_01A09q90qw90lq917835lq9\",\"name\":\"delete_asset\",\"input\":{}}}\n"
	"\n"
	"event: content_block_delta\n"
	"data: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"\"}}\n"
	"\n"
	"event: content_block_delta\n"
	"data: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"asset_id\\\": \\\"fa\"}}\n"
	"\n"
	"event: content_block_delta\n"
	"data: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"ct_sales\\\", \\\"force\\\": tr\"}}\n"
	"\n"
	"event: content_block_delta\n"
	"data: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"ue, \\\"note\\\": \\\"caf\\\\u00e9 日本\\\"}\"}}\n"
	"\n"
	"event: content_block_stop\n"
	"data: {\"type\":\"content_block_stop\",\"index\":1}\n"
	"\n"
	"event: message_delta\n"
	"data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":89}}\n"
	"\n"
	"event: message_stop\n"
	"data: {\"type\":\"message_stop\"}\n"
	"\n";

static const char anthropic_tool_want[] =
	"T[I'll delete the café ]T[assets 🚀 now.\n]"
	"C[toolu_01A09q90qw90lq917835lq9|delete_asset|"
	"{\"asset_id\":\"fact_sales\",\"force\":true,\"note\":\"café 日本\"}]"
	"U[claude-sonnet-4-5-20250929|tool_use|21512|89|1]";

static void test_anthropic_stream(void **state)
{
	(void)state;
	check_transcript(LG_LLM_ANTHROPIC, true, anthropic_tool,
			 anthropic_tool_want, 0);
}

/*
 * Two tool calls in one message (blocks 1 and 2), the first with its input
 * in one-byte pieces, the second with no deltas at all (input {}).
 */
static char *anthropic_parallel(void)
{
	static const char args[] =
		"{\"path\": \"/srv/data/été\", \"n\": [1, 2.5, null]}";
	static const char head[] =
		"event: message_start\r\n"
		"data: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_02\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude-opus-4-1-20250805\",\"content\":[],\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":2048,\"output_tokens\":3}}}\r\n"
		"\r\n"
		": keep-alive comment\r\n"
		"event: content_block_start\r\n"
		"data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"thinking\",\"thinking\":\"\",\"signature\":\"\"}}\r\n"
		"\r\n"
		"event: content_block_delta\r\n"
		"data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"thinking_delta\",\"thinking\":\"Two calls.\"}}\r\n"
		"\r\n"
		"event: content_block_delta\r\n"
		"data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"signature_delta\",\"signature\":\"EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds\"}}\r\n"
		"\r\n"
		"event: content_block_stop\r\n"
		"data: {\"type\":\"content_block_stop\",\"index\":0}\r\n"
		"\r\n"
		"event: content_block_start\r\n"
		"data: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_A\",\"name\":\"Read\",\"input\":{}}}\r\n"
		"\r\n";
	static const char tail[] =
		"event: content_block_stop\r\n"
		"data: {\"type\":\"content_block_stop\",\"index\":1}\r\n"
		"\r\n"
		"event: ping\r\n"
		"data: {\"type\": \"ping\"}\r\n"
		"\r\n"
		"event: content_block_start\r\n"
		"data: {\"type\":\"content_block_start\",\"index\":2,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_B\",\"name\":\"TodoRead\",\"input\":{}}}\r\n"
		"\r\n"
		"event: content_block_stop\r\n"
		"data: {\"type\":\"content_block_stop\",\"index\":2}\r\n"
		"\r\n"
		"event: message_delta\r\n"
		"data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":120}}\r\n"
		"\r\n"
		"event: message_stop\r\n"
		"data: {\"type\":\"message_stop\"}\r\n"
		"\r\n";
	size_t cap = sizeof(head) + sizeof(tail) + sizeof(args) * 256;
	char *t = malloc(cap), *o;
	const char *a = args;

	assert_non_null(t);
	o = t + sprintf(t, "%s", head);
	while (*a) {
		char piece[16];
		size_t k = 1;

		/* one UTF-8 character per delta, escaped for JSON */
		while (((unsigned char)a[k] & 0xc0) == 0x80)
			k++;
		if (*a == '"')
			snprintf(piece, sizeof(piece), "\\\"");
		else
			snprintf(piece, sizeof(piece), "%.*s", (int)k, a);
		o += sprintf(
			o,
			"event: content_block_delta\r\n"
			"data: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"%s\"}}\r\n"
			"\r\n",
			piece);
		a += k;
	}
	sprintf(o, "%s", tail);
	return t;
}

static void test_anthropic_parallel(void **state)
{
	char *t = anthropic_parallel();

	(void)state;
	check_transcript(
		LG_LLM_ANTHROPIC, true, t,
		"C[toolu_A|Read|{\"path\":\"/srv/data/été\",\"n\":[1,2.5,null]}]"
		"C[toolu_B|TodoRead|{}]"
		"U[claude-opus-4-1-20250805|tool_use|2048|120|2]",
		0);
	free(t);
}

static void test_anthropic_whole(void **state)
{
	static const char body[] =
		"{\"id\":\"msg_01Aq9w938a90dw8q\",\"type\":\"message\",\"role\":\"assistant\","
		"\"model\":\"claude-sonnet-4-20250514\",\"content\":["
		"{\"type\":\"thinking\",\"thinking\":\"hmm\",\"signature\":\"x\"},"
		"{\"type\":\"text\",\"text\":\"Removing both.\"},"
		"{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"Bash\",\"input\":{\"command\":\"rm -rf /tmp/x\",\"timeout\":120000}},"
		"{\"type\":\"server_tool_use\",\"id\":\"srvtoolu_1\",\"name\":\"web_search\",\"input\":{\"query\":\"q\"}},"
		"{\"type\":\"tool_use\",\"id\":\"toolu_2\",\"name\":\"Bash\",\"input\":{}}],"
		"\"stop_reason\":\"tool_use\",\"stop_sequence\":null,"
		"\"usage\":{\"input_tokens\":2095,\"cache_creation_input_tokens\":0,\"cache_read_input_tokens\":0,\"output_tokens\":503}}";

	(void)state;
	check_transcript(
		LG_LLM_ANTHROPIC, false, body,
		"T[Removing both.]"
		"C[toolu_1|Bash|{\"command\":\"rm -rf /tmp/x\",\"timeout\":120000}]"
		"C[toolu_2|Bash|{}]"
		"U[claude-sonnet-4-20250514|tool_use|2095|503|2]",
		0);
	/* what the request asked does not matter: '{' is JSON */
	check_transcript(
		LG_LLM_ANTHROPIC, true, body,
		"T[Removing both.]"
		"C[toolu_1|Bash|{\"command\":\"rm -rf /tmp/x\",\"timeout\":120000}]"
		"C[toolu_2|Bash|{}]"
		"U[claude-sonnet-4-20250514|tool_use|2095|503|2]",
		0);
}

/*
 * An overloaded error in the middle of a stream: the open tool call is
 * dropped (its input may be cut), the turn says "error".
 */
static void test_anthropic_error_event(void **state)
{
	static const char t[] =
		"event: message_start\n"
		"data: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_3\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude-3-5-haiku-20241022\",\"content\":[],\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":10,\"output_tokens\":1}}}\n"
		"\n"
		"event: content_block_start\n"
		"data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_X\",\"name\":\"Bash\",\"input\":{}}}\n"
		"\n"
		"event: content_block_delta\n"
		"data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"command\\\": \\\"rm\"}}\n"
		"\n"
		"event: error\n"
		"data: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n"
		"\n";
	static const char body[] =
		"{\"type\":\"error\",\"error\":{\"type\":\"rate_limit_error\",\"message\":\"Number of request tokens has exceeded your per-minute rate limit\"},\"request_id\":\"req_011CSHoEeqs5C35K2UUqR7Fy\"}";

	(void)state;
	check_transcript(LG_LLM_ANTHROPIC, true, t,
			 "U[claude-3-5-haiku-20241022|error|10|1|0]", 1);
	check_transcript(LG_LLM_ANTHROPIC, true, body, "U[|error|0|0|0]", 0);
}

/* OpenAI Responses: reasoning, text, then a function call. */
static const char responses_tool[] =
	"event: response.created\n"
	"data: {\"type\":\"response.created\",\"sequence_number\":0,\"response\":{\"id\":\"resp_68a1c9f0a2d08190b5b1\",\"object\":\"response\",\"created_at\":1755433456,\"status\":\"in_progress\",\"background\":false,\"error\":null,\"incomplete_details\":null,\"instructions\":null,\"max_output_tokens\":null,\"model\":\"gpt-5-2025-08-07\",\"output\":[],\"parallel_tool_calls\":true,\"previous_response_id\":null,\"reasoning\":{\"effort\":\"medium\",\"summary\":null},\"store\":true,\"temperature\":1.0,\"text\":{\"format\":{\"type\":\"text\"},\"verbosity\":\"medium\"},\"tool_choice\":\"auto\",\"tools\":[{\"type\":\"function\",\"description\":\"Delete an asset\",\"name\":\"delete_asset\",\"parameters\":{\"type\":\"object\",\"properties\":{\"asset_id\":{\"type\":\"string\"}},\"required\":[\"asset_id\"],\"additionalProperties\":false},\"strict\":true}],\"top_p\":1.0,\"truncation\":\"disabled\",\"usage\":null,\"user\":null,\"metadata\":{}}}\n"
	"\n"
	"event: response.in_progress\n"
	"data: {\"type\":\"response.in_progress\",\"sequence_number\":1,\"response\":{\"id\":\"resp_68a1c9f0a2d08190b5b1\",\"object\":\"response\",\"created_at\":1755433456,\"status\":\"in_progress\",\"error\":null,\"incomplete_details\":null,\"model\":\"gpt-5-2025-08-07\",\"output\":[],\"usage\":null}}\n"
	"\n"
	"event: response.output_item.added\n"
	"data: {\"type\":\"response.output_item.added\",\"sequence_number\":2,\"output_index\":0,\"item\":{\"id\":\"rs_68a1c9f1\",\"type\":\"reasoning\",\"summary\":[]}}\n"
	"\n"
	"event: response.output_item.done\n"
	"data: {\"type\":\"response.output_item.done\",\"sequence_number\":3,\"output_index\":0,\"item\":{\"id\":\"rs_68a1c9f1\",\"type\":\"reasoning\",\"summary\":[]}}\n"
	"\n"
	"event: response.output_item.added\n"
	"data: {\"type\":\"response.output_item.added\",\"sequence_number\":4,\"output_index\":1,\"item\":{\"id\":\"msg_68a1c9f2\",\"type\":\"message\",\"status\":\"in_progress\",\"content\":[],\"role\":\"assistant\"}}\n"
	"\n"
	"event: response.content_part.added\n"
	"data: {\"type\":\"response.content_part.added\",\"sequence_number\":5,\"item_id\":\"msg_68a1c9f2\",\"output_index\":1,\"content_index\":0,\"part\":{\"type\":\"output_text\",\"annotations\":[],\"logprobs\":[],\"text\":\"\"}}\n"
	"\n"
	"event: response.output_text.delta\n"
	"data: {\"type\":\"response.output_text.delta\",\"sequence_number\":6,\"item_id\":\"msg_68a1c9f2\",\"output_index\":1,\"content_index\":0,\"delta\":\"Deleting \",\"logprobs\":[],\"obfuscation\":\"a8Tq2F\"}\n"
	"\n"
	"event: response.output_text.delta\n"
	"data: {\"type\":\"response.output_text.delta\",\"sequence_number\":7,\"item_id\":\"msg_68a1c9f2\",\"output_index\":1,\"content_index\":0,\"delta\":\"naïve 数据.\",\"logprobs\":[],\"obfuscation\":\"Qz\"}\n"
	"\n"
	"event: response.output_text.done\n"
	"data: {\"type\":\"response.output_text.done\",\"sequence_number\":8,\"item_id\":\"msg_68a1c9f2\",\"output_index\":1,\"content_index\":0,\"text\":\"Deleting naïve 数据.\",\"logprobs\":[]}\n"
	"\n"
	"event: response.content_part.done\n"
	"data: {\"type\":\"response.content_part.done\",\"sequence_number\":9,\"item_id\":\"msg_68a1c9f2\",\"output_index\":1,\"content_index\":0,\"part\":{\"type\":\"output_text\",\"annotations\":[],\"logprobs\":[],\"text\":\"Deleting naïve 数据.\"}}\n"
	"\n"
	"event: response.output_item.done\n"
	"data: {\"type\":\"response.output_item.done\",\"sequence_number\":10,\"output_index\":1,\"item\":{\"id\":\"msg_68a1c9f2\",\"type\":\"message\",\"status\":\"completed\",\"content\":[{\"type\":\"output_text\",\"annotations\":[],\"logprobs\":[],\"text\":\"Deleting naïve 数据.\"}],\"role\":\"assistant\"}}\n"
	"\n"
	"event: response.output_item.added\n"
	"data: {\"type\":\"response.output_item.added\",\"sequence_number\":11,\"output_index\":2,\"item\":{\"id\":\"fc_68a1c9f3\",\"type\":\"function_call\",\"status\":\"in_progress\",\"arguments\":\"\",\"call_id\":\"call_Qa7Kx2mN\",\"name\":\"delete_asset\"}}\n"
	"\n"
	"event: response.function_call_arguments.delta\n"
	"data: {\"type\":\"response.function_call_arguments.delta\",\"sequence_number\":12,\"item_id\":\"fc_68a1c9f3\",\"output_index\":2,\"delta\":\"{\\\"\",\"obfuscation\":\"x9\"}\n"
	"\n"
	"event: response.function_call_arguments.delta\n"
	"data: {\"type\":\"response.function_call_arguments.delta\",\"sequence_number\":13,\"item_id\":\"fc_68a1c9f3\",\"output_index\":2,\"delta\":\"asset_id\",\"obfuscation\":\"x9\"}\n"
	"\n"
	"event: response.function_call_arguments.delta\n"
	"data: {\"type\":\"response.function_call_arguments.delta\",\"sequence_number\":14,\"item_id\":\"fc_68a1c9f3\",\"output_index\":2,\"delta\":\"\\\":\\\"fact_sales\\\"}\",\"obfuscation\":\"x9\"}\n"
	"\n"
	"event: response.function_call_arguments.done\n"
	"data: {\"type\":\"response.function_call_arguments.done\",\"sequence_number\":15,\"item_id\":\"fc_68a1c9f3\",\"output_index\":2,\"arguments\":\"{\\\"asset_id\\\":\\\"fact_sales\\\"}\"}\n"
	"\n"
	"event: response.output_item.done\n"
	"data: {\"type\":\"response.output_item.done\",\"sequence_number\":16,\"output_index\":2,\"item\":{\"id\":\"fc_68a1c9f3\",\"type\":\"function_call\",\"status\":\"completed\",\"arguments\":\"{\\\"asset_id\\\":\\\"fact_sales\\\"}\",\"call_id\":\"call_Qa7Kx2mN\",\"name\":\"delete_asset\"}}\n"
	"\n"
	"event: response.completed\n"
	"data: {\"type\":\"response.completed\",\"sequence_number\":17,\"response\":{\"id\":\"resp_68a1c9f0a2d08190b5b1\",\"object\":\"response\",\"created_at\":1755433456,\"status\":\"completed\",\"error\":null,\"incomplete_details\":null,\"model\":\"gpt-5-2025-08-07\",\"output\":[{\"id\":\"rs_68a1c9f1\",\"type\":\"reasoning\",\"summary\":[]},{\"id\":\"msg_68a1c9f2\",\"type\":\"message\",\"status\":\"completed\",\"content\":[{\"type\":\"output_text\",\"annotations\":[],\"logprobs\":[],\"text\":\"Deleting naïve 数据.\"}],\"role\":\"assistant\"},{\"id\":\"fc_68a1c9f3\",\"type\":\"function_call\",\"status\":\"completed\",\"arguments\":\"{\\\"asset_id\\\":\\\"fact_sales\\\"}\",\"call_id\":\"call_Qa7Kx2mN\",\"name\":\"delete_asset\"}],\"usage\":{\"input_tokens\":312,\"input_tokens_details\":{\"cached_tokens\":0},\"output_tokens\":187,\"output_tokens_details\":{\"reasoning_tokens\":128},\"total_tokens\":499}}}\n"
	"\n";

static void test_responses_stream(void **state)
{
	(void)state;
	check_transcript(
		LG_LLM_OPENAI_RESPONSES, true, responses_tool,
		"T[Deleting ]T[naïve 数据.]"
		"C[call_Qa7Kx2mN|delete_asset|{\"asset_id\":\"fact_sales\"}]"
		"U[gpt-5-2025-08-07|completed|312|187|1]",
		0);
}

/* Cut short by max_output_tokens; Codex's custom and shell tools. */
static void test_responses_incomplete(void **state)
{
	static const char t[] =
		"event: response.created\n"
		"data: {\"type\":\"response.created\",\"sequence_number\":0,\"response\":{\"id\":\"resp_1\",\"object\":\"response\",\"status\":\"in_progress\",\"model\":\"gpt-5-codex\",\"output\":[],\"usage\":null}}\n"
		"\n"
		"event: response.output_item.done\n"
		"data: {\"type\":\"response.output_item.done\",\"sequence_number\":1,\"output_index\":0,\"item\":{\"id\":\"ctc_1\",\"type\":\"custom_tool_call\",\"status\":\"completed\",\"call_id\":\"call_P1\",\"name\":\"apply_patch\",\"input\":\"*** Begin Patch\\n*** Delete File: a.txt\\n*** End Patch\"}}\n"
		"\n"
		"event: response.output_item.done\n"
		"data: {\"type\":\"response.output_item.done\",\"sequence_number\":2,\"output_index\":1,\"item\":{\"id\":\"lsh_1\",\"type\":\"local_shell_call\",\"status\":\"completed\",\"call_id\":\"call_S1\",\"action\":{\"type\":\"exec\",\"command\":[\"rm\",\"-rf\",\"build\"],\"timeout_ms\":10000}}}\n"
		"\n"
		"event: response.output_text.delta\n"
		"data: {\"type\":\"response.output_text.delta\",\"sequence_number\":3,\"item_id\":\"msg_1\",\"output_index\":2,\"content_index\":0,\"delta\":\"And th\",\"logprobs\":[]}\n"
		"\n"
		"event: response.incomplete\n"
		"data: {\"type\":\"response.incomplete\",\"sequence_number\":4,\"response\":{\"id\":\"resp_1\",\"object\":\"response\",\"status\":\"incomplete\",\"incomplete_details\":{\"reason\":\"max_output_tokens\"},\"model\":\"gpt-5-codex\",\"output\":[],\"usage\":{\"input_tokens\":9000,\"output_tokens\":64,\"total_tokens\":9064}}}\n"
		"\n";

	(void)state;
	check_transcript(
		LG_LLM_OPENAI_RESPONSES, true, t,
		"C[call_P1|apply_patch|\"*** Begin Patch\\n*** Delete File: a.txt\\n*** End Patch\"]"
		"C[call_S1|local_shell|{\"type\":\"exec\",\"command\":[\"rm\",\"-rf\",\"build\"],\"timeout_ms\":10000}]"
		"T[And th]"
		"U[gpt-5-codex|max_output_tokens|9000|64|2]",
		0);
}

static void test_responses_whole(void **state)
{
	static const char body[] =
		"{\n"
		"  \"id\": \"resp_67ccd2bed1ec8190b14f964abc054267\",\n"
		"  \"object\": \"response\",\n"
		"  \"created_at\": 1741476542,\n"
		"  \"status\": \"completed\",\n"
		"  \"error\": null,\n"
		"  \"incomplete_details\": null,\n"
		"  \"model\": \"gpt-4.1-2025-04-14\",\n"
		"  \"output\": [\n"
		"    {\n"
		"      \"type\": \"message\",\n"
		"      \"id\": \"msg_67ccd2bf17f0819081ff3bb2cf6508e6\",\n"
		"      \"status\": \"completed\",\n"
		"      \"role\": \"assistant\",\n"
		"      \"content\": [\n"
		"        {\n"
		"          \"type\": \"output_text\",\n"
		"          \"text\": \"Checking first.\",\n"
		"          \"annotations\": []\n"
		"        }\n"
		"      ]\n"
		"    },\n"
		"    {\n"
		"      \"type\": \"function_call\",\n"
		"      \"id\": \"fc_12345xyz\",\n"
		"      \"call_id\": \"call_12345xyz\",\n"
		"      \"name\": \"get_weather\",\n"
		"      \"arguments\": \"{\\\"location\\\":\\\"Paris, France\\\"}\"\n"
		"    }\n"
		"  ],\n"
		"  \"usage\": {\n"
		"    \"input_tokens\": 36,\n"
		"    \"input_tokens_details\": { \"cached_tokens\": 0 },\n"
		"    \"output_tokens\": 87,\n"
		"    \"output_tokens_details\": { \"reasoning_tokens\": 0 },\n"
		"    \"total_tokens\": 123\n"
		"  }\n"
		"}\n";
	static const char err[] =
		"{\n  \"error\": {\n    \"message\": \"Rate limit reached\",\n    \"type\": \"requests\",\n    \"param\": null,\n    \"code\": \"rate_limit_exceeded\"\n  }\n}\n";

	(void)state;
	check_transcript(
		LG_LLM_OPENAI_RESPONSES, false, body,
		"T[Checking first.]"
		"C[call_12345xyz|get_weather|{\"location\":\"Paris, France\"}]"
		"U[gpt-4.1-2025-04-14|completed|36|87|1]",
		0);
	check_transcript(LG_LLM_OPENAI_RESPONSES, true, err, "U[|error|0|0|0]",
			 0);
}

/* Chat Completions: two parallel calls (index 0 and 1), usage, [DONE]. */
static const char chat_parallel[] =
	"data: {\"id\":\"chatcmpl-C3xQ\",\"object\":\"chat.completion.chunk\",\"created\":1755433456,\"model\":\"gpt-4.1-2025-04-14\",\"service_tier\":\"default\",\"system_fingerprint\":\"fp_b3f1157249\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"index\":0,\"id\":\"call_aYx1\",\"type\":\"function\",\"function\":{\"name\":\"delete_asset\",\"arguments\":\"\"}}],\"refusal\":null},\"logprobs\":null,\"finish_reason\":null}],\"usage\":null,\"obfuscation\":\"k\"}\n"
	"\n"
	"data: {\"id\":\"chatcmpl-C3xQ\",\"object\":\"chat.completion.chunk\",\"created\":1755433456,\"model\":\"gpt-4.1-2025-04-14\",\"service_tier\":\"default\",\"system_fingerprint\":\"fp_b3f1157249\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"{\\\"as\"}}]},\"logprobs\":null,\"finish_reason\":null}],\"usage\":null}\n"
	"\n"
	"data: {\"id\":\"chatcmpl-C3xQ\",\"object\":\"chat.completion.chunk\",\"created\":1755433456,\"model\":\"gpt-4.1-2025-04-14\",\"service_tier\":\"default\",\"system_fingerprint\":\"fp_b3f1157249\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"set_id\\\": \\\"\"}}]},\"logprobs\":null,\"finish_reason\":null}],\"usage\":null}\n"
	"\n"
	"data: {\"id\":\"chatcmpl-C3xQ\",\"object\":\"chat.completion.chunk\",\"created\":1755433456,\"model\":\"gpt-4.1-2025-04-14\",\"service_tier\":\"default\",\"system_fingerprint\":\"fp_b3f1157249\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"fact_sales\\\"}\"}}]},\"logprobs\":null,\"finish_reason\":null}],\"usage\":null}\n"
	"\n"
	"data: {\"id\":\"chatcmpl-C3xQ\",\"object\":\"chat.completion.chunk\",\"created\":1755433456,\"model\":\"gpt-4.1-2025-04-14\",\"service_tier\":\"default\",\"system_fingerprint\":\"fp_b3f1157249\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":1,\"id\":\"call_bZy2\",\"type\":\"function\",\"function\":{\"name\":\"delete_asset\",\"arguments\":\"\"}}]},\"logprobs\":null,\"finish_reason\":null}],\"usage\":null}\n"
	"\n"
	"data: {\"id\":\"chatcmpl-C3xQ\",\"object\":\"chat.completion.chunk\",\"created\":1755433456,\"model\":\"gpt-4.1-2025-04-14\",\"service_tier\":\"default\",\"system_fingerprint\":\"fp_b3f1157249\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":1,\"function\":{\"arguments\":\"{\\\"asset_id\\\"\"}}]},\"logprobs\":null,\"finish_reason\":null}],\"usage\":null}\n"
	"\n"
	"data: {\"id\":\"chatcmpl-C3xQ\",\"object\":\"chat.completion.chunk\",\"created\":1755433456,\"model\":\"gpt-4.1-2025-04-14\",\"service_tier\":\"default\",\"system_fingerprint\":\"fp_b3f1157249\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":1,\"function\":{\"arguments\":\": \\\"dim_Åland_ß\\\"}\"}}]},\"logprobs\":null,\"finish_reason\":null}],\"usage\":null}\n"
	"\n"
	"data: {\"id\":\"chatcmpl-C3xQ\",\"object\":\"chat.completion.chunk\",\"created\":1755433456,\"model\":\"gpt-4.1-2025-04-14\",\"service_tier\":\"default\",\"system_fingerprint\":\"fp_b3f1157249\",\"choices\":[{\"index\":0,\"delta\":{},\"logprobs\":null,\"finish_reason\":\"tool_calls\"}],\"usage\":null}\n"
	"\n"
	"data: {\"id\":\"chatcmpl-C3xQ\",\"object\":\"chat.completion.chunk\",\"created\":1755433456,\"model\":\"gpt-4.1-2025-04-14\",\"service_tier\":\"default\",\"system_fingerprint\":\"fp_b3f1157249\",\"choices\":[],\"usage\":{\"prompt_tokens\":95,\"completion_tokens\":52,\"total_tokens\":147,\"prompt_tokens_details\":{\"cached_tokens\":0,\"audio_tokens\":0},\"completion_tokens_details\":{\"reasoning_tokens\":0,\"audio_tokens\":0,\"accepted_prediction_tokens\":0,\"rejected_prediction_tokens\":0}}}\n"
	"\n"
	"data: [DONE]\n"
	"\n";

static void test_chat_stream(void **state)
{
	static const char text[] =
		"data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-4o-mini-2024-07-18\",\"system_fingerprint\":\"fp_1\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\",\"refusal\":null},\"logprobs\":null,\"finish_reason\":null}]}\n"
		"\n"
		"data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-4o-mini-2024-07-18\",\"system_fingerprint\":\"fp_1\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Ça va \"},\"logprobs\":null,\"finish_reason\":null}]}\n"
		"\n"
		"data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-4o-mini-2024-07-18\",\"system_fingerprint\":\"fp_1\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"👍\"},\"logprobs\":null,\"finish_reason\":null}]}\n"
		"\n"
		"data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-4o-mini-2024-07-18\",\"system_fingerprint\":\"fp_1\",\"choices\":[{\"index\":0,\"delta\":{},\"logprobs\":null,\"finish_reason\":\"length\"}]}\n"
		"\n"
		"data: [DONE]\n"
		"\n";

	(void)state;
	check_transcript(
		LG_LLM_OPENAI_CHAT, true, chat_parallel,
		"C[call_aYx1|delete_asset|{\"asset_id\":\"fact_sales\"}]"
		"C[call_bZy2|delete_asset|{\"asset_id\":\"dim_Åland_ß\"}]"
		"U[gpt-4.1-2025-04-14|tool_calls|95|52|2]",
		0);
	check_transcript(LG_LLM_OPENAI_CHAT, true, text,
			 "T[Ça va ]T[👍]U[gpt-4o-mini-2024-07-18|length|0|0|0]",
			 0);
}

static void test_chat_whole(void **state)
{
	static const char body[] =
		"{\n"
		"  \"id\": \"chatcmpl-abc123\",\n"
		"  \"object\": \"chat.completion\",\n"
		"  \"created\": 1699896916,\n"
		"  \"model\": \"gpt-4o-mini\",\n"
		"  \"choices\": [\n"
		"    {\n"
		"      \"index\": 0,\n"
		"      \"message\": {\n"
		"        \"role\": \"assistant\",\n"
		"        \"content\": null,\n"
		"        \"tool_calls\": [\n"
		"          {\n"
		"            \"id\": \"call_abc123\",\n"
		"            \"type\": \"function\",\n"
		"            \"function\": {\n"
		"              \"name\": \"get_current_weather\",\n"
		"              \"arguments\": \"{\\n\\\"location\\\": \\\"Boston, MA\\\"\\n}\"\n"
		"            }\n"
		"          },\n"
		"          {\n"
		"            \"id\": \"call_bad\",\n"
		"            \"type\": \"function\",\n"
		"            \"function\": { \"name\": \"x\", \"arguments\": \"{'not': json\" }\n"
		"          }\n"
		"        ]\n"
		"      },\n"
		"      \"logprobs\": null,\n"
		"      \"finish_reason\": \"tool_calls\"\n"
		"    }\n"
		"  ],\n"
		"  \"usage\": {\n"
		"    \"prompt_tokens\": 82,\n"
		"    \"completion_tokens\": 17,\n"
		"    \"total_tokens\": 99\n"
		"  }\n"
		"}\n";

	(void)state;
	/* arguments that are not JSON: counted, passed on as a string */
	check_transcript(
		LG_LLM_OPENAI_CHAT, false, body,
		"C[call_abc123|get_current_weather|{\"location\":\"Boston, MA\"}]"
		"C[call_bad|x|\"{'not': json\"]"
		"U[gpt-4o-mini|tool_calls|82|17|2]",
		1);
}

/* Gemini (alt=sse): CR LF lines, text, then two calls in one chunk. */
static const char *const gemini_chunks[] = {
	"{\"candidates\": [{\"content\": {\"parts\": [{\"text\": \"I will delete\"}],\"role\": \"model\"},\"index\": 0}],\"usageMetadata\": {\"promptTokenCount\": 41,\"totalTokenCount\": 41,\"promptTokensDetails\": [{\"modality\": \"TEXT\",\"tokenCount\": 41}]},\"modelVersion\": \"gemini-2.5-flash\",\"responseId\": \"kX2iaO3bBsWTvdIPqYmJ8Ac\"}",
	"{\"candidates\": [{\"content\": {\"parts\": [{\"text\": \"**Planning**\", \"thought\": true},{\"text\": \" both tables — été.\"}],\"role\": \"model\"},\"index\": 0}],\"usageMetadata\": {\"promptTokenCount\": 41,\"totalTokenCount\": 60},\"modelVersion\": \"gemini-2.5-flash\",\"responseId\": \"kX2iaO3bBsWTvdIPqYmJ8Ac\"}",
	"{\"candidates\": [{\"content\": {\"parts\": [{\"functionCall\": {\"name\": \"delete_asset\",\"args\": {\"asset_id\": \"fact_sales\"}},\"thoughtSignature\": \"CiQB0e2Kb7T0\"},{\"functionCall\": {\"id\": \"fc-2\", \"name\": \"delete_asset\",\"args\": {\"asset_id\": \"dim_été\", \"cascade\": false}}}],\"role\": \"model\"},\"finishReason\": \"STOP\",\"index\": 0}],\"usageMetadata\": {\"promptTokenCount\": 41,\"candidatesTokenCount\": 30,\"totalTokenCount\": 120,\"promptTokensDetails\": [{\"modality\": \"TEXT\",\"tokenCount\": 41}],\"thoughtsTokenCount\": 49},\"modelVersion\": \"gemini-2.5-flash\",\"responseId\": \"kX2iaO3bBsWTvdIPqYmJ8Ac\"}",
};

static const char gemini_want[] =
	"T[I will delete]T[ both tables — été.]"
	"C[|delete_asset|{\"asset_id\":\"fact_sales\"}]"
	"C[fc-2|delete_asset|{\"asset_id\":\"dim_été\",\"cascade\":false}]"
	"U[gemini-2.5-flash|STOP|41|79|2]";

static void test_gemini_sse(void **state)
{
	char t[4096];
	size_t o = 0;

	(void)state;
	for (size_t i = 0; i < 3; i++)
		o += (size_t)snprintf(t + o, sizeof(t) - o, "data: %s\r\n\r\n",
				      gemini_chunks[i]);
	check_transcript(LG_LLM_GEMINI, true, t, gemini_want, 0);
}

/*
 * Code Assist (gemini-cli's Google login): the same chunks, each wrapped as
 * {"response": ..., "traceId": ...}, in SSE and as an array.
 */
static void test_code_assist_stream(void **state)
{
	char t[8192];
	size_t o = 0;

	(void)state;
	for (size_t i = 0; i < 3; i++)
		o += (size_t)snprintf(
			t + o, sizeof(t) - o,
			"data: {\"response\": %s, \"traceId\": \"4f2a\"}\r\n\r\n",
			gemini_chunks[i]);
	check_transcript(LG_LLM_GEMINI, true, t, gemini_want, 0);
	o = (size_t)snprintf(t, sizeof(t), "[");
	for (size_t i = 0; i < 3; i++)
		o += (size_t)snprintf(t + o, sizeof(t) - o,
				      "%s{\"response\":%s}", i ? "," : "",
				      gemini_chunks[i]);
	snprintf(t + o, sizeof(t) - o, "]");
	check_transcript(LG_LLM_GEMINI, false, t, gemini_want, 0);
}

/* streamGenerateContent without alt=sse: one JSON array of the chunks. */
static void test_gemini_array(void **state)
{
	char t[4096];
	size_t o = 0;

	(void)state;
	o += (size_t)snprintf(t + o, sizeof(t) - o, "[");
	for (size_t i = 0; i < 3; i++)
		o += (size_t)snprintf(t + o, sizeof(t) - o, "%s%s",
				      i ? "\r\n,\r\n" : "", gemini_chunks[i]);
	snprintf(t + o, sizeof(t) - o, "]");
	/* the proxy passes sse=true for :streamGenerateContent: '[' wins */
	check_transcript(LG_LLM_GEMINI, true, t, gemini_want, 0);
	check_transcript(LG_LLM_GEMINI, false, t, gemini_want, 0);
}

static void test_gemini_whole(void **state)
{
	static const char body[] = "{\n"
				   "  \"candidates\": [\n"
				   "    {\n"
				   "      \"content\": {\n"
				   "        \"parts\": [\n"
				   "          {\n"
				   "            \"functionCall\": {\n"
				   "              \"name\": \"run_shell\",\n"
				   "              \"args\": {\n"
				   "                \"cmd\": \"rm -rf /data\"\n"
				   "              }\n"
				   "            }\n"
				   "          }\n"
				   "        ],\n"
				   "        \"role\": \"model\"\n"
				   "      },\n"
				   "      \"finishReason\": \"STOP\",\n"
				   "      \"index\": 0\n"
				   "    }\n"
				   "  ],\n"
				   "  \"usageMetadata\": {\n"
				   "    \"promptTokenCount\": 120,\n"
				   "    \"candidatesTokenCount\": 12,\n"
				   "    \"totalTokenCount\": 132\n"
				   "  },\n"
				   "  \"modelVersion\": \"gemini-2.0-flash\",\n"
				   "  \"responseId\": \"abc\"\n"
				   "}\n";
	static const char blocked[] =
		"{\"promptFeedback\": {\"blockReason\": \"SAFETY\"},\"usageMetadata\": {\"promptTokenCount\": 8,\"totalTokenCount\": 8},\"modelVersion\": \"gemini-2.5-pro\"}";
	static const char err[] =
		"{\n  \"error\": {\n    \"code\": 429,\n    \"message\": \"Resource has been exhausted\",\n    \"status\": \"RESOURCE_EXHAUSTED\"\n  }\n}\n";

	(void)state;
	check_transcript(LG_LLM_GEMINI, false, body,
			 "C[|run_shell|{\"cmd\":\"rm -rf /data\"}]"
			 "U[gemini-2.0-flash|STOP|120|12|1]",
			 0);
	check_transcript(LG_LLM_GEMINI, false, blocked,
			 "U[gemini-2.5-pro|SAFETY|8|0|0]", 0);
	check_transcript(LG_LLM_GEMINI, false, err, "U[|error|0|0|0]", 0);
}

/* --- SSE framing details ------------------------------------------------- */

static void test_sse_framing(void **state)
{
	/* BOM, comments, id/retry, a field without a colon, data in two lines */
	static const char t[] =
		"\xef\xbb\xbf: hello\n"
		"retry: 3000\n"
		"id: 1\n"
		"event: message_start\n"
		"data: {\"type\":\"message_start\",\n"
		"data:\"message\":{\"model\":\"m\",\"usage\":{\"input_tokens\":1}}}\n"
		"\n"
		"\n"
		"\n"
		"data\n"
		"\n"
		"event: content_block_start\n"
		"data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"x\"}}\n"
		"\n"
		"event: message_stop\n"
		"data: {\"type\":\"message_stop\"}\n"
		"\n";
	/* the last event is not finished by a blank line: not dispatched */
	static const char cut[] =
		"data: {\"type\":\"message_start\",\"message\":{\"model\":\"m\"}}\n"
		"\n"
		"data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"}}\n";
	/* a line without a known field is counted */
	static const char junk[] =
		"data: {\"type\":\"message_start\",\"message\":{\"model\":\"m\"}}\n"
		"\n"
		"HTTP/1.1 200 OK\n"
		"\n";

	(void)state;
	check_transcript(LG_LLM_ANTHROPIC, true, t, "T[x]U[m||1|0|0]", 0);
	check_transcript(LG_LLM_ANTHROPIC, true, cut, "U[m||0|0|0]", 1);
	check_transcript(LG_LLM_ANTHROPIC, true, junk, "U[m||0|0|0]", 1);
	/* nothing at all */
	check_transcript(LG_LLM_ANTHROPIC, true, "", "U[||0|0|0]", 1);
	check_transcript(LG_LLM_OPENAI_CHAT, false, "  \n", "U[||0|0|0]", 1);
}

/* One turn per response, however it ends; NULL-safe; NULL callbacks. */
static void test_turn_once(void **state)
{
	struct rec r = { 0 };
	struct lg_llm_sink sink = { on_call, on_text, on_turn, &r };
	struct lg_llm_sink none = { NULL, NULL, NULL, NULL };
	struct lg_llm_stream *s;

	(void)state;
	rec_str(&r, "");
	s = lg_llm_stream_new(LG_LLM_ANTHROPIC, true, &sink);
	lg_llm_stream_feed(s, anthropic_tool, strlen(anthropic_tool));
	assert_int_equal(r.turns, 1); /* at message_stop */
	/* more after the end of the message: no second turn */
	lg_llm_stream_feed(s, anthropic_tool, strlen(anthropic_tool));
	lg_llm_stream_end(s);
	lg_llm_stream_end(s);
	assert_int_equal(r.turns, 1);
	assert_int_equal(lg_llm_stream_errors(s), 0);
	lg_llm_stream_feed(s, "x", 1); /* after the end: counted */
	assert_int_equal(lg_llm_stream_errors(s), 1);
	lg_llm_stream_free(s);
	rec_free(&r);

	s = lg_llm_stream_new(LG_LLM_OPENAI_CHAT, true, &none);
	lg_llm_stream_feed(s, chat_parallel, strlen(chat_parallel));
	lg_llm_stream_end(s);
	assert_int_equal(lg_llm_stream_errors(s), 0);
	lg_llm_stream_free(s);
	s = lg_llm_stream_new(LG_LLM_GEMINI, false, NULL);
	lg_llm_stream_feed(s, "[]", 2);
	lg_llm_stream_end(s);
	lg_llm_stream_free(s);

	assert_null(lg_llm_stream_new(LG_LLM_UNKNOWN, true, &sink));
	lg_llm_stream_feed(NULL, "x", 1);
	lg_llm_stream_end(NULL);
	assert_int_equal(lg_llm_stream_errors(NULL), 0);
	lg_llm_stream_free(NULL);
}

/* --- garbage and limits -------------------------------------------------- */

static const enum lg_llm_api apis[] = { LG_LLM_ANTHROPIC,
					LG_LLM_OPENAI_RESPONSES,
					LG_LLM_OPENAI_CHAT, LG_LLM_GEMINI };

static void test_garbage(void **state)
{
	/* not one of the APIs' documents, whichever API */
	static const char *const bad[] = {
		"data: {not json\n\n",
		"data: [1,2,3]\n\n",
		"data: \"str\"\n\n",
		"data: {\"choices\":{}}\n\n",
		"event: x\ndata: {\"a\":\xff}\n\n",
		"\x01\x02\x03\n\n",
		"{\"type\":\"message\",\"content\":[{\"type\":\"tool_use\"",
		"[{\"candidates\":[]},",
		"{\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"{\"}}]}}]}",
	};
	/* wrong for one API */
	static const struct {
		enum lg_llm_api api;
		const char *t;
	} wrong[] = {
		{ LG_LLM_ANTHROPIC,
		  "data: {\"type\":\"content_block_delta\",\"index\":7,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\"}}\n\n" },
		{ LG_LLM_ANTHROPIC,
		  "data: {\"type\":\"content_block_start\",\"index\":\"0\",\"content_block\":{\"type\":\"tool_use\"}}\n\n" },
		{ LG_LLM_OPENAI_RESPONSES,
		  "data: {\"type\":\"response.completed\",\"response\":17}\n\n" },
		{ LG_LLM_OPENAI_RESPONSES,
		  "data: {\"type\":\"response.output_item.done\",\"item\":{\"type\":\"function_call\",\"call_id\":\"c\",\"name\":\"n\",\"arguments\":\"{]\"}}\n\n" },
		{ LG_LLM_OPENAI_CHAT, "data: {\"id\":\"x\"}\n\n" },
		{ LG_LLM_GEMINI, "data: {\"id\":\"x\"}\n\n" },
	};
	char *junk = malloc(65536);

	(void)state;
	assert_non_null(junk);
	for (size_t a = 0; a < 4; a++) {
		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			struct rec r;
			unsigned e = run(apis[a], true, bad[i], strlen(bad[i]),
					 1, &r);

			if (e == 0)
				fail_msg("api %zu, '%s': no error counted", a,
					 bad[i]);
			rec_free(&r);
		}
		/* random bytes, with line breaks and braces: no crash */
		for (unsigned seed = 1; seed <= 30; seed++) {
			struct rec r;

			srand(seed);
			for (size_t i = 0; i < 65536; i++) {
				static const char alpha[] =
					"data: {}[]\",:\n\r\\u0e9 event";
				int x = rand();

				junk[i] = (x & 1) ? (char)(x >> 8) :
						    alpha[(x >> 8) %
							  (sizeof(alpha) - 1)];
			}
			run(apis[a], seed & 1, junk, 65536, 1 + seed % 17, &r);
			rec_free(&r);
		}
	}
	for (size_t i = 0; i < sizeof(wrong) / sizeof(wrong[0]); i++) {
		struct rec r;

		if (run(wrong[i].api, true, wrong[i].t, strlen(wrong[i].t), 0,
			&r) == 0)
			fail_msg("'%s': no error counted", wrong[i].t);
		rec_free(&r);
	}
	free(junk);
}

/* One SSE event (one line) bigger than the limit is counted and dropped. */
static void test_cap_line(void **state)
{
	const size_t big = (1u << 20) + 100;
	char *t = malloc(2 * big), *o;
	struct rec r;
	unsigned e;

	(void)state;
	assert_non_null(t);
	o = t +
	    sprintf(t,
		    "event: response.created\ndata: {\"type\":\"response.created\",\"response\":{\"model\":\"gpt-5\",\"status\":\"in_progress\"}}\n\n"
		    "event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"status\":\"completed\",\"instructions\":\"");
	memset(o, 'a', big);
	o += big;
	o += sprintf(
		o,
		"\",\"usage\":{\"input_tokens\":5,\"output_tokens\":6}}}\n\n"
		"event: response.output_item.done\ndata: {\"type\":\"response.output_item.done\",\"item\":{\"type\":\"function_call\",\"call_id\":\"c\",\"name\":\"n\",\"arguments\":\"{}\"}}\n\n");
	e = run(LG_LLM_OPENAI_RESPONSES, true, t, strlen(t), 0, &r);
	assert_int_equal(e, 1);
	assert_string_equal(r.log, "C[c|n|{}]U[gpt-5||0|0|1]");
	rec_free(&r);
	e = run(LG_LLM_OPENAI_RESPONSES, true, t, strlen(t), 4096, &r);
	assert_int_equal(e, 1);
	assert_string_equal(r.log, "C[c|n|{}]U[gpt-5||0|0|1]");
	rec_free(&r);

	/* a data field split over many lines, over the limit together */
	o = t + sprintf(t, "event: x\n");
	for (size_t i = 0; i < 1100; i++) {
		o += sprintf(o, "data: ");
		memset(o, 'b', 1000);
		o += 1000;
		*o++ = '\n';
	}
	sprintf(o,
		"\ndata: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ok\"}}]}\n\n");
	e = run(LG_LLM_OPENAI_CHAT, true, t, strlen(t), 0, &r);
	assert_int_equal(e, 1);
	assert_string_equal(r.log, "T[ok]U[||0|0|0]");
	rec_free(&r);
	free(t);
}

/*
 * Anthropic: a tool input streamed in 1000-byte pieces. Just under the
 * limit it is reported whole; over it, the call is counted and dropped,
 * and the next call is unaffected.
 */
static char *big_input_stream(size_t pieces)
{
	char *t = malloc(pieces * 1200 + 4096), *o;

	assert_non_null(t);
	o = t +
	    sprintf(t,
		    "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"model\":\"claude\",\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}}\n\n"
		    "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_big\",\"name\":\"Write\",\"input\":{}}}\n\n"
		    "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"content\\\": \\\"\"}}\n\n");
	for (size_t i = 0; i < pieces; i++) {
		o += sprintf(
			o,
			"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"");
		memset(o, 'x', 1000);
		o += 1000;
		o += sprintf(o, "\"}}\n\n");
	}
	sprintf(o,
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"\\\"}\"}}\n\n"
		"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n"
		"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_small\",\"name\":\"Read\",\"input\":{}}}\n\n"
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"p\\\":1}\"}}\n\n"
		"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":1}\n\n"
		"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"},\"usage\":{\"output_tokens\":9}}\n\n"
		"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n");
	return t;
}

static void test_cap_args(void **state)
{
	char *t = big_input_stream(1040); /* 1,040,000 + 16 bytes */
	struct rec r;
	unsigned e;

	(void)state;
	e = run(LG_LLM_ANTHROPIC, true, t, strlen(t), 0, &r);
	assert_int_equal(e, 0);
	assert_int_equal(r.calls, 2);
	assert_true(strstr(r.log, "C[toolu_big|Write|{\"content\":\"xxx") ==
		    r.log);
	assert_non_null(strstr(r.log, "xxx\"}]C[toolu_small|Read|{\"p\":1}]"));
	rec_free(&r);
	free(t);

	t = big_input_stream(1100);
	e = run(LG_LLM_ANTHROPIC, true, t, strlen(t), 777, &r);
	assert_int_equal(e, 1);
	assert_string_equal(r.log, "C[toolu_small|Read|{\"p\":1}]"
				   "U[claude|tool_use|1|9|1]");
	rec_free(&r);
	free(t);
}

/* Chat: the limit holds for all calls streamed side by side together. */
static void test_cap_args_chat(void **state)
{
	char *t = malloc(2000 * 1200), *o = t;
	struct rec r;
	unsigned e;

	(void)state;
	assert_non_null(t);
	for (int idx = 0; idx < 2; idx++)
		o += sprintf(
			o,
			"data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":%d,\"id\":\"call_%d\",\"function\":{\"name\":\"w\",\"arguments\":\"{\\\"a\\\":\\\"\"}}]}}]}\n\n",
			idx, idx);
	for (int i = 0; i < 1200; i++) {
		o += sprintf(
			o,
			"data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":%d,\"function\":{\"arguments\":\"",
			i & 1);
		memset(o, 'y', 1000);
		o += 1000;
		o += sprintf(o, "\"}}]}}]}\n\n");
	}
	for (int idx = 0; idx < 2; idx++)
		o += sprintf(
			o,
			"data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":%d,\"function\":{\"arguments\":\"\\\"}\"}}]}}]}\n\n",
			idx);
	sprintf(o,
		"data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\ndata: [DONE]\n\n");
	/*
	 * 600 KB each, in turns: the piece that takes the two over the limit
	 * (the 1049th, for call 0) drops its call, the other goes on.
	 */
	e = run(LG_LLM_OPENAI_CHAT, true, t, strlen(t), 0, &r);
	assert_int_equal(e, 1);
	assert_int_equal(r.calls, 1);
	assert_true(strstr(r.log, "C[call_1|w|{\"a\":\"yyy") == r.log);
	rec_free(&r);
	free(t);
}

/* A whole body over its limit (4 MiB): counted, the turn still comes. */
static void test_cap_body(void **state)
{
	const size_t n = (4u << 20) + 10;
	char *t = malloc(n + 64);
	struct rec r;
	unsigned e;

	(void)state;
	assert_non_null(t);
	size_t o;

	strcpy(t, "{\"model\":\"m\",\"x\":\"");
	o = strlen(t);
	memset(t + o, 'z', n);
	strcpy(t + o + n, "\"}");
	e = run(LG_LLM_OPENAI_CHAT, false, t, strlen(t), 65536, &r);
	assert_int_equal(e, 1);
	assert_string_equal(r.log, "U[||0|0|0]");
	rec_free(&r);
	free(t);
}

/* --- ending a response where it stands (output_repeat's cut) ------------- */

/* The transcript t up to the end of the event that holds mark. */
static char *cut_after(const char *t, const char *mark)
{
	const char *m = strstr(t, mark), *lf, *crlf, *e;

	assert_non_null(m);
	lf = strstr(m, "\n\n");
	crlf = strstr(m, "\r\n\r\n");
	e = crlf && (!lf || crlf < lf) ? crlf + 4 : lf + 2;
	return strndup(t, (size_t)(e - t));
}

/* Feeds p to a new stream: what lg_llm_stream_close gives (NULL: refused). */
static char *closing(enum lg_llm_api api, const char *p)
{
	struct lg_llm_stream *s = lg_llm_stream_new(api, true, NULL);
	char *out = (char *)"";
	size_t len = 0;
	int rc;

	lg_llm_stream_feed(s, p, strlen(p));
	rc = lg_llm_stream_close(s, &out, &len);
	assert_int_equal(rc == 0, lg_llm_stream_can_close(s));
	lg_llm_stream_free(s);
	if (rc < 0) {
		assert_int_equal(rc, -EINVAL);
		assert_null(out);
		return NULL;
	}
	assert_int_equal(len, out ? strlen(out) : 0);
	return out ? out : strdup("");
}

/*
 * The response cut after the event holding mark and closed: the closing
 * events hold each of has[], and the whole reads as a complete response
 * (want, no errors, in every piece size) that needs nothing more.
 */
static char *check_closed(enum lg_llm_api api, const char *t, const char *mark,
			  const char *const *has, const char *want)
{
	char *prefix = cut_after(t, mark), *end = closing(api, prefix), *all;
	char *more;

	assert_non_null(end);
	for (; *has; has++)
		if (!strstr(end, *has))
			fail_msg("closing events lack %s:\n%s", *has, end);
	assert_int_equal(asprintf(&all, "%s%s", prefix, end) > 0, 1);
	check_transcript(api, true, all, want, 0);
	more = closing(api, all);
	assert_non_null(more);
	assert_string_equal(more, ""); /* complete: its end was said */
	free(more);
	free(prefix);
	free(all);
	return end;
}

static void test_close_anthropic(void **state)
{
	static const char *const has[] = {
		"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n",
		"\"stop_reason\":\"end_turn\"",
		"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
		NULL
	};
	char *p;

	(void)state;
	free(check_closed(LG_LLM_ANTHROPIC, anthropic_tool, "assets 🚀", has,
			  "T[I'll delete the café ]T[assets 🚀 now.\n]"
			  "U[claude-sonnet-4-5-20250929|end_turn|21512|1|0]"));
	/* a tool call open: its arguments would be cut, so it is not */
	p = cut_after(anthropic_tool, "ct_sales");
	assert_null(closing(LG_LLM_ANTHROPIC, p));
	free(p);
	/* nothing of the message yet, or a JSON body: nothing to close */
	assert_null(closing(LG_LLM_ANTHROPIC, "event: ping\ndata: {}\n\n"));
	assert_null(closing(LG_LLM_ANTHROPIC, "{\"type\":\"message\""));
}

static void test_close_responses(void **state)
{
	static const char *const has[] = { "event: response.output_text.done\n",
					   "\"text\":\"Deleting naïve 数据.\"",
					   "event: response.content_part.done\n",
					   "event: response.output_item.done\n",
					   "event: response.completed\n",
					   NULL };
	char *end, *p;
	json_t *done, *r, *out, *msg;

	(void)state;
	end = check_closed(LG_LLM_OPENAI_RESPONSES, responses_tool,
			   "\"delta\":\"naïve", has,
			   "T[Deleting ]T[naïve 数据.]"
			   "U[gpt-5-2025-08-07|completed|0|0|0]");
	/* response.completed: the response as created, its output so far */
	p = strstr(end, "event: response.completed\ndata: ");
	assert_non_null(p);
	done = json_loads(p + strlen("event: response.completed\ndata: "),
			  JSON_DISABLE_EOF_CHECK, NULL);
	assert_non_null(done);
	assert_int_equal(
		json_integer_value(json_object_get(done, "sequence_number")),
		11); /* after 7: 8, 9 and 10 */
	r = json_object_get(done, "response");
	assert_string_equal(json_string_value(json_object_get(r, "id")),
			    "resp_68a1c9f0a2d08190b5b1");
	assert_string_equal(json_string_value(json_object_get(r, "status")),
			    "completed");
	out = json_object_get(r, "output");
	assert_int_equal(json_array_size(out), 2);
	assert_string_equal(json_string_value(json_object_get(
				    json_array_get(out, 0), "type")),
			    "reasoning");
	msg = json_array_get(out, 1);
	assert_string_equal(json_string_value(json_object_get(msg, "id")),
			    "msg_68a1c9f2");
	assert_string_equal(json_string_value(json_object_get(msg, "status")),
			    "completed");
	assert_string_equal(
		json_string_value(json_object_get(
			json_array_get(json_object_get(msg, "content"), 0),
			"text")),
		"Deleting naïve 数据.");
	json_decref(done);
	free(end);
	/* the function call streaming: not cut */
	p = cut_after(responses_tool, "\"delta\":\"asset_id\"");
	assert_null(closing(LG_LLM_OPENAI_RESPONSES, p));
	free(p);
}

static void test_close_chat(void **state)
{
	static const char text[] =
		"data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-4o-mini-2024-07-18\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"},\"finish_reason\":null}]}\n"
		"\n"
		"data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-4o-mini-2024-07-18\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Ça va \"},\"finish_reason\":null}]}\n"
		"\n"
		"data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-4o-mini-2024-07-18\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"length\"}]}\n"
		"\n"
		"data: [DONE]\n"
		"\n";
	static const char *const has[] = {
		"\"id\":\"chatcmpl-1\"", "\"created\":1,",
		"\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n", NULL
	};
	static const char *const done_only[] = { "data: [DONE]\n\n", NULL };
	char *end, *p;

	(void)state;
	free(check_closed(LG_LLM_OPENAI_CHAT, text, "Ça va", has,
			  "T[Ça va ]U[gpt-4o-mini-2024-07-18|stop|0|0|0]"));
	/* its finish_reason came already: [DONE] alone */
	end = check_closed(LG_LLM_OPENAI_CHAT, text, "\"length\"", done_only,
			   "T[Ça va ]U[gpt-4o-mini-2024-07-18|length|0|0|0]");
	assert_string_equal(end, "data: [DONE]\n\n");
	free(end);
	/* parallel calls streaming: not cut */
	p = cut_after(chat_parallel, "set_id");
	assert_null(closing(LG_LLM_OPENAI_CHAT, p));
	free(p);
}

static void test_close_gemini(void **state)
{
	static const char *const has[] = {
		"\"finishReason\":\"STOP\"",
		"\"responseId\":\"kX2iaO3bBsWTvdIPqYmJ8Ac\"", "}\r\n\r\n", NULL
	};
	static const char *const wrapped[] = { "{\"response\":{",
					       "\"traceId\":\"4f2a\"}",
					       "\"finishReason\":\"STOP\"",
					       NULL };
	static const char want[] = "T[I will delete]T[ both tables — été.]"
				   "U[gemini-2.5-flash|STOP|41|0|0]";
	char t[8192], ca[8192];
	size_t o = 0, k = 0;

	(void)state;
	for (size_t i = 0; i < 3; i++) {
		o += (size_t)snprintf(t + o, sizeof(t) - o, "data: %s\r\n\r\n",
				      gemini_chunks[i]);
		k += (size_t)snprintf(
			ca + k, sizeof(ca) - k,
			"data: {\"response\": %s, \"traceId\": \"4f2a\"}\r\n\r\n",
			gemini_chunks[i]);
	}
	free(check_closed(LG_LLM_GEMINI, t, "été.", has, want));
	free(check_closed(LG_LLM_GEMINI, ca, "été.", wrapped, want));
}

/* --- requests ------------------------------------------------------------ */

struct results {
	char log[4096];
	size_t n;
};

static void on_result(void *ctx, const struct lg_llm_result *res)
{
	struct results *rs = ctx;

	rs->n += (size_t)snprintf(rs->log + rs->n, sizeof(rs->log) - rs->n,
				  "R[%s|%s|%s|%d]", res->call_id, res->name,
				  res->content, res->is_error);
}

static void check_results(enum lg_llm_api api, const char *body, bool last,
			  int want_n, const char *want, const char *want_model)
{
	struct results rs = { "", 0 };
	char model[64] = "junk";
	int n;

	if (last)
		n = lg_llm_request_last_results(api, body, strlen(body),
						on_result, &rs, model,
						sizeof(model));
	else
		n = lg_llm_request_results(api, body, strlen(body), on_result,
					   &rs, model, sizeof(model));
	if (n != want_n || strcmp(rs.log, want) != 0 ||
	    strcmp(model, want_model) != 0)
		fail_msg(
			"last=%d: %d results (want %d), model '%s'\n got %s\nwant %s",
			last, n, want_n, model, rs.log, want);
}

static void test_request_anthropic(void **state)
{
	static const char body[] =
		"{\"model\":\"claude-sonnet-4-5-20250929\",\"max_tokens\":32000,\"stream\":true,"
		"\"system\":[{\"type\":\"text\",\"text\":\"You are Claude Code.\",\"cache_control\":{\"type\":\"ephemeral\"}}],"
		"\"messages\":["
		"{\"role\":\"user\",\"content\":\"delete the old assets\"},"
		"{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"ok\"},{\"type\":\"tool_use\",\"id\":\"toolu_01\",\"name\":\"Bash\",\"input\":{\"command\":\"ls\"}}]},"
		"{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\",\"tool_use_id\":\"toolu_01\",\"content\":\"a\\nb\"}]},"
		"{\"role\":\"assistant\",\"content\":[{\"type\":\"tool_use\",\"id\":\"toolu_02\",\"name\":\"Bash\",\"input\":{\"command\":\"rm a\"}},{\"type\":\"tool_use\",\"id\":\"toolu_03\",\"name\":\"Read\",\"input\":{\"file_path\":\"/x.png\"}},{\"type\":\"tool_use\",\"id\":\"toolu_04\",\"name\":\"Bash\",\"input\":{}}]},"
		"{\"role\":\"user\",\"content\":["
		"{\"type\":\"tool_result\",\"tool_use_id\":\"toolu_02\",\"content\":[{\"type\":\"text\",\"text\":\"rm: cannot remove 'a'\"},{\"type\":\"text\",\"text\":\"Permission denied — é\"}],\"is_error\":true},"
		"{\"type\":\"tool_result\",\"tool_use_id\":\"toolu_03\",\"content\":[{\"type\":\"image\",\"source\":{\"type\":\"base64\",\"media_type\":\"image/png\",\"data\":\"iVBORw0KGgo=\"}}]},"
		"{\"type\":\"tool_result\",\"tool_use_id\":\"toolu_04\",\"is_error\":false},"
		"{\"type\":\"text\",\"text\":\"<system-reminder>go on</system-reminder>\"}]}],"
		"\"tools\":[{\"name\":\"Bash\",\"input_schema\":{\"type\":\"object\"}}]}";

	(void)state;
	check_results(
		LG_LLM_ANTHROPIC, body, false, 4,
		"R[toolu_01||a\nb|0]"
		"R[toolu_02||rm: cannot remove 'a'\nPermission denied — é|1]"
		"R[toolu_03|||0]R[toolu_04|||0]",
		"claude-sonnet-4-5-20250929");
	check_results(
		LG_LLM_ANTHROPIC, body, true, 3,
		"R[toolu_02||rm: cannot remove 'a'\nPermission denied — é|1]"
		"R[toolu_03|||0]R[toolu_04|||0]",
		"claude-sonnet-4-5-20250929");
	assert_true(lg_llm_request_streams(LG_LLM_ANTHROPIC, "/v1/messages",
					   body, strlen(body)));
	/* the first request: no results */
	check_results(
		LG_LLM_ANTHROPIC,
		"{\"model\":\"claude-3-5-haiku-latest\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}",
		false, 0, "", "claude-3-5-haiku-latest");
}

static void test_request_responses(void **state)
{
	static const char body[] =
		"{\"model\":\"gpt-5-codex\",\"instructions\":\"You are Codex.\",\"input\":["
		"{\"type\":\"message\",\"role\":\"user\",\"content\":[{\"type\":\"input_text\",\"text\":\"clean up\"}]},"
		"{\"type\":\"reasoning\",\"summary\":[],\"encrypted_content\":\"gAAAAA==\"},"
		"{\"type\":\"function_call\",\"name\":\"shell\",\"arguments\":\"{\\\"command\\\":[\\\"ls\\\"]}\",\"call_id\":\"call_1\"},"
		"{\"type\":\"function_call_output\",\"call_id\":\"call_1\",\"output\":\"a\\nb\"},"
		"{\"type\":\"custom_tool_call\",\"name\":\"apply_patch\",\"input\":\"*** Begin Patch\",\"call_id\":\"call_2\"},"
		"{\"type\":\"function_call\",\"name\":\"shell\",\"arguments\":\"{}\",\"call_id\":\"call_3\"},"
		"{\"type\":\"custom_tool_call_output\",\"call_id\":\"call_2\",\"output\":\"Done!\"},"
		"{\"type\":\"function_call_output\",\"call_id\":\"call_3\",\"output\":[{\"type\":\"input_text\",\"text\":\"x\"}]},"
		"{\"type\":\"message\",\"role\":\"user\",\"content\":[{\"type\":\"input_text\",\"text\":\"<environment_context/>\"}]}],"
		"\"tools\":[],\"tool_choice\":\"auto\",\"parallel_tool_calls\":true,\"store\":false,\"stream\":true}";
	static const char next[] =
		"{\"model\":\"gpt-4.1\",\"previous_response_id\":\"resp_1\",\"input\":[{\"type\":\"function_call_output\",\"call_id\":\"call_9\",\"output\":\"{\\\"ok\\\":true}\"}]}";
	static const char str[] =
		"{\"model\":\"gpt-4.1\",\"input\":\"Tell me a joke\"}";
	static const char earlier[] =
		"{\"model\":\"o3\",\"input\":["
		"{\"role\":\"user\",\"content\":\"go\"},"
		"{\"type\":\"function_call\",\"name\":\"a\",\"arguments\":\"{}\",\"call_id\":\"c1\"},"
		"{\"type\":\"function_call_output\",\"call_id\":\"c1\",\"output\":\"1\"},"
		"{\"role\":\"user\",\"content\":\"again\"},"
		"{\"type\":\"function_call\",\"name\":\"a\",\"arguments\":\"{}\",\"call_id\":\"c2\"},"
		"{\"type\":\"function_call_output\",\"call_id\":\"c2\",\"output\":\"2\"}]}";

	(void)state;
	check_results(LG_LLM_OPENAI_RESPONSES, body, false, 3,
		      "R[call_1||a\nb|0]R[call_2||Done!|0]R[call_3||x|0]",
		      "gpt-5-codex");
	/* one model turn since the user spoke: all three */
	check_results(LG_LLM_OPENAI_RESPONSES, body, true, 3,
		      "R[call_1||a\nb|0]R[call_2||Done!|0]R[call_3||x|0]",
		      "gpt-5-codex");
	check_results(LG_LLM_OPENAI_RESPONSES, next, false, 1,
		      "R[call_9||{\"ok\":true}|0]", "gpt-4.1");
	check_results(LG_LLM_OPENAI_RESPONSES, next, true, 1,
		      "R[call_9||{\"ok\":true}|0]", "gpt-4.1");
	check_results(LG_LLM_OPENAI_RESPONSES, str, false, 0, "", "gpt-4.1");
	check_results(LG_LLM_OPENAI_RESPONSES, earlier, true, 1, "R[c2||2|0]",
		      "o3");
	assert_true(lg_llm_request_streams(
		LG_LLM_OPENAI_RESPONSES, "/v1/responses", body, strlen(body)));
	assert_false(lg_llm_request_streams(LG_LLM_OPENAI_RESPONSES,
					    "/v1/responses", str, strlen(str)));
}

static void test_request_chat(void **state)
{
	static const char body[] =
		"{\"model\":\"gpt-4.1\",\"stream\":true,\"stream_options\":{\"include_usage\":true},\"messages\":["
		"{\"role\":\"system\",\"content\":\"You are helpful.\"},"
		"{\"role\":\"user\",\"content\":\"clean\"},"
		"{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"id\":\"call_a\",\"type\":\"function\",\"function\":{\"name\":\"delete_asset\",\"arguments\":\"{\\\"asset_id\\\":\\\"x\\\"}\"}}]},"
		"{\"role\":\"tool\",\"tool_call_id\":\"call_a\",\"content\":\"deleted\"},"
		"{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"id\":\"call_b\",\"type\":\"function\",\"function\":{\"name\":\"delete_asset\",\"arguments\":\"{}\"}},{\"id\":\"call_c\",\"type\":\"function\",\"function\":{\"name\":\"ls\",\"arguments\":\"{}\"}}]},"
		"{\"role\":\"tool\",\"tool_call_id\":\"call_b\",\"content\":[{\"type\":\"text\",\"text\":\"not \"},{\"type\":\"text\",\"text\":\"found\"}]},"
		"{\"role\":\"tool\",\"tool_call_id\":\"call_c\",\"content\":\"\"}]}";

	(void)state;
	check_results(
		LG_LLM_OPENAI_CHAT, body, false, 3,
		"R[call_a||deleted|0]R[call_b||not \nfound|0]R[call_c|||0]",
		"gpt-4.1");
	check_results(LG_LLM_OPENAI_CHAT, body, true, 2,
		      "R[call_b||not \nfound|0]R[call_c|||0]", "gpt-4.1");
	assert_true(lg_llm_request_streams(LG_LLM_OPENAI_CHAT,
					   "/v1/chat/completions", body,
					   strlen(body)));
}

static void test_request_gemini(void **state)
{
	static const char body[] =
		"{\"contents\":["
		"{\"role\":\"user\",\"parts\":[{\"text\":\"clean\"}]},"
		"{\"role\":\"model\",\"parts\":[{\"functionCall\":{\"name\":\"delete_asset\",\"args\":{\"asset_id\":\"x\"}},\"thoughtSignature\":\"CiQB\"}]},"
		"{\"role\":\"user\",\"parts\":[{\"functionResponse\":{\"name\":\"delete_asset\",\"response\":{\"output\":\"deleted\"}}}]},"
		"{\"role\":\"model\",\"parts\":[{\"functionCall\":{\"id\":\"fc-1\",\"name\":\"delete_asset\",\"args\":{\"asset_id\":\"y\"}}},{\"functionCall\":{\"name\":\"list\",\"args\":{}}}]},"
		"{\"role\":\"user\",\"parts\":[{\"functionResponse\":{\"id\":\"fc-1\",\"name\":\"delete_asset\",\"response\":{\"error\":\"not found\"}}},{\"function_response\":{\"name\":\"list\",\"response\":{\"output\":[\"a\",\"b\"]}}}]}],"
		"\"tools\":[{\"functionDeclarations\":[{\"name\":\"delete_asset\"}]}],\"generationConfig\":{\"temperature\":0}}";

	(void)state;
	check_results(LG_LLM_GEMINI, body, false, 3,
		      "R[|delete_asset|{\"output\":\"deleted\"}|0]"
		      "R[fc-1|delete_asset|{\"error\":\"not found\"}|1]"
		      "R[|list|{\"output\":[\"a\",\"b\"]}|0]",
		      "");
	check_results(LG_LLM_GEMINI, body, true, 2,
		      "R[fc-1|delete_asset|{\"error\":\"not found\"}|1]"
		      "R[|list|{\"output\":[\"a\",\"b\"]}|0]",
		      "");
	assert_true(lg_llm_request_streams(
		LG_LLM_GEMINI,
		"/gemini/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse",
		body, strlen(body)));
	assert_false(lg_llm_request_streams(
		LG_LLM_GEMINI,
		"/v1beta/models/gemini-2.5-flash:generateContent", body,
		strlen(body)));
	{
		/* Code Assist: {model, project, request: {contents, ...}} */
		char wrapped[4096];

		snprintf(wrapped, sizeof(wrapped),
			 "{\"model\":\"gemini-3-flash\",\"project\":\"p-1\","
			 "\"user_prompt_id\":\"u-1\",\"request\":%s}",
			 body);
		check_results(LG_LLM_GEMINI, wrapped, true, 2,
			      "R[fc-1|delete_asset|{\"error\":\"not found\"}|1]"
			      "R[|list|{\"output\":[\"a\",\"b\"]}|0]",
			      "gemini-3-flash");
		assert_true(lg_llm_request_streams(
			LG_LLM_GEMINI,
			"/tls-4/v1internal:streamGenerateContent?alt=sse",
			wrapped, strlen(wrapped)));
		assert_int_equal(
			lg_llm_api_of(
				"gemini",
				"/v1internal:streamGenerateContent?alt=sse"),
			LG_LLM_GEMINI);
	}
}

static void test_request_invalid(void **state)
{
	static const char *const bad[] = {
		"",
		"not json",
		"[]",
		"\"x\"",
		"{\"messages\":{}}",
		"{}",
		"{\"messages\":[",
		"{\"contents\":\"x\"}",
		"{\"input\":42}",
	};
	static const char long_model[] =
		"{\"model\":\"abcdefghijk\",\"messages\":[{\"role\":\"tool\",\"tool_call_id\":\"c\",\"content\":\"r\"}]}";
	struct results rs = { "", 0 };
	char model[8];

	(void)state;
	for (size_t a = 0; a < 4; a++)
		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			int n = lg_llm_request_results(apis[a], bad[i],
						       strlen(bad[i]),
						       on_result, &rs, model,
						       sizeof(model));

			/* Responses without input is valid: no results */
			if (apis[a] == LG_LLM_OPENAI_RESPONSES &&
			    (strcmp(bad[i], "{}") == 0 ||
			     strcmp(bad[i], "{\"messages\":{}}") == 0 ||
			     strcmp(bad[i], "{\"contents\":\"x\"}") == 0))
				assert_int_equal(n, 0);
			else if (n != -EINVAL)
				fail_msg("api %zu '%s': %d", a, bad[i], n);
			assert_false(lg_llm_request_streams(
				apis[a], "/x", bad[i], strlen(bad[i])));
		}
	assert_string_equal(rs.log, "");
	assert_int_equal(lg_llm_request_results(LG_LLM_UNKNOWN, "{}", 2, NULL,
						NULL, NULL, 0),
			 -EINVAL);
	/* a long model name is cut; no callback is fine */
	assert_int_equal(lg_llm_request_results(LG_LLM_OPENAI_CHAT, long_model,
						strlen(long_model), NULL, NULL,
						model, sizeof(model)),
			 1);
	assert_string_equal(model, "abcdefg");
}

/* --- API from the route and path ------------------------------------------ */

static void test_api_of(void **state)
{
	static const struct {
		const char *route, *path;
		enum lg_llm_api want;
	} tc[] = {
		{ "anthropic", "/v1/messages", LG_LLM_ANTHROPIC },
		{ "anthropic", "/v1/messages?beta=true", LG_LLM_ANTHROPIC },
		{ "anthropic", "/v1/messages/count_tokens", LG_LLM_UNKNOWN },
		{ "anthropic", "/v1/models", LG_LLM_UNKNOWN },
		{ "openai", "/v1/responses", LG_LLM_OPENAI_RESPONSES },
		{ "openai", "/v1/responses/resp_1", LG_LLM_UNKNOWN },
		{ "openai", "/v1/responses/resp_1/cancel", LG_LLM_UNKNOWN },
		{ "openai", "/v1/chat/completions", LG_LLM_OPENAI_CHAT },
		{ "openai", "/chat/completions", LG_LLM_OPENAI_CHAT },
		{ "openai", "/v1/completions", LG_LLM_UNKNOWN },
		{ "openai", "/v1/embeddings", LG_LLM_UNKNOWN },
		{ "gemini", "/v1beta/models/gemini-2.5-pro:generateContent",
		  LG_LLM_GEMINI },
		{ "gemini",
		  "/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse",
		  LG_LLM_GEMINI },
		{ "gemini", "/v1beta/models/gemini-2.5-pro:countTokens",
		  LG_LLM_UNKNOWN },
		{ "gemini", "/v1beta/models/text-embedding-004:embedContent",
		  LG_LLM_UNKNOWN },
		/* compatible endpoints: the path says which API */
		{ "gemini", "/v1beta/openai/chat/completions",
		  LG_LLM_OPENAI_CHAT },
		{ "anthropic", "/v1/chat/completions", LG_LLM_OPENAI_CHAT },
		{ "other", "/v1/messages", LG_LLM_UNKNOWN },
		{ NULL, "/v1/messages", LG_LLM_UNKNOWN },
		{ "anthropic", NULL, LG_LLM_UNKNOWN },
		{ "anthropic", "", LG_LLM_UNKNOWN },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(tc) / sizeof(tc[0]); i++)
		if (lg_llm_api_of(tc[i].route, tc[i].path) != tc[i].want)
			fail_msg("%s %s: %d, want %d", tc[i].route, tc[i].path,
				 lg_llm_api_of(tc[i].route, tc[i].path),
				 tc[i].want);
}

/* --- error bodies -------------------------------------------------------- */

static void test_error_bodies(void **state)
{
	static const char msg[] =
		"lgrun stopped this session: 3 deletes in 60 s\n\"quoted\" \\ tab\t é 🚀 \x01";
	char out[1024];

	(void)state;
	for (size_t a = 0; a < 4; a++) {
		int status = 0, n;
		json_t *root, *err;
		json_error_t e;

		n = lg_llm_error_body(apis[a], msg, out, sizeof(out), &status);
		assert_true(n > 0);
		assert_int_equal(strlen(out), (size_t)n);
		assert_int_equal(status, 400);
		root = json_loads(out, 0, &e);
		if (!root)
			fail_msg("%s: %s", out, e.text);
		err = json_object_get(root, "error");
		assert_true(json_is_object(err));
		assert_string_equal(
			json_string_value(json_object_get(err, "message")),
			msg);
		switch (apis[a]) {
		case LG_LLM_ANTHROPIC:
			assert_string_equal(json_string_value(json_object_get(
						    root, "type")),
					    "error");
			assert_string_equal(
				json_string_value(json_object_get(err, "type")),
				"invalid_request_error");
			break;
		case LG_LLM_GEMINI:
			assert_int_equal(json_integer_value(
						 json_object_get(err, "code")),
					 400);
			assert_string_equal(json_string_value(json_object_get(
						    err, "status")),
					    "FAILED_PRECONDITION");
			break;
		default:
			assert_string_equal(
				json_string_value(json_object_get(err, "type")),
				"invalid_request_error");
			assert_string_equal(
				json_string_value(json_object_get(err, "code")),
				"lgrun_session_stopped");
			assert_true(
				json_is_null(json_object_get(err, "param")));
			break;
		}
		json_decref(root);

		/* every size too small is refused, the exact one works */
		for (int size = 0; size <= n; size++)
			assert_int_equal(lg_llm_error_body(apis[a], msg, out,
							   (size_t)size, NULL),
					 -ENOSPC);
		assert_int_equal(lg_llm_error_body(apis[a], msg, out,
						   (size_t)n + 1, NULL),
				 n);
	}
	/* not UTF-8: still a valid body */
	assert_true(lg_llm_error_body(LG_LLM_ANTHROPIC, "bad \xff\xfe end", out,
				      sizeof(out), NULL) > 0);
	assert_non_null(strstr(out, "bad ?? end"));
	assert_true(lg_llm_error_body(LG_LLM_UNKNOWN, NULL, out, sizeof(out),
				      NULL) > 0);
	assert_int_equal(lg_llm_error_body(LG_LLM_GEMINI, "x", NULL, 0, NULL),
			 -ENOSPC);
}

/* --- the table: every API, every member ---------------------------------- */

/*
 * Each API's samples: a request of its own on its route (a tool call of
 * the model's, "c1", and its result "ok"; tools declared; a stream asked
 * for), and the start of a streamed response (its text "hello", no end).
 * An API without its line here fails test_api_table.
 */
static const struct {
	const char *name, *path, *request, *stream;
} samples[] = {
	{ "anthropic-messages", "/v1/messages",
	  "{\"model\":\"m\",\"stream\":true,\"tools\":[{\"name\":\"t\"}],"
	  "\"messages\":[{\"role\":\"user\",\"content\":\"hi\"},"
	  "{\"role\":\"assistant\",\"content\":[{\"type\":\"tool_use\",\"id\":\"c1\",\"name\":\"t\",\"input\":{}}]},"
	  "{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\",\"tool_use_id\":\"c1\",\"content\":\"ok\"}]}]}",
	  "event: message_start\n"
	  "data: {\"type\":\"message_start\",\"message\":{\"model\":\"m\",\"usage\":{\"input_tokens\":1}}}\n\n"
	  "event: content_block_start\n"
	  "data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n"
	  "event: content_block_delta\n"
	  "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"hello\"}}\n\n" },
	{ "openai-responses", "/v1/responses",
	  "{\"model\":\"m\",\"stream\":true,\"tools\":[{\"type\":\"function\",\"name\":\"t\"}],"
	  "\"input\":[{\"role\":\"user\",\"content\":\"hi\"},"
	  "{\"type\":\"function_call\",\"call_id\":\"c1\",\"name\":\"t\",\"arguments\":\"{}\"},"
	  "{\"type\":\"function_call_output\",\"call_id\":\"c1\",\"output\":\"ok\"}]}",
	  "event: response.created\n"
	  "data: {\"type\":\"response.created\",\"sequence_number\":0,\"response\":{\"id\":\"r\",\"model\":\"m\",\"status\":\"in_progress\",\"output\":[]}}\n\n"
	  "event: response.output_item.added\n"
	  "data: {\"type\":\"response.output_item.added\",\"sequence_number\":1,\"output_index\":0,\"item\":{\"id\":\"i\",\"type\":\"message\",\"status\":\"in_progress\",\"role\":\"assistant\",\"content\":[]}}\n\n"
	  "event: response.output_text.delta\n"
	  "data: {\"type\":\"response.output_text.delta\",\"sequence_number\":2,\"item_id\":\"i\",\"output_index\":0,\"content_index\":0,\"delta\":\"hello\"}\n\n" },
	{ "openai-chat", "/v1/chat/completions",
	  "{\"model\":\"m\",\"stream\":true,\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"t\"}}],"
	  "\"messages\":[{\"role\":\"user\",\"content\":\"hi\"},"
	  "{\"role\":\"assistant\",\"tool_calls\":[{\"id\":\"c1\",\"type\":\"function\",\"function\":{\"name\":\"t\",\"arguments\":\"{}\"}}]},"
	  "{\"role\":\"tool\",\"tool_call_id\":\"c1\",\"content\":\"ok\"}]}",
	  "data: {\"id\":\"x\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\","
	  "\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hello\"}}]}\n\n" },
	{ "gemini", "/v1beta/models/g:streamGenerateContent?alt=sse",
	  "{\"tools\":[{\"functionDeclarations\":[{\"name\":\"t\"}]}],"
	  "\"contents\":[{\"role\":\"user\",\"parts\":[{\"text\":\"hi\"}]},"
	  "{\"role\":\"model\",\"parts\":[{\"functionCall\":{\"id\":\"c1\",\"name\":\"t\",\"args\":{}}}]},"
	  "{\"role\":\"user\",\"parts\":[{\"functionResponse\":{\"id\":\"c1\",\"name\":\"t\",\"response\":{\"output\":\"ok\"}}}]}]}",
	  "data: {\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[{\"text\":\"hello\"}]},\"index\":0}],"
	  "\"modelVersion\":\"m\"}\r\n\r\n" },
	{ "echo", "/lgrun/echo",
	  "{\"stream\":true,\"tools\":[{\"name\":\"t\"}],\"turns\":[{\"role\":\"user\",\"text\":\"hi\"},"
	  "{\"role\":\"model\",\"call\":{\"id\":\"c1\",\"name\":\"t\",\"args\":{}}},"
	  "{\"role\":\"user\",\"result\":{\"id\":\"c1\",\"content\":\"ok\"}}]}",
	  "data: {\"model\":\"m\"}\n\ndata: {\"text\":\"hello\"}\n\n" },
};

struct table_run {
	char text[64], stop[64], ids[64];
	unsigned turns;
};

static void table_text(void *ctx, const char *p, size_t n)
{
	struct table_run *r = ctx;

	strncat(r->text, p,
		n < sizeof(r->text) - strlen(r->text) - 1 ?
			n :
			sizeof(r->text) - strlen(r->text) - 1);
}

static void table_turn(void *ctx, const struct lg_llm_turn *t)
{
	struct table_run *r = ctx;

	r->turns++;
	snprintf(r->stop, sizeof(r->stop), "%s", t->stop_reason);
}

static void table_result(void *ctx, const struct lg_llm_result *res)
{
	struct table_run *r = ctx;

	if (strstr(res->content, "ok"))
		strncat(r->ids, res->call_id,
			sizeof(r->ids) - strlen(r->ids) - 1);
}

/* Each entry filled, and a request, a response, its close and a note. */
static void table_entry(enum lg_llm_api api)
{
	const struct llm_api *a = llm_api(api);
	const char *path, *req, *stream;
	struct table_run run = { 0 };
	struct lg_llm_sink sink = { NULL, table_text, table_turn, &run };
	struct lg_steer_note note = { "lgrun: NOTE-TEXT", 0 };
	struct lg_llm_stream *s;
	char buf[2048], *out = NULL, *body = NULL;
	size_t len = 0, items = 0, after = 0, i;
	bool stateful = true;
	int status = 0;

	assert_non_null(a);
	assert_non_null(a->name);
	for (i = 0; i < sizeof(samples) / sizeof(samples[0]); i++)
		if (strcmp(samples[i].name, a->name) == 0)
			break;
	if (i == sizeof(samples) / sizeof(samples[0]))
		fail_msg("API %d (%s): no samples in test_llm.c", api, a->name);
	path = samples[i].path;
	req = samples[i].request;
	stream = samples[i].stream;
	/* every member */
	if (!a->route || !a->paths || !a->paths[0] || !a->event || !a->end ||
	    !a->close || !a->streams || !a->messages || !a->makes_calls ||
	    !a->last_turn || !a->results || !a->error_body || !a->error_event ||
	    !a->error_event_name || !a->holder || !a->items || !a->stateful ||
	    !a->place)
		fail_msg("%s: a member of its struct llm_api is missing",
			 a->name);
	/* the request: its route and path, its stream, its result */
	assert_int_equal(lg_llm_api_of(a->route, path), api);
	for (const char *const *p = a->paths; *p; p++)
		assert_int_equal(lg_llm_api_of(a->route, *p), api);
	assert_true(lg_llm_request_streams(api, path, req, strlen(req)));
	assert_int_equal(lg_llm_request_last_results(api, req, strlen(req),
						     table_result, &run, NULL,
						     0),
			 1);
	assert_string_equal(run.ids, "c1");
	/* the response, cut short, closed as the API closes one */
	s = lg_llm_stream_new(api, true, &sink);
	assert_non_null(s);
	lg_llm_stream_feed(s, stream, strlen(stream));
	assert_string_equal(run.text, "hello");
	assert_true(lg_llm_stream_can_close(s));
	assert_int_equal(lg_llm_stream_close(s, &out, &len), 0);
	assert_non_null(out);
	assert_true(len > 0);
	lg_llm_stream_feed(s, out, len);
	free(out);
	/* closed already: nothing more to say */
	assert_int_equal(lg_llm_stream_close(s, &out, &len), 0);
	assert_int_equal(len, 0);
	free(out);
	lg_llm_stream_end(s);
	assert_int_equal(run.turns, 1);
	assert_true(run.stop[0]); /* the close said why it ended */
	assert_int_equal(lg_llm_stream_errors(s), 0);
	lg_llm_stream_free(s);
	/* a note after the result */
	assert_int_equal(lg_llm_steer_items(api, req, strlen(req), &items,
					    &stateful),
			 0);
	assert_int_equal(items, 3);
	assert_false(stateful);
	assert_true(lg_llm_steer_agentic(api, req, strlen(req)));
	note.at = items;
	assert_int_equal(lg_llm_steer_apply(api, req, strlen(req), &note, 1,
					    &body, &len),
			 1);
	assert_non_null(strstr(body, "lgrun: NOTE-TEXT"));
	assert_int_equal(lg_llm_steer_items(api, body, len, &after, &stateful),
			 0);
	assert_true(after >= items);
	run.ids[0] = '\0';
	assert_int_equal(lg_llm_request_last_results(
				 api, body, len, table_result, &run, NULL, 0),
			 1);
	assert_string_equal(run.ids, "c1");
	free(body);
	/* its errors */
	assert_true(lg_llm_error_body(api, "why-not", buf, sizeof(buf),
				      &status) > 0);
	assert_non_null(strstr(buf, "why-not"));
	assert_int_equal(status, 400);
	assert_true(lg_llm_stream_error_event(api, "why-not", buf,
					      sizeof(buf)) > 0);
	assert_non_null(strstr(buf, "why-not"));
}

static void test_api_table(void **state)
{
	(void)state;
	/* nothing outside the table */
	assert_null(llm_api(LG_LLM_UNKNOWN));
	assert_null(llm_api(LG_LLM_COUNT));
	assert_null(lg_llm_stream_new(LG_LLM_COUNT, true, NULL));
	for (int api = LG_LLM_UNKNOWN + 1; api < LG_LLM_COUNT; api++)
		table_entry((enum lg_llm_api)api);
	/* two APIs, two names */
	for (int x = LG_LLM_UNKNOWN + 1; x < LG_LLM_COUNT; x++)
		for (int y = x + 1; y < LG_LLM_COUNT; y++)
			assert_string_not_equal(llm_api(x)->name,
						llm_api(y)->name);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_api_of),
		cmocka_unit_test(test_anthropic_stream),
		cmocka_unit_test(test_anthropic_parallel),
		cmocka_unit_test(test_anthropic_whole),
		cmocka_unit_test(test_anthropic_error_event),
		cmocka_unit_test(test_responses_stream),
		cmocka_unit_test(test_responses_incomplete),
		cmocka_unit_test(test_responses_whole),
		cmocka_unit_test(test_chat_stream),
		cmocka_unit_test(test_chat_whole),
		cmocka_unit_test(test_gemini_sse),
		cmocka_unit_test(test_gemini_array),
		cmocka_unit_test(test_code_assist_stream),
		cmocka_unit_test(test_gemini_whole),
		cmocka_unit_test(test_close_anthropic),
		cmocka_unit_test(test_close_responses),
		cmocka_unit_test(test_close_chat),
		cmocka_unit_test(test_close_gemini),
		cmocka_unit_test(test_sse_framing),
		cmocka_unit_test(test_turn_once),
		cmocka_unit_test(test_garbage),
		cmocka_unit_test(test_cap_line),
		cmocka_unit_test(test_cap_args),
		cmocka_unit_test(test_cap_args_chat),
		cmocka_unit_test(test_cap_body),
		cmocka_unit_test(test_request_anthropic),
		cmocka_unit_test(test_request_responses),
		cmocka_unit_test(test_request_chat),
		cmocka_unit_test(test_request_gemini),
		cmocka_unit_test(test_request_invalid),
		cmocka_unit_test(test_error_bodies),
		cmocka_unit_test(test_api_table),
	};

	return cmocka_run_group_tests_name("llm", tests, NULL, NULL);
}
