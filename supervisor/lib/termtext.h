/* SPDX-License-Identifier: MIT */
/*
 * Terminal output as text for the repeated-output detector: ANSI escape
 * sequences removed, a carriage return that is not a line end treated as
 * a redraw (the line starts over), backspaces applied, and only complete
 * lines handed on. Pure; bytes may arrive cut anywhere.
 */
#ifndef LG_TERMTEXT_H
#define LG_TERMTEXT_H

#include <stdbool.h>
#include <stddef.h>

#define LG_TERMTEXT_LINE 4096

struct lg_termtext {
	char line[LG_TERMTEXT_LINE];
	size_t len;
	int esc; /* 0 text, 1 after ESC, 2 CSI, 3 OSC/DCS string, 4 ESC in it */
	bool cr; /* a carriage return waits for its next byte */
};

typedef void (*lg_termtext_emit)(void *ctx, const char *line, size_t n);

void lg_termtext_feed(struct lg_termtext *t, const char *p, size_t n,
		      lg_termtext_emit emit, void *ctx);
/* Starts over mid-stream, dropping a partial line (a skipped stretch). */
static inline void lg_termtext_reset(struct lg_termtext *t)
{
	t->len = 0;
	t->esc = 0;
	t->cr = false;
}
/* The output ended: hands on what is left of the last line. */
void lg_termtext_flush(struct lg_termtext *t, lg_termtext_emit emit, void *ctx);

/*
 * The length of the valid UTF-8 sequence at s (n bytes available): 1 to 4,
 * or 0 when the bytes there are not one (a stray continuation byte, an
 * overlong form, a surrogate, past U+10FFFF, cut short). *cp: the code
 * point, when not NULL.
 */
size_t lg_utf8_len(const unsigned char *s, size_t n, unsigned *cp);

/*
 * Copies n bytes of in to out (size bytes, NUL-terminated) safe for a
 * terminal: control characters (C0, DEL, C1) and bytes that are not UTF-8
 * become visible escapes ("\n", "\r", "\t" stays a tab, "\x1b",
 * "\u009b"), so text cannot start a line or drive the terminal. Cut at a
 * whole character when out is full. Returns the length written.
 */
size_t lg_term_escape(char *out, size_t size, const char *in, size_t n);

#endif
