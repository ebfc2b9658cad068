// SPDX-License-Identifier: MIT
/*
 * The model APIs as the proxy sees them. A response body is framed first
 * (server-sent events as the WHATWG spec defines them, or one JSON document,
 * whichever the first byte says), then each event's JSON goes to the handler
 * of its API. Pure: no I/O, no globals; what a stream holds is bounded by
 * the LLM_*_MAX limits below, and what cannot be understood is counted.
 */
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llm.h"

/*
 * One SSE line, and the data of one event. The biggest event a provider
 * sends is OpenAI's response.completed, which repeats the whole response.
 */
#define LLM_LINE_MAX (1u << 20)
/* Tool arguments being streamed: all open calls of one stream together. */
#define LLM_ARGS_MAX (1u << 20)
/* A whole JSON body: a non-streamed response, Gemini's JSON array. */
#define LLM_BODY_MAX (4u << 20)
/* Tool calls streamed side by side (Chat interleaves parallel calls). */
#define LLM_MAX_OPEN 64
/* Buffers bigger than this are given back once they are empty again. */
#define LLM_KEEP (64u << 10)

struct buf {
	char *p;
	size_t n, cap;
};

/* Appends p[0..n) keeping a NUL after it; -ENOSPC when it would pass max. */
static int buf_add(struct buf *b, const char *p, size_t n, size_t max)
{
	size_t cap;
	char *q;

	if (!n)
		return 0;
	if (b->n > max || n > max - b->n)
		return -ENOSPC;
	if (b->n + n + 1 > b->cap) {
		cap = b->cap ? b->cap : 256;
		while (cap < b->n + n + 1)
			cap *= 2;
		if (cap > max + 1)
			cap = max + 1;
		q = realloc(b->p, cap);
		if (!q)
			return -ENOMEM;
		b->p = q;
		b->cap = cap;
	}
	memcpy(b->p + b->n, p, n);
	b->n += n;
	b->p[b->n] = '\0';
	return 0;
}

static void buf_clear(struct buf *b)
{
	b->n = 0;
	if (b->cap > LLM_KEEP) {
		free(b->p);
		b->p = NULL;
		b->cap = 0;
	}
}

static void buf_free(struct buf *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}

/* --- JSON helpers -------------------------------------------------------- */

static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

static void trim(const char **p, size_t *n)
{
	while (*n && is_blank(**p)) {
		(*p)++;
		(*n)--;
	}
	while (*n && is_blank((*p)[*n - 1]))
		(*n)--;
}

/* A JSON document; numbers too big for 64 bits are read as reals. */
static json_t *parse(const char *p, size_t n)
{
	const size_t flags = JSON_DECODE_ANY | JSON_ALLOW_NUL;
	json_error_t e;
	json_t *v;

	v = json_loadb(p, n, flags, &e);
	if (!v && json_error_code(&e) == json_error_numeric_overflow)
		v = json_loadb(p, n, flags | JSON_DECODE_INT_AS_REAL, &e);
	return v;
}

