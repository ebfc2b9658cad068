// SPDX-License-Identifier: MIT
#include <fnmatch.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

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
	case 'Q': /* PostgreSQL's Query */
		return true;
	case '\0': /* PostgreSQL's startup (protocol 3.0), or MySQL's packet */
		return (n >= 8 && p[4] == 0 && p[5] == 3 && p[6] == 0 &&
			p[7] == 0) ||
		       lg_recog_my_packet(p, n);
	case ' ':
	case '\n':
	case '\r':
	case '\t':
		return n > 1 && (p[1] == '{' || p[1] == ' ');
	default:
		return lg_recog_tls(p, n) || lg_recog_my_packet(p, n);
	}
}

bool lg_recog_my_packet(const char *p, size_t n)
{
	const unsigned char *u = (const unsigned char *)p;

	/* a whole packet of sequence 0 (a command) or 1 (the handshake) */
	return n >= 5 && u[3] <= 1 &&
	       ((size_t)u[0] | (size_t)u[1] << 8 | (size_t)u[2] << 16) + 4 == n;
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

/* The value of a header (spaces trimmed), or an empty span. */
static struct lg_span header_value(const char *h, size_t n, const char *name)
{
	size_t kn = strlen(name);
	struct lg_span v = { NULL, 0 };

	for (size_t i = 0; i + kn < n; i++) {
		if ((i == 0 || h[i - 1] == '\n') &&
		    strncasecmp(h + i, name, kn) == 0) {
			const char *b = h + i + kn, *e = h + n;

			while (b < e && (*b == ' ' || *b == '\t'))
				b++;
			v.p = b;
			while (b < e && *b != '\r' && *b != '\n')
				b++;
			while (b > v.p && (b[-1] == ' ' || b[-1] == '\t'))
				b--;
			v.n = (size_t)(b - v.p);
			return v;
		}
	}
	return v;
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
	/* METHOD SP TARGET SP HTTP/1.x: a target, and the version right
	 * after it (a space in a target is not HTTP) */
	if (!sp || sp == out->target.p || eol - sp < 8 ||
	    memcmp(sp, " HTTP/1.", 8) != 0)
		return false;
	out->target.n = (size_t)(sp - out->target.p);
	hend = find(p, lim, "\r\n\r\n");
	out->body.p = hend ? hend + 4 : p + n;
	out->body.n = hend ? (size_t)(p + n - out->body.p) : 0;
	out->chunked = header_has(p, hend ? (size_t)(hend - p) : lim,
				  "Transfer-Encoding:", "chunked");
	out->host = header_value(p, hend ? (size_t)(hend - p) : lim, "Host:");
	return true;
}

bool lg_recog_http_response(const char *p, size_t n, struct lg_http_resp *out)
{
	size_t lim = n < SCAN_MAX ? n : SCAN_MAX;
	const char *hend;
	unsigned st = 0;

	/* HTTP/1.x NNN: a minor version, a three-digit status from 100 */
	if (lim < 12 || memcmp(p, "HTTP/1.", 7) != 0 || p[7] < '0' ||
	    p[7] > '9' || p[8] != ' ')
		return false;
	for (int k = 9; k < 12; k++) {
		if (p[k] < '0' || p[k] > '9')
			return false;
		st = st * 10 + (unsigned)(p[k] - '0');
	}
	if (st < 100 || (lim > 12 && p[12] != ' ' && p[12] != '\r'))
		return false;
	out->status = st;
	hend = find(p, lim, "\r\n\r\n");
	out->body.p = hend ? hend + 4 : p + n;
	out->body.n = hend ? (size_t)(p + n - out->body.p) : 0;
	out->chunked = header_has(p, hend ? (size_t)(hend - p) : lim,
				  "Transfer-Encoding:", "chunked");
	out->location = st == 201 ? /* what a POST or PUT made */
				header_value(p, hend ? (size_t)(hend - p) : lim,
					     "Location:") :
				(struct lg_span){ NULL, 0 };
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
		/* a request's method is a non-empty string (found by
		 * fuzz_recog: "method":] was a request with no method) */
		if (out->method.n < 3 || out->method.p[0] != '"')
			return false;
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

/* One pattern, split: host (maybe empty), port (0: any), path (maybe ""). */
struct endpoint {
	char host[128];
	unsigned port;
	char path[256];
};

static bool endpoint_parse(const char *pat, size_t k, struct endpoint *ep)
{
	const char *e = pat + k, *slash, *colon, *h = pat;
	size_t hn;

	memset(ep, 0, sizeof(*ep));
	if (k > 7 && strncasecmp(pat, "http://", 7) == 0)
		h = pat + 7;
	else if (k > 8 && strncasecmp(pat, "https://", 8) == 0)
		h = pat + 8;
	slash = memchr(h, '/', (size_t)(e - h));
	if (!slash)
		slash = e;
	if ((size_t)(e - slash) >= sizeof(ep->path))
		return false;
	memcpy(ep->path, slash, (size_t)(e - slash));
	colon = NULL;
	if (*h == '[') { /* [::1]:8080 */
		const char *rb = memchr(h, ']', (size_t)(slash - h));

		if (!rb)
			return false;
		if (rb + 1 < slash && rb[1] == ':')
			colon = rb + 1;
		hn = (size_t)(rb - h - 1);
		if (hn >= sizeof(ep->host))
			return false;
		memcpy(ep->host, h + 1, hn);
	} else {
		colon = memchr(h, ':', (size_t)(slash - h));
		hn = (size_t)((colon ? colon : slash) - h);
		if (hn >= sizeof(ep->host))
			return false;
		memcpy(ep->host, h, hn);
	}
	if (strcmp(ep->host, "*") == 0)
		ep->host[0] = '\0';
	if (colon && colon + 1 < slash && colon[1] != '*') {
		for (const char *q = colon + 1; q < slash; q++) {
			if (*q < '0' || *q > '9')
				return false;
			ep->port = ep->port * 10 + (unsigned)(*q - '0');
			if (ep->port > 65535)
				return false;
		}
	}
	return true;
}

static bool host_is(const char *want, const char *have, size_t n)
{
	return n && strlen(want) == n && strncasecmp(want, have, n) == 0;
}

static bool endpoint_match(const struct endpoint *ep, struct lg_span hh,
			   const char *peer_host, unsigned peer_port,
			   struct lg_span target)
{
	struct lg_span hhost = hh;
	unsigned hport = 0;
	char path[512], sub[sizeof(((struct endpoint *)0)->path) + 2];
	size_t pn;

	/* "example.com:8080" or "[::1]:8080" */
	if (hh.n) {
		const char *c = hh.p + hh.n;

		while (c > hh.p && c[-1] >= '0' && c[-1] <= '9')
			c--;
		if (c > hh.p && c[-1] == ':' && c < hh.p + hh.n &&
		    (c - 1 == hh.p || c[-2] != ':')) {
			for (const char *q = c; q < hh.p + hh.n; q++)
				hport = hport * 10 + (unsigned)(*q - '0');
			hhost.n = (size_t)(c - 1 - hh.p);
		}
		if (hhost.n >= 2 && hhost.p[0] == '[' &&
		    hhost.p[hhost.n - 1] == ']') {
			hhost.p++;
			hhost.n -= 2;
		}
	}
	if (ep->port && ep->port != peer_port && ep->port != hport)
		return false;
	if (ep->host[0]) {
		bool ok = host_is(ep->host, hhost.p, hhost.n) ||
			  (peer_host &&
			   host_is(ep->host, peer_host, strlen(peer_host)));

		if (!ok && strcasecmp(ep->host, "localhost") == 0 && peer_host)
			ok = strcmp(peer_host, "127.0.0.1") == 0 ||
			     strcmp(peer_host, "::1") == 0;
		if (!ok)
			return false;
	}
	if (!ep->path[0] || strcmp(ep->path, "/") == 0 ||
	    strcmp(ep->path, "/*") == 0)
		return true;
	for (pn = 0; pn < target.n && target.p[pn] != '?' &&
		     target.p[pn] != '#' && target.p[pn] != ' ';
	     pn++)
		;
	if (pn >= sizeof(path))
		return false;
	memcpy(path, target.p, pn);
	path[pn] = '\0';
	/* an absolute-form target (a request to a proxy) */
	if (strncmp(path, "http://", 7) == 0) {
		char *s = strchr(path + 7, '/');

		memmove(path, s ? s : "/", strlen(s ? s : "/") + 1);
	}
	if (fnmatch(ep->path, path, 0) == 0)
		return true;
	snprintf(sub, sizeof(sub), "%s/*", ep->path);
	return fnmatch(sub, path, 0) == 0;
}

bool lg_recog_endpoint_in(const char *patterns, struct lg_span host_header,
			  const char *peer_host, unsigned peer_port,
			  struct lg_span target)
{
	struct endpoint ep;

	if (!patterns)
		return false;
	while (*patterns) {
		size_t k;

		patterns += strspn(patterns, ", \t");
		k = strcspn(patterns, ", \t");
		if (k && endpoint_parse(patterns, k, &ep) &&
		    endpoint_match(&ep, host_header, peer_host, peer_port,
				   target))
			return true;
		patterns += k;
	}
	return false;
}

bool lg_recog_endpoints_need_peer(const char *patterns)
{
	struct endpoint ep;

	while (patterns && *patterns) {
		size_t k;

		patterns += strspn(patterns, ", \t");
		k = strcspn(patterns, ", \t");
		if (k && endpoint_parse(patterns, k, &ep) &&
		    (ep.host[0] || ep.port))
			return true;
		patterns += k;
	}
	return false;
}

bool lg_recog_endpoints_valid(const char *patterns, char *bad, size_t size)
{
	struct endpoint ep;

	while (patterns && *patterns) {
		size_t k;

		patterns += strspn(patterns, ", \t");
		k = strcspn(patterns, ", \t");
		if (k && !endpoint_parse(patterns, k, &ep)) {
			snprintf(bad, size, "%.*s", (int)k, patterns);
			return false;
		}
		patterns += k;
	}
	return true;
}
