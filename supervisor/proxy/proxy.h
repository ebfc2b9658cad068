/* SPDX-License-Identifier: MIT */
/*
 * The LLM proxy: an HTTP server on 127.0.0.1 (libmicrohttpd, a thread per
 * connection) that forwards each model request to its upstream (libcurl:
 * system CAs, keep-alive, proxies from the environment) and the response
 * back as it arrives, while the model API parsers (llm.h) turn what passes
 * into session events: tool calls, their results, turns. A websocket to a
 * model route (Codex's Responses protocol) is relayed message by message
 * and read the same way (wsframe.h). When the session
 * has tripped, a model request is answered with an error in that API's
 * format instead of being forwarded, so the agent ends its turn.
 */
#ifndef LG_PROXY_H
#define LG_PROXY_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "guard/sink.h"
#include "lib/error.h"
#include "llm/steer.h" /* struct lg_steer_note */

#define LG_PROXY_EXPORT __attribute__((visibility("default")))

struct lg_proxy;
struct sockaddr_in;

struct lg_proxy_route {
	char name[64]; /* the URL prefix: "anthropic", or the variable's name */
	char format[16]; /* "anthropic", "openai" or "gemini": how to read it */
	char env[64]; /* the variable the agent reads: ANTHROPIC_BASE_URL */
	char upstream[512]; /* where requests go */
};

/* The built-in routes, upstreams from the environment or the public APIs. */
size_t lg_proxy_default_routes(struct lg_proxy_route *out, size_t max);

/*
 * Adds the routes of "VAR:FORMAT, ..." ([llm] variables): each variable
 * gets its own route, its upstream is the variable's value in lgrun's
 * environment, else the public endpoint of that format. Returns the new
 * count, or -EINVAL with *bad at the entry that is wrong.
 */
int lg_proxy_extra_routes(const char *spec, struct lg_proxy_route *routes,
			  size_t n, size_t max, const char **bad);

/* A host the egress proxy decrypts, and the route its requests take. */
#define LG_PROXY_DECRYPT_DEFAULT                           \
	"api.anthropic.com, api.openai.com, "              \
	"generativelanguage.googleapis.com, chatgpt.com, " \
	"cloudcode-pa.googleapis.com"
#define LG_PROXY_DECRYPT_MAX 8
struct lg_proxy_decrypt {
	char host[256];
	char route[16]; /* "tls-N" */
};

/*
 * [llm] decrypt: "HOST[:FORMAT][=UPSTREAM], ..." (NULL: "default"). The
 * word default stands for LG_PROXY_DECRYPT_DEFAULT, the model API hosts,
 * but for those the list names itself. Each host gets a route in routes
 * (its upstream https://HOST unless given; FORMAT anthropic, openai or
 * gemini, known for those five) and an entry in hosts (at most
 * LG_PROXY_DECRYPT_MAX); a host twice is an error. 1 when the default
 * hosts are in, 0 when not, or -EINVAL with *bad at the entry that is
 * wrong.
 */
int lg_proxy_decrypt_routes(const char *spec, struct lg_proxy_route *routes,
			    size_t *nroutes, size_t max,
			    struct lg_proxy_decrypt *hosts, size_t *nhosts,
			    const char **bad);

/*
 * With the default decrypt list: the hosts of the base-URL routes among
 * routes[0..nbase) whose upstream is an https:// URL on port 443 that is
 * not decrypted yet (a gateway the user's ANTHROPIC_BASE_URL names, an
 * [llm] variables' one), so an agent that reaches it through the egress
 * proxy is read too. Added like lg_proxy_decrypt_routes does, in the
 * route's format, upstream https://HOST; as many as fit. How many.
 */
size_t lg_proxy_decrypt_upstreams(struct lg_proxy_route *routes, size_t nbase,
				  size_t *nroutes, size_t max,
				  struct lg_proxy_decrypt *hosts,
				  size_t *nhosts);

