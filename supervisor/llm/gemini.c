// SPDX-License-Identifier: MIT
/*
 * Gemini's generateContent and streamGenerateContent, and the Code Assist
 * envelope of gemini-cli's Google login ({model, project, request} in,
 * {response} out): its chunks, the function responses in a request, its
 * error shapes.
 */
#include <errno.h>
#include <string.h>

#include "api.h"

static const json_t *get2(const json_t *o, const char *camel, const char *snake)
{
	const json_t *v = json_object_get(o, camel);

	return v ? v : json_object_get(o, snake);
}

static void gemini_chunk(struct lg_llm_stream *s, const json_t *v)
{
	const json_t *cands = json_object_get(v, "candidates"), *part, *fc;
	const json_t *c0 = json_array_get(cands, 0);
	const json_t *u = json_object_get(v, "usageMetadata");
	const char *block;
	size_t i;

	if (!json_is_object(v)) {
		s->errors++;
		return;
	}
	if (json_is_object(json_object_get(v, "error"))) {
		s->finished = true; /* ended by the error */
		llm_set_str(s->stop, sizeof(s->stop), "error");
		return;
	}
	if (!cands && !u && !json_object_get(v, "promptFeedback") &&
	    !json_object_get(v, "modelVersion")) {
		s->errors++; /* not a GenerateContentResponse */
		return;
	}
	s->started = true;
	llm_set_str(s->id, sizeof(s->id), llm_jstr(v, "responseId"));
	if (llm_jstr(c0, "finishReason"))
		s->finished = true;
	llm_set_str(s->model, sizeof(s->model), llm_jstr(v, "modelVersion"));
	json_array_foreach(json_object_get(json_object_get(c0, "content"),
					   "parts"),
			   i, part)
	{
		fc = get2(part, "functionCall", "function_call");
		if (json_is_object(fc))
			llm_emit_call(s, llm_jstr(fc, "id"),
				      llm_jstr(fc, "name"),
				      llm_dump(json_object_get(fc, "args")));
		else if (!llm_jtrue(part, "thought")) /* thinking is not said */
			llm_emit_text(s, json_object_get(part, "text"));
	}
	llm_set_str(s->stop, sizeof(s->stop), llm_jstr(c0, "finishReason"));
	block = llm_jstr(json_object_get(v, "promptFeedback"), "blockReason");
	if (block && !json_array_size(cands))
		llm_set_str(s->stop, sizeof(s->stop), block);
	/* each chunk has the counts so far; every part is what was read/said */
	llm_jcount(u, "promptTokenCount", &s->in[0]);
	llm_jcount(u, "toolUsePromptTokenCount", &s->in[1]);
	llm_jcount(u, "candidatesTokenCount", &s->out[0]);
	llm_jcount(u, "thoughtsTokenCount", &s->out[1]);
}

/*
 * Code Assist (gemini-cli's Google login, cloudcode-pa.googleapis.com)
 * wraps Gemini: a request as {model, project, request: {contents, ...}},
 * each response as {response: {candidates, ...}, traceId}. The inner
 * object, or v itself when it is not wrapped.
 */
static const json_t *code_assist(const json_t *v, const char *inner,
				 const char *own)
{
	const json_t *in = json_object_get(v, inner);

	return json_is_object(in) && !json_object_get(v, own) ? in : v;
}

static void gemini_results(struct llm_results *rs, const json_t *c)
{
	const json_t *p, *fr, *resp;
	size_t i;

	json_array_foreach(json_object_get(c, "parts"), i, p)
	{
		fr = get2(p, "functionResponse", "function_response");
		if (!json_is_object(fr))
			continue;
		resp = json_object_get(fr, "response");
		/* the documented convention: "output" or "error" */
		llm_result(rs, llm_jstr(fr, "id"), llm_jstr(fr, "name"),
			   resp ? llm_dump(resp) : strdup("{}"),
			   json_object_get(resp, "error") != NULL);
	}
}

/* streamGenerateContent without alt=sse: an array of chunks */
static void gemini_event(struct lg_llm_stream *s, const json_t *v,
			 const char *name)
{
	const json_t *el;
	size_t i;

	(void)name;
	if (!json_is_array(v)) {
		const json_t *in = code_assist(v, "response", "candidates");

		/* the envelope, for a chunk of lgrun's own (close.c) */
		if (in != v) {
			s->wrapped = true;
			llm_set_str(s->trace, sizeof(s->trace),
				    llm_jstr(v, "traceId"));
		}
		gemini_chunk(s, in);
		return;
	}
	json_array_foreach(v, i, el)
	{
		gemini_chunk(s, code_assist(el, "response", "candidates"));
	}
}

static const json_t *gemini_messages(const json_t *root)
{
	const json_t *c = json_object_get(
		code_assist(root, "request", "contents"), "contents");

	return c ? c : json_null();
}