static const char *jstr(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

static bool jtrue(const json_t *o, const char *key)
{
	return json_is_true(json_object_get(o, key));
}

/* A token count: a non-negative number. */
static bool jcount(const json_t *o, const char *key, uint64_t *out)
{
	const json_t *v = json_object_get(o, key);

	if (json_is_integer(v) && json_integer_value(v) >= 0) {
		*out = (uint64_t)json_integer_value(v);
		return true;
	}
	if (json_is_real(v) && json_real_value(v) >= 0 &&
	    json_real_value(v) < 1.8e19) {
		*out = (uint64_t)json_real_value(v);
		return true;
	}
	return false;
}

/* Compact JSON text of v (malloc'ed), "{}" when v is NULL. */
static char *dump(const json_t *v)
{
	if (!v)
		return strdup("{}");
	return json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
}

/* A JSON string holding raw[0..n), as JSON text. */
static char *dump_string(const char *raw, size_t n)
{
	json_t *v = json_stringn(raw, n);
	char *out;

	if (!v)
		return strdup("\"\"");
	out = dump(v);
	json_decref(v);
	return out;
}

/* --- the stream ---------------------------------------------------------- */

/* A tool call whose arguments are still streaming. */
struct call {
	bool open, broken;
	long long index; /* Anthropic block index, Chat tool_calls index */
	char *id, *name;
	char *start; /* Anthropic: the input of content_block_start */
	struct buf args;
};

enum mode { M_UNDECIDED, M_SSE, M_JSON };

struct lg_llm_stream {
	enum lg_llm_api api;
	struct lg_llm_sink sink;
	enum mode mode;
	bool sse_hint, ended, turned;
	unsigned errors;
	/* before the mode is known: how much of a UTF-8 BOM was seen */
	unsigned bom;
	bool pre_blank;
	/* SSE framing */
	struct buf line, data;
	bool cr, line_bad, data_bad, has_data;
	char event[64];
	/* one JSON document */
	struct buf body;
	bool body_bad;
	/* tool calls being streamed */
	struct call calls[LLM_MAX_OPEN];
	size_t args_held;
	long long last_index;
	/* the turn */
	char model[256], stop[64];
	uint64_t in[3], out[2]; /* the parts each API reports, summed */
	unsigned ncalls;
	unsigned responses_open; /* Responses: function_call items added, not done */
};

static void set_str(char *dst, size_t size, const char *src)
{
	if (src && *src)
		snprintf(dst, size, "%s", src);
}

static void emit_text(struct lg_llm_stream *s, const json_t *v)
{
	if (json_is_string(v) && json_string_length(v) && s->sink.text)
		s->sink.text(s->sink.ctx, json_string_value(v),
			     json_string_length(v));
}

/* input is malloc'ed and freed here; NULL (no memory) drops the call. */
static void emit_call(struct lg_llm_stream *s, const char *id, const char *name,
		      char *input)
{
	struct lg_llm_call c = { id ? id : "", name ? name : "", input };

	if (!input) {
		s->errors++;
		return;
	}
	s->ncalls++;
	if (s->sink.tool_call)
		s->sink.tool_call(s->sink.ctx, &c);
	free(input);
}

static void report_turn(struct lg_llm_stream *s)
{
	struct lg_llm_turn t = { s->model, s->stop, 0, 0, s->ncalls };

	if (s->turned)
		return;
	s->turned = true;
	for (size_t i = 0; i < 3; i++)
		t.input_tokens += s->in[i];
	for (size_t i = 0; i < 2; i++)
		t.output_tokens += s->out[i];
	if (s->sink.turn)
		s->sink.turn(s->sink.ctx, &t);
}

/*
 * Tool arguments as compact JSON text (malloc'ed). Nothing means "{}". Valid
 * JSON with a number too big for jansson is kept as sent. Text that is not
 * JSON is counted and passed on as a JSON string, so that the call is still
 * seen and two different calls do not look the same.
 */
static char *args_text(struct lg_llm_stream *s, const char *raw, size_t n)
{
	json_error_t e;
	json_t *v;
	char *out;

	trim(&raw, &n);
	if (!n)
		return strdup("{}");
	v = json_loadb(raw, n, JSON_DECODE_ANY | JSON_ALLOW_NUL, &e);
	if (v) {
		out = dump(v);
		json_decref(v);
		return out;
	}
	if (json_error_code(&e) == json_error_numeric_overflow) {
		v = json_loadb(raw, n,
			       JSON_DECODE_ANY | JSON_ALLOW_NUL |
				       JSON_DECODE_INT_AS_REAL,
			       NULL);
		if (v) {
			json_decref(v);
			return strndup(raw, n);
		}
	}
	s->errors++;
	return dump_string(raw, n);
}

static struct call *call_find(struct lg_llm_stream *s, long long index)
{
	for (size_t i = 0; i < LLM_MAX_OPEN; i++)
		if (s->calls[i].open && s->calls[i].index == index)
			return &s->calls[i];
	return NULL;
}

static struct call *call_find_id(struct lg_llm_stream *s, const char *id)
{
	for (size_t i = 0; i < LLM_MAX_OPEN; i++)
		if (s->calls[i].open && s->calls[i].id &&
		    strcmp(s->calls[i].id, id) == 0)
			return &s->calls[i];
	return NULL;
}

static void call_close(struct lg_llm_stream *s, struct call *c)
{
	s->args_held -= c->args.n;
	free(c->id);
	free(c->name);
	free(c->start);
	buf_free(&c->args);
	memset(c, 0, sizeof(*c));
}

/* A new call at index (one already open there is counted and dropped). */
static struct call *call_open(struct lg_llm_stream *s, long long index)
{
	struct call *c = call_find(s, index);

	if (c) {
		s->errors++;
		call_close(s, c);
	}
	for (size_t i = 0; i < LLM_MAX_OPEN; i++) {
		if (!s->calls[i].open) {
			c = &s->calls[i];
			c->open = true;
			c->index = index;
			s->last_index = index;
			return c;
		}
	}
	s->errors++;
	return NULL;
}

static void call_set(char **dst, const char *src)
{
	if (src && !*dst)
		*dst = strdup(src);
}

static void call_args(struct lg_llm_stream *s, struct call *c, const char *p,
		      size_t n)
{
	if (c->broken || !n)
		return;
	if (n > LLM_ARGS_MAX - s->args_held ||
	    buf_add(&c->args, p, n, LLM_ARGS_MAX) < 0) {
		/* cannot know the arguments: the call is dropped at its end */
		s->errors++;
		c->broken = true;
		s->args_held -= c->args.n;
		buf_free(&c->args);
		return;
	}
	s->args_held += n;
}

/* The call is complete: reports it (unless it was broken) and closes it. */
static void call_finish(struct lg_llm_stream *s, struct call *c)
{
	const char *raw = c->args.p ? c->args.p : "";
	size_t n = c->args.n;
	char *input;

	if (!c->broken) {
		trim(&raw, &n);
		if (!n && c->start)
			input = strdup(c->start);
		else
			input = args_text(s, raw, n);
		emit_call(s, c->id, c->name, input);
	}
	call_close(s, c);
}

/* Finishes every open call, in index order. */
static void calls_finish(struct lg_llm_stream *s)
{
	for (;;) {
		struct call *first = NULL;

		for (size_t i = 0; i < LLM_MAX_OPEN; i++)
			if (s->calls[i].open &&
			    (!first || s->calls[i].index < first->index))
				first = &s->calls[i];
		if (!first)
			return;
		call_finish(s, first);
	}
}

/* Drops open calls that never ended: their arguments may be cut. */
static void calls_drop(struct lg_llm_stream *s)
{
	for (size_t i = 0; i < LLM_MAX_OPEN; i++) {
		if (s->calls[i].open) {
			s->errors++;
			call_close(s, &s->calls[i]);
		}
	}
}

/* --- Anthropic Messages -------------------------------------------------- */

static void anthropic_usage(struct lg_llm_stream *s, const json_t *u)
{
	/* input_tokens excludes the cached prompt: all three are read */
	jcount(u, "input_tokens", &s->in[0]);
	jcount(u, "cache_creation_input_tokens", &s->in[1]);
	jcount(u, "cache_read_input_tokens", &s->in[2]);
	jcount(u, "output_tokens", &s->out[0]);
}

/* A whole message: the non-streamed body. */
static void anthropic_message(struct lg_llm_stream *s, const json_t *m)
{
	const json_t *b;
	size_t i;

	set_str(s->model, sizeof(s->model), jstr(m, "model"));
	json_array_foreach(json_object_get(m, "content"), i, b)
	{
		const char *type = jstr(b, "type");

		if (!type)
			continue;
		if (strcmp(type, "text") == 0)
			emit_text(s, json_object_get(b, "text"));
		else if (strcmp(type, "tool_use") == 0)
			emit_call(s, jstr(b, "id"), jstr(b, "name"),
				  dump(json_object_get(b, "input")));
	}
	set_str(s->stop, sizeof(s->stop), jstr(m, "stop_reason"));
	anthropic_usage(s, json_object_get(m, "usage"));
}

static void anthropic_event(struct lg_llm_stream *s, const json_t *ev,
			    const char *name)
{
	const char *type = jstr(ev, "type");
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
		set_str(s->model, sizeof(s->model), jstr(b, "model"));
		anthropic_usage(s, json_object_get(b, "usage"));
	} else if (strcmp(type, "content_block_start") == 0) {
		b = json_object_get(ev, "content_block");
		type = jstr(b, "type");
		if (!json_is_integer(jidx) || !type) {
			s->errors++;
		} else if (strcmp(type, "text") == 0) {
			emit_text(s, json_object_get(b, "text"));
		} else if (strcmp(type, "tool_use") == 0 &&
			   (c = call_open(s, idx))) {
			call_set(&c->id, jstr(b, "id"));
			call_set(&c->name, jstr(b, "name"));
			c->start = dump(json_object_get(b, "input"));
		}
	} else if (strcmp(type, "content_block_delta") == 0) {
		d = json_object_get(ev, "delta");
		type = jstr(d, "type");
		if (!type) {
			s->errors++;
		} else if (strcmp(type, "text_delta") == 0) {
			emit_text(s, json_object_get(d, "text"));
		} else if (strcmp(type, "input_json_delta") == 0) {
			b = json_object_get(d, "partial_json");
			c = json_is_integer(jidx) ? call_find(s, idx) : NULL;
			if (!c || !json_is_string(b))
				s->errors++;
			else
				call_args(s, c, json_string_value(b),
					  json_string_length(b));
		}
	} else if (strcmp(type, "content_block_stop") == 0) {
		c = json_is_integer(jidx) ? call_find(s, idx) : NULL;
		if (c)
			call_finish(s, c);
	} else if (strcmp(type, "message_delta") == 0) {
		d = json_object_get(ev, "delta");
		set_str(s->stop, sizeof(s->stop), jstr(d, "stop_reason"));
		anthropic_usage(s, json_object_get(ev, "usage"));
	} else if (strcmp(type, "message_stop") == 0) {
		calls_drop(s);
		report_turn(s);
	} else if (strcmp(type, "error") == 0) {
		set_str(s->stop, sizeof(s->stop), "error");
	} else if (strcmp(type, "message") == 0) {
		anthropic_message(s, ev);
	}
	/* ping, and event types added later, are ignored */
}

