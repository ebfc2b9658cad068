// SPDX-License-Identifier: MIT
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "termtext.h"

void lg_json_append(struct lg_json *j, const char *s, size_t n)
{
	if (j->len + n + 1 > j->cap) {
		size_t cap = j->cap ? j->cap : 256;
		char *b;

		while (j->len + n + 1 > cap)
			cap *= 2;
		b = realloc(j->buf, cap);
		if (!b)
			return;
		j->buf = b;
		j->cap = cap;
	}
	memcpy(j->buf + j->len, s, n);
	j->len += n;
	j->buf[j->len] = '\0';
}

static void put(struct lg_json *j, const char *s)
{
	lg_json_append(j, s, strlen(s));
}

/*
 * Appends s as a JSON string literal. Control characters (C0, DEL, C1,
 * and U+2028/2029 for JavaScript readers) are escaped; bytes that are not
 * UTF-8 become U+FFFD. Returns false when s had such bytes.
 */
static bool quote(struct lg_json *j, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *c = (const unsigned char *)(s ? s : "");
	size_t n = strlen((const char *)c), run = 0;
	bool exact = true;

	put(j, "\"");
	for (size_t i = 0; i < n;) {
		unsigned cp = 0;
		size_t len;
		char e[7];

		if (c[i] >= 0x20 && c[i] < 0x7f && c[i] != '"' &&
		    c[i] != '\\') {
			run++; /* plain ASCII: copied in runs */
			i++;
			continue;
		}
		len = lg_utf8_len(c + i, n - i, &cp);
		lg_json_append(j, (const char *)c + i - run, run);
		run = 0;
		if (!len) {
			lg_json_append(j, "\xef\xbf\xbd", 3); /* U+FFFD */
			exact = false;
			i++;
			continue;
		}
		if (cp == '"' || cp == '\\') {
			e[0] = '\\';
			e[1] = (char)cp;
			lg_json_append(j, e, 2);
		} else if (cp < 0x20 || (cp >= 0x7f && cp < 0xa0) ||
			   cp == 0x2028 || cp == 0x2029) {
			memcpy(e, "\\u", 2);
			e[2] = hex[(cp >> 12) & 15];
			e[3] = hex[(cp >> 8) & 15];
			e[4] = hex[(cp >> 4) & 15];
			e[5] = hex[cp & 15];
			lg_json_append(j, e, 6);
		} else {
			lg_json_append(j, (const char *)c + i, len);
		}
		i += len;
	}
	lg_json_append(j, (const char *)c + n - run, run);
	put(j, "\"");
	return exact;
}

void lg_json_quote(struct lg_json *j, const char *s)
{
	quote(j, s);
}

