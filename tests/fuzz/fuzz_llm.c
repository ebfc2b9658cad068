// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for the model API parsers (supervisor/llm.c): the proxy
 * feeds them whatever an upstream or an agent sends. The first byte picks
 * the API, the framing and how the rest is cut into pieces. The same bytes
 * as a request get lgrun's notes (llm/steer.c): a body it can read comes
 * back JSON of that API with more items, one it cannot goes untouched.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <errno.h>
#include <jansson.h>
#include <stdlib.h>

#include "llm/llm.h"
#include "llm/steer.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static unsigned turns;

static void on_call(void *ctx, const struct lg_llm_call *c)
{
	(void)ctx;
	if (!c->name || !c->input || strlen(c->input) > (4u << 20))
		__builtin_trap();
}

static void on_text(void *ctx, const char *p, size_t n)
{
	(void)ctx;
	if (n && !p)
		__builtin_trap();
}

static void on_turn(void *ctx, const struct lg_llm_turn *t)
{
	(void)ctx;
	(void)t;
	turns++;
}

/* Notes at the end and at an earlier place, as the proxy adds them. */
static void steer(enum lg_llm_api api, unsigned pick, const char *p, size_t n)
{
	static struct lg_steer_note notes[2] = { { "lgrun: note", 0 },
						 { "lgrun: earlier", 0 } };
	size_t items = 0, after = 0;
	bool stateful = false;
	char *out = NULL;
	size_t len = 0;
	int r = lg_llm_steer_items(api, p, n, &items, &stateful), k;

	notes[0].at = items;
	notes[1].at = pick & 1 ? items / 2 : items + pick;
	k = lg_llm_steer_apply(api, p, n, notes, 2, &out, &len);
	if (r == -EINVAL && (k != -EINVAL || out))
		__builtin_trap(); /* what it cannot read goes untouched */
	if (k < 0)
		return;
	if (r < 0 || k != 2 || !out || strlen(out) != len ||
	    lg_llm_steer_items(api, out, len, &after, &stateful) < 0 ||
	    after < items)
		__builtin_trap();
	free(out);
}

static void on_result(void *ctx, const struct lg_llm_result *r)
{
	(void)ctx;
	if (!r->content)
		__builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct lg_llm_sink sink = { on_call, on_text, on_turn, NULL };
	struct lg_llm_stream *s;
	enum lg_llm_api api;
	size_t step, off;
	char model[64], body[1024];
	int status;

	if (size < 1)
		return 0;
	/* two bits: the API (apis.def's first four, the seeds' order) */
	api = (enum lg_llm_api)(LG_LLM_UNKNOWN + 1 +
				(data[0] & 3) % (LG_LLM_COUNT - 1));
	step = (size_t)(data[0] >> 3) + 1;
	data++;
	size--;
	turns = 0;
	s = lg_llm_stream_new(api, (data[-1] & 4) != 0, &sink);
	if (!s)
		return 0;
	for (off = 0; off < size; off += step)
		lg_llm_stream_feed(s, (const char *)data + off,
				   size - off < step ? size - off : step);
	lg_llm_stream_end(s);
	lg_llm_stream_end(s);
	if (turns != 1) /* exactly one turn per response, whatever came */
		__builtin_trap();
	lg_llm_stream_free(s);
	lg_llm_request_results(api, (const char *)data, size, on_result, NULL,
			       model, sizeof(model));
	lg_llm_request_streams(api, "/x", (const char *)data, size);
	steer(api, data[-1] >> 5, (const char *)data, size);
	if (size < 200) {
		char msg[256];

		memcpy(msg, data, size);
		msg[size] = '\0';
		if (lg_llm_error_body(api, msg, body, sizeof(body), &status) >
			    0 &&
		    status != 400)
			__builtin_trap();
	}
	return 0;
}