/* --- OpenAI Responses ---------------------------------------------------- */

/* An output item; messages only when whole (streamed text comes as deltas) */
static void responses_item(struct lg_llm_stream *s, const json_t *it,
			   bool whole)
{
	const char *type = jstr(it, "type");
	const json_t *v, *part;
	size_t i;

	if (!type)
		return;
	if (strcmp(type, "function_call") == 0) {
		v = json_object_get(it, "arguments");
		emit_call(s, jstr(it, "call_id"), jstr(it, "name"),
			  json_is_string(v) ? args_text(s, json_string_value(v),
							json_string_length(v)) :
					      dump(v));
	} else if (strcmp(type, "custom_tool_call") == 0) {
		/* free-form input (Codex's apply_patch): a JSON string */
		v = json_object_get(it, "input");
		emit_call(s, jstr(it, "call_id"), jstr(it, "name"),
			  json_is_string(v) ?
				  dump_string(json_string_value(v),
					      json_string_length(v)) :
				  dump(v));
	} else if (strcmp(type, "local_shell_call") == 0) {
		emit_call(s, jstr(it, "call_id"), "local_shell",
			  dump(json_object_get(it, "action")));
	} else if (whole && strcmp(type, "message") == 0) {
		json_array_foreach(json_object_get(it, "content"), i, part)
		{
			const char *pt = jstr(part, "type");

			if (pt && strcmp(pt, "output_text") == 0)
				emit_text(s, json_object_get(part, "text"));
		}
	}
}

/* The response object: whole (non-streamed), or in a final event. */
static void responses_response(struct lg_llm_stream *s, const json_t *r,
			       bool whole)
{
	const char *status = jstr(r, "status");
	const json_t *u = json_object_get(r, "usage"), *it;
	size_t i;

	set_str(s->model, sizeof(s->model), jstr(r, "model"));
	if (whole) {
		json_array_foreach(json_object_get(r, "output"), i, it)
		{
			responses_item(s, it, true);
		}
	}
	set_str(s->stop, sizeof(s->stop), status);
	if (status && strcmp(status, "incomplete") == 0)
		set_str(s->stop, sizeof(s->stop),
			jstr(json_object_get(r, "incomplete_details"),
			     "reason"));
	jcount(u, "input_tokens", &s->in[0]);
	jcount(u, "output_tokens", &s->out[0]);
}

