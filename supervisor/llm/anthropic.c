// SPDX-License-Identifier: MIT
/*
 * Anthropic's Messages API: its stream's events, a whole message, the
 * tool results in a request, its error shapes.
 */
#include <errno.h>
#include <string.h>

#include "api.h"

static void anthropic_usage(struct lg_llm_stream *s, const json_t *u)
{
	/* input_tokens excludes the cached prompt: all three are read */
	llm_jcount(u, "input_tokens", &s->in[0]);
	llm_jcount(u, "cache_creation_input_tokens", &s->in[1]);
	llm_jcount(u, "cache_read_input_tokens", &s->in[2]);
	llm_jcount(u, "output_tokens", &s->out[0]);
}

/* A whole message: the non-streamed body. */
static void anthropic_message(struct lg_llm_stream *s, const json_t *m)
{
	const json_t *b;
	size_t i;

	llm_set_str(s->model, sizeof(s->model), llm_jstr(m, "model"));
	json_array_foreach(json_object_get(m, "content"), i, b)
	{
		const char *type = llm_jstr(b, "type");

		if (!type)
			continue;
		if (strcmp(type, "text") == 0)
			llm_emit_text(s, json_object_get(b, "text"));
		else if (strcmp(type, "tool_use") == 0)
			llm_emit_call(s, llm_jstr(b, "id"), llm_jstr(b, "name"),
				      llm_dump(json_object_get(b, "input")));
	}
	llm_set_str(s->stop, sizeof(s->stop), llm_jstr(m, "stop_reason"));
	anthropic_usage(s, json_object_get(m, "usage"));
}

static void anthropic_event(struct lg_llm_stream *s, const json_t *ev,
			    const char *name)
{
	const char *type = llm_jstr(ev, "type");
	const json_t *jidx = json_object_get(ev, "index");
	long long idx = json_integer_value(jidx);
	const json_t *b, *d;
	struct call *c;

	if (!type)
		type = name;
	if (!type) {
		s->errors++;
	} else if (strcmp(type, "message_start") == 0) {
		b = json_object_get(ev, "message");
		s->started = true;
		llm_set_str(s->model, sizeof(s->model), llm_jstr(b, "model"));
		anthropic_usage(s, json_object_get(b, "usage"));
	} else if (strcmp(type, "content_block_start") == 0) {
		b = json_object_get(ev, "content_block");
		type = llm_jstr(b, "type");
		if (json_is_integer(jidx))
			s->open_block = idx;
		if (!json_is_integer(jidx) || !type) {
			s->errors++;
		} else if (strcmp(type, "text") == 0) {
			llm_emit_text(s, json_object_get(b, "text"));
		} else if (strcmp(type, "tool_use") == 0 &&
			   (c = llm_call_open(s, idx))) {
			llm_call_set(&c->id, llm_jstr(b, "id"));
			llm_call_set(&c->name, llm_jstr(b, "name"));
			c->start = llm_dump(json_object_get(b, "input"));
		}
	} else if (strcmp(type, "content_block_delta") == 0) {
		d = json_object_get(ev, "delta");
		type = llm_jstr(d, "type");
		if (!type) {
			s->errors++;
		} else if (strcmp(type, "text_delta") == 0) {
			llm_emit_text(s, json_object_get(d, "text"));
		} else if (strcmp(type, "input_json_delta") == 0) {
			b = json_object_get(d, "partial_json");
			c = json_is_integer(jidx) ? llm_call_find(s, idx) :
						    NULL;
			if (!c || !json_is_string(b))
				s->errors++;
			else
				llm_call_args(s, c, json_string_value(b),
					      json_string_length(b));
		}
	} else if (strcmp(type, "content_block_stop") == 0) {
		if (json_is_integer(jidx) && idx == s->open_block)
			s->open_block = -1;
		c = json_is_integer(jidx) ? llm_call_find(s, idx) : NULL;
		if (c)
			llm_call_finish(s, c);
	} else if (strcmp(type, "message_delta") == 0) {
		d = json_object_get(ev, "delta");
		if (llm_jstr(d, "stop_reason"))
			s->stop_said = true;
		llm_set_str(s->stop, sizeof(s->stop),
			    llm_jstr(d, "stop_reason"));
		anthropic_usage(s, json_object_get(ev, "usage"));
	} else if (strcmp(type, "message_stop") == 0) {
		s->finished = true;
		llm_calls_drop(s);
		llm_report_turn(s);
	} else if (strcmp(type, "error") == 0) {
		s->finished = true; /* ended by the error */
		llm_set_str(s->stop, sizeof(s->stop), "error");
	} else if (strcmp(type, "message") == 0) {
		anthropic_message(s, ev);
	}
	/* ping, and event types added later, are ignored */
}

static void anthropic_results(struct llm_results *rs, const json_t *m)
{
	const json_t *b;
	size_t i;

	json_array_foreach(json_object_get(m, "content"), i, b)
	{
		const char *type = llm_jstr(b, "type");

		if (type && strcmp(type, "tool_result") == 0)
			llm_result(
				rs, llm_jstr(b, "tool_use_id"), "",
				llm_content_text(json_object_get(b, "content")),
				llm_jtrue(b, "is_error"));
	}
}

