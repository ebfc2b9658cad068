/* SPDX-License-Identifier: MIT */
/*
 * The egress proxy: an HTTP forward proxy on 127.0.0.1 that the tree's
 * HTTP_PROXY/HTTPS_PROXY point at ([llm] mode = proxy or both). It serves
 * CONNECT tunnels (relayed byte for byte, never decrypted here) and
 * absolute-URI plain HTTP requests (one request per upstream connection;
 * websocket upgrades pass through). Each connection ends in a flow report:
 * the host, the port, the bytes each way; never a path,
 * a header or a byte of content, so credentials cannot reach the audit.
 *
 * A thread accepts; each connection gets a thread of its own. The parsing
 * of the request head is pure (lg_egress_parse_head) and fuzzed.
 */
#ifndef LG_EGRESS_H
#define LG_EGRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define LG_EGRESS_HOST_MAX 256

enum lg_egress_kind { LG_EGRESS_CONNECT, LG_EGRESS_HTTP };

/* A request head, as far as the proxy needs it. */
struct lg_egress_req {
	enum lg_egress_kind kind;
	char method[16];
	char host[LG_EGRESS_HOST_MAX]; /* without brackets for IPv6 */
	uint16_t port;
	const char *path; /* into the head: origin-form target (HTTP only) */
	size_t path_len;
	const char *headers; /* into the head: after the request line */
	size_t headers_len; /* up to and including the blank line */
	bool upgrade; /* Connection: upgrade (a websocket): kept open */
};

/* n bytes at p are the header name or token lit, in any case. */
bool lg_egress_token_eq(const char *p, size_t n, const char *lit);

/*
 * Parses the request head in buf[0..n), which ends with the blank line.
 * 0, or -EINVAL with why (a short reason for the 400 answer).
 */
int lg_egress_parse_head(const char *buf, size_t n, struct lg_egress_req *r,
			 const char **why);

/*
 * The value a client sends for a proxy URL http://lgrun:SECRET@HOST:PORT
 * ("Basic " and base64 of "lgrun:SECRET"), into out; false when it does
 * not fit.
 */
#define LG_EGRESS_USER "lgrun"
bool lg_egress_basic_auth(const char *secret, char *out, size_t size);

/*
 * Does the head in buf[0..n) carry "Proxy-Authorization: <want>" (the
 * scheme in any case, the credentials compared in constant time)? Read
 * from the raw head, so a request the parser refuses is judged too.
 */
bool lg_egress_authorized(const char *buf, size_t n, const char *want);

/*
 * Is a plain-HTTP request a model API's (a local gateway: LiteLLM, vLLM,
 * Ollama, a Codex config.toml provider at an http:// address)? POST to a
 * path ending in /v1/messages, /v1/responses, /codex/responses,
 * /chat/completions, :generateContent or :streamGenerateContent (the query
 * aside), or a websocket's GET to a Responses path. Pure.
 */
bool lg_egress_is_model(const struct lg_egress_req *r);

struct sockaddr_in;

struct lg_egress_flow {
	enum lg_egress_kind kind;
	const char *host;
	uint16_t port;
	pid_t pid; /* the client; 0 unknown (always, over TCP, for now) */
	uint64_t up, down; /* bytes client->upstream, upstream->client */
	const char *error; /* NULL, or why it failed (502, 400) */
	bool decrypted; /* a model host: read by lgrun (mitm) */
	bool read; /* a plain-HTTP model request: read by the LLM proxy */
};

struct lg_egress_cfg {
	/* Called once per connection, from its thread, when it ends. */
	void (*flow)(void *ctx, const struct lg_egress_flow *f);
	void *ctx;
	/*
	 * A CONNECT to a host lgrun decrypts: decrypt() names its route (or
	 * NULL: tunnelled), and mitm() then serves the connection after the
	 * 200, counting the bytes; 0 or -errno with *why.
	 */
	const char *(*decrypt)(void *ctx, const char *host, uint16_t port);
	int (*mitm)(void *ctx, int fd, const struct lg_egress_req *r,
		    const char *route, uint64_t *up, uint64_t *down,
		    const char **why);
	/*
	 * Only the session's tree may use the proxy (loopback answers every
	 * local user): a request head without "Proxy-Authorization: <auth>"
	 * (lg_egress_basic_auth of the session's secret) gets 407, and
	 * refused() is told before the answer, while the peer still holds
	 * its socket (no flow report: an outsider feeds no counter).
	 * NULL: anyone. The second listener (lg_egress_listen_also, in the
	 * sealed tree's own network namespace) is reachable by the tree
	 * alone: it asks for nothing.
	 */
	const char *auth;
	void (*refused)(void *ctx, const struct sockaddr_in *peer,
			const char *why);
	/*
	 * A plain-HTTP model request (lg_egress_is_model) goes to lgrun's LLM
	 * proxy on 127.0.0.1:model_port as "METHOD /model_prefix/HOST:PORT
	 * PATH" (the route whose upstream is "http:/", behind the session's
	 * secret), so the proxy's parsers and actions serve it; 0: forwarded
	 * unread. A request to the LLM proxy itself goes on as it is.
	 */
	uint16_t model_port;
	const char *model_prefix;
	unsigned max_conns; /* at once; more get 503 (0: 512) */
	int connect_timeout_ms; /* 0: 30 s */
};

struct lg_egress;

/* Serves fd (a listening socket, see lg_proxy_listen). NULL with errno. */
struct lg_egress *lg_egress_start(int fd, const struct lg_egress_cfg *cfg);

/*
 * Accepts on fd as well (the sealed tree's listener, in its own network
 * namespace); the proxy closes it when it stops.
 */
void lg_egress_listen_also(struct lg_egress *e, int fd);

/*
 * Stops accepting, ends every open connection, waits for their threads a
 * short while, frees. Connections still busy after that are left to exit:
 * false then (what they use must not be freed).
 */
bool lg_egress_stop(struct lg_egress *e);

#endif
