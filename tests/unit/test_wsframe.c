// SPDX-License-Identifier: MIT
/*
 * Unit tests for wsframe.c: websocket frames written and read (wslay), as
 * the LLM proxy reads Codex's Responses websocket.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "proxy/wsframe.h"

struct got {
	unsigned op[16];
	char msg[16][4096];
	size_t len[16];
	size_t n, big;
};

static void on_msg(void *ctx, unsigned op, const char *p, size_t n)
{
	struct got *g = ctx;

	assert_true(g->n < 16);
	g->op[g->n] = op;
	memcpy(g->msg[g->n], p, n < sizeof(g->msg[0]) ? n : sizeof(g->msg[0]));
	g->len[g->n++] = n; /* the whole length; the first 4096 bytes kept */
}

static void on_big(void *ctx, unsigned op)
{
	(void)op;
	((struct got *)ctx)->big++;
}

/* Appends one frame of op to buf (fin as given: written by hand). */
static size_t raw_frame(unsigned char *buf, bool fin, unsigned op,
			const char *p, size_t n, bool mask)
{
	static const unsigned char key[4] = { 0x11, 0x22, 0x33, 0x44 };
	size_t o = 0;

	buf[o++] = (unsigned char)((fin ? 0x80 : 0) | op);
	assert_true(n < 126);
	buf[o++] = (unsigned char)((mask ? 0x80 : 0) | n);
	if (mask) {
		memcpy(buf + o, key, 4);
		o += 4;
	}
	for (size_t i = 0; i < n; i++)
		buf[o++] = (unsigned char)(p[i] ^ (mask ? key[i & 3] : 0));
	return o;
}

static void test_roundtrip(void **state)
{
	struct got g = { 0 };
	struct lg_ws_sink sink = { on_msg, on_big, &g };
	struct lg_ws_reader *w = lg_ws_reader_new(1 << 20, &sink);
	static const char *const msgs[] = {
		"{\"type\":\"response.create\"}",
		"",
		/* past 125 and past 65535 bytes: the longer length forms */
		NULL,
		NULL,
	};
	char *mid = malloc(300), *large = malloc(70000);

	(void)state;
	memset(mid, 'm', 300);
	memset(large, 'L', 70000);
	for (int mask = 0; mask < 2; mask++) {
		for (size_t i = 0; i < 4; i++) {
			const char *p = i == 2 ? mid : i == 3 ? large : msgs[i];
			size_t n = i == 2 ? 300 : i == 3 ? 70000 : strlen(p);
			char *f;
			long len = lg_ws_frame(LG_WS_TEXT, mask, p, n, &f);

			assert_true(len >= (long)n + 2);
			/* a client masks: the payload is not there as it is */
			if (mask && i == 0)
				assert_null(memmem(f, (size_t)len, p, n));
			g.n = 0;
			assert_int_equal(lg_ws_feed(w, f, (size_t)len), 0);
			free(f);
			assert_int_equal(g.n, 1);
			assert_int_equal(g.op[0], LG_WS_TEXT);
			assert_int_equal(g.len[0], n);
			assert_memory_equal(g.msg[0], p, n < 4096 ? n : 4096);
		}
	}
	assert_int_equal(g.big, 0);
	lg_ws_reader_free(w);
	free(mid);
	free(large);
}