/* The listening socket on 127.0.0.1, made before the agent starts. */
int lg_proxy_listen(uint16_t *port);

/*
 * The proxy itself lives in liblgproxy.so (libcurl and libmicrohttpd weigh
 * milliseconds to load), which lgrun loads on the first connection to the
 * listening socket: a session that never calls a model never pays for it.
 * The session's entry points come in as a table (the library cannot see
 * lgrun's hidden symbols): its sink, as every source has it, and what only
 * the proxy asks.
 */
struct lg_proxy_ops {
	/*
	 * The session's way in (guard/sink.h), lgrun's: tool calls, turns
	 * and the model's text fed (LG_EV_TEXT, can_cut when the proxy can
	 * end the response: the verdict's cut ends it here), with the kill
	 * deferred around each feed; repeat.ignore_keys, the argument keys
	 * left out of a call's signature; a request from outside the
	 * session's tree (its path lacked the secret), refused with 403, an
	 * LG_EV_REFUSED notice. Every member below gets sink.ctx.
	 */
	struct lg_sink sink;
	bool (*model_blocked)(void *ctx);
	void (*stop_message)(void *ctx, char *out, size_t size);
	/* repeat without results: calls are judged as soon as complete */
	bool (*judge_calls)(void *ctx);
	/*
	 * The notes to add to this model request (steer), into out (at most
	 * max); how many. conv: the conversation (r->conv); items: how many
	 * items its array holds; stateful: it continues a stored response
	 * (previous_response_id), so a note added once stays upstream and is
	 * given once; agentic: it declares tools (the agent's own loop, not a
	 * side request); uri: the request, for the record. Notes decided since
	 * the last request are placed in the next agentic one (at = items) and
	 * recorded (a steer audit record); the conversation's earlier ones
	 * come back with their own at. In --observe nothing is returned
	 * (recorded only).
	 */
	size_t (*steer)(void *ctx, uint64_t conv, size_t items, bool stateful,
			bool agentic, const char *uri,
			struct lg_steer_note *out, size_t max);
	/*
	 * [output_repeat] cut (issue 28): a streamed response whose text
	 * loops is ended, so SSE responses are relayed event by event.
	 */
	bool (*cuts_text)(void *ctx);
	/*
	 * A tool call of a model response, as the model made it (issue 40):
	 * conv its conversation (r->conv), first the response's first call
	 * (a turn of the agent begins when it is the main conversation's).
	 */
	void (*call)(void *ctx, uint64_t conv, bool first, const char *tool,
		     const char *args);
};

struct lg_proxy_stats {
	uint64_t requests, forwarded, refused, unparsed, upstream_errors;
	uint64_t steered; /* notes put into requests (ops.steer) */
	uint64_t cut; /* responses ended early (output_repeat, a text feed's cut) */
};

/*
 * Starts serving listen_fd (taken over). wake() is called (any thread)
 * after a trip decided on the proxy's path has been answered to the agent,
 * so lgrun applies the action. secret: every request's path starts with
 * /SECRET (the base URLs lgrun gives the tree, and liblgtls's decrypted
 * requests), which the proxy takes off; any other gets 403 and an
 * LG_EV_REFUSED notice (loopback answers every local user). NULL or "":
 * anyone.
 * Returns NULL on failure, with err set (not when out of memory).
 */
#define LG_PROXY_SECRET_MAX 64
LG_PROXY_EXPORT struct lg_proxy *
lg_proxy_start(const struct lg_proxy_ops *ops, int listen_fd,
	       const struct lg_proxy_route *routes, size_t n,
	       const char *secret, void (*wake)(void *ctx), void *ctx,
	       struct lg_error *err);
LG_PROXY_EXPORT void lg_proxy_stop(struct lg_proxy *p);
LG_PROXY_EXPORT void lg_proxy_stats(struct lg_proxy *p,
				    struct lg_proxy_stats *st);

#endif
