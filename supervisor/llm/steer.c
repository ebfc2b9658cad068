// SPDX-License-Identifier: MIT
/*
 * lgrun's notes in a model request (steer.h): a note put at its place in
 * the conversation, as each API's table says (api.h: holder,
 * conversation, stateful, place, with the helpers below).
 */
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "lib/cleanup.h"
#include "api.h"
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

/* The request itself holds its conversation (most APIs' holder). */
json_t *llm_root(json_t *root)
{
	return root;
}

bool llm_stateless(const json_t *root)
{
	(void)root;
	return false;
}

/* The conversation of the request root, NULL when it holds none. */
static json_t *items_of(const struct llm_api *a, json_t *root)
{
	json_t *h = a && root ? a->holder(root) : NULL;

	return h ? a->items(h) : NULL;
}

int lg_llm_steer_items(enum lg_llm_api api, const char *body, size_t n,
		       size_t *items, bool *stateful)
{
	const struct llm_api *a = llm_api(api);
	LG_AUTOJSON json_t *root = a ? load(body, n) : NULL;
	json_t *c = items_of(a, root);

	if (!c)
		return -EINVAL;
	*items = json_array_size(c);
	*stateful = a->stateful(root);
	return 0;
}

bool lg_llm_steer_agentic(enum lg_llm_api api, const char *body, size_t n)
{
	const struct llm_api *a = llm_api(api);
	LG_AUTOJSON json_t *root = a ? load(body, n) : NULL;
	json_t *h = a && root ? a->holder(root) : NULL;
	json_t *t = h ? json_object_get(h, "tools") : NULL;

	return json_is_array(t) && json_array_size(t) > 0;
}

json_t *llm_note_target(json_t *items, size_t at, bool (*user)(const json_t *m),
			bool (*results)(const json_t *m))
{
	if (at && user(json_array_get(items, at - 1)))
		return json_array_get(items, at - 1);
	/*
	 * After a model turn that made calls comes the message with their
	 * results: nothing may go in between.
	 */
	if (at < json_array_size(items) && results(json_array_get(items, at)))
		return json_array_get(items, at);
	return NULL;
}

size_t llm_note_after(const json_t *items, size_t at,
		      bool (*output)(const json_t *m))
{
	size_t n = json_array_size(items);

	while (at < n && output(json_array_get(items, at)))
		at++;
	return at;
}

int llm_note_blocks(json_t *blocks, const struct llm_note *p, size_t k,
		    json_t *(*block)(json_t *text))
{
	for (size_t i = 0; i < k; i++)
		if (json_array_append_new(blocks, block(p[i].text)) < 0)
			return -ENOMEM;
	return 0;
}

int llm_note_insert(json_t *items, size_t at, const struct llm_note *p,
		    size_t k, json_t *(*block)(json_t *text),
		    json_t *(*message)(json_t *blocks))
{
	json_t *blocks = json_array();

	if (blocks && llm_note_blocks(blocks, p, k, block) < 0) {
		json_decref(blocks);
		return -ENOMEM;
	}
	if (!blocks || json_array_insert_new(items, at, message(blocks)) < 0)
		return -ENOMEM;
	return 0;
}

/* The notes' texts, up to the first without one; then the notes. */
static void placed_free(struct llm_note **pl)
{
	int e = errno;

	for (struct llm_note *p = *pl; p && p->text; p++)
		json_decref(p->text);
	free(*pl);
	errno = e;
}

/* Highest at first; notes of one at in the order given. */
static int by_at_down(const void *x, const void *y)
{
	const struct llm_note *a = x, *b = y;

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
	LG_AUTO(placed_free) struct llm_note *pl = NULL;
	json_t *a;
	size_t k = 0, count, len;

	*out = NULL;
	*out_len = 0;
	a = items_of(llm_api(api), root);
	if (!a)
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
		if (llm_api(api)->place(a, pl + i, j - i) < 0)
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
