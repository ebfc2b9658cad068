// SPDX-License-Identifier: MIT
/*
 * lgrun's notes in a model request (steer.h): where each API keeps the
 * conversation, and a note put at its place in it.
 */
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "lib/cleanup.h"
#include "steer.h"

/*
 * The request as jansson reads it. Not llm_parse: an integer too big for
 * jansson would come back a real, and the body must go on as it was (such
 * a body is forwarded untouched).
 */
static json_t *load(const char *body, size_t n)
{
	json_t *root = body ? json_loadb(body, n, JSON_ALLOW_NUL, NULL) : NULL;

	if (!json_is_object(root)) {
		json_decref(root);
		return NULL;
	}
	return root;
}

/* The object holding the conversation and its key; NULL when not this API. */
static json_t *holder_of(enum lg_llm_api api, json_t *root, const char **key)
{
	json_t *req;

	switch (api) {
	case LG_LLM_ANTHROPIC:
	case LG_LLM_OPENAI_CHAT:
		*key = "messages";
		return root;
	case LG_LLM_OPENAI_RESPONSES:
		*key = "input";
		return root;
	case LG_LLM_GEMINI:
		/* Code Assist: {model, project, request: {contents}} */
		*key = "contents";
		req = json_object_get(root, "request");
		return json_is_object(req) &&
				       !json_object_get(root, "contents") ?
			       req :
			       root;
	default:
		return NULL;
	}
}

