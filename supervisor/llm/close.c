// SPDX-License-Identifier: MIT
/*
 * Ending a streamed response where it stands, as the API itself ends one:
 * lgrun cuts a response whose text loops (output_repeat), and the agent
 * must take what it got as a complete answer, not as a broken connection it
 * retries. Per API, the events its end takes from the state the stream
 * left (api.h): the open block or item closed, the stop said, the end
 * marker. Pure, like llm.c.
 */
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "lib/cleanup.h"
#include "api.h"

/* One SSE event: "event: NAME\n" (NAME may be NULL), "data: JSON", eol. */
static int put_event(struct buf *b, const char *name, json_t *ev,
		     const char *eol)
{
	LG_AUTOFREE char *data = NULL;
	int err = 0;

	if (!ev)
		return -ENOMEM;
	data = json_dumps(ev, JSON_COMPACT);
	json_decref(ev);
	if (!data)
		return -ENOMEM;
	if (name) {
		err = llm_buf_add(b, "event: ", 7, LLM_BODY_MAX);
		if (!err)
			err = llm_buf_add(b, name, strlen(name), LLM_BODY_MAX);
		if (!err)
			err = llm_buf_add(b, "\n", 1, LLM_BODY_MAX);
	}
	if (!err)
		err = llm_buf_add(b, "data: ", 6, LLM_BODY_MAX);
	if (!err)
		err = llm_buf_add(b, data, strlen(data), LLM_BODY_MAX);
	if (!err)
		err = llm_buf_add(b, eol, strlen(eol), LLM_BODY_MAX);
	if (!err)
		err = llm_buf_add(b, eol, strlen(eol), LLM_BODY_MAX);
	return err;
}

/* The open content block stopped, the stop said, message_stop. */
static int anthropic_close(const struct lg_llm_stream *s, struct buf *b)
{
	int err = 0;

	if (s->finished)
		return 0;
	if (s->open_block >= 0)
		err = put_event(b, "content_block_stop",
				json_pack("{s:s, s:I}", "type",
					  "content_block_stop", "index",
					  (json_int_t)s->open_block),
				"\n");
	if (!err && !s->stop_said)
		err = put_event(
			b, "message_delta",
			json_pack("{s:s, s:{s:s, s:n}, s:{s:I}}", "type",
				  "message_delta", "delta", "stop_reason",
				  s->ncalls ? "tool_use" : "end_turn",
				  "stop_sequence", "usage", "output_tokens",
				  (json_int_t)s->out[0]),
			"\n");
	if (!err)
		err = put_event(b, "message_stop",
				json_pack("{s:s}", "type", "message_stop"),
				"\n");
	return err;
}

/* A last chunk with its finish_reason, then [DONE]. */
static int chat_close(const struct lg_llm_stream *s, struct buf *b)
{
	static const char done[] = "data: [DONE]\n\n";
	int err = 0;

	if (s->turned)
		return 0;
	if (!s->finished)
		err = put_event(
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
		err = put_event(
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
			err = put_event(
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
			err = put_event(
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
		err = put_event(b, "response.completed",
				json_pack("{s:s, s:I, s:O}", "type",
					  "response.completed",
					  "sequence_number", (json_int_t)++seq,
					  "response", resp),
				"\n");
	return err;
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
	return put_event(b, NULL, chunk, "\r\n");
}

bool lg_llm_stream_can_close(const struct lg_llm_stream *s)
{
	/* whole events only: no part of one went out without its end */
	return s && s->mode == M_SSE && s->started && !s->ended &&
	       !s->cannot_close && !s->line.n && !s->line_bad && !s->has_data &&
	       !lg_llm_stream_call_open(s) &&
	       (s->api != LG_LLM_OPENAI_RESPONSES || s->response);
}

int lg_llm_stream_close(const struct lg_llm_stream *s, char **out, size_t *len)
{
	struct buf b = { 0 };
	int err;

	*out = NULL;
	*len = 0;
	if (!lg_llm_stream_can_close(s))
		return -EINVAL;
	switch (s->api) {
	case LG_LLM_ANTHROPIC:
		err = anthropic_close(s, &b);
		break;
	case LG_LLM_OPENAI_CHAT:
		err = chat_close(s, &b);
		break;
	case LG_LLM_OPENAI_RESPONSES:
		err = responses_close(s, &b);
		break;
	case LG_LLM_GEMINI:
		err = gemini_close(s, &b);
		break;
	default:
		err = -EINVAL;
	}
	if (err < 0) {
		llm_buf_free(&b);
		return err;
	}
	*out = b.p;
	*len = b.n;
	return 0;
}