static void responses_event(struct lg_llm_stream *s, const json_t *ev,
			    const char *name)
{
	const char *type = jstr(ev, "type");
	const json_t *r = json_object_get(ev, "response");

	if (!type && json_is_object(json_object_get(ev, "error")))
		type = "error"; /* an error body */
	if (!type &&
	    (json_object_get(ev, "output") || json_object_get(ev, "status")))
		type = "response"; /* a whole response */
	if (!type)
		type = name;
	if (!type) {
		s->errors++;
	} else if (strcmp(type, "response") == 0) {
		responses_response(s, ev, true);
	} else if (strcmp(type, "response.created") == 0 ||
		   strcmp(type, "response.in_progress") == 0) {
		set_str(s->model, sizeof(s->model), jstr(r, "model"));
	} else if (strcmp(type, "response.output_item.added") == 0) {
		const char *it = jstr(json_object_get(ev, "item"), "type");

		if (it && strcmp(it, "function_call") == 0)
			s->responses_open++;
	} else if (strcmp(type, "response.output_item.done") == 0) {
		const char *it = jstr(json_object_get(ev, "item"), "type");

		if (it && strcmp(it, "function_call") == 0 && s->responses_open)
			s->responses_open--;
		responses_item(s, json_object_get(ev, "item"), false);
	} else if (strcmp(type, "response.output_text.delta") == 0) {
		emit_text(s, json_object_get(ev, "delta"));
	} else if (strcmp(type, "response.completed") == 0 ||
		   strcmp(type, "response.incomplete") == 0 ||
		   strcmp(type, "response.failed") == 0) {
		if (!json_is_object(r))
			s->errors++;
		responses_response(s, r, false);
		report_turn(s);
	} else if (strcmp(type, "error") == 0) {
		set_str(s->stop, sizeof(s->stop), "error");
	}
	/*
	 * function_call_arguments.delta/.done are not needed: output_item.done
	 * carries the complete call.
	 */
}

/* --- OpenAI Chat Completions --------------------------------------------- */

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
		emit_call(s, jstr(tc, "id"), jstr(cu, "name"),
			  json_is_string(a) ?
				  dump_string(json_string_value(a),
					      json_string_length(a)) :
				  dump(a));
		return;
	}
	a = json_object_get(fn, "arguments");
	emit_call(s, jstr(tc, "id"), jstr(fn, "name"),
		  json_is_string(a) ? args_text(s, json_string_value(a),
						json_string_length(a)) :
				      dump(a));
}

/* Streamed pieces of tool calls: id and name come first, then arguments. */
static void chat_call_delta(struct lg_llm_stream *s, const json_t *tc)
{
	const json_t *jidx = json_object_get(tc, "index");
	const json_t *fn = json_object_get(tc, "function");
	const json_t *a = json_object_get(fn, "arguments");
	const char *id = jstr(tc, "id");
	struct call *c = NULL;
	long long idx;

	if (json_is_integer(jidx)) {
		idx = json_integer_value(jidx);
		c = call_find(s, idx);
		if (c && id && c->id && strcmp(c->id, id) != 0) {
			/* a new call at a reused index: the old one is done */
			call_finish(s, c);
			c = NULL;
		}
		if (!c)
			c = call_open(s, idx);
	} else if (id) {
		/* some servers leave out the index: the id tells calls apart */
		c = call_find_id(s, id);
		if (!c) {
			idx = -1;
			for (size_t i = 0; i < LLM_MAX_OPEN; i++)
				if (s->calls[i].open && s->calls[i].index > idx)
					idx = s->calls[i].index;
			c = call_open(s, idx + 1);
		}
	} else {
		c = call_find(s, s->last_index);
		if (!c)
			c = call_open(s, s->last_index);
	}
	if (!c)
		return;
	s->last_index = c->index;
	call_set(&c->id, id);
	call_set(&c->name, jstr(fn, "name"));
	if (json_is_string(a))
		call_args(s, c, json_string_value(a), json_string_length(a));
}

static void chat_chunk(struct lg_llm_stream *s, const json_t *v)
{
	const json_t *choice = chat_choice(v), *m, *tc;
	const char *finish;
	size_t i;

	if (json_is_object(json_object_get(v, "error"))) {
		set_str(s->stop, sizeof(s->stop), "error");
		return;
	}
	if (!json_is_array(json_object_get(v, "choices"))) {
		s->errors++;
		return;
	}
	set_str(s->model, sizeof(s->model), jstr(v, "model"));
	m = json_object_get(choice, "message");
	if (json_is_object(m)) {
		emit_text(s, json_object_get(m, "content"));
		json_array_foreach(json_object_get(m, "tool_calls"), i, tc)
			chat_call(s, tc);
	}
	m = json_object_get(choice, "delta");
	if (json_is_object(m)) {
		emit_text(s, json_object_get(m, "content"));
		json_array_foreach(json_object_get(m, "tool_calls"), i, tc)
			chat_call_delta(s, tc);
	}
	finish = jstr(choice, "finish_reason");
	if (finish) {
		set_str(s->stop, sizeof(s->stop), finish);
		calls_finish(s);
	}
	m = json_object_get(v, "usage");
	jcount(m, "prompt_tokens", &s->in[0]);
	jcount(m, "completion_tokens", &s->out[0]);
}

