// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdlib.h>
#include <fnmatch.h>
#include <stdio.h>
#include <string.h>

#include "text.h"

#define FNV64_OFFSET 0xcbf29ce484222325ULL
#define FNV64_PRIME 0x100000001b3ULL

void lg_digest_init(struct lg_digest *d)
{
	d->h = FNV64_OFFSET;
}

void lg_digest_update(struct lg_digest *d, const void *p, size_t n)
{
	const unsigned char *b = p;
	uint64_t h = d->h;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * FNV64_PRIME;
	d->h = h;
}

uint64_t lg_digest_final(const struct lg_digest *d)
{
	return d->h;
}

uint64_t lg_digest(const void *p, size_t n)
{
	struct lg_digest d;

	lg_digest_init(&d);
	lg_digest_update(&d, p, n);
	return lg_digest_final(&d);
}

void lg_digest_hex(uint64_t h, char out[LG_DIGEST_HEX])
{
	static const char hex[] = "0123456789abcdef";

	for (int i = 15; i >= 0; i--) {
		out[i] = hex[h & 0xf];
		h >>= 4;
	}
	out[16] = '\0';
}

static int is_cont(unsigned char c)
{
	return (c & 0xc0) == 0x80;
}

size_t lg_utf8_seq_len(const unsigned char *p)
{
	unsigned char c = p[0];

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		return is_cont(p[1]) ? 2 : 0;
	if (c >= 0xe0 && c <= 0xef) {
		/* no overlongs (e0 80..9f), no surrogates (ed a0..bf) */
		if ((c == 0xe0 && p[1] < 0xa0) || (c == 0xed && p[1] > 0x9f))
			return 0;
		return is_cont(p[1]) && is_cont(p[2]) ? 3 : 0;
	}
	if (c >= 0xf0 && c <= 0xf4) {
		/* no overlongs (f0 80..8f), nothing past U+10FFFF */
		if ((c == 0xf0 && p[1] < 0x90) || (c == 0xf4 && p[1] > 0x8f))
			return 0;
		return is_cont(p[1]) && is_cont(p[2]) && is_cont(p[3]) ? 4 : 0;
	}
	return 0;
}

int lg_preview(const char *s, char *out, size_t size, size_t max_chars)
{
	static const char ellipsis[] = "\xe2\x80\xa6"; /* U+2026 */
	const size_t el = sizeof(ellipsis) - 1;
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	size_t room, o = 0, n = 0, cut = 0;

	if (!size)
		return -ENOSPC;
	room = size - 1;
	while (*p) {
		size_t len = lg_utf8_seq_len(p);
		unsigned char one;
		const unsigned char *src = p;
		size_t adv = len;

		if (!len) {
			one = '?';
			src = &one;
			len = adv = 1;
		} else if (len == 1 && (*p < 0x20 || *p == 0x7f)) {
			one = ' ';
			src = &one;
		}
		if ((max_chars && n + 1 > max_chars) || o + len > room) {
			/* s does not fit whole: cut back to leave room for … */
			if (room >= el) {
				o = cut;
				memcpy(out + o, ellipsis, el);
				o += el;
			}
			break;
		}
		memcpy(out + o, src, len);
		o += len;
		n++;
		p += adv;
		if ((!max_chars || n + 1 <= max_chars) && o + el <= room)
			cut = o;
	}
	out[o] = '\0';
	return (int)o;
}

int lg_price_lookup(const char *table, const char *model, double *in,
		    double *out, const char **bad)
{
	const char *p = table ? table : "";

	while (*p) {
		const char *entry, *eq;
		char glob[256], *end;
		double pi, po;
		size_t n, gl;

		p += strspn(p, ", \t");
		if (!*p)
			break;
		entry = p;
		n = strcspn(p, ",");
		eq = memchr(p, '=', n);
		if (!eq)
			goto bad;
		gl = (size_t)(eq - p);
		while (gl && (p[gl - 1] == ' ' || p[gl - 1] == '\t'))
			gl--;
		if (!gl || gl >= sizeof(glob))
			goto bad;
		memcpy(glob, p, gl);
		glob[gl] = '\0';
		pi = strtod(eq + 1, &end);
		if (end == eq + 1 || *end != '/' || pi < 0)
			goto bad;
		po = strtod(end + 1, &end);
		end += strspn(end, " \t");
		if (po < 0 || (*end && *end != ','))
			goto bad;
		if (model && fnmatch(glob, model, 0) == 0) {
			*in = pi;
			*out = po;
			return 1;
		}
		p = entry + n;
		continue;
bad:
		if (bad)
			*bad = entry;
		return -EINVAL;
	}
	return 0;
}

