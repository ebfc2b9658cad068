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
 * With action deny or kill, the session's first steer_at such responses
 * only warn (the model is told to stop repeating, seed 004), and the action
 * applies from the next one on; the command's output, never unmuted, gets
 * the action at once.
 * Deltas of two responses streamed at once would be mixed: events carry
 * no stream id.
 */
#include <stdlib.h>
#include <string.h>

#include "lib/text.h"
#include "detectors.h"

/* Code points between checks within one large delta. */
#define CHECK_EVERY 16
/*
 * Where each chunk of each size occurs: a rolling hash of every window of
 * `size` code points, chained by bucket (as LZ77 finds matches), so the
 * backward count visits only the positions that may match instead of the
 * whole span. Rebuilt when the buffer is trimmed.
 */
#define NBUCKETS 1024 /* a power of 2 */
#define HASH_MUL 0x100000001b3ULL
#define PREVIEW_CHARS 60
#define REPLACEMENT 0xfffdu

struct lg_output_repeat {
	struct lg_output_repeat_cfg cfg;
	size_t nsizes;
	size_t span_max; /* the longest span any size looks at */
	uint32_t *buf; /* the text so far, at most cap code points */
	size_t len, cap;
	bool muted; /* tripped in this response */
	uint64_t fired; /* responses that tripped, in the session */
	/* a UTF-8 sequence cut by the end of a delta */
	unsigned need; /* continuation bytes still to come */
	uint32_t cp; /* what they complete */
	unsigned char lo, hi; /* the range of the next continuation byte */
	/* per size: the hash of the window starting at each position, the
	 * previous start in the same bucket (-1: none), the buckets' latest */
	uint64_t *hash[LG_OUTPUT_REPEAT_MAX_SIZES];
	int32_t *prev[LG_OUTPUT_REPEAT_MAX_SIZES];
	int32_t *head[LG_OUTPUT_REPEAT_MAX_SIZES];
	uint64_t mulpow[LG_OUTPUT_REPEAT_MAX_SIZES]; /* HASH_MUL^size */
	uint64_t roll[LG_OUTPUT_REPEAT_MAX_SIZES]; /* the last window's */
};

static size_t span_of(const struct lg_output_repeat *d, unsigned size)
{
	size_t need = (size_t)size * (d->cfg.threshold + 1);

	return need > d->cfg.window ? need : d->cfg.window;
}

void lg_output_repeat_free(struct lg_output_repeat *d);

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
	for (size_t i = 0; i < d->nsizes; i++) {
		d->hash[i] = malloc(d->cap * sizeof(*d->hash[i]));
		d->prev[i] = malloc(d->cap * sizeof(*d->prev[i]));
		d->head[i] = malloc(NBUCKETS * sizeof(*d->head[i]));
		if (!d->hash[i] || !d->prev[i] || !d->head[i]) {
			lg_output_repeat_free(d);
			return NULL;
		}
		memset(d->head[i], 0xff, NBUCKETS * sizeof(*d->head[i]));
		d->mulpow[i] = 1;
		for (unsigned k = 0; k < cfg->sizes[i]; k++)
			d->mulpow[i] *= HASH_MUL;
	}
	return d;
}

void lg_output_repeat_free(struct lg_output_repeat *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < LG_OUTPUT_REPEAT_MAX_SIZES; i++) {
		free(d->hash[i]);
		free(d->prev[i]);
		free(d->head[i]);
	}
	free(d->buf);
	free(d);
}

size_t lg_output_repeat_len(const struct lg_output_repeat *d)
{
	return d->len;
}

/* Adds the window of size index i that ends with the last code point. */
static void index_last(struct lg_output_repeat *d, size_t i)
{
	unsigned size = d->cfg.sizes[i];
	size_t j;
	int32_t *h;

	if (d->len < size)
		return;
	j = d->len - size;
	d->hash[i][j] = d->roll[i];
	h = &d->head[i][d->roll[i] & (NBUCKETS - 1)];
	d->prev[i][j] = *h;
	*h = (int32_t)j;
}

/* The rolling hash of every size takes in code point c (at len - 1). */
static void index_push(struct lg_output_repeat *d, uint32_t c)
{
	for (size_t i = 0; i < d->nsizes; i++) {
		unsigned size = d->cfg.sizes[i];

		d->roll[i] = d->roll[i] * HASH_MUL + c + 1;
		if (d->len > size) /* the code point that left the window */
			d->roll[i] -= (d->buf[d->len - 1 - size] + 1ULL) *
				      d->mulpow[i];
		index_last(d, i);
	}
}

static void index_clear(struct lg_output_repeat *d)
{
	for (size_t i = 0; i < d->nsizes; i++) {
		memset(d->head[i], 0xff, NBUCKETS * sizeof(*d->head[i]));
		d->roll[i] = 0;
	}
}

static void reset(struct lg_output_repeat *d)
{
	d->len = 0;
	d->need = 0;
	if (d->nsizes && d->head[0])
		index_clear(d);
}

static void push(struct lg_output_repeat *d, uint32_t c)
{
	if (d->len == d->cap) {
		size_t keep = d->span_max;

		memmove(d->buf, d->buf + d->len - keep, keep * sizeof(*d->buf));
		/* positions moved: index what is kept again */
		index_clear(d);
		for (d->len = 0; d->len < keep;) {
			d->len++;
			index_push(d, d->buf[d->len - 1]);
		}
	}
	d->buf[d->len++] = c;
	index_push(d, c);
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
static unsigned count_back(const struct lg_output_repeat *d, size_t i,
			   size_t span, unsigned stop_at)
{
	unsigned size = d->cfg.sizes[i];
	const uint32_t *pat = d->buf + d->len - size;
	size_t start = d->len > span ? d->len - span : 0;
	size_t pos = d->len - size; /* the occurrence found last */
	uint64_t want = d->hash[i][pos];
	unsigned count = 1;

	/*
	 * The chain visits earlier windows of the same bucket, latest first
	 * (always earlier: a link that is not would be a bug, not a loop).
	 */
	for (int32_t j = d->prev[i][pos], was = (int32_t)pos;
	     j >= 0 && j < was && (size_t)j >= start;
	     was = j, j = d->prev[i][j]) {
		if ((size_t)j + size > pos || d->hash[i][j] != want ||
		    memcmp(d->buf + j, pat, size * sizeof(*pat)) != 0)
			continue; /* overlaps the last found, or no match */
		count++;
		if (stop_at && count >= stop_at)
			return count;
		pos = (size_t)j;
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
		if (count_back(d, i, span, d->cfg.threshold) < d->cfg.threshold)
			continue;
		h->size = size;
		h->span = have;
		h->count = count_back(d, i, span, 0);
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

static enum lg_verdict trip(struct lg_output_repeat *d, const struct hit *h,
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
	/*
	 * The command's output (--watch-output) has no responses: it fires
	 * once and stays quiet, so a ladder would never reach its action.
	 */
	return lg_findings_fire(
		out, d->cfg.action,
		ev->source == LG_SRC_OUTPUT ? 0 : d->cfg.steer_at, ++d->fired,
		"output_repeat", "output_repeat",
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
			enum lg_verdict v = trip(d, &h, ev, out);

			reset(d);
			d->muted = true;
			return v;
		}
	}
	return LG_ALLOW;
}

LG_DETECTOR_DEFINE(output_repeat);
