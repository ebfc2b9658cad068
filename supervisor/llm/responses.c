// SPDX-License-Identifier: MIT
/*
 * OpenAI's Responses API (Codex's, over HTTPS or a websocket): its
 * stream's events, a whole response, the tool results in a request's input,
 * its error shapes.
 */
#include <errno.h>
#include <jansson.h>
#include <string.h>

#include "lib/cleanup.h"
#include "api.h"

/* An output item; messages only when whole (streamed text comes as deltas) */
static void responses_item(struct lg_llm_stream *s, const json_t *it,
			   bool whole)
{
	const char *type = llm_jstr(it, "type");
	const json_t *v, *part;
	size_t i;

	if (!type)
		return;
	if (strcmp(type, "function_call") == 0) {
		v = json_object_get(it, "arguments");
		llm_emit_call(s, llm_jstr(it, "call_id"), llm_jstr(it, "name"),
			      json_is_string(v) ?
				      llm_args_text(s, json_string_value(v),
						    json_string_length(v)) :
				      llm_dump(v));
	} else if (strcmp(type, "custom_tool_call") == 0) {
		/* free-form input (Codex's apply_patch): a JSON string */
		v = json_object_get(it, "input");
		llm_emit_call(s, llm_jstr(it, "call_id"), llm_jstr(it, "name"),
			      json_is_string(v) ?
				      llm_dump_string(json_string_value(v),
						      json_string_length(v)) :
				      llm_dump(v));
	} else if (strcmp(type, "local_shell_call") == 0) {
		llm_emit_call(s, llm_jstr(it, "call_id"), "local_shell",
			      llm_dump(json_object_get(it, "action")));
	} else if (whole && strcmp(type, "message") == 0) {
		json_array_foreach(json_object_get(it, "content"), i, part)
		{
			const char *pt = llm_jstr(part, "type");

			if (pt && strcmp(pt, "output_text") == 0)
				llm_emit_text(s, json_object_get(part, "text"));
		}
	}
}

/* The response object: whole (non-streamed), or in a final event. */
static void responses_response(struct lg_llm_stream *s, const json_t *r,
			       bool whole)
{
	const char *status = llm_jstr(r, "status");
	const json_t *u = json_object_get(r, "usage"), *it;
	size_t i;

	llm_set_str(s->model, sizeof(s->model), llm_jstr(r, "model"));
	if (whole) {
		json_array_foreach(json_object_get(r, "output"), i, it)
		{
			responses_item(s, it, true);
		}
	}
	llm_set_str(s->stop, sizeof(s->stop), status);
	if (status && strcmp(status, "incomplete") == 0)
		llm_set_str(s->stop, sizeof(s->stop),
			    llm_jstr(json_object_get(r, "incomplete_details"),
				     "reason"));
	llm_jcount(u, "input_tokens", &s->in[0]);
	llm_jcount(u, "output_tokens", &s->out[0]);
}

/* The message item that text goes to: the open one, or one made for it. */
static json_t *text_item(struct lg_llm_stream *s, const json_t *ev)
{
	const json_t *oi = json_object_get(ev, "output_index");
	long long idx = json_integer_value(oi);
	const char *id = llm_jstr(ev, "item_id");

	if (s->item && s->item_index == idx)
		return s->item;
	json_decref(s->item);
	llm_buf_free(&s->item_text);
	s->item = json_pack("{s:s, s:s, s:s, s:s, s:[]}", "id", id ? id : "",
			    "type", "message", "status", "in_progress", "role",
			    "assistant", "content");
	s->item_index = idx;
	return s->item;
}

/*
 * What ending the response here takes (close.c): the response object, the
 * output items done, the message item open and its text so far.
 */
