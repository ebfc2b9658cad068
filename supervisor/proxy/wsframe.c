// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <wslay/wslay.h>

#include "wsframe.h"

struct lg_ws_reader {
	wslay_frame_context_ptr ctx;
	struct lg_ws_sink sink;
	size_t max;
	const unsigned char *in; /* what lg_ws_feed was given, not yet read */
	size_t in_len;
	bool broken;
	/* the frame being read */
	bool in_frame;
	uint64_t frame_len, frame_got;
	unsigned frame_op;
	bool frame_fin;
	char ctl[125]; /* a control frame's payload */
	size_t ctl_len;
	/* the data message being read */
	unsigned msg_op; /* 0: none */
	char *msg;
	size_t msg_len, msg_cap;
	bool msg_big;
	unsigned long long messages;
};

static ssize_t pull(uint8_t *buf, size_t len, int flags, void *ud)
{
	struct lg_ws_reader *w = ud;
	size_t n = w->in_len < len ? w->in_len : len;

	(void)flags;
	if (!n)
		return -1; /* wslay: WSLAY_ERR_WANT_READ */
	memcpy(buf, w->in, n);
	w->in += n;
	w->in_len -= n;
	return (ssize_t)n;
}

static ssize_t no_send(const uint8_t *p, size_t n, int flags, void *ud)
{
	(void)p;
	(void)n;
	(void)flags;
	(void)ud;
	return -1;
}

static int mask_key(uint8_t *buf, size_t len, void *ud)
{
	(void)ud;
	return getrandom(buf, len, 0) == (ssize_t)len ? 0 : -1;
}

struct lg_ws_reader *lg_ws_reader_new(size_t max, const struct lg_ws_sink *sink)
{
	struct wslay_frame_callbacks cb = { no_send, pull, mask_key };
	struct lg_ws_reader *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	if (wslay_frame_context_init(&w->ctx, &cb, w) != 0) {
		free(w);
		return NULL;
	}
	w->sink = *sink;
	w->max = max;
	return w;
}

void lg_ws_reader_free(struct lg_ws_reader *w)
{
	if (!w)
		return;
	wslay_frame_context_free(w->ctx);
	free(w->msg);
	free(w);
}

unsigned long long lg_ws_messages(const struct lg_ws_reader *w)
{
	return w->messages;
}

static void msg_add(struct lg_ws_reader *w, const uint8_t *p, size_t n)
{
	if (w->msg_big || !n)
		return;
	if (w->msg_len + n > w->max) {
		w->msg_big = true;
		w->msg_len = 0;
		return;
	}
	if (w->msg_len + n > w->msg_cap) {
		size_t cap = (w->msg_len + n) * 2;
		char *m;

		if (cap > w->max)
			cap = w->max;
		m = realloc(w->msg, cap);
		if (!m) {
			w->msg_big = true; /* not kept: said as too big */
			w->msg_len = 0;
			return;
		}
		w->msg = m;
		w->msg_cap = cap;
	}
	memcpy(w->msg + w->msg_len, p, n);
	w->msg_len += n;
}

/* A frame's start: 0, or -EPROTO for a frame out of place. */
static int frame_start(struct lg_ws_reader *w, const struct wslay_frame_iocb *f)
{
	w->in_frame = true;
	w->frame_len = f->payload_length;
	w->frame_got = 0;
	w->frame_op = f->opcode;
	w->frame_fin = f->fin;
	w->ctl_len = 0;
	if (f->rsv) /* an extension we removed from the upgrade */
		return -EPROTO;
	if (wslay_is_ctrl_frame(f->opcode))
		return f->opcode <= LG_WS_PONG ? 0 : -EPROTO;
	if (f->opcode == LG_WS_CONT)
		return w->msg_op ? 0 : -EPROTO;
	if (f->opcode != LG_WS_TEXT && f->opcode != LG_WS_BINARY)
		return -EPROTO;
	if (w->msg_op) /* a new message inside another */
		return -EPROTO;
	w->msg_op = f->opcode;
	w->msg_len = 0;
	w->msg_big = false;
	return 0;
}