/* --- Gemini -------------------------------------------------------------- */

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
		set_str(s->stop, sizeof(s->stop), "error");
		return;
	}
	if (!cands && !u && !json_object_get(v, "promptFeedback") &&
	    !json_object_get(v, "modelVersion")) {
		s->errors++; /* not a GenerateContentResponse */
		return;
	}
	set_str(s->model, sizeof(s->model), jstr(v, "modelVersion"));
	json_array_foreach(json_object_get(json_object_get(c0, "content"),
					   "parts"),
			   i, part)
	{
		fc = get2(part, "functionCall", "function_call");
		if (json_is_object(fc))
			emit_call(s, jstr(fc, "id"), jstr(fc, "name"),
				  dump(json_object_get(fc, "args")));
		else if (!jtrue(part, "thought")) /* thinking is not said */
			emit_text(s, json_object_get(part, "text"));
	}
	set_str(s->stop, sizeof(s->stop), jstr(c0, "finishReason"));
	block = jstr(json_object_get(v, "promptFeedback"), "blockReason");
	if (block && !json_array_size(cands))
		set_str(s->stop, sizeof(s->stop), block);
	/* each chunk has the counts so far; every part is what was read/said */
	jcount(u, "promptTokenCount", &s->in[0]);
	jcount(u, "toolUsePromptTokenCount", &s->in[1]);
	jcount(u, "candidatesTokenCount", &s->out[0]);
	jcount(u, "thoughtsTokenCount", &s->out[1]);
}

/* --- dispatch ------------------------------------------------------------ */

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

static void handle_json(struct lg_llm_stream *s, const json_t *v,
			const char *name)
{
	size_t i;
	const json_t *el;

	if (s->api == LG_LLM_GEMINI && json_is_array(v)) {
		/* streamGenerateContent without alt=sse: an array of chunks */
		json_array_foreach(v, i, el)
		{
			gemini_chunk(s,
				     code_assist(el, "response", "candidates"));
		}
		return;
	}
	if (!json_is_object(v)) {
		s->errors++;
		return;
	}
	switch (s->api) {
	case LG_LLM_ANTHROPIC:
		anthropic_event(s, v, name);
		break;
	case LG_LLM_OPENAI_RESPONSES:
		responses_event(s, v, name);
		break;
	case LG_LLM_OPENAI_CHAT:
		chat_chunk(s, v);
		break;
	case LG_LLM_GEMINI:
		gemini_chunk(s, code_assist(v, "response", "candidates"));
		break;
	default:
		break;
	}
}

static void handle_data(struct lg_llm_stream *s, const char *p, size_t n,
			const char *name)
{
	json_t *v;

	trim(&p, &n);
	if (!n)
		return;
	if (n == 6 && memcmp(p, "[DONE]", 6) == 0) {
		/* OpenAI's end of stream (Chat; some compatible servers) */
		calls_finish(s);
		report_turn(s);
		return;
	}
	v = parse(p, n);
	if (!v) {
		s->errors++;
		return;
	}
	handle_json(s, v, name);
	json_decref(v);
}

/* --- SSE framing --------------------------------------------------------- */

static void sse_dispatch(struct lg_llm_stream *s)
{
	if (s->has_data && !s->data_bad) {
		if (s->data.n) /* the last data line's newline */
			s->data.p[--s->data.n] = '\0';
		handle_data(s, s->data.p ? s->data.p : "", s->data.n,
			    s->event[0] ? s->event : NULL);
	}
	buf_clear(&s->data);
	s->has_data = false;
	s->data_bad = false;
	s->event[0] = '\0';
}

static void sse_line(struct lg_llm_stream *s, const char *l, size_t n)
{
	const char *colon, *val;
	size_t k, vn;

	if (!n) {
		sse_dispatch(s);
		return;
	}
	if (l[0] == ':') /* a comment: keep-alive */
		return;
	colon = memchr(l, ':', n);
	k = colon ? (size_t)(colon - l) : n;
	val = colon ? colon + 1 : l + n;
	vn = n - (size_t)(val - l);
	if (vn && *val == ' ') {
		val++;
		vn--;
	}
	if (k == 4 && memcmp(l, "data", 4) == 0) {
		if (s->data_bad)
			return;
		if (buf_add(&s->data, val, vn, LLM_LINE_MAX) < 0 ||
		    buf_add(&s->data, "\n", 1, LLM_LINE_MAX) < 0) {
			s->errors++;
			s->data_bad = true;
			buf_clear(&s->data);
		}
		s->has_data = true;
	} else if (k == 5 && memcmp(l, "event", 5) == 0) {
		snprintf(s->event, sizeof(s->event), "%.*s",
			 (int)(vn < sizeof(s->event) ? vn : sizeof(s->event)),
			 val);
	} else if (!((k == 2 && memcmp(l, "id", 2) == 0) ||
		     (k == 5 && memcmp(l, "retry", 5) == 0))) {
		/* the spec ignores other fields; no provider sends any */
		s->errors++;
	}
}

/* The end of a line that was buffered (or was too long to buffer). */
static void sse_line_end(struct lg_llm_stream *s)
{
	if (s->line_bad) {
		/* the line was lost: so is the event it belonged to */
		s->line_bad = false;
		s->data_bad = true;
		s->has_data = true;
	} else {
		sse_line(s, s->line.p, s->line.n);
	}
	buf_clear(&s->line);
}

static void sse_keep(struct lg_llm_stream *s, const char *p, size_t n)
{
	if (s->line_bad)
		return;
	if (buf_add(&s->line, p, n, LLM_LINE_MAX) < 0) {
		s->errors++;
		s->line_bad = true;
		buf_clear(&s->line);
	}
}

static void sse_feed(struct lg_llm_stream *s, const char *p, size_t n)
{
	while (n) {
		size_t k = 0;

		if (s->cr) { /* a CR LF cut between two reads */
			s->cr = false;
			if (*p == '\n') {
				p++;
				n--;
				continue;
			}
		}
		while (k < n && p[k] != '\n' && p[k] != '\r')
			k++;
		if (k == n) {
			sse_keep(s, p, n);
			return;
		}
		if (s->line.n || s->line_bad) {
			sse_keep(s, p, k);
			sse_line_end(s);
		} else {
			sse_line(s, p, k);
		}
		s->cr = p[k] == '\r';
		p += k + 1;
		n -= k + 1;
	}
}

