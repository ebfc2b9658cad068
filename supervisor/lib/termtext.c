// SPDX-License-Identifier: MIT
#include <stdio.h>
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

size_t lg_utf8_len(const unsigned char *s, size_t n, unsigned *cp)
{
	unsigned c, min;
	size_t len;

	if (!n)
		return 0;
	c = s[0];
	if (c < 0x80) {
		len = 1;
		min = 0;
	} else if ((c & 0xe0) == 0xc0) {
		len = 2;
		min = 0x80;
		c &= 0x1f;
	} else if ((c & 0xf0) == 0xe0) {
		len = 3;
		min = 0x800;
		c &= 0x0f;
	} else if ((c & 0xf8) == 0xf0) {
		len = 4;
		min = 0x10000;
		c &= 0x07;
	} else {
		return 0;
	}
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = (c << 6) | (s[i] & 0x3f);
	}
	if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	if (cp)
		*cp = c;
	return len;
}

size_t lg_term_escape(char *out, size_t size, const char *in, size_t n)
{
	const unsigned char *s = (const unsigned char *)in;
	size_t o = 0, i = 0;

	if (!size)
		return 0;
	while (i < n) {
		char e[12];
		const char *put = e;
		unsigned cp = 0;
		size_t len = lg_utf8_len(s + i, n - i, &cp), k;

		if (!len) {
			snprintf(e, sizeof(e), "\\x%02x", s[i]);
			len = 1;
		} else if (cp == '\n') {
			put = "\\n";
		} else if (cp == '\r') {
			put = "\\r";
		} else if ((cp < 0x20 && cp != '\t') || cp == 0x7f) {
			snprintf(e, sizeof(e), "\\x%02x", cp);
		} else if (cp >= 0x80 && cp < 0xa0) {
			snprintf(e, sizeof(e), "\\u%04x", cp);
		} else {
			put = NULL; /* as it is */
		}
		k = put ? strlen(put) : len;
		if (o + k >= size)
			break;
		memcpy(out + o, put ? put : (const char *)s + i, k);
		o += k;
		i += len;
	}
	out[o] = '\0';
	return o;
}
