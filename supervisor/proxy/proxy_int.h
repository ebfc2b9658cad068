/* SPDX-License-Identifier: MIT */
/*
 * Inside liblgproxy.so: proxy.c (the agent's side: libmicrohttpd, routes,
 * the answer), events.c (what a model stream and a request say, to the
 * session), upstream.c (libcurl to the model API) and ws.c (a websocket
 * relayed message by message) share these. Calls go one way: proxy.c ->
 * ws.c -> events.c and upstream.c.
 */
#ifndef LG_PROXY_INT_H
#define LG_PROXY_INT_H

#include <arpa/inet.h>
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>
#include "lib/canon.h"
#include "guard/event.h"
#include "llm/llm.h"
#include "llm/steer.h"
#include "lib/log.h"
#include "proxy.h"
#include "wsframe.h"
#include "zbody.h"
#include "lib/text.h"
#include "../../preload/volatile.h"

#define MAX_BODY (32u << 20) /* a request body larger than this is refused */
/* What a request body says: decompressed when it came zstd-encoded. */
#define BODY(r) ((r)->zstd ? (r)->plain : (r)->body)
#define BODY_LEN(r) ((r)->zstd ? (r)->plain_len : (r)->len)
#define MAX_CALLS 256 /* tool calls awaiting their result */
#define POOL 8 /* idle curl handles kept, with their connections */

struct call {
	bool used;
	char id[128], name[128];
	char *input;
	uint64_t seq; /* for evicting the oldest */
};

/*
 * The session's entry points, handed over by lgrun (one proxy a process):
 * events.c's, which speaks to the session.
 */
extern struct lg_proxy_ops ops;

struct lg_proxy {
	struct MHD_Daemon *d;
	pthread_mutex_t calls_lock; /* calls[], seq (the session locks itself) */
	char secret[LG_PROXY_SECRET_MAX]; /* every path's first segment */
	struct lg_proxy_route routes[16];
	size_t nroutes;
	void (*wake)(void *ctx);
	void *wake_ctx;
	struct call calls[MAX_CALLS];
	uint64_t seq;
	pthread_mutex_t pool_lock;
	CURL *pool[POOL];
	size_t npool;
	struct lg_proxy_stats st;
	atomic_bool stopping; /* websocket relays end */
};

/* The counters: a connection's thread each, read by lgrun's main thread. */
#define COUNT(field) __atomic_add_fetch(&(field), 1, __ATOMIC_RELAXED)

/* One request in flight: the MHD side and the curl side meet here. */
struct req {
	struct lg_proxy *p;
	char *uri; /* as the agent sent it, query included, no secret */
	bool outsider; /* the path lacked the secret: refused */
	char method[16];
	char *body;
	size_t len, cap;
	bool too_big;
	bool zstd; /* Content-Encoding: zstd: read plain, forwarded as sent */
	bool ws; /* Upgrade: websocket (Codex's Responses protocol) */
	char *plain; /* the body decompressed, or NULL: body is plain */
	size_t plain_len;
	struct curl_slist *headers;
	const struct lg_proxy_route *route;
	enum lg_llm_api api;
	/* upstream response */
	CURL *h;
	pthread_t thread;
	bool thread_started;
	pthread_mutex_t m;
	pthread_cond_t c;
	bool headers_done, failed;
	long status;
	struct curl_slist *resp_headers; /* "Name: value" lines to pass on */
	char error[CURL_ERROR_SIZE];
	int pipe[2];
	struct lg_llm_stream *stream;
	bool wake_when_sent; /* a trip was answered: act once it is out */
	char text[2048]; /* the start of the turn's text, for the greeting check */
	bool called; /* this response made a tool call (ops.call's first) */
	size_t text_len;
	/*
	 * The block handed to MHD last, parsed at the start of the next call:
	 * bytes go out first, understanding follows. The end of the response
	 * (the last chunk) reaches the agent only after the last block was
	 * parsed, so a tool call is always known before its result arrives.
	 */
	char *held;
	size_t held_len, held_cap;
	/*
	 * Judging calls as they complete (repeat without results): the stream
	 * is cut into SSE events; those of an open tool call wait in hold
	 * until it is judged, the rest go out in order through out.
	 */
	bool judged, withheld, finished;
	/*
	 * [output_repeat] cut: an SSE response relayed event by event (the
	 * same reader, no call held) so that it can be ended between two
	 * events. cut: output_repeat fired, the response ends at the first
	 * event boundary where no tool call streams; stop: it has ended, the
	 * upstream transfer is aborted (upstream.c's progress callback).
	 */
	bool framed, cut;
	atomic_bool stop;
	uint64_t conv; /* the conversation: a digest of its first message */
	struct sbuf {
		char *p;
		size_t len, off, cap;
	} pend, hold, out;
};

/* A whole response to the agent: proxy.c's answers, ws.c's failures. */
static inline enum MHD_Result answer(struct MHD_Connection *con, int status,
				     const char *body, const char *type)
{
	struct MHD_Response *resp = MHD_create_response_from_buffer(
		strlen(body), (void *)body, MHD_RESPMEM_MUST_COPY);
	enum MHD_Result ret;

	if (!resp)
		return MHD_NO;
	MHD_add_response_header(resp, "Content-Type", type);
	ret = MHD_queue_response(con, (unsigned)status, resp);
	MHD_destroy_response(resp);
	return ret;
}

void on_tool_call(void *ctx, const struct lg_llm_call *lc);

void on_text(void *ctx, const char *delta, size_t n);

void on_turn(void *ctx, const struct lg_llm_turn *t);

void on_result(void *ctx, const struct lg_llm_result *res);

uint64_t conversation(const char *route, const char *body, size_t len);

bool hop_by_hop(const char *h, size_t n);

/*
 * lgrun's notes for the request body (ops.steer), put in: the new body
 * (malloc'd, NUL-terminated) into *out and how many notes it got; 0 and
 * *out NULL when none (the body goes on as it was).
 */
int steer_body(struct req *r, const char *body, size_t n, char **out,
	       size_t *out_len);

void *upstream_thread(void *arg);

enum MHD_Result ws_start(struct req *r, struct MHD_Connection *con);

#endif