/* Fragments joined, a ping between them, fed one byte at a time. */
static void test_fragments_bytewise(void **state)
{
	struct got g = { 0 };
	struct lg_ws_sink sink = { on_msg, on_big, &g };
	struct lg_ws_reader *w = lg_ws_reader_new(1 << 20, &sink);
	unsigned char buf[512];
	size_t n = 0;

	(void)state;
	n += raw_frame(buf + n, false, LG_WS_TEXT, "{\"type\":", 8, true);
	n += raw_frame(buf + n, true, LG_WS_PING, "hi", 2, true);
	n += raw_frame(buf + n, false, LG_WS_CONT, "\"x\"", 3, true);
	n += raw_frame(buf + n, true, LG_WS_CONT, "}", 1, true);
	n += raw_frame(buf + n, true, LG_WS_CLOSE, "\x03\xe8", 2, false);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(lg_ws_feed(w, buf + i, 1), 0);
	assert_int_equal(g.n, 3);
	assert_int_equal(g.op[0], LG_WS_PING);
	assert_memory_equal(g.msg[0], "hi", 2);
	assert_int_equal(g.op[1], LG_WS_TEXT);
	assert_int_equal(g.len[1], 12);
	assert_memory_equal(g.msg[1], "{\"type\":\"x\"}", 12);
	assert_int_equal(g.op[2], LG_WS_CLOSE);
	assert_int_equal(lg_ws_messages(w), 3);
	lg_ws_reader_free(w);
}

/* Too big: said once, not kept; the next message is read again. */
static void test_too_big(void **state)
{
	struct got g = { 0 };
	struct lg_ws_sink sink = { on_msg, on_big, &g };
	struct lg_ws_reader *w = lg_ws_reader_new(10, &sink);
	unsigned char buf[512];
	size_t n = 0;

	(void)state;
	n += raw_frame(buf + n, false, LG_WS_TEXT, "0123456", 7, false);
	n += raw_frame(buf + n, true, LG_WS_CONT, "789ab", 5, false);
	n += raw_frame(buf + n, true, LG_WS_TEXT, "ok", 2, false);
	assert_int_equal(lg_ws_feed(w, buf, n), 0);
	assert_int_equal(g.big, 1);
	assert_int_equal(g.n, 1);
	assert_memory_equal(g.msg[0], "ok", 2);
	lg_ws_reader_free(w);
}

/* Not a websocket: refused for good (the relay closes it). */
static void test_broken(void **state)
{
	struct got g = { 0 };
	struct lg_ws_sink sink = { on_msg, on_big, &g };
	struct lg_ws_reader *w;
	unsigned char buf[64];
	size_t n;

	(void)state;
	/* a continuation with no message to continue */
	w = lg_ws_reader_new(100, &sink);
	n = raw_frame(buf, true, LG_WS_CONT, "x", 1, false);
	assert_int_equal(lg_ws_feed(w, buf, n), -EPROTO);
	assert_int_equal(lg_ws_feed(w, "", 0), -EPROTO);
	lg_ws_reader_free(w);
	/* RSV1 (permessage-deflate, which lgrun removed from the upgrade) */
	w = lg_ws_reader_new(100, &sink);
	n = raw_frame(buf, true, LG_WS_TEXT, "x", 1, false);
	buf[0] |= 0x40;
	assert_int_equal(lg_ws_feed(w, buf, n), -EPROTO);
	lg_ws_reader_free(w);
	/* a new message inside another, an unknown opcode, a long ping */
	w = lg_ws_reader_new(100, &sink);
	n = raw_frame(buf, false, LG_WS_TEXT, "a", 1, false);
	n += raw_frame(buf + n, true, LG_WS_TEXT, "b", 1, false);
	assert_int_equal(lg_ws_feed(w, buf, n), -EPROTO);
	lg_ws_reader_free(w);
	w = lg_ws_reader_new(100, &sink);
	n = raw_frame(buf, true, 0x3, "a", 1, false);
	assert_int_equal(lg_ws_feed(w, buf, n), -EPROTO);
	lg_ws_reader_free(w);
	w = lg_ws_reader_new(100, &sink);
	buf[0] = 0x89;
	buf[1] = 126; /* a control frame longer than 125 */
	assert_int_equal(lg_ws_feed(w, buf, 4), -EPROTO);
	lg_ws_reader_free(w);
	assert_int_equal(g.n, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_fragments_bytewise),
		cmocka_unit_test(test_too_big),
		cmocka_unit_test(test_broken),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
