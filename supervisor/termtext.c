// SPDX-License-Identifier: MIT
#include <string.h>

#include "termtext.h"

static void end_line(struct lg_termtext *t, lg_termtext_emit emit, void *ctx)
{
	if (t->len < sizeof(t->line))
		t->line[t->len++] = '\n';
	emit(ctx, t->line, t->len);
	t->len = 0;
}

void lg_termtext_feed(struct lg_termtext *t, const char *p, size_t n,
		      lg_termtext_emit emit, void *ctx)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)p[i];

		if (t->cr) {
			t->cr = false;
			if (c == '\n') {
				end_line(t, emit, ctx);
				continue;
			}
			t->len = 0; /* a redraw: the line starts over */
		}
		switch (t->esc) {
		case 1: /* after ESC */
			if (c == '[')
				t->esc = 2;
			else if (c == ']' || c == 'P' || c == '_' || c == '^')
				t->esc = 3;
			else
				t->esc = 0; /* a two-byte sequence */
			continue;
		case 2: /* CSI: parameters, then a final byte 0x40-0x7e */
			if (c >= 0x40 && c <= 0x7e)
				t->esc = 0;
			continue;
		case 3: /* a string: ends with BEL or ESC \ */
			if (c == 0x07)
				t->esc = 0;
			else if (c == 0x1b)
				t->esc = 4;
			continue;
		case 4:
			t->esc = c == '\\' ? 0 : 3;
			continue;
		default:
			break;
		}
		if (c == 0x1b) {
			t->esc = 1;
		} else if (c == '\r') {
			t->cr = true;
		} else if (c == '\n') {
			end_line(t, emit, ctx);
		} else if (c == '\b') {
			if (t->len)
				t->len--;
		} else if (c >= 0x20 || c == '\t') {
			if (t->len == sizeof(t->line) - 1)
				end_line(t, emit, ctx); /* a very long line */
			t->line[t->len++] = (char)c;
		}
	}
}

void lg_termtext_flush(struct lg_termtext *t, lg_termtext_emit emit, void *ctx)
{
	if (t->len)
		end_line(t, emit, ctx);
	t->cr = false;
	t->esc = 0;
}