static const json_t *anthropic_messages(const json_t *root)
{
	const json_t *m = json_object_get(root, "messages");

	return m ? m : json_null(); /* no messages: not a request of ours */
}

static bool anthropic_makes_calls(const json_t *m)
{
	const char *role = llm_jstr(m, "role");

	return role && strcmp(role, "assistant") == 0 &&
	       llm_has_type(json_object_get(m, "content"), "tool_use");
}

static json_t *anthropic_error_body(json_t *msg)
{
	return json_pack("{s:s, s:{s:s, s:o}}", "type", "error", "error",
			 "type", "invalid_request_error", "message", msg);
}

static void anthropic_error_event(json_t *ev, json_t *err, const char *message)
{
	(void)message;
	json_object_set_new(err, "type", json_string("invalid_request_error"));
	json_object_set_new(ev, "type", json_string("error"));
	json_object_set(ev, "error", err);
}

/* The open content block stopped, the stop said, message_stop. */
static int anthropic_close(const struct lg_llm_stream *s, struct buf *b)
{
	int err = 0;

	if (s->finished)
		return 0;
	if (s->open_block >= 0)
		err = llm_put_event(b, "content_block_stop",
				    json_pack("{s:s, s:I}", "type",
					      "content_block_stop", "index",
					      (json_int_t)s->open_block),
				    "\n");
	if (!err && !s->stop_said)
		err = llm_put_event(
			b, "message_delta",
			json_pack("{s:s, s:{s:s, s:n}, s:{s:I}}", "type",
				  "message_delta", "delta", "stop_reason",
				  s->ncalls ? "tool_use" : "end_turn",
				  "stop_sequence", "usage", "output_tokens",
				  (json_int_t)s->out[0]),
			"\n");
	if (!err)
		err = llm_put_event(b, "message_stop",
				    json_pack("{s:s}", "type", "message_stop"),
				    "\n");
	return err;
}

/* --- lgrun's notes (steer.c) ---------------------------------------------- */

static json_t *anthropic_items(json_t *h)
{
	json_t *m = json_object_get(h, "messages");

	return json_is_array(m) ? m : NULL;
}

static bool anthropic_user(const json_t *m)
{
	const char *role = llm_jstr(m, "role");

	return json_is_object(m) && role && strcmp(role, "user") == 0;
}

/* A user message carrying tool results (their answer to the turn before). */
static bool anthropic_answers(const json_t *m)
{
	return anthropic_user(m) &&
	       llm_has_type(json_object_get(m, "content"), "tool_result");
}

static json_t *anthropic_block(json_t *text)
{
	return json_pack("{s:s, s:O}", "type", "text", "text", text);
}

static json_t *anthropic_user_message(json_t *blocks)
{
	return json_pack("{s:s, s:o}", "role", "user", "content", blocks);
}

/*
 * The content blocks of message m, a string made a text block first; NULL
 * when it has none that can take more.
 */
static json_t *anthropic_blocks(json_t *m)
{
	json_t *c = json_object_get(m, "content"), *a;

	if (json_is_array(c))
		return c;
	if (c && !json_is_string(c) && !json_is_null(c))
		return NULL;
	a = json_array();
	if (!a)
		return NULL;
	/* an empty text block is refused by the API: "" is no block */
	if (json_string_length(c) &&
	    json_array_append_new(a, anthropic_block(c)) < 0) {
		json_decref(a);
		return NULL;
	}
	if (json_object_set_new(m, "content", a) < 0)
		return NULL;
	return a;
}

/*
 * A text block appended to the user message at at-1 (or to the results
 * right at at), else a new user message at at.
 */
static int anthropic_place(json_t *items, const struct llm_note *p, size_t k)
{
	json_t *m = llm_note_target(items, p[0].at, anthropic_user,
				    anthropic_answers);
	json_t *blocks = m ? anthropic_blocks(m) : NULL;

	if (blocks)
		return llm_note_blocks(blocks, p, k, anthropic_block);
	return llm_note_insert(items, p[0].at, p, k, anthropic_block,
			       anthropic_user_message);
}

static const char *const anthropic_paths[] = { "/messages", NULL };

const struct llm_api llm_anthropic = {
	.name = "anthropic-messages",
	.route = "anthropic",
	.paths = anthropic_paths,
	.event = anthropic_event,
	.end = llm_calls_drop,
	.close = anthropic_close,
	.streams = llm_streams_flag,
	.messages = anthropic_messages,
	.makes_calls = anthropic_makes_calls,
	.last_turn = llm_after_calls,
	.results = anthropic_results,
	.error_body = anthropic_error_body,
	.error_event = anthropic_error_event,
	.error_event_name = "error",
	.holder = llm_root,
	.items = anthropic_items,
	.stateful = llm_stateless,
	.place = anthropic_place,
};
