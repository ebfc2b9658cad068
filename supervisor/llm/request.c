// SPDX-License-Identifier: MIT
/*
 * The request side of the model APIs: which API a path is, the model it
 * names, the tool results a request carries (all, or those answering the
 * last turn), and the error answers lgrun gives when it refuses.
 */
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/cleanup.h"
#include "llm.h"
#include "api.h"

/* route is one an API is spoken on */
static bool model_route(const char *route)
{
	for (int i = LG_LLM_UNKNOWN + 1; i < LG_LLM_COUNT; i++)
		if (strcmp(llm_api(i)->route, route) == 0)
			return true;
	return false;
}

enum lg_llm_api lg_llm_api_of(const char *route, const char *path)
{
	size_t n;

	if (!route || !path || !model_route(route))
		return LG_LLM_UNKNOWN;
	n = strcspn(path, "?#");
	for (int i = LG_LLM_UNKNOWN + 1; i < LG_LLM_COUNT; i++) {
		for (const char *const *p = llm_api(i)->paths; *p; p++) {
			size_t k = strlen(*p);

			if (n >= k && memcmp(path + n - k, *p, k) == 0)
				return (enum lg_llm_api)i;
		}
	}
	return LG_LLM_UNKNOWN;
}

bool lg_llm_api_websocket(enum lg_llm_api api)
{
	return llm_api(api) && llm_api(api)->websocket;
}

/* Text of a result's content: a string, or the text parts of an array. */
char *llm_content_text(const json_t *c)
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
		return llm_dump(c);
	json_array_foreach(c, i, el)
	{
		const json_t *t =
			json_is_string(el) ? el : json_object_get(el, "text");

		if (!json_is_string(t))
			continue; /* images, documents */
		if ((!first && llm_buf_add(&b, "\n", 1, SIZE_MAX / 2) < 0) ||
		    llm_buf_add(&b, json_string_value(t), json_string_length(t),
				SIZE_MAX / 2) < 0) {
			llm_buf_free(&b);
			return NULL;
		}
		first = false;
	}
	return b.p ? b.p : strdup("");
}

void llm_result(struct llm_results *rs, const char *id, const char *name,
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

bool llm_has_type(const json_t *array, const char *type)
{
	const json_t *el;
	size_t i;

	json_array_foreach(array, i, el)
	{
		const char *t = llm_jstr(el, "type");

		if (t && strcmp(t, type) == 0)
			return true;
	}
	return false;
}

/*
 * Where the results answering the last model turn start: just after the
 * last message that made tool calls; 0 when the request holds no call.
 * An API's last_turn, or where its own begins.
 */
size_t llm_after_calls(const struct llm_api *a, const json_t *msgs)
{
	size_t k = json_array_size(msgs);

	while (k > 0 && !a->makes_calls(json_array_get(msgs, k - 1)))
		k--;
	return k;
}

static int request_results(enum lg_llm_api api, const char *body, size_t n,
			   void (*fn)(void *ctx, const struct lg_llm_result *r),
			   void *ctx, char *model, size_t model_size, bool last)
{
	struct llm_results rs = { fn, ctx, 0 };
	const struct llm_api *a;
	const json_t *msgs = NULL, *m;
	size_t i, from;
	LG_AUTOJSON json_t *root = NULL;

	if (model && model_size)
		model[0] = '\0';
	root = body ? llm_parse(body, n) : NULL;
	if (!json_is_object(root))
		return -EINVAL;
	if (model && model_size && llm_jstr(root, "model"))
		snprintf(model, model_size, "%s", llm_jstr(root, "model"));
	a = llm_api(api);
	if (!a)
		return -EINVAL;
	msgs = a->messages(root);
	if (!msgs)
		return 0; /* none to read (Responses' input as a string) */
	if (!json_is_array(msgs))
		return -EINVAL;
	from = last ? a->last_turn(a, msgs) : 0;
	json_array_foreach(msgs, i, m)
	{
		if (i >= from)
			a->results(&rs, m);
	}
	return rs.n;
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

/* Most APIs: the body says "stream": true. */
bool llm_streams_flag(const char *path, const char *body, size_t n)
{
	json_t *root;
	bool r;

	(void)path;
	if (!body)
		return false;
	root = llm_parse(body, n);
	r = llm_jtrue(root, "stream");
	json_decref(root);
	return r;
}

bool lg_llm_request_streams(enum lg_llm_api api, const char *path,
			    const char *body, size_t n)
{
	const struct llm_api *a = llm_api(api);

	return a && a->streams(path, body, n);
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
	/* an API lgrun cannot name gets OpenAI's shape, the most common */
	root = (llm_api(api) ? llm_api(api) : &llm_chat)->error_body(msg);
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
	LG_AUTOJSON json_t *ev = json_object();
	LG_AUTOJSON json_t *err = json_object();
	const struct llm_api *a;
	LG_AUTOFREE char *text = NULL;
	int n;

	if (!err || !ev)
		return -ENOMEM;
	json_object_set_new(err, "message",
			    json_string(message ? message : ""));
	a = llm_api(api) ? llm_api(api) : &llm_chat;
	a->error_event(ev, err, message ? message : "");
	text = json_dumps(ev, JSON_COMPACT);
	if (!text)
		return -ENOMEM;
	n = snprintf(out, size, "%s%s%sdata: %s\n\n",
		     a->error_event_name[0] ? "event: " : "",
		     a->error_event_name, a->error_event_name[0] ? "\n" : "",
		     text);
	if (n < 0 || (size_t)n >= size)
		return -ENOSPC;
	return n;
}