static void responses_track(struct lg_llm_stream *s, const char *type,
			    const json_t *ev)
{
	const json_t *it = json_object_get(ev, "item"), *v;
	const char *itype = llm_jstr(it, "type");
	long long idx = json_integer_value(json_object_get(ev, "output_index"));

	if (json_is_integer(json_object_get(ev, "sequence_number")))
		s->seq = json_integer_value(
			json_object_get(ev, "sequence_number"));
	if (strcmp(type, "response.created") == 0 &&
	    json_is_object(json_object_get(ev, "response"))) {
		s->started = true;
		json_decref(s->response);
		s->response = json_deep_copy(json_object_get(ev, "response"));
		if (!s->response)
			s->cannot_close = true;
	} else if (strcmp(type, "response.output_item.added") == 0 && itype &&
		   strcmp(itype, "message") == 0) {
		json_decref(s->item);
		llm_buf_free(&s->item_text);
		s->item = json_deep_copy(it);
		s->item_index = idx;
		if (!s->item)
			s->cannot_close = true;
	} else if (strcmp(type, "response.output_text.delta") == 0) {
		v = json_object_get(ev, "delta");
		s->part_index = json_integer_value(
			json_object_get(ev, "content_index"));
		if (!text_item(s, ev) ||
		    (json_is_string(v) &&
		     llm_buf_add(&s->item_text, json_string_value(v),
				 json_string_length(v), LLM_BODY_MAX) < 0))
			s->cannot_close = true;
	} else if (strcmp(type, "response.output_item.done") == 0 &&
		   json_is_object(it)) {
		if (!s->items)
			s->items = json_array();
		if (json_array_append_new(s->items, json_deep_copy(it)) < 0)
			s->cannot_close = true;
		if (s->item && s->item_index == idx) {
			json_decref(s->item);
			s->item = NULL;
			llm_buf_free(&s->item_text);
		}
	} else if (strcmp(type, "response.completed") == 0 ||
		   strcmp(type, "response.incomplete") == 0 ||
		   strcmp(type, "response.failed") == 0 ||
		   strcmp(type, "error") == 0) {
		s->finished = true;
	}
}

static void responses_event(struct lg_llm_stream *s, const json_t *ev,
			    const char *name)
{
	const char *type = llm_jstr(ev, "type");
	const json_t *r = json_object_get(ev, "response");

	if (!type && json_is_object(json_object_get(ev, "error")))
		type = "error"; /* an error body */
	if (!type &&
	    (json_object_get(ev, "output") || json_object_get(ev, "status")))
		type = "response"; /* a whole response */
	if (!type)
		type = name;
	if (type)
		responses_track(s, type, ev);
	if (!type) {
		s->errors++;
	} else if (strcmp(type, "response") == 0) {
		responses_response(s, ev, true);
	} else if (strcmp(type, "response.created") == 0 ||
		   strcmp(type, "response.in_progress") == 0) {
		llm_set_str(s->model, sizeof(s->model), llm_jstr(r, "model"));
	} else if (strcmp(type, "response.output_item.added") == 0) {
		const char *it = llm_jstr(json_object_get(ev, "item"), "type");

		if (it && strcmp(it, "function_call") == 0)
			s->responses_open++;
	} else if (strcmp(type, "response.output_item.done") == 0) {
		const char *it = llm_jstr(json_object_get(ev, "item"), "type");

		if (it && strcmp(it, "function_call") == 0 && s->responses_open)
			s->responses_open--;
		responses_item(s, json_object_get(ev, "item"), false);
	} else if (strcmp(type, "response.output_text.delta") == 0) {
		llm_emit_text(s, json_object_get(ev, "delta"));
	} else if (strcmp(type, "response.completed") == 0 ||
		   strcmp(type, "response.incomplete") == 0 ||
		   strcmp(type, "response.failed") == 0) {
		if (!json_is_object(r))
			s->errors++;
		responses_response(s, r, false);
		llm_report_turn(s);
	} else if (strcmp(type, "error") == 0) {
		llm_set_str(s->stop, sizeof(s->stop), "error");
	}
	/*
	 * function_call_arguments.delta/.done are not needed: output_item.done
	 * carries the complete call.
	 */
}

