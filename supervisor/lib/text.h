/* SPDX-License-Identifier: MIT */
/*
 * Small pure text helpers shared by the guard and canon.c, with no
 * dependency beyond libc: a stable 64-bit digest and UTF-8-safe previews.
 */
#ifndef LG_TEXT_H
#define LG_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * 64-bit FNV-1a over bytes: the same value on every run, machine and
 * version, so digests can be compared across processes (shim, proxy,
 * supervisor). Not a cryptographic hash.
 */
struct lg_digest {
	uint64_t h;
};

#define LG_DIGEST_HEX 17 /* 16 hex digits and the NUL */

void lg_digest_init(struct lg_digest *d);
void lg_digest_update(struct lg_digest *d, const void *p, size_t n);
uint64_t lg_digest_final(const struct lg_digest *d);
/* One shot: the same value as init, update(p, n), final. */
uint64_t lg_digest(const void *p, size_t n);
/* 16 lower-case hex digits, e.g. for LG_EV_TOOL_DONE's result_digest. */
void lg_digest_hex(uint64_t h, char out[LG_DIGEST_HEX]);

/*
 * A one-line, valid UTF-8 preview of s (NULL reads as "") for summaries:
 * control characters become spaces and bytes that are not well-formed
 * UTF-8 become '?'. When s has more than max_chars code points (0: no
 * limit), or does not fit in size bytes with its NUL, it is cut at a code
 * point boundary and ends with "…" (which counts as one of max_chars;
 * left out only when size < 4 leaves no room for it). Returns the length
 * written, or -ENOSPC when size is 0.
 */
int lg_preview(const char *s, char *out, size_t size, size_t max_chars);

/*
 * Length of the well-formed UTF-8 sequence at p (1 to 4), or 0 when p
 * does not start one (a stray continuation byte, an overlong form, a
 * surrogate, a truncated sequence, past U+10FFFF). *p must not be NUL.
 */
size_t lg_utf8_seq_len(const unsigned char *p);

/*
 * Looks model up in a price table "GLOB=IN/OUT, GLOB=IN/OUT" (USD per
 * million input / output tokens; the first glob that matches wins, e.g.
 * "claude-sonnet-*=3/15, gpt-5*=1.25/10"). Returns 1 with the prices set,
 * 0 when no entry matches, -EINVAL when the table is malformed (then
 * *bad points at the entry).
 */
int lg_price_lookup(const char *table, const char *model, double *in,
		    double *out, const char **bad);

/* "512 B", "3.1 KB", "3.1 MB", "1.2 GB" (powers of 1000). */
void lg_human_bytes(uint64_t n, char *out, size_t size);

/*
 * snprintf(dst, size, "%s", src) without printf's machinery (a notified
 * removal made a dozen): at most size - 1 bytes, always terminated (size
 * > 0). The length copied.
 */
size_t lg_strtrunc(char *dst, size_t size, const char *src);
/* v in decimal at out (room for 21 bytes), terminated: its length. */
size_t lg_utoa(char *out, unsigned long long v);

/*
 * A text's distinctive lines, to find it again in another file (issue 41:
 * an emptied file whose body lives on in one the session wrote). A line is
 * distinctive when, trimmed of blanks at both ends, it has at least
 * LG_LINES_MIN bytes; the sample is up to LG_LINES_SAMPLE of their
 * digests (distinct), spread evenly over the text.
 */
#define LG_LINES_SAMPLE 8
#define LG_LINES_MIN 12
struct lg_lines_sample {
	uint64_t h[LG_LINES_SAMPLE];
	unsigned n;
};
void lg_lines_sample(const char *buf, size_t len, struct lg_lines_sample *out);
/* How many of the sample's lines buf holds (trimmed, anywhere in it). */
unsigned lg_lines_found(const struct lg_lines_sample *s, const char *buf,
			size_t len);
/* Enough of them to say the text lives on there: 3 of 4, 6 of 8. */
bool lg_lines_live_on(const struct lg_lines_sample *s, unsigned found);

#endif