static const char *str(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

static bool is(const json_t *o, const char *key, const char *value)
{
	const char *s = str(o, key);

	return s && strcmp(s, value) == 0;
}

int lg_llm_steer_items(enum lg_llm_api api, const char *body, size_t n,
		       size_t *items, bool *stateful)
{
	json_t *root = load(body, n), *h, *a;
	const char *key = NULL;
	int r = -EINVAL;

	h = root ? holder_of(api, root, &key) : NULL;
	a = h ? json_object_get(h, key) : NULL;
	if (json_is_array(a)) {
		*items = json_array_size(a);
		r = 0;
	} else if (api == LG_LLM_OPENAI_RESPONSES && json_is_string(a)) {
		*items = 1; /* one user message, as the API reads it */
		r = 0;
	}
	if (!r) {
		const char *prev = str(root, "previous_response_id");

		*stateful = api == LG_LLM_OPENAI_RESPONSES && prev && prev[0];
	}
	json_decref(root);
	return r;
}

bool lg_llm_steer_agentic(enum lg_llm_api api, const char *body, size_t n)
{
	json_t *root = load(body, n), *h, *t;
	const char *key = NULL;
	bool yes = false;

	h = root ? holder_of(api, root, &key) : NULL;
	t = h ? json_object_get(h, "tools") : NULL;
	yes = json_is_array(t) && json_array_size(t) > 0;
	json_decref(root);
	return yes;
}

/* A note's text as a block of that API's user content. */
static json_t *block(enum lg_llm_api api, json_t *text)
{
	switch (api) {
	case LG_LLM_ANTHROPIC:
		return json_pack("{s:s, s:O}", "type", "text", "text", text);
	case LG_LLM_OPENAI_RESPONSES:
		return json_pack("{s:s, s:O}", "type", "input_text", "text",
				 text);
	case LG_LLM_GEMINI:
		return json_pack("{s:O}", "text", text);
	default:
		return NULL;
	}
}

/* A new user message (item, content) holding blocks (taken). */
static json_t *user_message(enum lg_llm_api api, json_t *blocks)
{
	switch (api) {
	case LG_LLM_ANTHROPIC:
		return json_pack("{s:s, s:o}", "role", "user", "content",
				 blocks);
	case LG_LLM_OPENAI_RESPONSES:
		return json_pack("{s:s, s:s, s:o}", "type", "message", "role",
				 "user", "content", blocks);
	case LG_LLM_GEMINI:
		return json_pack("{s:s, s:o}", "role", "user", "parts", blocks);
	default:
		json_decref(blocks);
		return NULL;
	}
}

/* Whether a message is the agent's (user) one that notes join. */
static bool user_turn(enum lg_llm_api api, const json_t *m)
{
	if (!json_is_object(m))
		return false;
	if (api == LG_LLM_GEMINI)
		return !json_object_get(m, "role") || is(m, "role", "user");
	return is(m, "role", "user");
}

/* A user message carrying tool results (their answer to the turn before). */
static bool results_turn(enum lg_llm_api api, const json_t *m)
{
	const json_t *c;
	size_t i;

	if (!user_turn(api, m))
		return false;
	if (api == LG_LLM_ANTHROPIC) {
		json_array_foreach(json_object_get(m, "content"), i, c)
		{
			if (is(c, "type", "tool_result"))
				return true;
		}
	} else if (api == LG_LLM_GEMINI) {
		json_array_foreach(json_object_get(m, "parts"), i, c)
		{
			if (json_object_get(c, "functionResponse") ||
			    json_object_get(c, "function_response"))
				return true;
		}
	}
	return false;
}

/*
 * The blocks of message m where notes are appended: Anthropic's content
 * (a string made a text block first), Gemini's parts. NULL when it has
 * none that can take them.
 */
static json_t *blocks_of(enum lg_llm_api api, json_t *m)
{
	const char *key = api == LG_LLM_GEMINI ? "parts" : "content";
	json_t *c = json_object_get(m, key), *a;

	if (json_is_array(c))
		return c;
	if (c &&
	    (api == LG_LLM_GEMINI || (!json_is_string(c) && !json_is_null(c))))
		return NULL;
	a = json_array();
	if (!a)
		return NULL;
	/* an empty text block is refused by the API: "" is no block */
	if (json_string_length(c) &&
	    json_array_append_new(a, json_pack("{s:s, s:O}", "type", "text",
					       "text", c)) < 0) {
		json_decref(a);
		return NULL;
	}
	if (json_object_set_new(m, key, a) < 0)
		return NULL;
	return a;
}

/* Does an output item answer a call (Responses), a role tool message (Chat)? */
static bool tool_output(enum lg_llm_api api, const json_t *m)
{
	const char *type = str(m, "type");
	size_t n = type ? strlen(type) : 0;

	if (api == LG_LLM_OPENAI_CHAT)
		return is(m, "role", "tool");
	return api == LG_LLM_OPENAI_RESPONSES && n > 7 &&
	       strcmp(type + n - 7, "_output") == 0;
}

struct placed {
	size_t at, order;
	json_t *text;
};

/* The notes p[0..k), all of one at, into the array a; 0 or -ENOMEM. */
static int place(enum lg_llm_api api, json_t *a, const struct placed *p,
		 size_t k)
{
	size_t at = p[0].at;
	size_t n = json_array_size(a);
	json_t *target = NULL, *blocks;

	if (api == LG_LLM_ANTHROPIC || api == LG_LLM_GEMINI) {
		if (at && user_turn(api, json_array_get(a, at - 1)))
			target = json_array_get(a, at - 1);
		/*
		 * After a model turn that made calls comes the message with
		 * their results: nothing may go in between.
		 */
		else if (at < n && results_turn(api, json_array_get(a, at)))
			target = json_array_get(a, at);
		if (target && (blocks = blocks_of(api, target))) {
			for (size_t i = 0; i < k; i++)
				if (json_array_append_new(
					    blocks, block(api, p[i].text)) < 0)
					return -ENOMEM;
			return 0;
		}
	}
	while (at < n && tool_output(api, json_array_get(a, at)))
		at++;
	if (api == LG_LLM_OPENAI_CHAT) {
		for (size_t i = 0; i < k; i++)
			if (json_array_insert_new(
				    a, at + i,
				    json_pack("{s:s, s:O}", "role", "user",
					      "content", p[i].text)) < 0)
				return -ENOMEM;
		return 0;
	}
	blocks = json_array();
	for (size_t i = 0; blocks && i < k; i++)
		if (json_array_append_new(blocks, block(api, p[i].text)) < 0) {
			json_decref(blocks);
			return -ENOMEM;
		}
	if (!blocks ||
	    json_array_insert_new(a, at, user_message(api, blocks)) < 0)
		return -ENOMEM;
	return 0;
}

/* The notes' texts, up to the first without one; then the notes. */
static void placed_free(struct placed **pl)
{
	int e = errno;

	for (struct placed *p = *pl; p && p->text; p++)
		json_decref(p->text);
	free(*pl);
	errno = e;
}

/* Highest at first; notes of one at in the order given. */
static int by_at_down(const void *x, const void *y)
{
	const struct placed *a = x, *b = y;

	if (a->at != b->at)
		return a->at > b->at ? -1 : 1;
	return a->order < b->order ? -1 : a->order > b->order;
}

int lg_llm_steer_apply(enum lg_llm_api api, const char *body, size_t n,
		       const struct lg_steer_note *notes, size_t nnotes,
		       char **out, size_t *out_len)
{
	const size_t flags = JSON_COMPACT | JSON_PRESERVE_ORDER;
	LG_AUTOJSON json_t *root = load(body, n);
	LG_AUTO(placed_free) struct placed *pl = NULL;
	json_t *h, *a;
	const char *key = NULL;
	size_t k = 0, count, len;

	*out = NULL;
	*out_len = 0;
	h = root ? holder_of(api, root, &key) : NULL;
	a = h ? json_object_get(h, key) : NULL;
	if (api == LG_LLM_OPENAI_RESPONSES && json_is_string(a)) {
		/* a string input is one user message: made one */
		json_t *m =
			user_message(api, json_pack("[{s:s, s:O}]", "type",
						    "input_text", "text", a));

		a = json_array();
		if (!m || !a) {
			json_decref(m);
			json_decref(a);
			return -ENOMEM;
		}
		/* each takes its value, on failure too */
		if (json_array_append_new(a, m) < 0) {
			json_decref(a);
			return -ENOMEM;
		}
		if (json_object_set_new(h, key, a) < 0)
			return -ENOMEM;
	}
	if (!json_is_array(a))
		return -EINVAL;
	count = json_array_size(a);
	/* one more than the notes: its text NULL, the end for placed_free */
	pl = calloc(nnotes + 1, sizeof(*pl));
	if (!pl)
		return -ENOMEM;
	for (size_t i = 0; i < nnotes; i++) {
		size_t tl = strnlen(notes[i].text, sizeof(notes[i].text));
		json_t *t = tl ? json_stringn(notes[i].text, tl) : NULL;

		if (!t)
			continue; /* empty, or not UTF-8: never sent */
		pl[k].at = notes[i].at < count ? notes[i].at : count;
		pl[k].order = i;
		pl[k++].text = t;
	}
	qsort(pl, k, sizeof(*pl), by_at_down);
	for (size_t i = 0, j; i < k; i = j) {
		for (j = i; j < k && pl[j].at == pl[i].at; j++)
			;
		if (place(api, a, pl + i, j - i) < 0)
			return -ENOMEM;
	}
	len = json_dumpb(root, NULL, 0, flags);
	*out = len ? malloc(len + 1) : NULL;
	if (!*out)
		return -ENOMEM;
	json_dumpb(root, *out, len, flags);
	(*out)[len] = '\0';
	*out_len = len;
	return (int)(k < 0x7fffffff ? k : 0x7fffffff);
}