void lg_human_bytes(uint64_t n, char *out, size_t size)
{
	static const char *const unit[] = { "KB", "MB", "GB", "TB", "PB" };
	double v = (double)n;
	size_t u = 0;

	if (n < 1000) {
		snprintf(out, size, "%llu B", (unsigned long long)n);
		return;
	}
	v /= 1000;
	while (v >= 999.95 && u < 4) {
		v /= 1000;
		u++;
	}
	snprintf(out, size, "%.1f %s", v, unit[u]);
}

size_t lg_strtrunc(char *dst, size_t size, const char *src)
{
	size_t n = strnlen(src, size - 1);

	memcpy(dst, src, n);
	dst[n] = '\0';
	return n;
}

size_t lg_utoa(char *out, unsigned long long v)
{
	char b[21], *p = b + sizeof(b);
	size_t n;

	do {
		*--p = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	n = (size_t)(b + sizeof(b) - p);
	memcpy(out, p, n);
	out[n] = '\0';
	return n;
}

/* The next line of buf from *at, trimmed: its start and length. */
static bool next_line(const char *buf, size_t len, size_t *at,
		      const char **line, size_t *n)
{
	size_t i = *at, end;

	if (i >= len)
		return false;
	end = i;
	while (end < len && buf[end] != '\n')
		end++;
	*at = end + 1;
	while (i < end && (buf[i] == ' ' || buf[i] == '\t' || buf[i] == '\r'))
		i++;
	while (end > i && (buf[end - 1] == ' ' || buf[end - 1] == '\t' ||
			   buf[end - 1] == '\r'))
		end--;
	*line = buf + i;
	*n = end - i;
	return true;
}

void lg_lines_sample(const char *buf, size_t len, struct lg_lines_sample *out)
{
	size_t at = 0, n, total = 0, k = 0;
	const char *line;

	out->n = 0;
	/* how many distinctive lines, then every (total / SAMPLE)th of them */
	while (next_line(buf, len, &at, &line, &n))
		total += n >= LG_LINES_MIN;
	if (!total)
		return;
	at = 0;
	while (next_line(buf, len, &at, &line, &n) &&
	       out->n < LG_LINES_SAMPLE) {
		uint64_t h;
		bool dup = false;

		if (n < LG_LINES_MIN)
			continue;
		/* the k-th distinctive line is taken when it starts a share */
		if (total > LG_LINES_SAMPLE &&
		    (k++ * LG_LINES_SAMPLE) % total >= LG_LINES_SAMPLE)
			continue;
		h = lg_digest(line, n);
		for (unsigned i = 0; i < out->n && !dup; i++)
			dup = out->h[i] == h;
		if (!dup)
			out->h[out->n++] = h;
	}
}

unsigned lg_lines_found(const struct lg_lines_sample *s, const char *buf,
			size_t len)
{
	unsigned seen = 0, found = 0; /* a bit per sampled line */
	size_t at = 0, n;
	const char *line;

	while (s->n && next_line(buf, len, &at, &line, &n)) {
		uint64_t h;

		if (n < LG_LINES_MIN)
			continue;
		h = lg_digest(line, n);
		for (unsigned i = 0; i < s->n; i++)
			if (s->h[i] == h && !(seen & (1u << i))) {
				seen |= 1u << i;
				found++;
			}
		if (found == s->n)
			break;
	}
	return found;
}

bool lg_lines_live_on(const struct lg_lines_sample *s, unsigned found)
{
	return s->n >= 4 && found * 4 >= s->n * 3;
}
