/* SPDX-License-Identifier: MIT */
/*
 * Recognisers for tool-dispatch traffic: cheap, bounded, no allocation.
 * Each looks at the first bytes of one write or read and gives up at once
 * on anything that is not what it knows.
 */
#ifndef LG_RECOG_H
#define LG_RECOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct lg_span {
	const char *p;
	size_t n;
};

/* "DELETE /assets/x HTTP/1.1\r\n..." */
struct lg_http_req {
	struct lg_span method, target;
	struct lg_span body; /* what of the body is in this buffer */
	struct lg_span host; /* the Host header's value, n == 0 without one */
	bool chunked;
};

/* "HTTP/1.1 200 OK\r\n...\r\n\r\nbody" */
struct lg_http_resp {
	unsigned status;
	struct lg_span body;
	struct lg_span location; /* a 201's Location header, n == 0: none */
	bool chunked;
};

/* A JSON-RPC 2.0 message, possibly behind Content-Length headers. */
struct lg_jrpc {
	bool request; /* has "method" */
	struct lg_span method; /* without quotes */
	struct lg_span id; /* raw JSON: 7 or "abc"; n == 0 for notifications */
	struct lg_span name; /* tools/call: params.name, without quotes */
	struct lg_span args; /* tools/call: params.arguments, raw JSON */
	struct lg_span result; /* response: "result" or "error" value, raw */
	bool error;
};

/* Quick first-bytes test: could this buffer start a message we know? */
bool lg_recog_maybe(const char *p, size_t n);

bool lg_recog_http_request(const char *p, size_t n, struct lg_http_req *out);
bool lg_recog_http_response(const char *p, size_t n, struct lg_http_resp *out);
bool lg_recog_jsonrpc(const char *p, size_t n, struct lg_jrpc *out);

/* One whole MySQL packet of sequence 0 or 1 (a command, a handshake). */
bool lg_recog_my_packet(const char *p, size_t n);

/* TLS record header (handshake or application data): opaque traffic. */
bool lg_recog_tls(const char *p, size_t n);

/* Matches name against comma-separated globs ("delete_*,drop_*"). */
bool lg_recog_name_in(const char *name, size_t n, const char *globs);

/*
 * Is an HTTP request a call of a declared tool endpoint? patterns is a
 * comma-separated list of [http[s]://][HOST][:PORT][/PATH], each part
 * optional: "/assets/<glob>", "localhost:8080", ":9000/api",
 * "tools.internal". HOST is compared with the request's Host header and
 * with the peer's address (localhost also matches 127.0.0.1 and ::1), PORT
 * with the peer's port and the Host header's; PATH is a glob on the
 * request's path (query left out) in which * also crosses '/', and it
 * covers what lies below it ("/tools" covers "/tools/x").
 */
bool lg_recog_endpoint_in(const char *patterns, struct lg_span host_header,
			  const char *peer_host, unsigned peer_port,
			  struct lg_span target);

/* False, with the first bad pattern copied to bad, if one cannot be read. */
bool lg_recog_endpoints_valid(const char *patterns, char *bad, size_t size);

/* Does any pattern name a host or a port (so the peer must be looked up)? */
bool lg_recog_endpoints_need_peer(const char *patterns);

#endif
