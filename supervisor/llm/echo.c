// SPDX-License-Identifier: MIT
/*
 * echo: lgrun's own smallest model API, the proof that a new API is one
 * file and one line of apis.def (test_api_table walks it with the
 * others). No agent speaks it and no proxy route is its (a route would
 * give every agent a base-URL variable): only its path, /lgrun/echo, is
 * read as it, on any route.
 *
 * A request: {"stream": true, "tools": [...], "turns": [{"role": "user",
 * "text": "..."}, {"role": "model", "call": {"id", "name", "args"}},
 * {"role": "user", "result": {"id", "content", "is_error"}}]}. A response:
 * events (or one body) {"model"}, {"text"}, {"call"}, {"end": why},
 * {"error": {...}}; a note is a user turn {"role": "user", "text"} after
 * the results.
 */
#include <errno.h>
#include <string.h>

#include "api.h"

static void echo_event(struct lg_llm_stream *s, const json_t *v,
		       const char *name)
{
	const json_t *call = json_object_get(v, "call");
	const char *end = llm_jstr(v, "end");
	bool known = false;

	(void)name;
	if (json_is_object(json_object_get(v, "error"))) {
		s->finished = true; /* ended by the error */
		llm_set_str(s->stop, sizeof(s->stop), "error");
		return;
	}
	if (llm_jstr(v, "model")) {
		llm_set_str(s->model, sizeof(s->model), llm_jstr(v, "model"));
		known = true;
	}
	if (json_is_string(json_object_get(v, "text"))) {
		llm_emit_text(s, json_object_get(v, "text"));
		known = true;
	}
	if (json_is_object(call)) {
		llm_emit_call(s, llm_jstr(call, "id"), llm_jstr(call, "name"),
			      llm_dump(json_object_get(call, "args")));
		known = true;
	}
	if (end) {
		s->finished = true;
		llm_set_str(s->stop, sizeof(s->stop), end);
		llm_report_turn(s);
		known = true;
	}
	if (known)
		s->started = true;
	else
		s->errors++;
}

/* The end said: "cut" (or "calls" when the response made some). */
static int echo_close(const struct lg_llm_stream *s, struct buf *b)
{
	if (s->finished)
		return 0;
	return llm_put_event(
		b, NULL, json_pack("{s:s}", "end", s->ncalls ? "calls" : "cut"),
		"\n");
}

static const json_t *echo_messages(const json_t *root)
{
	const json_t *t = json_object_get(root, "turns");

	return t ? t : json_null(); /* no turns: not a request of ours */
}

static bool echo_makes_calls(const json_t *m)
{
	return json_is_object(json_object_get(m, "call"));
}

static void echo_results(struct llm_results *rs, const json_t *m)
{
	const json_t *r = json_object_get(m, "result");

	if (json_is_object(r))
		llm_result(rs, llm_jstr(r, "id"), "",
			   llm_content_text(json_object_get(r, "content")),
			   llm_jtrue(r, "is_error"));
}

static json_t *echo_error_body(json_t *msg)
{
	return json_pack("{s:{s:o}}", "error", "message", msg);
}

static void echo_error_event(json_t *ev, json_t *err, const char *message)
{
	(void)message;
	json_object_set(ev, "error", err);
}

static json_t *echo_items(json_t *h)
{
	json_t *t = json_object_get(h, "turns");

	return json_is_array(t) ? t : NULL;
}

static bool echo_answers(const json_t *m)
{
	return json_is_object(json_object_get(m, "result"));
}

/* A user turn each, at at after the results there. */
static int echo_place(json_t *items, const struct llm_note *p, size_t k)
{
	size_t at = llm_note_after(items, p[0].at, echo_answers);

	for (size_t i = 0; i < k; i++)
		if (json_array_insert_new(items, at + i,
					  json_pack("{s:s, s:O}", "role",
						    "user", "text",
						    p[i].text)) < 0)
			return -ENOMEM;
	return 0;
}

static const char *const echo_paths[] = { "/lgrun/echo", NULL };

const struct llm_api llm_echo = {
	.name = "echo",
	.route = "echo",
	.paths = echo_paths,
	.event = echo_event,
	.end = llm_calls_drop,
	.close = echo_close,
	.streams = llm_streams_flag,
	.messages = echo_messages,
	.makes_calls = echo_makes_calls,
	.last_turn = llm_after_calls,
	.results = echo_results,
	.error_body = echo_error_body,
	.error_event = echo_error_event,
	.error_event_name = "",
	.holder = llm_root,
	.items = echo_items,
	.stateful = llm_stateless,
	.place = echo_place,
};
