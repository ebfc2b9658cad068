// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for websocket frames (Codex's Responses protocol): any
 * bytes fed to a frame reader in two pieces, from either side (masked or
 * not), never crash it, and each message it reports is read as the LLM
 * proxy reads it (a request's tool results; an event of the stream).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "llm/llm.h"
#include "proxy/wsframe.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void on_result(void *ctx, const struct lg_llm_result *r)
{
	(void)ctx;
	(void)r;
}

static void on_call(void *ctx, const struct lg_llm_call *c)
{
	(void)ctx;
	if (!c->name || !c->input)
		__builtin_trap();
}

static void on_text(void *ctx, const char *p, size_t n)
{
	(void)ctx;
	(void)p;
	(void)n;
}

static void on_turn(void *ctx, const struct lg_llm_turn *t)
{
	(void)ctx;
	(void)t;
}

static void on_msg(void *ctx, unsigned op, const char *p, size_t n)
{
	struct lg_llm_stream *s = ctx;
	char model[64], *ev;

	if (op > LG_WS_PONG || (op >= LG_WS_CLOSE && n > 125))
		__builtin_trap();
	if (op != LG_WS_TEXT)
		return;
	lg_llm_request_last_results(LG_LLM_OPENAI_RESPONSES, p, n, on_result,
				    NULL, model, sizeof(model));
	ev = malloc(n + 9);
	if (!ev)
		return;
	memcpy(ev, "data: ", 6);
	memcpy(ev + 6, p, n);
	memcpy(ev + 6 + n, "\n\n", 3);
	lg_llm_stream_feed(s, ev, n + 8);
	free(ev);
}

static void on_big(void *ctx, unsigned op)
{
	(void)ctx;
	if (op != LG_WS_TEXT && op != LG_WS_BINARY)
		__builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct lg_llm_sink ls = { on_call, on_text, on_turn, NULL };
	struct lg_llm_stream *s =
		lg_llm_stream_new(LG_LLM_OPENAI_RESPONSES, true, &ls);
	struct lg_ws_sink sink = { on_msg, on_big, s };
	struct lg_ws_reader *w = lg_ws_reader_new(2048, &sink);
	size_t cut = size ? data[0] % (size + 1) : 0;

	if (w && lg_ws_feed(w, data, cut) == 0)
		lg_ws_feed(w, data + cut, size - cut);
	lg_ws_reader_free(w);
	lg_llm_stream_end(s);
	lg_llm_stream_free(s);
	return 0;
}
