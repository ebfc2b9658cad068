// SPDX-License-Identifier: MIT
/*
 * Output repeat: the model has lost the plot and writes the same thing
 * over and over. The streamed text of the current response (LG_EV_TEXT
 * deltas, appended) is decoded into code points; after each delta, and
 * every CHECK_EVERY code points within a large one, for each chunk size
 * (smallest first): do the last `size` characters occur threshold times,
 * the last chunk included, without overlapping, within the last
 * max(window, (threshold + 1) * size) characters?
 *
 * Where this departs from the reference detector it follows, on purpose:
 *  - The chunk is the newest text (the last `size` characters), not the
 *    first characters of the window: a loop is found as soon as enough of
 *    it is written, whatever prose came before it, instead of once the
 *    loop fills the whole window.
 *  - With a window of 200 for every size, three copies of an 80 or 120
 *    character chunk never fit, so those sizes could never trip and a loop
 *    of a sentence longer than 75 characters was never found. Each size
 *    looks at (threshold + 1) * size characters at least: the default
 *    window is that span for size 50, and sizes 50, 80 and 120 find loops
 *    whose period is up to 75, 120 and 180 characters (threshold 3). A
 *    larger size finds longer loops.
 *  - Characters are code points, not bytes: "é" or "—" is one character,
 *    and a delta may end in the middle of a UTF-8 sequence (the rest comes
 *    with the next delta). Bytes that are not well-formed UTF-8 count as
 *    one U+FFFD each.
 *
 * A long run of one character (a row of dashes, a progress bar) repeats
 * any chunk, so it trips once it is threshold * size long (150 for the
 * defaults): the default action is warn for that reason. So do lines that
 * share a stretch of `size` identical characters and recur closely enough.
 *
 * The text starts over at each LG_EV_TURN (a new response) and after a
 * trip; after a trip the detector stays quiet until the next LG_EV_TURN,
 * so one looping response gives one finding, not one per 150 characters.
 * Deltas of two responses streamed at once would be mixed: events carry
 * no stream id.
 */
#include <stdlib.h>
#include <string.h>

#include "../text.h"
#include "detectors.h"

/* Code points between checks within one large delta. */
#define CHECK_EVERY 16
#define PREVIEW_CHARS 60
#define REPLACEMENT 0xfffdu

struct lg_output_repeat {
	struct lg_output_repeat_cfg cfg;
	size_t nsizes;
	size_t span_max; /* the longest span any size looks at */
	uint32_t *buf; /* the text so far, at most cap code points */
	size_t len, cap;
	bool muted; /* tripped in this response */
	/* a UTF-8 sequence cut by the end of a delta */
	unsigned need; /* continuation bytes still to come */
	uint32_t cp; /* what they complete */
	unsigned char lo, hi; /* the range of the next continuation byte */
};

static size_t span_of(const struct lg_output_repeat *d, unsigned size)
{
	size_t need = (size_t)size * (d->cfg.threshold + 1);

	return need > d->cfg.window ? need : d->cfg.window;
}

struct lg_output_repeat *
lg_output_repeat_new(const struct lg_output_repeat_cfg *cfg)
{
	struct lg_output_repeat *d = calloc(1, sizeof(*d));

	if (!d)
		return NULL;
	d->cfg = *cfg;
	while (d->nsizes < LG_OUTPUT_REPEAT_MAX_SIZES && cfg->sizes[d->nsizes])
		d->nsizes++;
	if (!cfg->enabled || cfg->threshold < 2 || !d->nsizes) {
		d->cfg.enabled = false; /* off: no buffer */
		return d;
	}
	for (size_t i = 0; i < d->nsizes; i++) {
		size_t span = span_of(d, cfg->sizes[i]);

		if (span > d->span_max)
			d->span_max = span;
	}
	/* Trimmed back to span_max when full: one move per 3 * span_max. */
	d->cap = 4 * d->span_max;
	d->buf = malloc(d->cap * sizeof(*d->buf));
	if (!d->buf) {
		free(d);
		return NULL;
	}
	return d;
}

void lg_output_repeat_free(struct lg_output_repeat *d)
{
	if (!d)
		return;
	free(d->buf);
	free(d);
}

size_t lg_output_repeat_len(const struct lg_output_repeat *d)
{
	return d->len;
}

static void reset(struct lg_output_repeat *d)
{
	d->len = 0;
	d->need = 0;
}

static void push(struct lg_output_repeat *d, uint32_t c)
{
	if (d->len == d->cap) {
		memmove(d->buf, d->buf + d->len - d->span_max,
			d->span_max * sizeof(*d->buf));
		d->len = d->span_max;
	}
	d->buf[d->len++] = c;
}

/*
 * One byte of UTF-8. A sequence broken by an unexpected byte gives U+FFFD,
 * and that byte starts over.
 */
static void decode(struct lg_output_repeat *d, unsigned char b)
{
	if (d->need) {
		if (b >= d->lo && b <= d->hi) {
			d->cp = (d->cp << 6) | (b & 0x3fu);
			d->lo = 0x80;
			d->hi = 0xbf;
			if (--d->need == 0)
				push(d, d->cp);
			return;
		}
		d->need = 0;
		push(d, REPLACEMENT);
		/* b starts something new */
	}
	if (b < 0x80) {
		push(d, b);
	} else if (b >= 0xc2 && b <= 0xdf) {
		d->need = 1;
		d->cp = b & 0x1fu;
		d->lo = 0x80;
		d->hi = 0xbf;
	} else if (b >= 0xe0 && b <= 0xef) {
		d->need = 2;
		d->cp = b & 0x0fu;
		/* no overlongs (e0 80..9f), no surrogates (ed a0..bf) */
		d->lo = b == 0xe0 ? 0xa0 : 0x80;
		d->hi = b == 0xed ? 0x9f : 0xbf;
	} else if (b >= 0xf0 && b <= 0xf4) {
		d->need = 3;
		d->cp = b & 0x07u;
		/* no overlongs (f0 80..8f), nothing past U+10FFFF */
		d->lo = b == 0xf0 ? 0x90 : 0x80;
		d->hi = b == 0xf4 ? 0x8f : 0xbf;
	} else {
		push(d, REPLACEMENT);
	}
}

