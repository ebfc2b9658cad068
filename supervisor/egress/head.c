// SPDX-License-Identifier: MIT
/*
 * The egress proxy's request head, pure (no socket): what a client asks
 * for (CONNECT host:port, or an absolute-URI request) and the headers it
 * sends on. Unit-tested (test_egress) and fuzzed (fuzz_text); egress.c
 * serves the connections.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "egress.h"

bool lg_egress_token_eq(const char *p, size_t n, const char *lit)
{
	return strlen(lit) == n && strncasecmp(p, lit, n) == 0;
}

/* Does a comma-separated header value hold token (case-insensitive)? */
static bool has_token(const char *v, size_t n, const char *token)
{
	size_t i = 0;

	while (i < n) {
		size_t s, e;

		while (i < n && (v[i] == ' ' || v[i] == '\t' || v[i] == ','))
			i++;
		s = i;
		while (i < n && v[i] != ',')
			i++;
		e = i;
		while (e > s && (v[e - 1] == ' ' || v[e - 1] == '\t'))
			e--;
		if (lg_egress_token_eq(v + s, e - s, token))
			return true;
	}
	return false;
}

/* host[:port] or [v6][:port] into r; default port dflt. */
static int parse_authority(const char *a, size_t n, uint16_t dflt,
			   struct lg_egress_req *r)
{
	const char *host = a, *colon = NULL;
	size_t hn;
	unsigned long port = dflt;

