/* SPDX-License-Identifier: MIT */
/*
 * Websocket frames (RFC 6455) read and written with wslay's frame API, for
 * the LLM proxy's reading of a websocket it relays (Codex's Responses
 * protocol, issue 13). Pure: bytes in, messages out, no I/O.
 *
 * A reader is fed the bytes of one direction as they come; it reassembles
 * the data messages (text or binary, fragments joined, payload unmasked)
 * and reports each complete one, and each control frame (close, ping,
 * pong). A message longer than max is not kept: it is reported once as too
 * big (a reader does not stop for it: the next message is read again).
 * Bytes that break the protocol stop the reader for good (-EPROTO); the
 * relay then goes on unread.
 */
#ifndef LG_WSFRAME_H
#define LG_WSFRAME_H

#include <stdbool.h>
#include <stddef.h>

enum {
	LG_WS_CONT = 0x0,
	LG_WS_TEXT = 0x1,
	LG_WS_BINARY = 0x2,
	LG_WS_CLOSE = 0x8,
	LG_WS_PING = 0x9,
	LG_WS_PONG = 0xa,
};

struct lg_ws_sink {
	/* a complete data message, or a control frame */
	void (*message)(void *ctx, unsigned opcode, const char *p, size_t n);
	/* a data message longer than max: its bytes were not kept */
	void (*too_big)(void *ctx, unsigned opcode);
	void *ctx;
};

struct lg_ws_reader;

struct lg_ws_reader *lg_ws_reader_new(size_t max,
				      const struct lg_ws_sink *sink);
/* 0, or -EPROTO once the bytes are not a websocket (then always). */
int lg_ws_feed(struct lg_ws_reader *w, const void *p, size_t n);
/* How many complete messages and control frames were reported. */
unsigned long long lg_ws_messages(const struct lg_ws_reader *w);
void lg_ws_reader_free(struct lg_ws_reader *w);

/*
 * One whole frame (fin set) of opcode carrying p: masked as a client
 * sends it when mask is set. A malloc'ed buffer in *out; its length, or a
 * negative errno.
 */
long lg_ws_frame(unsigned opcode, bool mask, const void *p, size_t n,
		 char **out);

#endif
