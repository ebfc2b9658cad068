/* SPDX-License-Identifier: MIT */
/*
 * The LLM proxy: an HTTP server on 127.0.0.1 (libmicrohttpd, a thread per
 * connection) that forwards each model request to its upstream (libcurl:
 * system CAs, keep-alive, proxies from the environment) and the response
 * back as it arrives, while the model API parsers (llm.h) turn what passes
 * into session events: tool calls, their results, turns. When the session
 * has tripped, a model request is answered with an error in that API's
 * format instead of being forwarded, so the agent ends its turn.
 */
#ifndef LG_PROXY_H
#define LG_PROXY_H

#include <pthread.h>
#include <stdint.h>

struct lg_session;
struct lg_proxy;

struct lg_proxy_route {
	const char *name; /* "anthropic", "openai", "gemini": the URL prefix */
	const char *env; /* the variable the agent reads: ANTHROPIC_BASE_URL */
	char upstream[512]; /* where requests go */
};

/* The built-in routes, upstreams from the environment or the public APIs. */
size_t lg_proxy_default_routes(struct lg_proxy_route *out, size_t max);

/*
 * Starts the proxy. wake() is called (any thread) after a trip decided on
 * the proxy's path has been answered to the agent, so lgrun applies the
 * action. Returns NULL with err set on failure.
 */
struct lg_proxy *lg_proxy_start(struct lg_session *s, pthread_mutex_t *lock,
				const struct lg_proxy_route *routes, size_t n,
				void (*wake)(void *ctx), void *ctx, char *err,
				size_t errsize);
uint16_t lg_proxy_port(const struct lg_proxy *p);
void lg_proxy_stop(struct lg_proxy *p);

struct lg_proxy_stats {
	uint64_t requests, forwarded, refused, unparsed, upstream_errors;
};
void lg_proxy_stats(struct lg_proxy *p, struct lg_proxy_stats *st);

#endif
