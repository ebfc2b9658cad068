// SPDX-License-Identifier: MIT
/*
 * OpenAI's Chat Completions (and the servers that speak it): its
 * stream's chunks, a whole completion, the tool results in a request, its
 * error shapes (also those of an API lgrun cannot name).
 */
#include <errno.h>
#include <string.h>

#include "api.h"

/* The choice with index 0 (or the first when they carry no index). */
static const json_t *chat_choice(const json_t *v)
{
	const json_t *choices = json_object_get(v, "choices"), *c;
	size_t i;

	json_array_foreach(choices, i, c)
	{
		const json_t *idx = json_object_get(c, "index");

		if (!idx || (json_is_integer(idx) && !json_integer_value(idx)))
			return c;
	}
	return NULL;
}

/* A tool call of a whole message (non-streamed). */
static void chat_call(struct lg_llm_stream *s, const json_t *tc)
{
	const json_t *fn = json_object_get(tc, "function");
	const json_t *cu = json_object_get(tc, "custom");
	const json_t *a;

	if (json_is_object(cu)) {
		a = json_object_get(cu, "input");
		llm_emit_call(s, llm_jstr(tc, "id"), llm_jstr(cu, "name"),
			      json_is_string(a) ?
				      llm_dump_string(json_string_value(a),
						      json_string_length(a)) :
				      llm_dump(a));
		return;
	}
	a = json_object_get(fn, "arguments");
	llm_emit_call(s, llm_jstr(tc, "id"), llm_jstr(fn, "name"),
		      json_is_string(a) ? llm_args_text(s, json_string_value(a),
							json_string_length(a)) :
					  llm_dump(a));
}

/* Streamed pieces of tool calls: id and name come first, then arguments. */
static void chat_call_delta(struct lg_llm_stream *s, const json_t *tc)
{
	const json_t *jidx = json_object_get(tc, "index");
	const json_t *fn = json_object_get(tc, "function");
	const json_t *a = json_object_get(fn, "arguments");
	const char *id = llm_jstr(tc, "id");
	struct call *c = NULL;
	long long idx;

	if (json_is_integer(jidx)) {
		idx = json_integer_value(jidx);
		c = llm_call_find(s, idx);
		if (c && id && c->id && strcmp(c->id, id) != 0) {
			/* a new call at a reused index: the old one is done */
			llm_call_finish(s, c);
			c = NULL;
		}
		if (!c)
			c = llm_call_open(s, idx);
	} else if (id) {
		/* some servers leave out the index: the id tells calls apart */
		c = llm_call_find_id(s, id);
		if (!c) {
			idx = -1;
			for (size_t i = 0; i < LLM_MAX_OPEN; i++)
				if (s->calls[i].open && s->calls[i].index > idx)
					idx = s->calls[i].index;
			c = llm_call_open(s, idx + 1);
		}
	} else {
		c = llm_call_find(s, s->last_index);
		if (!c)
			c = llm_call_open(s, s->last_index);
	}
	if (!c)
		return;
	s->last_index = c->index;
	llm_call_set(&c->id, id);
	llm_call_set(&c->name, llm_jstr(fn, "name"));
	if (json_is_string(a))
		llm_call_args(s, c, json_string_value(a),
			      json_string_length(a));
}

static void chat_chunk(struct lg_llm_stream *s, const json_t *v)
{
	const json_t *choice = chat_choice(v), *m, *tc;
	const char *finish;
	size_t i;

	if (json_is_object(json_object_get(v, "error"))) {
		s->finished = true; /* ended by the error */
		llm_set_str(s->stop, sizeof(s->stop), "error");
		return;
	}
	if (!json_is_array(json_object_get(v, "choices"))) {
		s->errors++;
		return;
	}
	s->started = true;
	llm_set_str(s->id, sizeof(s->id), llm_jstr(v, "id"));
	if (json_is_integer(json_object_get(v, "created")))
		s->created = json_integer_value(json_object_get(v, "created"));
	llm_set_str(s->model, sizeof(s->model), llm_jstr(v, "model"));
	m = json_object_get(choice, "message");
	if (json_is_object(m)) {
		llm_emit_text(s, json_object_get(m, "content"));
		json_array_foreach(json_object_get(m, "tool_calls"), i, tc)
			chat_call(s, tc);
	}
	m = json_object_get(choice, "delta");
	if (json_is_object(m)) {
		llm_emit_text(s, json_object_get(m, "content"));
		json_array_foreach(json_object_get(m, "tool_calls"), i, tc)
			chat_call_delta(s, tc);
	}
	finish = llm_jstr(choice, "finish_reason");
	if (finish) {
		s->finished = true;
		llm_set_str(s->stop, sizeof(s->stop), finish);
		llm_calls_finish(s);
	}
	m = json_object_get(v, "usage");
	llm_jcount(m, "prompt_tokens", &s->in[0]);
	llm_jcount(m, "completion_tokens", &s->out[0]);
}

