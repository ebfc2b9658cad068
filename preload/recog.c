// SPDX-License-Identifier: MIT
#include <fnmatch.h>
#include <string.h>

#include "recog.h"

#define SCAN_MAX 4096 /* never look further into a buffer than this */
#define LG_RECOG_JSON_MAX 65536 /* a tools/call larger than this is cut */

static const char *const methods[] = { "GET ",	 "POST ", "PUT ",    "DELETE ",
				       "PATCH ", "HEAD ", "OPTIONS " };

bool lg_recog_maybe(const char *p, size_t n)
{
	if (n < 4)
		return false;
	switch (p[0]) {
	case 'G':
	case 'P':
	case 'D':
	case 'H':
	case 'O':
	case '{':
	case 'C':
	case 'c':
		return true;
	case ' ':
	case '\n':
	case '\r':
	case '\t':
		return n > 1 && (p[1] == '{' || p[1] == ' ');
	default:
		return lg_recog_tls(p, n);
	}
}

bool lg_recog_tls(const char *p, size_t n)
{
	const unsigned char *u = (const unsigned char *)p;

	/* content type 22 (handshake) or 23 (data), version 3.x */
	return n >= 5 && (u[0] == 22 || u[0] == 23) && u[1] == 3 && u[2] <= 4;
}

static const char *find(const char *p, size_t n, const char *s)
{
	size_t k = strlen(s);

	return k <= n ? memmem(p, n, s, k) : NULL;
}

/* Case-insensitive header lookup within the header block. */
static bool header_has(const char *h, size_t n, const char *name,
		       const char *value)
{
	size_t kn = strlen(name), kv = strlen(value);

	for (size_t i = 0; i + kn < n; i++) {
		if ((i == 0 || h[i - 1] == '\n') &&
		    strncasecmp(h + i, name, kn) == 0) {
			const char *v = h + i + kn, *e = h + n;

			for (; v + kv <= e && *v != '\r' && *v != '\n'; v++)
				if (strncasecmp(v, value, kv) == 0)
					return true;
		}
	}
	return false;
}

bool lg_recog_http_request(const char *p, size_t n, struct lg_http_req *out)
{
	const char *sp, *eol, *hend;
	size_t lim = n < SCAN_MAX ? n : SCAN_MAX;
	size_t i;

	for (i = 0; i < sizeof(methods) / sizeof(methods[0]); i++) {
		size_t k = strlen(methods[i]);

		if (lim > k && memcmp(p, methods[i], k) == 0)
			break;
	}
	if (i == sizeof(methods) / sizeof(methods[0]))
		return false;
	eol = memchr(p, '\n', lim);
	if (!eol)
		return false;
	out->method.p = p;
	out->method.n = strlen(methods[i]) - 1;
	out->target.p = p + out->method.n + 1;
	sp = memchr(out->target.p, ' ', (size_t)(eol - out->target.p));
	if (!sp || !find(sp, (size_t)(eol - sp), " HTTP/1."))
		return false;
	out->target.n = (size_t)(sp - out->target.p);
	hend = find(p, lim, "\r\n\r\n");
	out->body.p = hend ? hend + 4 : p + n;
	out->body.n = hend ? (size_t)(p + n - out->body.p) : 0;
	out->chunked = header_has(p, hend ? (size_t)(hend - p) : lim,
				  "Transfer-Encoding:", "chunked");
	return true;
}

bool lg_recog_http_response(const char *p, size_t n, struct lg_http_resp *out)
{
	size_t lim = n < SCAN_MAX ? n : SCAN_MAX;
	const char *hend;
	unsigned st = 0;

	if (lim < 12 || memcmp(p, "HTTP/1.", 7) != 0 || p[8] != ' ')
		return false;
	for (int k = 9; k < 12; k++) {
		if (p[k] < '0' || p[k] > '9')
			return false;
		st = st * 10 + (unsigned)(p[k] - '0');
	}
	out->status = st;
	hend = find(p, lim, "\r\n\r\n");
	out->body.p = hend ? hend + 4 : p + n;
	out->body.n = hend ? (size_t)(p + n - out->body.p) : 0;
	out->chunked = header_has(p, hend ? (size_t)(hend - p) : lim,
				  "Transfer-Encoding:", "chunked");
	return true;
}