/* The exact bytes of s, in standard base64 (RFC 4648), quoted. */
static void put_b64(struct lg_json *j, const char *s)
{
	static const char b64[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	const unsigned char *c = (const unsigned char *)s;
	size_t n = strlen(s);

	put(j, "\"");
	for (size_t i = 0; i < n; i += 3) {
		unsigned v = (unsigned)c[i] << 16;
		char q[4];

		if (i + 1 < n)
			v |= (unsigned)c[i + 1] << 8;
		if (i + 2 < n)
			v |= c[i + 2];
		q[0] = b64[(v >> 18) & 63];
		q[1] = b64[(v >> 12) & 63];
		q[2] = i + 1 < n ? b64[(v >> 6) & 63] : '=';
		q[3] = i + 2 < n ? b64[v & 63] : '=';
		lg_json_append(j, q, 4);
	}
	put(j, "\"");
}

void lg_json_begin(struct lg_json *j)
{
	j->len = 0;
	j->first = true;
	put(j, "{");
}

static void key(struct lg_json *j, const char *k)
{
	size_t n = 0;

	if (!j->first)
		put(j, ",");
	j->first = false;
	/* lgrun's own keys are plain ASCII: copied as they are */
	while (k[n] >= 0x20 && k[n] < 0x7f && k[n] != '"' && k[n] != '\\')
		n++;
	if (k[n]) {
		lg_json_quote(j, k);
	} else {
		put(j, "\"");
		lg_json_append(j, k, n);
		put(j, "\"");
	}
	put(j, ":");
}

void lg_json_str(struct lg_json *j, const char *k, const char *val)
{
	key(j, k);
	if (!val) {
		put(j, "null");
		return;
	}
	if (!quote(j, val)) {
		/* not UTF-8: the exact bytes beside the readable value */
		char k64[96];

		snprintf(k64, sizeof(k64), "%s_b64", k);
		key(j, k64);
		put_b64(j, val);
	}
}

void lg_json_int(struct lg_json *j, const char *k, long long val)
{
	/* by hand: snprintf is the dearest part of a record's line */
	unsigned long long u = val < 0 ? 0ULL - (unsigned long long)val :
					 (unsigned long long)val;
	char b[24], *p = b + sizeof(b);

	key(j, k);
	do {
		*--p = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	if (val < 0)
		*--p = '-';
	lg_json_append(j, p, (size_t)(b + sizeof(b) - p));
}

void lg_json_num(struct lg_json *j, const char *k, double val)
{
	char b[64];

	key(j, k);
	snprintf(b, sizeof(b), "%.3f", val);
	put(j, b);
}

void lg_json_bool(struct lg_json *j, const char *k, bool val)
{
	key(j, k);
	put(j, val ? "true" : "false");
}

void lg_json_raw(struct lg_json *j, const char *k, const char *val)
{
	key(j, k);
	put(j, val);
}

const char *lg_json_end(struct lg_json *j)
{
	put(j, "}");
	return j->buf ? j->buf : "{}";
}

void lg_json_free(struct lg_json *j)
{
	free(j->buf);
	memset(j, 0, sizeof(*j));
}

static int hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0' :
	       c >= 'a' && c <= 'f' ? c - 'a' + 10 :
	       c >= 'A' && c <= 'F' ? c - 'A' + 10 :
				      -1;
}

/* Four hex digits at p, or -1. */
static long hex4(const char *p)
{
	long v = 0;

	for (int i = 0; i < 4; i++) {
		int h = hexval(p[i]);

		if (h < 0)
			return -1;
		v = v * 16 + h;
	}
	return v;
}

/* cp as UTF-8 into out (room for 4), its length. */
static size_t utf8_put(unsigned long cp, char *out)
{
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (char)(0xc0 | (cp >> 6));
		out[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (char)(0xe0 | (cp >> 12));
		out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		out[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	out[0] = (char)(0xf0 | (cp >> 18));
	out[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	out[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	out[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

void lg_json_field(const char *json, const char *key, char *out, size_t size)
{
	char pat[64];
	const char *p;
	size_t n = 0;

	snprintf(pat, sizeof(pat), "\"%s\":", key);
	out[0] = '\0';
	p = strstr(json, pat);
	if (!p)
		return;
	p += strlen(pat);
	if (*p != '"') {
		while (*p && *p != ',' && *p != '}' && n + 1 < size)
			out[n++] = *p++;
		out[n] = '\0';
		return;
	}
	for (p++; *p && *p != '"';) {
		char u[4];
		size_t k = 1;

		if (*p != '\\' || !p[1]) {
			u[0] = *p++;
		} else {
			char e = p[1];

			p += 2;
			switch (e) {
			case 'n':
				u[0] = '\n';
				break;
			case 't':
				u[0] = '\t';
				break;
			case 'r':
				u[0] = '\r';
				break;
			case 'b':
				u[0] = '\b';
				break;
			case 'f':
				u[0] = '\f';
				break;
			case 'u': {
				long cp = hex4(p), lo;

				if (cp < 0) {
					u[0] = 'u';
					break;
				}
				p += 4;
				/* a surrogate pair is one code point */
				if (cp >= 0xd800 && cp < 0xdc00 &&
				    p[0] == '\\' && p[1] == 'u' &&
				    (lo = hex4(p + 2)) >= 0xdc00 &&
				    lo < 0xe000) {
					cp = 0x10000 + ((cp - 0xd800) << 10) +
					     (lo - 0xdc00);
					p += 6;
				} else if (cp >= 0xd800 && cp < 0xe000) {
					cp = 0xfffd;
				}
				k = utf8_put((unsigned long)cp, u);
				break;
			}
			default:
				u[0] = e;
				break; /* " \\ / */
			}
		}
		if (n + k >= size)
			break;
		memcpy(out + n, u, k);
		n += k;
	}
	out[n] = '\0';
}