/* --- the public stream API ----------------------------------------------- */

struct lg_llm_stream *lg_llm_stream_new(enum lg_llm_api api, bool sse,
					const struct lg_llm_sink *sink)
{
	struct lg_llm_stream *s;

	if (api <= LG_LLM_UNKNOWN || api > LG_LLM_GEMINI)
		return NULL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->api = api;
	s->sse_hint = sse;
	if (sink)
		s->sink = *sink;
	return s;
}

static void feed_mode(struct lg_llm_stream *s, const char *p, size_t n)
{
	if (s->mode == M_SSE) {
		sse_feed(s, p, n);
	} else if (!s->body_bad && buf_add(&s->body, p, n, LLM_BODY_MAX) < 0) {
		s->errors++;
		s->body_bad = true;
		buf_free(&s->body);
	}
}

/*
 * The first byte that is not blank says how the body is framed: '{' or '['
 * is JSON whatever the request asked (an error answer to a streamed
 * request; Gemini's stream without alt=sse), anything else SSE.
 */
static size_t decide(struct lg_llm_stream *s, const char *p, size_t n)
{
	static const char bom[] = "\xef\xbb\xbf";
	size_t i = 0;

	while (i < n && s->mode == M_UNDECIDED) {
		char c = p[i];

		if (s->bom < 3 && !s->pre_blank && c == bom[s->bom]) {
			s->bom++;
			i++;
		} else if (s->bom && s->bom < 3) {
			s->mode = M_SSE; /* a broken BOM: garbage */
			sse_feed(s, bom, s->bom);
		} else if (is_blank(c)) {
			s->pre_blank = true;
			i++;
		} else {
			s->mode = c == '{' || c == '[' ? M_JSON : M_SSE;
		}
	}
	return i;
}

void lg_llm_stream_feed(struct lg_llm_stream *s, const char *p, size_t n)
{
	size_t used;

	if (!s || !p || !n)
		return;
	if (s->ended) {
		s->errors++;
		return;
	}
	used = decide(s, p, n);
	if (used < n)
		feed_mode(s, p + used, n - used);
}

void lg_llm_stream_end(struct lg_llm_stream *s)
{
	json_t *v;

	if (!s || s->ended)
		return;
	s->ended = true;
	if (s->mode == M_UNDECIDED) {
		s->errors++; /* nothing came */
	} else if (s->mode == M_SSE) {
		/* the spec drops an event the stream did not finish */
		if (s->line.n || s->line_bad || s->has_data)
			s->errors++;
		buf_free(&s->line);
		buf_free(&s->data);
	} else if (!s->body_bad) {
		v = parse(s->body.p ? s->body.p : "", s->body.n);
		if (v)
			handle_json(s, v, NULL);
		else
			s->errors++;
		json_decref(v);
		buf_free(&s->body);
	}
	if (s->api == LG_LLM_OPENAI_CHAT)
		calls_finish(s); /* no finish_reason: what came is all */
	else
		calls_drop(s);
	report_turn(s);
}

unsigned lg_llm_stream_errors(const struct lg_llm_stream *s)
{
	return s ? s->errors : 0;
}

void lg_llm_stream_free(struct lg_llm_stream *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < LLM_MAX_OPEN; i++)
		if (s->calls[i].open)
			call_close(s, &s->calls[i]);
	buf_free(&s->line);
	buf_free(&s->data);
	buf_free(&s->body);
	free(s);
}

/* --- requests ------------------------------------------------------------ */

enum lg_llm_api lg_llm_api_of(const char *route, const char *path)
{
	static const struct {
		const char *suffix;
		enum lg_llm_api api;
	} map[] = {
		{ "/messages", LG_LLM_ANTHROPIC },
		{ "/responses", LG_LLM_OPENAI_RESPONSES },
		{ "/chat/completions", LG_LLM_OPENAI_CHAT },
		{ ":generateContent", LG_LLM_GEMINI },
		{ ":streamGenerateContent", LG_LLM_GEMINI },
	};
	size_t n;

	if (!route || !path ||
	    (strcmp(route, "anthropic") != 0 && strcmp(route, "openai") != 0 &&
	     strcmp(route, "gemini") != 0))
		return LG_LLM_UNKNOWN;
	n = strcspn(path, "?#");
	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++) {
		size_t k = strlen(map[i].suffix);

		if (n >= k && memcmp(path + n - k, map[i].suffix, k) == 0)
			return map[i].api;
	}
	return LG_LLM_UNKNOWN;
}

size_t lg_llm_path_model(const char *path, char *model, size_t size)
{
	const char *m = NULL, *q;
	size_t n, end;

	if (size)
		model[0] = '\0';
	if (!path)
		return 0;
	end = strcspn(path, "?#");
	for (q = path; (q = strstr(q, "/models/")) && (size_t)(q - path) < end;
	     q++)
		m = q + 8;
	if (!m)
		return 0;
	n = strcspn(m, ":/?#");
	if (!size || n >= size)
		return 0;
	memcpy(model, m, n);
	model[n] = '\0';
	return n;
}

/* Text of a result's content: a string, or the text parts of an array. */
static char *content_text(const json_t *c)
{
	struct buf b = { 0 };
	const json_t *el;
	bool first = true;
	size_t i;

	if (!c || json_is_null(c))
		return strdup("");
	if (json_is_string(c))
		return strndup(json_string_value(c), json_string_length(c));
	if (!json_is_array(c))
		return dump(c);
	json_array_foreach(c, i, el)
	{
		const json_t *t =
			json_is_string(el) ? el : json_object_get(el, "text");

		if (!json_is_string(t))
			continue; /* images, documents */
		if ((!first && buf_add(&b, "\n", 1, SIZE_MAX / 2) < 0) ||
		    buf_add(&b, json_string_value(t), json_string_length(t),
			    SIZE_MAX / 2) < 0) {
			buf_free(&b);
			return NULL;
		}
		first = false;
	}
	return b.p ? b.p : strdup("");
}