static void frame_end(struct lg_ws_reader *w)
{
	w->in_frame = false;
	if (wslay_is_ctrl_frame(w->frame_op)) {
		w->messages++;
		w->sink.message(w->sink.ctx, w->frame_op, w->ctl, w->ctl_len);
		return;
	}
	if (!w->frame_fin)
		return;
	w->messages++;
	if (w->msg_big) {
		if (w->sink.too_big)
			w->sink.too_big(w->sink.ctx, w->msg_op);
	} else {
		w->sink.message(w->sink.ctx, w->msg_op, w->msg ? w->msg : "",
				w->msg_len);
	}
	w->msg_op = 0;
	w->msg_len = 0;
	w->msg_big = false;
}

int lg_ws_feed(struct lg_ws_reader *w, const void *p, size_t n)
{
	if (w->broken)
		return -EPROTO;
	w->in = p;
	w->in_len = n;
	for (;;) {
		struct wslay_frame_iocb f;
		ssize_t r = wslay_frame_recv(w->ctx, &f);

		if (r == WSLAY_ERR_WANT_READ)
			break;
		if (r < 0 || (!w->in_frame && frame_start(w, &f) < 0)) {
			w->broken = true;
			return -EPROTO;
		}
		if (wslay_is_ctrl_frame(w->frame_op)) {
			if (w->ctl_len + f.data_length <= sizeof(w->ctl)) {
				memcpy(w->ctl + w->ctl_len, f.data,
				       f.data_length);
				w->ctl_len += f.data_length;
			}
		} else {
			msg_add(w, f.data, f.data_length);
		}
		w->frame_got += f.data_length;
		if (w->frame_got == w->frame_len)
			frame_end(w);
	}
	w->in = NULL;
	w->in_len = 0;
	return 0;
}

struct out {
	char *p;
	size_t len, cap;
};

static ssize_t push(const uint8_t *p, size_t n, int flags, void *ud)
{
	struct out *o = ud;

	(void)flags;
	if (o->len + n > o->cap) {
		size_t cap = (o->len + n) * 2;
		char *q = realloc(o->p, cap);

		if (!q)
			return -1;
		o->p = q;
		o->cap = cap;
	}
	memcpy(o->p + o->len, p, n);
	o->len += n;
	return (ssize_t)n;
}

static ssize_t no_recv(uint8_t *buf, size_t len, int flags, void *ud)
{
	(void)buf;
	(void)len;
	(void)flags;
	(void)ud;
	return -1;
}

long lg_ws_frame(unsigned opcode, bool mask, const void *p, size_t n,
		 char **out)
{
	struct wslay_frame_callbacks cb = { push, no_recv, mask_key };
	struct out o = { malloc(n + 14), 0, n + 14 };
	struct wslay_frame_iocb f = { .fin = 1,
				      .opcode = (uint8_t)opcode,
				      .payload_length = n,
				      .mask = mask,
				      .data = p,
				      .data_length = n };
	wslay_frame_context_ptr ctx;
	size_t sent = 0;

	*out = NULL;
	if (!o.p || wslay_frame_context_init(&ctx, &cb, &o) != 0) {
		free(o.p);
		return -ENOMEM;
	}
	do {
		ssize_t r = wslay_frame_send(ctx, &f);

		if (r < 0) {
			wslay_frame_context_free(ctx);
			free(o.p);
			return r == WSLAY_ERR_INVALID_ARGUMENT ? -EINVAL :
								 -ENOMEM;
		}
		sent += (size_t)r;
		f.data = (const uint8_t *)p + sent;
		f.data_length = n - sent;
	} while (sent < n);
	wslay_frame_context_free(ctx);
	*out = o.p;
	return (long)o.len;
}