/*
 * Is a Responses input item part of the model's turn (what it said or
 * called, and what the tools answered)? A user, system or developer
 * message is not.
 */
static bool responses_in_turn(const json_t *it)
{
	const char *type = llm_jstr(it, "type"), *role = llm_jstr(it, "role");

	if (role)
		return strcmp(role, "assistant") == 0;
	return type && strcmp(type, "message") != 0;
}

static void responses_results(struct llm_results *rs, const json_t *it)
{
	const char *type = llm_jstr(it, "type");

	if (type && (strcmp(type, "function_call_output") == 0 ||
		     strcmp(type, "custom_tool_call_output") == 0 ||
		     strcmp(type, "local_shell_call_output") == 0))
		llm_result(rs, llm_jstr(it, "call_id"), "",
			   llm_content_text(json_object_get(it, "output")),
			   false);
}

/* A string input (a prompt alone) holds no results: NULL. */
static const json_t *responses_messages(const json_t *root)
{
	const json_t *in = json_object_get(root, "input");

	return !in || json_is_string(in) ? NULL : in;
}

static bool responses_makes_calls(const json_t *m)
{
	const char *type = llm_jstr(m, "type");

	return type && (strcmp(type, "function_call") == 0 ||
			strcmp(type, "custom_tool_call") == 0 ||
			strcmp(type, "local_shell_call") == 0);
}

static json_t *responses_error_body(json_t *msg)
{
	return json_pack("{s:{s:o, s:s, s:n, s:s}}", "error", "message", msg,
			 "type", "invalid_request_error", "param", "code",
			 "lgrun_session_stopped");
}

static void responses_error_event(json_t *ev, json_t *err, const char *message)
{
	(void)err;
	json_object_set_new(ev, "type", json_string("error"));
	json_object_set_new(ev, "code", json_string("lgrun_session_stopped"));
	json_object_set_new(ev, "message", json_string(message));
}

/*
 * The open message item's done events (its text, its part, the item),
 * then response.completed: the response.created object, completed, with
 * the output items done so far.
 */
static int responses_close(const struct lg_llm_stream *s, struct buf *b)
{
	LG_AUTOJSON json_t *output = s->items ? json_deep_copy(s->items) :
						json_array();
	LG_AUTOJSON json_t *resp = json_deep_copy(s->response);
	long long seq = s->seq;
	int err = 0;

	if (s->finished)
		return 0;
	if (!output || !resp)
		return -ENOMEM;
	if (s->item) {
		const char *id = llm_jstr(s->item, "id");
		LG_AUTOJSON json_t *item = json_deep_copy(s->item);
		json_t *text = json_stringn(
			s->item_text.p ? s->item_text.p : "", s->item_text.n);
		json_t *part = json_pack("{s:s, s:[], s:[], s:o}", "type",
					 "output_text", "annotations",
					 "logprobs", "text", text);
		json_t *content = json_object_get(item, "content");

		if (!item || !text || !part || !id) {
			json_decref(part);
			return -ENOMEM;
		}
		err = llm_put_event(
			b, "response.output_text.done",
			json_pack("{s:s, s:I, s:s, s:I, s:I, s:O, s:[]}",
				  "type", "response.output_text.done",
				  "sequence_number", (json_int_t)++seq,
				  "item_id", id, "output_index",
				  (json_int_t)s->item_index, "content_index",
				  (json_int_t)s->part_index, "text", text,
				  "logprobs"),
			"\n");
		if (!err)
			err = llm_put_event(
				b, "response.content_part.done",
				json_pack("{s:s, s:I, s:s, s:I, s:I, s:O}",
					  "type", "response.content_part.done",
					  "sequence_number", (json_int_t)++seq,
					  "item_id", id, "output_index",
					  (json_int_t)s->item_index,
					  "content_index",
					  (json_int_t)s->part_index, "part",
					  part),
				"\n");
		if (!json_is_array(content)) {
			content = json_array();
			json_object_set_new(item, "content", content);
		}
		json_array_append_new(content, part);
		json_object_set_new(item, "status", json_string("completed"));
		if (!err)
			err = llm_put_event(
				b, "response.output_item.done",
				json_pack("{s:s, s:I, s:I, s:O}", "type",
					  "response.output_item.done",
					  "sequence_number", (json_int_t)++seq,
					  "output_index",
					  (json_int_t)s->item_index, "item",
					  item),
				"\n");
		if (json_array_append(output, item) < 0)
			err = err ? err : -ENOMEM;
	}
	json_object_set_new(resp, "status", json_string("completed"));
	json_object_set(resp, "output", output);
	if (!err)
		err = llm_put_event(
			b, "response.completed",
			json_pack("{s:s, s:I, s:O}", "type",
				  "response.completed", "sequence_number",
				  (json_int_t)++seq, "response", resp),
			"\n");
	return err;
}

