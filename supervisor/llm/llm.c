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
#include "api.h"

/* Appends p[0..n) keeping a NUL after it; -ENOSPC when it would pass max. */
int llm_buf_add(struct buf *b, const char *p, size_t n, size_t max)
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

void llm_buf_free(struct buf *b)
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
json_t *llm_parse(const char *p, size_t n)
{
	const size_t flags = JSON_DECODE_ANY | JSON_ALLOW_NUL;
	json_error_t e;
	json_t *v;

	v = json_loadb(p, n, flags, &e);
	if (!v && json_error_code(&e) == json_error_numeric_overflow)
		v = json_loadb(p, n, flags | JSON_DECODE_INT_AS_REAL, &e);
	return v;
}

const char *llm_jstr(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

bool llm_jtrue(const json_t *o, const char *key)
{
	return json_is_true(json_object_get(o, key));
}

/* A token count: a non-negative number. */
bool llm_jcount(const json_t *o, const char *key, uint64_t *out)
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
char *llm_dump(const json_t *v)
{
	if (!v)
		return strdup("{}");
	return json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
}

/* A JSON string holding raw[0..n), as JSON text. */
char *llm_dump_string(const char *raw, size_t n)
{
	json_t *v = json_stringn(raw, n);
	char *out;

	if (!v)
		return strdup("\"\"");
	out = llm_dump(v);
	json_decref(v);
	return out;
}

/* --- the stream ---------------------------------------------------------- */

void llm_set_str(char *dst, size_t size, const char *src)
{
	if (src && *src)
		snprintf(dst, size, "%s", src);
}

void llm_emit_text(struct lg_llm_stream *s, const json_t *v)
{
	if (json_is_string(v) && json_string_length(v) && s->sink.text)
		s->sink.text(s->sink.ctx, json_string_value(v),
			     json_string_length(v));
}

/* input is malloc'ed and freed here; NULL (no memory) drops the call. */
void llm_emit_call(struct lg_llm_stream *s, const char *id, const char *name,
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

void llm_report_turn(struct lg_llm_stream *s)
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
char *llm_args_text(struct lg_llm_stream *s, const char *raw, size_t n)
{
	json_error_t e;
	json_t *v;
	char *out;

	trim(&raw, &n);
	if (!n)
		return strdup("{}");
	v = json_loadb(raw, n, JSON_DECODE_ANY | JSON_ALLOW_NUL, &e);
	if (v) {
		out = llm_dump(v);
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
	return llm_dump_string(raw, n);
}

struct call *llm_call_find(struct lg_llm_stream *s, long long index)
{
	for (size_t i = 0; i < LLM_MAX_OPEN; i++)
		if (s->calls[i].open && s->calls[i].index == index)
			return &s->calls[i];
	return NULL;
}

struct call *llm_call_find_id(struct lg_llm_stream *s, const char *id)
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
	llm_buf_free(&c->args);
	memset(c, 0, sizeof(*c));
}

/* A new call at index (one already open there is counted and dropped). */
struct call *llm_call_open(struct lg_llm_stream *s, long long index)
{
	struct call *c = llm_call_find(s, index);

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

void llm_call_set(char **dst, const char *src)
{
	if (src && !*dst)
		*dst = strdup(src);
}

void llm_call_args(struct lg_llm_stream *s, struct call *c, const char *p,
		   size_t n)
{
	if (c->broken || !n)
		return;
	if (n > LLM_ARGS_MAX - s->args_held ||
	    llm_buf_add(&c->args, p, n, LLM_ARGS_MAX) < 0) {
		/* cannot know the arguments: the call is dropped at its end */
		s->errors++;
		c->broken = true;
		s->args_held -= c->args.n;
		llm_buf_free(&c->args);
		return;
	}
	s->args_held += n;
}

/* The call is complete: reports it (unless it was broken) and closes it. */
void llm_call_finish(struct lg_llm_stream *s, struct call *c)
{
	const char *raw = c->args.p ? c->args.p : "";
	size_t n = c->args.n;
	char *input;

	if (!c->broken) {
		trim(&raw, &n);
		if (!n && c->start)
			input = strdup(c->start);
		else
			input = llm_args_text(s, raw, n);
		llm_emit_call(s, c->id, c->name, input);
	}
	call_close(s, c);
}

/* Finishes every open call, in index order. */
void llm_calls_finish(struct lg_llm_stream *s)
{
	for (;;) {
		struct call *first = NULL;

		for (size_t i = 0; i < LLM_MAX_OPEN; i++)
			if (s->calls[i].open &&
			    (!first || s->calls[i].index < first->index))
				first = &s->calls[i];
		if (!first)
			return;
		llm_call_finish(s, first);
	}
}

/* Drops open calls that never ended: their arguments may be cut. */
void llm_calls_drop(struct lg_llm_stream *s)
{
	for (size_t i = 0; i < LLM_MAX_OPEN; i++) {
		if (s->calls[i].open) {
			s->errors++;
			call_close(s, &s->calls[i]);
		}
	}
}

/* --- dispatch ------------------------------------------------------------ */

/* The model APIs, each its own file (api.h), one line each in apis.def. */
#define LG_LLM_API(NAME, TABLE) [LG_LLM_##NAME] = &TABLE,
static const struct llm_api *const apis[LG_LLM_COUNT] = {
#include "apis.def"
};
#undef LG_LLM_API

const struct llm_api *llm_api(enum lg_llm_api api)
{
	return api > LG_LLM_UNKNOWN && api < LG_LLM_COUNT ? apis[api] : NULL;
}

/* One event's (or one body's) JSON, to its API's handler. */
static void handle_json(struct lg_llm_stream *s, const json_t *v,
			const char *name)
{
	const struct llm_api *a = llm_api(s->api);

	if (!a)
		return;
	if (!json_is_object(v) && !(a->arrays && json_is_array(v))) {
		s->errors++;
		return;
	}
	a->event(s, v, name);
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
		s->finished = true;
		llm_calls_finish(s);
		llm_report_turn(s);
		return;
	}
	v = llm_parse(p, n);
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
		if (llm_buf_add(&s->data, val, vn, LLM_LINE_MAX) < 0 ||
		    llm_buf_add(&s->data, "\n", 1, LLM_LINE_MAX) < 0) {
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
	if (llm_buf_add(&s->line, p, n, LLM_LINE_MAX) < 0) {
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

	if (!llm_api(api))
		return NULL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->api = api;
	s->sse_hint = sse;
	s->open_block = -1;
	if (sink)
		s->sink = *sink;
	return s;
}

static void feed_mode(struct lg_llm_stream *s, const char *p, size_t n)
{
	if (s->mode == M_SSE) {
		sse_feed(s, p, n);
	} else if (!s->body_bad &&
		   llm_buf_add(&s->body, p, n, LLM_BODY_MAX) < 0) {
		s->errors++;
		s->body_bad = true;
		llm_buf_free(&s->body);
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
		llm_buf_free(&s->line);
		llm_buf_free(&s->data);
	} else if (!s->body_bad) {
		v = llm_parse(s->body.p ? s->body.p : "", s->body.n);
		if (v)
			handle_json(s, v, NULL);
		else
			s->errors++;
		json_decref(v);
		llm_buf_free(&s->body);
	}
	llm_api(s->api)->end(s); /* the calls still open */
	llm_report_turn(s);
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
	llm_buf_free(&s->line);
	llm_buf_free(&s->data);
	llm_buf_free(&s->body);
	llm_buf_free(&s->item_text);
	json_decref(s->response);
	json_decref(s->items);
	json_decref(s->item);
	free(s);
}

/* --- requests ------------------------------------------------------------ */