struct hit {
	unsigned size;
	unsigned count;
	size_t span; /* characters looked at */
};

/*
 * The last size code points, counted back to front without overlapping
 * within the span: the last chunk is the first occurrence; after a match
 * the scan skips the chunk, else it steps back one character.
 */
static unsigned count_back(const struct lg_output_repeat *d, unsigned size,
			   size_t span, unsigned stop_at)
{
	const uint32_t *pat = d->buf + d->len - size;
	const uint32_t last = pat[size - 1];
	size_t start = d->len > span ? d->len - span : 0;
	size_t pos = d->len - size; /* the occurrence found last */
	unsigned count = 1;

	while (pos >= start + size) {
		size_t j = pos - size;

		for (;;) {
			/* both ends first: prose repeats single letters a lot */
			if (d->buf[j] == pat[0] &&
			    d->buf[j + size - 1] == last &&
			    memcmp(d->buf + j, pat, size * sizeof(*pat)) == 0)
				break;
			if (j == start)
				return count;
			j--;
		}
		count++;
		if (stop_at && count >= stop_at)
			return count;
		pos = j;
	}
	return count;
}

static bool check(const struct lg_output_repeat *d, struct hit *h)
{
	for (size_t i = 0; i < d->nsizes; i++) {
		unsigned size = d->cfg.sizes[i];
		size_t span = span_of(d, size);
		size_t have = d->len < span ? d->len : span;

		if (have < (size_t)size * d->cfg.threshold)
			continue;
		if (count_back(d, size, span, d->cfg.threshold) <
		    d->cfg.threshold)
			continue;
		h->size = size;
		h->span = have;
		h->count = count_back(d, size, span, 0);
		return true;
	}
	return false;
}

static size_t put_utf8(char *o, uint32_t c)
{
	if (c == 0) /* would end the string: a space, like other controls */
		c = ' ';
	if (c < 0x80) {
		o[0] = (char)c;
		return 1;
	}
	if (c < 0x800) {
		o[0] = (char)(0xc0 | (c >> 6));
		o[1] = (char)(0x80 | (c & 0x3f));
		return 2;
	}
	if (c < 0x10000) {
		o[0] = (char)(0xe0 | (c >> 12));
		o[1] = (char)(0x80 | ((c >> 6) & 0x3f));
		o[2] = (char)(0x80 | (c & 0x3f));
		return 3;
	}
	o[0] = (char)(0xf0 | (c >> 18));
	o[1] = (char)(0x80 | ((c >> 12) & 0x3f));
	o[2] = (char)(0x80 | ((c >> 6) & 0x3f));
	o[3] = (char)(0x80 | (c & 0x3f));
	return 4;
}

static void trip(struct lg_output_repeat *d, const struct hit *h,
		 const struct lg_event *ev, struct lg_findings *out)
{
	/* The chunk's first PREVIEW_CHARS + 1 characters: enough for "…". */
	char raw[(PREVIEW_CHARS + 1) * 4 + 1];
	char preview[PREVIEW_CHARS * 4 + 4];
	const uint32_t *c = d->buf + d->len - h->size;
	size_t o = 0;

	for (unsigned i = 0; i < h->size && i <= PREVIEW_CHARS; i++)
		o += put_utf8(raw + o, c[i]);
	raw[o] = '\0';
	lg_preview(raw, preview, sizeof(preview), PREVIEW_CHARS);
	lg_findings_add(
		out, d->cfg.action, "output_repeat", "output_repeat",
		"output_repeat, %s repeats \"%s\" (%u characters) %u times in its last %zu characters",
		ev->source == LG_SRC_OUTPUT ? "the command's output" :
					      "the model's text",
		preview, h->size, h->count, h->span);
}

enum lg_verdict lg_output_repeat_feed(struct lg_output_repeat *d,
				      const struct lg_event *ev,
				      const struct lg_guard_env *env,
				      struct lg_findings *out)
{
	const unsigned char *p = (const unsigned char *)ev->text;
	size_t since = 0; /* code points since the last check */
	struct hit h;

	(void)env;
	if (!d->cfg.enabled)
		return LG_ALLOW;
	if (ev->kind == LG_EV_TURN) {
		reset(d);
		d->muted = false;
		return LG_ALLOW;
	}
	if (ev->kind != LG_EV_TEXT || d->muted || !p || !ev->text_len)
		return LG_ALLOW;
	for (size_t i = 0; i < ev->text_len; i++) {
		size_t before = d->len;

		decode(d, p[i]);
		/* a trim makes len smaller: count what was added either way */
		if (d->len != before)
			since++;
		if (since < CHECK_EVERY && i + 1 < ev->text_len)
			continue;
		if (!since)
			continue;
		since = 0;
		if (check(d, &h)) {
			trip(d, &h, ev, out);
			reset(d);
			d->muted = true;
			return d->cfg.action;
		}
	}
	return LG_ALLOW;
}