struct results {
	void (*fn)(void *ctx, const struct lg_llm_result *r);
	void *ctx;
	int n;
};

static void result(struct results *rs, const char *id, const char *name,
		   char *content, bool is_error)
{
	struct lg_llm_result r = { id ? id : "", name ? name : "", content,
				   is_error };

	if (!content)
		return;
	rs->n++;
	if (rs->fn)
		rs->fn(rs->ctx, &r);
	free(content);
}

static bool has_type(const json_t *array, const char *type)
{
	const json_t *el;
	size_t i;

	json_array_foreach(array, i, el)
	{
		const char *t = jstr(el, "type");

		if (t && strcmp(t, type) == 0)
			return true;
	}
	return false;
}

/* Does a message (item) of the request carry a tool call of the model? */
static bool makes_calls(enum lg_llm_api api, const json_t *m)
{
	const char *type = jstr(m, "type"), *role = jstr(m, "role");
	const json_t *parts = json_object_get(m, "parts"), *p;
	size_t i;

	switch (api) {
	case LG_LLM_ANTHROPIC:
		return role && strcmp(role, "assistant") == 0 &&
		       has_type(json_object_get(m, "content"), "tool_use");
	case LG_LLM_OPENAI_CHAT:
		return role && strcmp(role, "assistant") == 0 &&
		       json_array_size(json_object_get(m, "tool_calls"));
	case LG_LLM_OPENAI_RESPONSES:
		return type && (strcmp(type, "function_call") == 0 ||
				strcmp(type, "custom_tool_call") == 0 ||
				strcmp(type, "local_shell_call") == 0);
	case LG_LLM_GEMINI:
		json_array_foreach(parts, i, p)
		{
			if (json_is_object(
				    get2(p, "functionCall", "function_call")))
				return true;
		}
		return false;
	default:
		return false;
	}
}

/*
 * Is a Responses input item part of the model's turn (what it said or
 * called, and what the tools answered)? A user, system or developer
 * message is not.
 */
static bool responses_in_turn(const json_t *it)
{
	const char *type = jstr(it, "type"), *role = jstr(it, "role");

	if (role)
		return strcmp(role, "assistant") == 0;
	return type && strcmp(type, "message") != 0;
}

/*
 * Where the results answering the last model turn start: after the last
 * message that made tool calls (Responses: the start of the run of model
 * items around the last call, whose outputs may be interleaved with
 * calls). 0 when the request holds no call (Responses continuing with
 * previous_response_id: only results).
 */
static size_t last_turn_start(enum lg_llm_api api, const json_t *msgs)
{
	size_t k = json_array_size(msgs);

	while (k > 0 && !makes_calls(api, json_array_get(msgs, k - 1)))
		k--;
	if (!k || api != LG_LLM_OPENAI_RESPONSES)
		return k; /* just after the message that made the calls */
	k--;
	while (k > 0 && responses_in_turn(json_array_get(msgs, k - 1)))
		k--;
	return k;
}

static void anthropic_results(struct results *rs, const json_t *m)
{
	const json_t *b;
	size_t i;

	json_array_foreach(json_object_get(m, "content"), i, b)
	{
		const char *type = jstr(b, "type");

		if (type && strcmp(type, "tool_result") == 0)
			result(rs, jstr(b, "tool_use_id"), "",
			       content_text(json_object_get(b, "content")),
			       jtrue(b, "is_error"));
	}
}

static void responses_results(struct results *rs, const json_t *it)
{
	const char *type = jstr(it, "type");

	if (type && (strcmp(type, "function_call_output") == 0 ||
		     strcmp(type, "custom_tool_call_output") == 0 ||
		     strcmp(type, "local_shell_call_output") == 0))
		result(rs, jstr(it, "call_id"), "",
		       content_text(json_object_get(it, "output")), false);
}

static void chat_results(struct results *rs, const json_t *m)
{
	const char *role = jstr(m, "role");

	if (role && strcmp(role, "tool") == 0)
		result(rs, jstr(m, "tool_call_id"), "",
		       content_text(json_object_get(m, "content")), false);
}

static void gemini_results(struct results *rs, const json_t *c)
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
		result(rs, jstr(fr, "id"), jstr(fr, "name"),
		       resp ? dump(resp) : strdup("{}"),
		       json_object_get(resp, "error") != NULL);
	}
}

static int request_results(enum lg_llm_api api, const char *body, size_t n,
			   void (*fn)(void *ctx, const struct lg_llm_result *r),
			   void *ctx, char *model, size_t model_size, bool last)
{
	struct results rs = { fn, ctx, 0 };
	const json_t *msgs = NULL, *m;
	size_t i, from;
	json_t *root;
	int r = -EINVAL;

	if (model && model_size)
		model[0] = '\0';
	root = body ? parse(body, n) : NULL;
	if (!json_is_object(root))
		goto out;
	if (model && model_size && jstr(root, "model"))
		snprintf(model, model_size, "%s", jstr(root, "model"));
	switch (api) {
	case LG_LLM_ANTHROPIC:
	case LG_LLM_OPENAI_CHAT:
		msgs = json_object_get(root, "messages");
		break;
	case LG_LLM_OPENAI_RESPONSES:
		msgs = json_object_get(root, "input");
		if (!msgs || json_is_string(msgs)) {
			r = 0;
			goto out;
		}
		break;
	case LG_LLM_GEMINI:
		msgs = json_object_get(code_assist(root, "request", "contents"),
				       "contents");
		break;
	default:
		goto out;
	}
	if (!json_is_array(msgs))
		goto out;
	from = last ? last_turn_start(api, msgs) : 0;
	json_array_foreach(msgs, i, m)
	{
		if (i < from)
			continue;
		if (api == LG_LLM_ANTHROPIC)
			anthropic_results(&rs, m);
		else if (api == LG_LLM_OPENAI_RESPONSES)
			responses_results(&rs, m);
		else if (api == LG_LLM_OPENAI_CHAT)
			chat_results(&rs, m);
		else
			gemini_results(&rs, m);
	}
	r = rs.n;
out:
	json_decref(root);
	return r;
}