static const char *skip_ws(const char *p, const char *e)
{
	while (p < e && (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n'))
		p++;
	return p;
}

/* End of the JSON value starting at p (bounded, no validation beyond it). */
static const char *value_end(const char *p, const char *e)
{
	int depth = 0;
	bool str = false;

	if (p >= e)
		return NULL;
	if (*p != '{' && *p != '[' && *p != '"') {
		while (p < e && *p != ',' && *p != '}' && *p != ']' &&
		       *p != ' ' && *p != '\r' && *p != '\n')
			p++;
		return p;
	}
	for (; p < e; p++) {
		if (str) {
			if (*p == '\\')
				p++;
			else if (*p == '"')
				str = false;
			if (!str && depth == 0)
				return p + 1;
			continue;
		}
		if (*p == '"')
			str = true;
		else if (*p == '{' || *p == '[')
			depth++;
		else if ((*p == '}' || *p == ']') && --depth == 0)
			return p + 1;
	}
	return NULL;
}

/*
 * Finds "key": at depth 1 of the object starting at obj and returns its
 * value's span. Walks the object's members properly, so a key inside a
 * string or a nested object is never mistaken for it.
 */
static bool member(const char *obj, const char *e, const char *key,
		   struct lg_span *val)
{
	size_t kn = strlen(key);
	const char *p = skip_ws(obj, e);

	if (p >= e || *p != '{')
		return false;
	p++;
	while (p < e) {
		const char *ks, *ke, *ve;

		p = skip_ws(p, e);
		if (p >= e || *p == '}')
			return false;
		if (*p != '"')
			return false;
		ks = p + 1;
		ke = value_end(p, e);
		if (!ke)
			return false;
		p = skip_ws(ke, e);
		if (p >= e || *p != ':')
			return false;
		p = skip_ws(p + 1, e);
		ve = value_end(p, e);
		if (!ve)
			return false;
		if ((size_t)(ke - 1 - ks) == kn && memcmp(ks, key, kn) == 0) {
			val->p = p;
			val->n = (size_t)(ve - p);
			return true;
		}
		p = skip_ws(ve, e);
		if (p < e && *p == ',')
			p++;
	}
	return false;
}

static void unquote(struct lg_span *s)
{
	if (s->n >= 2 && s->p[0] == '"') {
		s->p++;
		s->n -= 2;
	}
}

bool lg_recog_jsonrpc(const char *p, size_t n, struct lg_jrpc *out)
{
	size_t lim = n < LG_RECOG_JSON_MAX ? n : LG_RECOG_JSON_MAX;
	const char *e = p + lim, *obj;
	struct lg_span v, params;

	memset(out, 0, sizeof(*out));
	/* LSP-style framing: skip the headers. */
	if (lim > 15 && strncasecmp(p, "Content-Length:", 15) == 0) {
		const char *h = find(p, lim, "\r\n\r\n");

		if (!h)
			return false;
		p = h + 4;
	}
	obj = skip_ws(p, e);
	if (obj >= e || *obj != '{')
		return false;
	if (!member(obj, e, "jsonrpc", &v))
		return false;
	if (member(obj, e, "id", &out->id) && out->id.n == 4 &&
	    memcmp(out->id.p, "null", 4) == 0)
		out->id.n = 0;
	if (member(obj, e, "method", &out->method)) {
		out->request = true;
		unquote(&out->method);
		if (out->method.n == 10 &&
		    memcmp(out->method.p, "tools/call", 10) == 0 &&
		    member(obj, e, "params", &params)) {
			const char *pe = params.p + params.n;

			if (member(params.p, pe, "name", &out->name))
				unquote(&out->name);
			member(params.p, pe, "arguments", &out->args);
		}
		return true;
	}
	if (member(obj, e, "result", &out->result))
		return true;
	if (member(obj, e, "error", &out->result)) {
		out->error = true;
		return true;
	}
	return false;
}

bool lg_recog_name_in(const char *name, size_t n, const char *globs)
{
	char nm[128], g[128];

	if (!globs || n >= sizeof(nm))
		return false;
	memcpy(nm, name, n);
	nm[n] = '\0';
	while (*globs) {
		size_t k;

		globs += strspn(globs, ", \t");
		k = strcspn(globs, ", \t");
		if (k && k < sizeof(g)) {
			memcpy(g, globs, k);
			g[k] = '\0';
			if (fnmatch(g, nm, 0) == 0)
				return true;
		}
		globs += k;
	}
	return false;
}