static void chat_results(struct llm_results *rs, const json_t *m)
{
	const char *role = llm_jstr(m, "role");

	if (role && strcmp(role, "tool") == 0)
		llm_result(rs, llm_jstr(m, "tool_call_id"), "",
			   llm_content_text(json_object_get(m, "content")),
			   false);
}

static const json_t *chat_messages(const json_t *root)
{
	const json_t *m = json_object_get(root, "messages");

	return m ? m : json_null();
}

static bool chat_makes_calls(const json_t *m)
{
	const char *role = llm_jstr(m, "role");

	return role && strcmp(role, "assistant") == 0 &&
	       json_array_size(json_object_get(m, "tool_calls"));
}

static json_t *chat_error_body(json_t *msg)
{
	return json_pack("{s:{s:o, s:s, s:n, s:s}}", "error", "message", msg,
			 "type", "invalid_request_error", "param", "code",
			 "lgrun_session_stopped");
}

static void chat_error_event(json_t *ev, json_t *err, const char *message)
{
	(void)message;
	json_object_set_new(err, "type", json_string("invalid_request_error"));
	json_object_set_new(err, "code", json_string("lgrun_session_stopped"));
	json_object_set(ev, "error", err);
}

static void chat_event(struct lg_llm_stream *s, const json_t *v,
		       const char *name)
{
	(void)name;
	chat_chunk(s, v);
}

/* A last chunk with its finish_reason, then [DONE]. */
static int chat_close(const struct lg_llm_stream *s, struct buf *b)
{
	static const char done[] = "data: [DONE]\n\n";
	int err = 0;

	if (s->turned)
		return 0;
	if (!s->finished)
		err = llm_put_event(
			b, NULL,
			json_pack(
				"{s:s, s:s, s:I, s:s, s:[{s:i, s:{}, s:n, s:s}]}",
				"id", s->id, "object", "chat.completion.chunk",
				"created", (json_int_t)s->created, "model",
				s->model, "choices", "index", 0, "delta",
				"logprobs", "finish_reason",
				s->ncalls ? "tool_calls" : "stop"),
			"\n");
	return err ? err : llm_buf_add(b, done, strlen(done), LLM_BODY_MAX);
}

/* --- lgrun's notes (steer.c) ---------------------------------------------- */

static json_t *chat_items(json_t *h)
{
	json_t *m = json_object_get(h, "messages");

	return json_is_array(m) ? m : NULL;
}

static bool chat_output(const json_t *m)
{
	const char *role = llm_jstr(m, "role");

	return role && strcmp(role, "tool") == 0;
}

/* A user message each, at at after the role "tool" messages there. */
static int chat_place(json_t *items, const struct llm_note *p, size_t k)
{
	size_t at = llm_note_after(items, p[0].at, chat_output);

	for (size_t i = 0; i < k; i++)
		if (json_array_insert_new(items, at + i,
					  json_pack("{s:s, s:O}", "role",
						    "user", "content",
						    p[i].text)) < 0)
			return -ENOMEM;
	return 0;
}

static const char *const chat_paths[] = { "/chat/completions", NULL };

const struct llm_api llm_chat = {
	.name = "openai-chat",
	.route = "openai",
	.paths = chat_paths,
	.event = chat_event,
	.end = llm_calls_finish, /* no finish_reason: what came is all */
	.close = chat_close,
	.streams = llm_streams_flag,
	.messages = chat_messages,
	.makes_calls = chat_makes_calls,
	.last_turn = llm_after_calls,
	.results = chat_results,
	.error_body = chat_error_body,
	.error_event = chat_error_event,
	.error_event_name = "",
	.holder = llm_root,
	.items = chat_items,
	.stateful = llm_stateless,
	.place = chat_place,
};