static bool gemini_makes_calls(const json_t *m)
{
	const json_t *p;
	size_t i;

	json_array_foreach(json_object_get(m, "parts"), i, p)
	{
		if (json_is_object(get2(p, "functionCall", "function_call")))
			return true;
	}
	return false;
}

static json_t *gemini_error_body(json_t *msg)
{
	return json_pack("{s:{s:i, s:o, s:s}}", "error", "code", 400, "message",
			 msg, "status", "FAILED_PRECONDITION");
}

static void gemini_error_event(json_t *ev, json_t *err, const char *message)
{
	(void)message;
	json_object_set_new(err, "code", json_integer(400));
	json_object_set_new(err, "status", json_string("FAILED_PRECONDITION"));
	json_object_set(ev, "error", err);
}

/* A last chunk with finishReason STOP (in Code Assist's envelope). */
static int gemini_close(const struct lg_llm_stream *s, struct buf *b)
{
	json_t *chunk;

	if (s->finished)
		return 0;
	chunk = json_pack(
		"{s:[{s:{s:[{s:s}], s:s}, s:s, s:i}], s:{s:I, s:I, s:I}}",
		"candidates", "content", "parts", "text", "", "role", "model",
		"finishReason", "STOP", "index", 0, "usageMetadata",
		"promptTokenCount", (json_int_t)s->in[0],
		"candidatesTokenCount", (json_int_t)s->out[0],
		"totalTokenCount",
		(json_int_t)(s->in[0] + s->in[1] + s->out[0] + s->out[1]));
	if (chunk && s->model[0])
		json_object_set_new(chunk, "modelVersion",
				    json_string(s->model));
	if (chunk && s->id[0])
		json_object_set_new(chunk, "responseId", json_string(s->id));
	if (chunk && s->wrapped)
		chunk = json_pack("{s:o, s:s}", "response", chunk, "traceId",
				  s->trace);
	return llm_put_event(b, NULL, chunk, "\r\n");
}

static bool gemini_streams(const char *path, const char *body, size_t n)
{
	(void)body;
	(void)n;
	return path && strstr(path, ":streamGenerateContent");
}

/* --- lgrun's notes (steer.c) ---------------------------------------------- */

/* The request, or Code Assist's {model, project, request: {contents}}. */
static json_t *gemini_holder(json_t *root)
{
	return (json_t *)code_assist(root, "request", "contents");
}

static json_t *gemini_items(json_t *h)
{
	json_t *c = json_object_get(h, "contents");

	return json_is_array(c) ? c : NULL;
}

/* The user's content: its role user, or none. */
static bool gemini_user(const json_t *m)
{
	const char *role = llm_jstr(m, "role");

	return json_is_object(m) &&
	       (!json_object_get(m, "role") || (role && !strcmp(role, "user")));
}

/* A user content carrying function responses. */
static bool gemini_answers(const json_t *m)
{
	const json_t *p;
	size_t i;

	if (!gemini_user(m))
		return false;
	json_array_foreach(json_object_get(m, "parts"), i, p)
	{
		if (get2(p, "functionResponse", "function_response"))
			return true;
	}
	return false;
}

static json_t *gemini_block(json_t *text)
{
	return json_pack("{s:O}", "text", text);
}

static json_t *gemini_user_message(json_t *blocks)
{
	return json_pack("{s:s, s:o}", "role", "user", "parts", blocks);
}

/* The parts of content m (made when it has none), NULL when not an array. */
static json_t *gemini_parts(json_t *m)
{
	json_t *c = json_object_get(m, "parts"), *a;

	if (json_is_array(c))
		return c;
	if (c)
		return NULL;
	a = json_array();
	if (!a || json_object_set_new(m, "parts", a) < 0)
		return NULL;
	return a;
}

/*
 * A text part appended to the user content at at-1 (or to the function
 * responses right at at), else a new user content at at.
 */
static int gemini_place(json_t *items, const struct llm_note *p, size_t k)
{
	json_t *m =
		llm_note_target(items, p[0].at, gemini_user, gemini_answers);
	json_t *parts = m ? gemini_parts(m) : NULL;

	if (parts)
		return llm_note_blocks(parts, p, k, gemini_block);
	return llm_note_insert(items, p[0].at, p, k, gemini_block,
			       gemini_user_message);
}

static const char *const gemini_paths[] = { ":generateContent",
					    ":streamGenerateContent", NULL };

const struct llm_api llm_gemini = {
	.name = "gemini",
	.route = "gemini",
	.paths = gemini_paths,
	.event = gemini_event,
	.arrays = true,
	.end = llm_calls_drop,
	.close = gemini_close,
	.streams = gemini_streams,
	.messages = gemini_messages,
	.makes_calls = gemini_makes_calls,
	.last_turn = llm_after_calls,
	.results = gemini_results,
	.error_body = gemini_error_body,
	.error_event = gemini_error_event,
	.error_event_name = "",
	.holder = gemini_holder,
	.items = gemini_items,
	.stateful = llm_stateless,
	.place = gemini_place,
};