/*
 * The results answering the last turn: from the start of the run of model
 * items around the last call (their outputs may come between calls).
 */
static size_t responses_last_turn(const struct llm_api *a, const json_t *msgs)
{
	size_t k = llm_after_calls(a, msgs);

	if (!k)
		return 0;
	k--;
	while (k > 0 && responses_in_turn(json_array_get(msgs, k - 1)))
		k--;
	return k;
}

/* --- lgrun's notes (steer.c) ---------------------------------------------- */

static json_t *responses_block(json_t *text)
{
	return json_pack("{s:s, s:O}", "type", "input_text", "text", text);
}

static json_t *responses_user_message(json_t *blocks)
{
	return json_pack("{s:s, s:s, s:o}", "type", "message", "role", "user",
			 "content", blocks);
}

/* The input items; a string input is one user message: made one. */
static json_t *responses_items(json_t *h)
{
	json_t *in = json_object_get(h, "input"), *m, *a;

	if (!json_is_string(in))
		return json_is_array(in) ? in : NULL;
	m = responses_user_message(
		json_pack("[{s:s, s:O}]", "type", "input_text", "text", in));
	a = json_array();
	if (!m || !a) {
		json_decref(m);
		json_decref(a);
		return NULL;
	}
	/* each takes its value, on failure too */
	if (json_array_append_new(a, m) < 0) {
		json_decref(a);
		return NULL;
	}
	if (json_object_set_new(h, "input", a) < 0)
		return NULL;
	return a;
}

static bool responses_stateful(const json_t *root)
{
	const char *prev = llm_jstr(root, "previous_response_id");

	return prev && prev[0];
}

/* An output item answering a call. */
static bool responses_output(const json_t *m)
{
	const char *type = llm_jstr(m, "type");
	size_t n = type ? strlen(type) : 0;

	return n > 7 && strcmp(type + n - 7, "_output") == 0;
}

/* A user message item at at, after the outputs there. */
static int responses_place(json_t *items, const struct llm_note *p, size_t k)
{
	return llm_note_insert(items,
			       llm_note_after(items, p[0].at, responses_output),
			       p, k, responses_block, responses_user_message);
}

static const char *const responses_paths[] = { "/responses", NULL };

const struct llm_api llm_responses = {
	.name = "openai-responses",
	.route = "openai",
	.paths = responses_paths,
	.websocket = true,
	.event = responses_event,
	.end = llm_calls_drop,
	.close = responses_close,
	.streams = llm_streams_flag,
	.messages = responses_messages,
	.makes_calls = responses_makes_calls,
	.last_turn = responses_last_turn,
	.results = responses_results,
	.error_body = responses_error_body,
	.error_event = responses_error_event,
	.error_event_name = "error",
	.holder = llm_root,
	.items = responses_items,
	.stateful = responses_stateful,
	.place = responses_place,
};