int lg_llm_request_results(enum lg_llm_api api, const char *body, size_t n,
			   void (*fn)(void *ctx, const struct lg_llm_result *r),
			   void *ctx, char *model, size_t model_size)
{
	return request_results(api, body, n, fn, ctx, model, model_size, false);
}

int lg_llm_request_last_results(enum lg_llm_api api, const char *body, size_t n,
				void (*fn)(void *ctx,
					   const struct lg_llm_result *r),
				void *ctx, char *model, size_t model_size)
{
	return request_results(api, body, n, fn, ctx, model, model_size, true);
}

bool lg_llm_request_streams(enum lg_llm_api api, const char *path,
			    const char *body, size_t n)
{
	json_t *root;
	bool r;

	if (api == LG_LLM_GEMINI)
		return path && strstr(path, ":streamGenerateContent");
	if (api == LG_LLM_UNKNOWN || !body)
		return false;
	root = parse(body, n);
	r = jtrue(root, "stream");
	json_decref(root);
	return r;
}

/* --- error bodies -------------------------------------------------------- */

int lg_llm_error_body(enum lg_llm_api api, const char *message, char *out,
		      size_t size, int *status)
{
	json_t *root, *msg;
	size_t n;
	int r;

	if (status)
		*status = 400; /* SDKs retry 408, 409, 429 and 5xx: not this */
	msg = json_string(message ? message : "");
	if (!msg && message) {
		/* not UTF-8: keep the ASCII, mark the rest */
		char *copy = strdup(message);

		for (char *c = copy; c && *c; c++)
			if ((unsigned char)*c >= 0x80)
				*c = '?';
		msg = copy ? json_string(copy) : NULL;
		free(copy);
	}
	if (!msg)
		return -ENOMEM;
	switch (api) {
	case LG_LLM_ANTHROPIC:
		root = json_pack("{s:s, s:{s:s, s:o}}", "type", "error",
				 "error", "type", "invalid_request_error",
				 "message", msg);
		break;
	case LG_LLM_GEMINI:
		root = json_pack("{s:{s:i, s:o, s:s}}", "error", "code", 400,
				 "message", msg, "status",
				 "FAILED_PRECONDITION");
		break;
	default:
		root = json_pack("{s:{s:o, s:s, s:n, s:s}}", "error", "message",
				 msg, "type", "invalid_request_error", "param",
				 "code", "lgrun_session_stopped");
		break;
	}
	if (!root)
		return -ENOMEM;
	n = json_dumpb(root, NULL, 0, JSON_COMPACT);
	if (!n) {
		r = -ENOMEM;
	} else if (!out || n >= size || n > INT_MAX) {
		r = -ENOSPC;
	} else {
		json_dumpb(root, out, size, JSON_COMPACT);
		out[n] = '\0';
		r = (int)n;
	}
	json_decref(root);
	return r;
}

bool lg_llm_stream_call_open(const struct lg_llm_stream *s)
{
	if (s->responses_open)
		return true;
	for (size_t i = 0; i < LLM_MAX_OPEN; i++)
		if (s->calls[i].open)
			return true;
	return false;
}

int lg_llm_stream_error_event(enum lg_llm_api api, const char *message,
			      char *out, size_t size)
{
	json_t *err = json_object(), *ev = json_object();
	char *text = NULL;
	int n = -ENOMEM;

	if (!err || !ev)
		goto done;
	json_object_set_new(err, "message",
			    json_string(message ? message : ""));
	switch (api) {
	case LG_LLM_ANTHROPIC:
		json_object_set_new(err, "type",
				    json_string("invalid_request_error"));
		json_object_set_new(ev, "type", json_string("error"));
		json_object_set(ev, "error", err);
		break;
	case LG_LLM_OPENAI_RESPONSES:
		json_object_set_new(ev, "type", json_string("error"));
		json_object_set_new(ev, "code",
				    json_string("lgrun_session_stopped"));
		json_object_set_new(ev, "message",
				    json_string(message ? message : ""));
		break;
	case LG_LLM_GEMINI:
		json_object_set_new(err, "code", json_integer(400));
		json_object_set_new(err, "status",
				    json_string("FAILED_PRECONDITION"));
		json_object_set(ev, "error", err);
		break;
	default:
		json_object_set_new(err, "type",
				    json_string("invalid_request_error"));
		json_object_set_new(err, "code",
				    json_string("lgrun_session_stopped"));
		json_object_set(ev, "error", err);
		break;
	}
	text = json_dumps(ev, JSON_COMPACT);
	if (!text)
		goto done;
	n = snprintf(out, size, "%sdata: %s\n\n",
		     api == LG_LLM_ANTHROPIC	    ? "event: error\n" :
		     api == LG_LLM_OPENAI_RESPONSES ? "event: error\n" :
						      "",
		     text);
	if (n < 0 || (size_t)n >= size)
		n = -ENOSPC;
done:
	free(text);
	json_decref(err);
	json_decref(ev);
	return n;
}