	if (n && a[0] == '[') {
		const char *close = memchr(a, ']', n);

		if (!close)
			return -EINVAL;
		host = a + 1;
		hn = (size_t)(close - host);
		if (close + 1 < a + n) {
			if (close[1] != ':')
				return -EINVAL;
			colon = close + 1;
		}
	} else {
		colon = memchr(a, ':', n);
		hn = colon ? (size_t)(colon - a) : n;
	}
	if (!hn || hn >= sizeof(r->host))
		return -EINVAL;
	for (size_t i = 0; i < hn; i++) {
		unsigned char c = (unsigned char)host[i];

		/* names, IPv4 and IPv6 literals: nothing a resolver mangles */
		if (!(c == '.' || c == '-' || c == '_' || c == ':' ||
		      (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
		      (c >= 'A' && c <= 'Z')))
			return -EINVAL;
	}
	memcpy(r->host, host, hn);
	r->host[hn] = '\0';
	if (colon) {
		const char *p = colon + 1, *end = a + n;

		if (p == end || end - p > 5)
			return -EINVAL;
		port = 0;
		for (; p < end; p++) {
			if (*p < '0' || *p > '9')
				return -EINVAL;
			port = port * 10 + (unsigned long)(*p - '0');
		}
	}
	if (port == 0 || port > 65535)
		return -EINVAL;
	r->port = (uint16_t)port;
	return 0;
}

int lg_egress_parse_head(const char *buf, size_t n, struct lg_egress_req *r,
			 const char **why)
{
	const char *eol = NULL, *sp1, *sp2, *target, *p, *end = buf + n;
	size_t tn;

	memset(r, 0, sizeof(*r));
	*why = "malformed request line";
	for (p = buf; p + 1 < end; p++)
		if (p[0] == '\r' && p[1] == '\n') {
			eol = p;
			break;
		}
	if (!eol)
		return -EINVAL;
	sp1 = memchr(buf, ' ', (size_t)(eol - buf));
	if (!sp1 || sp1 == buf || (size_t)(sp1 - buf) >= sizeof(r->method))
		return -EINVAL;
	sp2 = memchr(sp1 + 1, ' ', (size_t)(eol - sp1 - 1));
	if (!sp2 || sp2 == sp1 + 1 || eol - sp2 - 1 != 8 ||
	    strncmp(sp2 + 1, "HTTP/1.", 7) != 0)
		return -EINVAL;
	memcpy(r->method, buf, (size_t)(sp1 - buf));
	r->method[sp1 - buf] = '\0';
	for (size_t i = 0; r->method[i]; i++)
		if (r->method[i] < 'A' || r->method[i] > 'Z')
			return -EINVAL;
	target = sp1 + 1;
	tn = (size_t)(sp2 - target);
	r->headers = eol + 2;
	r->headers_len = (size_t)(end - r->headers);
	if (strcmp(r->method, "CONNECT") == 0) {
		r->kind = LG_EGRESS_CONNECT;
		*why = "CONNECT needs host:port";
		if (!memchr(target, ':', tn) ||
		    parse_authority(target, tn, 0, r))
			return -EINVAL;
	} else {
		const char *auth, *slash;

		r->kind = LG_EGRESS_HTTP;
		*why = "only http:// URLs in absolute form (https goes by CONNECT)";
		if (tn < 8 || strncasecmp(target, "http://", 7) != 0)
			return -EINVAL;
		auth = target + 7;
		slash = memchr(auth, '/', tn - 7);
		if (!slash) {
			slash = memchr(auth, '?', tn - 7);
		}
		*why = "bad host in the URL";
		if (parse_authority(auth,
				    slash ? (size_t)(slash - auth) : tn - 7, 80,
				    r))
			return -EINVAL;
		r->path = slash ? slash : "/";
		r->path_len = slash ? (size_t)(sp2 - slash) : 1;
	}
	/* Connection: upgrade (a websocket) keeps the connection open. */
	for (p = r->headers; p < end;) {
		const char *le = NULL, *colon;

		for (const char *q = p; q + 1 < end; q++)
			if (q[0] == '\r' && q[1] == '\n') {
				le = q;
				break;
			}
		if (!le || le == p)
			break;
		colon = memchr(p, ':', (size_t)(le - p));
		if (colon &&
		    lg_egress_token_eq(p, (size_t)(colon - p), "connection") &&
		    has_token(colon + 1, (size_t)(le - colon - 1), "upgrade"))
			r->upgrade = true;
		p = le + 2;
	}
	*why = NULL;
	return 0;
}

bool lg_egress_basic_auth(const char *secret, char *out, size_t size)
{
	static const char b64[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	char plain[256];
	int n = snprintf(plain, sizeof(plain), "%s:%s", LG_EGRESS_USER, secret);
	size_t o;

	if (n < 0 || (size_t)n >= sizeof(plain) ||
	    size < 6 + ((size_t)n + 2) / 3 * 4 + 1)
		return false;
	o = (size_t)snprintf(out, size, "Basic ");
	for (size_t i = 0; i < (size_t)n; i += 3) {
		unsigned v = (unsigned char)plain[i] << 16;
		size_t left = (size_t)n - i;

		if (left > 1)
			v |= (unsigned char)plain[i + 1] << 8;
		if (left > 2)
			v |= (unsigned char)plain[i + 2];
		out[o++] = b64[(v >> 18) & 63];
		out[o++] = b64[(v >> 12) & 63];
		out[o++] = left > 1 ? b64[(v >> 6) & 63] : '=';
		out[o++] = left > 2 ? b64[v & 63] : '=';
	}
	out[o] = '\0';
	return true;
}

/* a and b of n bytes equal, in a time that does not say where they differ */
static bool same_bytes(const char *a, const char *b, size_t n)
{
	unsigned char d = 0;

	for (size_t i = 0; i < n; i++)
		d |= (unsigned char)(a[i] ^ b[i]);
	return d == 0;
}

bool lg_egress_authorized(const char *buf, size_t n, const char *want)
{
	const char *end = buf + n, *p = memmem(buf, n, "\r\n", 2);
	const char *wsp = strchr(want, ' ');
	size_t scheme = wsp ? (size_t)(wsp - want) : 0, wn = strlen(want);
	bool ok = false;

	if (!p || !scheme)
		return false;
	for (p += 2; p < end;) {
		const char *le = memmem(p, (size_t)(end - p), "\r\n", 2);
		const char *colon, *v, *ve;

		if (!le || le == p)
			break;
		colon = memchr(p, ':', (size_t)(le - p));
		if (colon && lg_egress_token_eq(p, (size_t)(colon - p),
						"proxy-authorization")) {
			v = colon + 1;
			ve = le;
			while (v < ve && (*v == ' ' || *v == '\t'))
				v++;
			while (ve > v && (ve[-1] == ' ' || ve[-1] == '\t'))
				ve--;
			/* the scheme in any case, one space, the credentials */
			if ((size_t)(ve - v) == wn &&
			    strncasecmp(v, want, scheme) == 0 &&
			    v[scheme] == ' ' &&
			    same_bytes(v + scheme, want + scheme, wn - scheme))
				ok = true;
		}
		p = le + 2;
	}
	return ok;
}

bool lg_egress_is_model(const struct lg_egress_req *r)
{
	static const char *const suffix[] = {
		"/v1/messages",	    "/v1/responses",
		"/codex/responses", "/chat/completions",
		":generateContent", ":streamGenerateContent",
	};
	size_t n;

	if (r->kind != LG_EGRESS_HTTP || !r->path)
		return false;
	for (n = 0; n < r->path_len && r->path[n] != '?' && r->path[n] != '#';
	     n++)
		;
	if (r->upgrade) /* a websocket: Codex's Responses protocol */
		return strcmp(r->method, "GET") == 0 &&
		       ((n >= 13 &&
			 !memcmp(r->path + n - 13, "/v1/responses", 13)) ||
			(n >= 16 &&
			 !memcmp(r->path + n - 16, "/codex/responses", 16)));
	if (strcmp(r->method, "POST") != 0)
		return false;
	for (size_t i = 0; i < sizeof(suffix) / sizeof(suffix[0]); i++) {
		size_t k = strlen(suffix[i]);

		if (n >= k && !memcmp(r->path + n - k, suffix[i], k))
			return true;
	}
	return false;
}
