// SPDX-License-Identifier: MIT
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

#include "canon.h"
#include "llm.h"
#include "log.h"
#include "proxy.h"
#include "wsframe.h"
#include "zbody.h"
#include "text.h"
#include "../preload/volatile.h"

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

/* The session's entry points, handed over by lgrun (one proxy a process). */
static struct lg_proxy_ops ops;

static uint64_t conversation(const char *route, const char *body, size_t len);

struct lg_proxy {
	struct MHD_Daemon *d;
	uint16_t port;
	struct lg_session *s;
	pthread_mutex_t calls_lock; /* calls[], seq (the session locks itself) */
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
	char *uri; /* as the agent sent it, query included */
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
	uint64_t conv; /* the conversation: a digest of its first message */
	struct sbuf {
		char *p;
		size_t len, off, cap;
	} pend, hold, out;
};

/* --- model events -------------------------------------------------------- */

static struct call *find_call(struct lg_proxy *p, const char *id,
			      const char *name)
{
	struct call *best = NULL;
	bool by_id = id && *id;

	for (int pass = 0; pass < 2 && !best; pass++) {
		for (size_t i = 0; i < MAX_CALLS; i++) {
			struct call *c = &p->calls[i];

			if (!c->used)
				continue;
			/*
			 * Without ids (Gemini), the oldest id-less call of
			 * that name: never a call another API's agent is
			 * still waiting on. gemini-cli makes up an id for a
			 * call that came without one and sends it back with
			 * the result: no call has it, so the name decides.
			 */
			if (pass == 0 && by_id ? strcmp(c->id, id) == 0 :
						 (!c->id[0] && name &&
						  strcmp(c->name, name) == 0)) {
				if (!best || c->seq < best->seq)
					best = c;
			}
		}
		if (!by_id)
			break;
	}
	return best;
}

static void on_tool_call(void *ctx, const struct lg_llm_call *lc)
{
	struct req *r = ctx;
	struct lg_proxy *p = r->p;
	struct call *c = NULL, *oldest = &p->calls[0];

	pthread_mutex_lock(&p->calls_lock);
	for (size_t i = 0; i < MAX_CALLS && !c; i++) {
		if (!p->calls[i].used)
			c = &p->calls[i];
		else if (p->calls[i].seq < oldest->seq)
			oldest = &p->calls[i];
	}
	if (!c)
		c = oldest;
	free(c->input);
	c->used = true;
	c->seq = ++p->seq;
	snprintf(c->id, sizeof(c->id), "%s", lc->id ? lc->id : "");
	snprintf(c->name, sizeof(c->name), "%s", lc->name ? lc->name : "");
	c->input = strdup(lc->input ? lc->input : "{}");
	if (r->judged && c->input) {
		/* the signature is the call alone: judge it before it goes out */
		char canon[8192], apv[160];
		const char *args = lg_canon_call(c->name, c->input,
						 strlen(c->input),
						 ops.ignore_keys(p->s), canon,
						 sizeof(canon)) >= 0 ?
					   canon :
					   c->input;

		lg_preview(args, apv, sizeof(apv), 80);
		ops.defer_kill(p->s, true);
		ops.tool_done(p->s, 0, "model", c->name, args, "", apv, "",
			      r->conv);
		ops.defer_kill(p->s, false);
		if (ops.model_blocked(p->s))
			r->withheld = true;
	}
	pthread_mutex_unlock(&p->calls_lock);
}

static void on_text(void *ctx, const char *delta, size_t n)
{
	struct req *r = ctx;
	size_t room = sizeof(r->text) - 1 - r->text_len;

	memcpy(r->text + r->text_len, delta, n < room ? n : room);
	r->text_len += n < room ? n : room;
	r->text[r->text_len] = '\0';
	ops.defer_kill(r->p->s, true);
	ops.llm_text(r->p->s, delta, n);
	ops.defer_kill(r->p->s, false);
}

static void on_turn(void *ctx, const struct lg_llm_turn *t)
{
	struct req *r = ctx;
	bool stopped;

	ops.defer_kill(r->p->s, true);
	ops.llm_turn(r->p->s, t->model, t->stop_reason, t->input_tokens,
		     t->output_tokens, t->tool_calls, r->text);
	ops.defer_kill(r->p->s, false);
	stopped = ops.model_blocked(r->p->s);
	/*
	 * A budget ran out with this turn: the agent hears it on its next
	 * request, and if it makes none, the action applies after the grace.
	 */
	if (stopped && r->p->wake)
		r->p->wake(r->p->wake_ctx);
}

static void digest_add(void *ctx, const char *s, size_t k)
{
	lg_digest_update(ctx, s, k);
}

/* A tool result in the agent's request: the call it answers is complete. */
static void on_result(void *ctx, const struct lg_llm_result *res)
{
	struct req *r = ctx;
	struct lg_proxy *p = r->p;
	char canon[8192], digest[LG_DIGEST_HEX], apv[160], rpv[160];
	struct lg_digest h;
	struct call *c;
	const char *args;

	pthread_mutex_lock(&p->calls_lock);
	c = find_call(p, res->call_id, res->name);
	if (c) {
		args = lg_canon_call(c->name, c->input, strlen(c->input),
				     ops.ignore_keys(p->s), canon,
				     sizeof(canon)) >= 0 ?
			       canon :
			       c->input;
		/* pids, clocks and temp names do not make a result new */
		lg_digest_init(&h);
		lg_volatile_scan(res->content, strlen(res->content), digest_add,
				 &h);
		lg_digest_hex(lg_digest_final(&h), digest);
		lg_preview(args, apv, sizeof(apv), 80);
		lg_preview(res->content, rpv, sizeof(rpv), 80);
		/* The agent must hear why before the tree goes. */
		if (!ops.judge_calls(p->s)) {
			ops.defer_kill(p->s, true);
			ops.tool_done(p->s, 0, "model", c->name, args, digest,
				      apv, rpv, r->conv);
			ops.defer_kill(p->s, false);
		}
		c->used = false;
		free(c->input);
		c->input = NULL;
	}
	pthread_mutex_unlock(&p->calls_lock);
}

/* --- upstream (curl) ----------------------------------------------------- */

static void headers_ready(struct req *r, long status, bool failed);

static bool hop_by_hop(const char *h, size_t n)
{
	static const char *const names[] = {
		"connection:",	    "keep-alive:",	 "transfer-encoding:",
		"content-length:",  "proxy-connection:", "te:",
		"trailer:",	    "upgrade:",		 "host:",
		"accept-encoding:",
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		size_t k = strlen(names[i]);

		if (n >= k && strncasecmp(h, names[i], k) == 0)
			return true;
	}
	return false;
}

static size_t on_header(char *b, size_t size, size_t nmemb, void *ud)
{
	struct req *r = ud;
	size_t n = size * nmemb;

	if (n >= 5 && strncmp(b, "HTTP/", 5) == 0) {
		/* a new status line (after 100-continue, or a redirect) */
		curl_slist_free_all(r->resp_headers);
		r->resp_headers = NULL;
		return n;
	}
	if (n <= 2) { /* the blank line: headers are complete */
		long st = 0;

		curl_easy_getinfo(r->h, CURLINFO_RESPONSE_CODE, &st);
		if (st >= 200) /* not a 100-continue: the agent gets them now */
			headers_ready(r, st, false);
		return n;
	}
	if (!hop_by_hop(b, n)) {
		char line[8192];
		size_t l = n < sizeof(line) - 1 ? n : sizeof(line) - 1;

		memcpy(line, b, l);
		while (l && (line[l - 1] == '\n' || line[l - 1] == '\r'))
			l--;
		line[l] = '\0';
		r->resp_headers = curl_slist_append(r->resp_headers, line);
	}
	return n;
}

static void headers_ready(struct req *r, long status, bool failed)
{
	pthread_mutex_lock(&r->m);
	if (!r->headers_done) {
		r->headers_done = true;
		r->status = status;
		r->failed = failed;
		pthread_cond_broadcast(&r->c);
	}
	pthread_mutex_unlock(&r->m);
}

static size_t on_body(char *b, size_t size, size_t nmemb, void *ud)
{
	struct req *r = ud;
	size_t n = size * nmemb, off = 0;

	while (off < n) {
		ssize_t w = send(r->pipe[1], b + off, n - off, MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return 0; /* the agent went away: abort the transfer */
		off += (size_t)w;
	}
	return n;
}

static CURL *take_handle(struct lg_proxy *p)
{
	CURL *h = NULL;

	pthread_mutex_lock(&p->pool_lock);
	if (p->npool)
		h = p->pool[--p->npool];
	pthread_mutex_unlock(&p->pool_lock);
	if (h)
		curl_easy_reset(h); /* options go, the connection cache stays */
	else
		h = curl_easy_init();
	return h;
}

static void give_handle(struct lg_proxy *p, CURL *h)
{
	pthread_mutex_lock(&p->pool_lock);
	if (p->npool < POOL) {
		p->pool[p->npool++] = h;
		h = NULL;
	}
	pthread_mutex_unlock(&p->pool_lock);
	if (h)
		curl_easy_cleanup(h);
}

static void *upstream_thread(void *arg)
{
	struct req *r = arg;
	CURL *h = take_handle(r->p);
	char url[4096];
	const char *rest = r->uri + 1 + strlen(r->route->name);
	CURLcode rc;
	long status = 0;

	snprintf(url, sizeof(url), "%s%s", r->route->upstream, rest);
	r->h = h;
	if (!h) {
		headers_ready(r, 0, true);
		close(r->pipe[1]);
		r->pipe[1] = -1;
		return NULL;
	}
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, 30L);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, r->error);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, r->headers);
	curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(h, CURLOPT_HEADERDATA, r);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, r);
	if (strcmp(r->method, "GET") == 0) {
		curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
	} else {
		curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, r->method);
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, r->body ? r->body : "");
		curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE,
				 (curl_off_t)r->len);
	}
	rc = curl_easy_perform(h);
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
	headers_ready(r, status, rc != CURLE_OK && status == 0);
	if (rc != CURLE_OK && status == 0)
		COUNT(r->p->st.upstream_errors);
	close(r->pipe[1]);
	r->pipe[1] = -1;
	give_handle(r->p, h);
	return NULL;
}

/* --- the agent's side (MHD) ---------------------------------------------- */

static enum MHD_Result copy_header(void *cls, enum MHD_ValueKind kind,
				   const char *key, const char *value)
{
	struct req *r = cls;
	char line[8192];
	int n;

	(void)kind;
	if (strcasecmp(key, "content-encoding") == 0 && value &&
	    strcasecmp(value, "zstd") == 0)
		r->zstd = true;
	if (strcasecmp(key, "upgrade") == 0 && value &&
	    strcasecmp(value, "websocket") == 0)
		r->ws = true;
	n = snprintf(line, sizeof(line), "%s: %s", key, value ? value : "");
	if (n > 0 && (size_t)n < sizeof(line) && !hop_by_hop(line, (size_t)n))
		r->headers = curl_slist_append(r->headers, line);
	return MHD_YES;
}

static bool sb_add(struct sbuf *b, const char *p, size_t n)
{
	if (!n)
		return true;
	if (b->len + n > b->cap) {
		size_t cap = (b->len + n) * 2 + 4096;
		char *q = realloc(b->p, cap);

		if (!q)
			return false;
		b->p = q;
		b->cap = cap;
	}
	memcpy(b->p + b->len, p, n);
	b->len += n;
	return true;
}

static void sb_free(struct sbuf *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}

/* End of the first complete SSE event in p (blank line included), or 0. */
static size_t event_end(const char *p, size_t n)
{
	for (size_t i = 0; i + 1 < n; i++) {
		if (p[i] == '\n' && p[i + 1] == '\n')
			return i + 2;
		if (p[i] == '\r' && i + 3 < n && p[i + 1] == '\n' &&
		    p[i + 2] == '\r' && p[i + 3] == '\n')
			return i + 4;
	}
	return 0;
}

/* Takes the complete events in pend: to out, or held with an open call. */
static void judge_events(struct req *r)
{
	size_t e;

	while (!r->withheld && (e = event_end(r->pend.p + r->pend.off,
					      r->pend.len - r->pend.off))) {
		const char *ev = r->pend.p + r->pend.off;
		bool was_open = lg_llm_stream_call_open(r->stream), now_open;

		lg_llm_stream_feed(r->stream, ev, e);
		now_open = lg_llm_stream_call_open(r->stream);
		r->pend.off += e;
		if (r->withheld) {
			/* the call never reaches the agent: an error ends it */
			char msg[1024], err[2048];
			int n;

			ops.stop_message(r->p->s, msg, sizeof(msg));
			n = lg_llm_stream_error_event(r->api, msg, err,
						      sizeof(err));
			r->hold.len = 0;
			if (n > 0)
				sb_add(&r->out, err, (size_t)n);
			r->wake_when_sent = true;
			break;
		}
		if (was_open || now_open)
			sb_add(&r->hold, ev, e);
		else
			sb_add(&r->out, ev, e);
		if (!now_open && r->hold.len) { /* judged and allowed */
			sb_add(&r->out, r->hold.p, r->hold.len);
			r->hold.len = 0;
		}
	}
	if (r->pend.off == r->pend.len)
		r->pend.off = r->pend.len = 0;
}

/* The response of a streamed request whose tool calls are judged first. */
static ssize_t read_judged(struct req *r, char *buf, size_t max)
{
	char tmp[16384];

	for (;;) {
		size_t avail = r->out.len - r->out.off;
		ssize_t n;

		if (avail) {
			size_t k = avail < max ? avail : max;

			memcpy(buf, r->out.p + r->out.off, k);
			r->out.off += k;
			if (r->out.off == r->out.len)
				r->out.off = r->out.len = 0;
			return (ssize_t)k;
		}
		if (r->finished || r->withheld) {
			if (!r->finished)
				lg_llm_stream_end(r->stream);
			r->finished = true;
			return MHD_CONTENT_READER_END_OF_STREAM;
		}
		do
			n = read(r->pipe[0], tmp, sizeof(tmp));
		while (n < 0 && errno == EINTR);
		if (n <= 0) {
			/* what is left goes as it is, an unfinished call too */
			sb_add(&r->out, r->hold.p, r->hold.len);
			sb_add(&r->out, r->pend.p + r->pend.off,
			       r->pend.len - r->pend.off);
			if (r->pend.len > r->pend.off)
				lg_llm_stream_feed(r->stream,
						   r->pend.p + r->pend.off,
						   r->pend.len - r->pend.off);
			r->hold.len = r->pend.len = r->pend.off = 0;
			lg_llm_stream_end(r->stream);
			r->finished = true;
			if (n < 0)
				return MHD_CONTENT_READER_END_WITH_ERROR;
			continue;
		}
		if (!sb_add(&r->pend, tmp, (size_t)n)) {
			r->finished = true;
			return MHD_CONTENT_READER_END_WITH_ERROR;
		}
		judge_events(r);
	}
}

static ssize_t read_body(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct req *r = cls;
	ssize_t n;

	(void)pos;
	if (r->judged)
		return read_judged(r, buf, max);
	if (r->stream && r->held_len) {
		lg_llm_stream_feed(r->stream, r->held, r->held_len);
		r->held_len = 0;
	}
	do
		n = read(r->pipe[0], buf, max);
	while (n < 0 && errno == EINTR);
	if (n > 0) {
		if (r->stream) {
			if ((size_t)n > r->held_cap) {
				char *h = realloc(r->held, (size_t)n);

				if (h) {
					r->held = h;
					r->held_cap = (size_t)n;
				}
			}
			if ((size_t)n <= r->held_cap) {
				memcpy(r->held, buf, (size_t)n);
				r->held_len = (size_t)n;
			} else { /* no memory: parse now rather than not at all */
				lg_llm_stream_feed(r->stream, buf, (size_t)n);
			}
		}
		return n;
	}
	if (r->stream) {
		lg_llm_stream_end(r->stream);
		if (lg_llm_stream_errors(r->stream))
			COUNT(r->p->st.unparsed);
	}
	return n == 0 ? MHD_CONTENT_READER_END_OF_STREAM :
			MHD_CONTENT_READER_END_WITH_ERROR;
}

static enum MHD_Result answer(struct MHD_Connection *con, int status,
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

/* The session stopped: tell the agent, in its model's own words. */
static enum MHD_Result refuse(struct req *r, struct MHD_Connection *con)
{
	char msg[1024], body[2048];
	int status = 400;

	ops.stop_message(r->p->s, msg, sizeof(msg));
	if (lg_llm_error_body(r->api, msg, body, sizeof(body), &status) < 0)
		snprintf(body, sizeof(body),
			 "{\"error\":\"lgrun stopped this session\"}");
	COUNT(r->p->st.refused);
	return answer(con, status, body, "application/json");
}

static enum MHD_Result forward(struct req *r, struct MHD_Connection *con)
{
	struct MHD_Response *resp;
	enum MHD_Result ret;
	bool sse;

	/* a socketpair, not a pipe: send() can refuse without a SIGPIPE */
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, r->pipe) < 0)
		return answer(con, 502, "{\"error\":\"lgrun proxy: no pipe\"}",
			      "application/json");
	sse = lg_llm_request_streams(r->api, r->uri, BODY(r), BODY_LEN(r));
	if (r->api != LG_LLM_UNKNOWN) {
		struct lg_llm_sink sink = { on_tool_call, on_text, on_turn, r };

		r->stream = lg_llm_stream_new(r->api, sse, &sink);
		r->judged = r->stream && sse && ops.judge_calls(r->p->s);
	}
	if (pthread_create(&r->thread, NULL, upstream_thread, r) != 0) {
		close(r->pipe[0]);
		close(r->pipe[1]);
		r->pipe[0] = r->pipe[1] = -1;
		return answer(con, 502,
			      "{\"error\":\"lgrun proxy: no thread\"}",
			      "application/json");
	}
	r->thread_started = true;
	COUNT(r->p->st.forwarded);
	pthread_mutex_lock(&r->m);
	while (!r->headers_done)
		pthread_cond_wait(&r->c, &r->m);
	pthread_mutex_unlock(&r->m);
	if (r->failed) {
		char msg[CURL_ERROR_SIZE + 600], body[CURL_ERROR_SIZE + 1024];
		int status = 502;

		snprintf(msg, sizeof(msg),
			 "lgrun proxy: the upstream %s is unreachable: %s",
			 r->route->upstream,
			 r->error[0] ? r->error : "no answer");
		if (lg_llm_error_body(r->api, msg, body, sizeof(body),
				      &status) < 0)
			snprintf(
				body, sizeof(body),
				"{\"error\":\"lgrun proxy: upstream unreachable\"}");
		return answer(con, 502, body, "application/json");
	}
	/* Streamed through as it arrives: MHD pulls from the pipe. */
	resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 4096,
						 read_body, r, NULL);
	if (!resp)
		return MHD_NO;
	for (struct curl_slist *h = r->resp_headers; h; h = h->next) {
		char *colon = strchr(h->data, ':');

		if (!colon)
			continue;
		*colon = '\0';
		MHD_add_response_header(resp, h->data,
					colon + 1 + strspn(colon + 1, " \t"));
		*colon = ':';
	}
	ret = MHD_queue_response(con, (unsigned)r->status, resp);
	MHD_destroy_response(resp);
	return ret;
}

/* --- websockets (Codex's Responses protocol) ----------------------------- */

/*
 * A websocket to a model route: lgrun opens its own to the upstream (the
 * upgrade as the agent wrote it, less permessage-deflate: lgrun reads the
 * frames, and Codex takes a socket without it), answers the agent's upgrade
 * with the upstream's 101, then relays message by message. Each message is
 * read whole before it goes on, and written again as one frame: a
 * response.create is a request (its tool results complete the calls of the
 * last turn; when the session is stopped it is answered with an error event
 * instead of sent), and the events that come back are a streamed response
 * (the same parser as SSE). Later turns carry only new items and
 * previous_response_id: the connection is one conversation.
 */
#define WS_HEAD_MAX 65536
#define WS_POLL_MS 500 /* how often a relay looks at lg_proxy_stop */

struct ws {
	struct req *r;
	CURL *h;
	curl_socket_t ufd;
	int cfd;
	struct lg_ws_reader *from_agent, *from_up;
	bool done, refused_turn, stopped;
	char *extra; /* bytes of the upstream after its 101 head */
	size_t extra_len;
	unsigned long long unread; /* messages not understood */
};

/* All of p to the upstream (TLS through curl), waiting as needed. */
static int up_send(struct ws *w, const char *p, size_t n)
{
	while (n) {
		size_t sent = 0;
		CURLcode rc = curl_easy_send(w->h, p, n, &sent);

		if (rc == CURLE_AGAIN) {
			struct pollfd pf = { w->ufd, POLLOUT, 0 };

			if (poll(&pf, 1, 30000) <= 0)
				return -EIO;
			continue;
		}
		if (rc != CURLE_OK)
			return -EIO;
		p += sent;
		n -= sent;
	}
	return 0;
}

static int agent_send(struct ws *w, const char *p, size_t n)
{
	while (n) {
		ssize_t k = send(w->cfd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (k < 0 && (errno == EAGAIN || errno == EINTR)) {
			struct pollfd pf = { w->cfd, POLLOUT, 0 };

			if (poll(&pf, 1, 30000) <= 0)
				return -EIO;
			continue;
		}
		if (k <= 0)
			return -EIO;
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

/* One whole frame to a side: masked to the upstream, as a client must. */
static void ws_send(struct ws *w, bool to_up, unsigned op, const char *p,
		    size_t n)
{
	char *f;
	long len = lg_ws_frame(op, to_up, p, n, &f);

	if (len < 0 || (to_up ? up_send(w, f, (size_t)len) :
				agent_send(w, f, (size_t)len)) < 0)
		w->done = true;
	free(f);
}

/* The session stopped: the agent hears it as an error event of its API. */
static void ws_refuse(struct ws *w)
{
	char msg[1024], ev[2048];
	const char *data;
	int n;

	ops.stop_message(w->r->p->s, msg, sizeof(msg));
	n = lg_llm_stream_error_event(w->r->api, msg, ev, sizeof(ev));
	data = n > 0 ? strstr(ev, "data: ") : NULL;
	if (data) {
		data += 6;
		ws_send(w, false, LG_WS_TEXT, data, strcspn(data, "\n"));
	}
	if (w->r->p->wake)
		w->r->p->wake(w->r->p->wake_ctx); /* the action applies now */
}

/* The turn that was streaming is over (a new one starts, or the end). */
static void ws_turn_end(struct ws *w)
{
	struct req *r = w->r;

	if (!r->stream)
		return;
	lg_llm_stream_end(r->stream);
	if (lg_llm_stream_errors(r->stream))
		COUNT(r->p->st.unparsed);
	lg_llm_stream_free(r->stream);
	r->stream = NULL;
}

/* A text message from the agent: a request, read before it goes on. */
static bool ws_request(struct ws *w, const char *p, size_t n)
{
	struct req *r = w->r;
	json_t *m = json_loadb(p, n, 0, NULL);
	const char *type = json_string_value(json_object_get(m, "type"));
	bool prewarm, stopped;
	char model[128];

	if (!type || strcmp(type, "response.create") != 0) {
		if (!json_is_object(m))
			w->unread++;
		json_decref(m);
		return true; /* another kind of message: on as it is */
	}
	prewarm = json_is_false(json_object_get(m, "generate"));
	json_decref(m);
	ws_turn_end(w);
	COUNT(r->p->st.requests);
	if (!r->conv) /* the first request has the whole conversation */
		r->conv = conversation(r->route->name, p, n);
	if (lg_llm_request_last_results(r->api, p, n, on_result, r, model,
					sizeof(model)) < 0)
		COUNT(r->p->st.unparsed);
	stopped = ops.model_blocked(r->p->s);
	r->judged = !stopped && ops.judge_calls(r->p->s);
	if (stopped) {
		COUNT(r->p->st.refused);
		ws_refuse(w);
		return false;
	}
	COUNT(r->p->st.forwarded);
	r->text_len = 0;
	r->text[0] = '\0';
	r->withheld = false;
	if (!prewarm) { /* a prewarm makes no output: not a turn */
		struct lg_llm_sink sink = { on_tool_call, on_text, on_turn, r };

		r->stream = lg_llm_stream_new(r->api, true, &sink);
	}
	return true;
}

static void from_agent(void *ctx, unsigned op, const char *p, size_t n)
{
	struct ws *w = ctx;

	if (op == LG_WS_TEXT && !ws_request(w, p, n))
		return;
	ws_send(w, true, op, p, n);
	if (op == LG_WS_CLOSE)
		w->stopped = true; /* the upstream's close ends it */
}

static void from_up(void *ctx, unsigned op, const char *p, size_t n)
{
	struct ws *w = ctx;
	struct req *r = w->r;

	if (r->withheld)
		return; /* the turn was refused: nothing more of it goes on */
	if (op == LG_WS_TEXT && r->stream) {
		char *ev = malloc(n + 9);

		if (ev) { /* an event, as SSE would carry it */
			memcpy(ev, "data: ", 6);
			memcpy(ev + 6, p, n);
			memcpy(ev + 6 + n, "\n\n", 3);
			lg_llm_stream_feed(r->stream, ev, n + 8);
			free(ev);
		}
		if (r->withheld) { /* a call judged a repeat: never delivered */
			ws_turn_end(w);
			ws_refuse(w);
			return;
		}
	}
	ws_send(w, false, op, p, n);
	if (op == LG_WS_CLOSE)
		w->done = true;
}

static void too_big(void *ctx, unsigned op)
{
	struct ws *w = ctx;
	static const char code[] =
		"\x03\xf1" /* 1009 */ "lgrun: message too big";

	(void)op;
	COUNT(w->r->p->st.unparsed);
	ws_send(w, true, LG_WS_CLOSE, code, sizeof(code) - 1);
	ws_send(w, false, LG_WS_CLOSE, code, sizeof(code) - 1);
	w->done = true;
}

static void ws_broken(struct ws *w)
{
	static const char code[] =
		"\x03\xea" /* 1002 */ "lgrun: not a websocket";

	COUNT(w->r->p->st.unparsed);
	ws_send(w, true, LG_WS_CLOSE, code, sizeof(code) - 1);
	ws_send(w, false, LG_WS_CLOSE, code, sizeof(code) - 1);
	w->done = true;
}

static void ws_relay(struct ws *w, const char *extra, size_t extra_len)
{
	char *buf = malloc(65536);

	if (!buf)
		return;
	if ((extra_len && lg_ws_feed(w->from_agent, extra, extra_len) < 0) ||
	    (w->extra_len &&
	     lg_ws_feed(w->from_up, w->extra, w->extra_len) < 0))
		ws_broken(w);
	while (!w->done && !atomic_load(&w->r->p->stopping)) {
		struct pollfd pf[2] = { { w->cfd, POLLIN, 0 },
					{ w->ufd, POLLIN, 0 } };
		int k = poll(pf, 2, WS_POLL_MS);

		if (k < 0 && errno != EINTR)
			break;
		if (k <= 0)
			continue;
		if (pf[0].revents) {
			ssize_t got = recv(w->cfd, buf, 65536, MSG_DONTWAIT);

			if (got == 0 ||
			    (got < 0 && errno != EAGAIN && errno != EINTR))
				break; /* the agent went */
			if (got > 0 &&
			    lg_ws_feed(w->from_agent, buf, (size_t)got) < 0)
				ws_broken(w);
		}
		/* TLS may hold more than one read: until curl says again */
		while (!w->done && pf[1].revents) {
			size_t got = 0;
			CURLcode rc = curl_easy_recv(w->h, buf, 65536, &got);

			if (rc == CURLE_AGAIN)
				break;
			if (rc != CURLE_OK || got == 0) {
				w->done = true; /* the upstream went */
				break;
			}
			if (lg_ws_feed(w->from_up, buf, got) < 0)
				ws_broken(w);
		}
	}
	free(buf);
}

static void ws_upgraded(void *cls, struct MHD_Connection *con, void *con_cls,
			const char *extra_in, size_t extra_in_size,
			MHD_socket sock, struct MHD_UpgradeResponseHandle *urh)
{
	struct ws *w = cls;
	struct lg_ws_sink a = { from_agent, too_big, w },
			  u = { from_up, too_big, w };

	(void)con;
	(void)con_cls;
	w->cfd = sock;
	w->from_agent = lg_ws_reader_new(MAX_BODY, &a);
	w->from_up = lg_ws_reader_new(MAX_BODY, &u);
	if (w->from_agent && w->from_up)
		ws_relay(w, extra_in, extra_in_size);
	ws_turn_end(w);
	lg_ws_reader_free(w->from_agent);
	lg_ws_reader_free(w->from_up);
	curl_easy_cleanup(w->h);
	free(w->extra);
	free(w);
	MHD_upgrade_action(urh, MHD_UPGRADE_ACTION_CLOSE);
}

/* The upstream's head, read up to its blank line; the rest kept. */
static long up_head(struct ws *w, char *head, size_t size)
{
	size_t n = 0;

	while (n < size) {
		size_t got = 0;
		CURLcode rc = curl_easy_recv(w->h, head + n, size - n, &got);
		char *end;

		if (rc == CURLE_AGAIN) {
			struct pollfd pf = { w->ufd, POLLIN, 0 };

			if (poll(&pf, 1, 60000) <= 0)
				return -ETIMEDOUT;
			continue;
		}
		if (rc != CURLE_OK || got == 0)
			return -ECONNRESET;
		n += got;
		end = memmem(head, n, "\r\n\r\n", 4);
		if (end) {
			size_t hl = (size_t)(end + 4 - head);

			if (n > hl) {
				w->extra = malloc(n - hl);
				if (!w->extra)
					return -ENOMEM;
				memcpy(w->extra, head + hl, n - hl);
				w->extra_len = n - hl;
			}
			return (long)hl;
		}
	}
	return -E2BIG;
}

/* The request line and headers for the upstream; its length or -E2BIG. */
static int up_request(const struct req *r, const char *url, char *out,
		      size_t size)
{
	const char *host = strstr(url, "://"), *path;
	size_t o;
	int k;

	host = host ? host + 3 : url;
	path = strchr(host, '/');
	k = snprintf(out, size,
		     "GET %s HTTP/1.1\r\nHost: %.*s\r\n"
		     "Connection: Upgrade\r\nUpgrade: websocket\r\n",
		     path ? path : "/",
		     (int)(path ? (size_t)(path - host) : strlen(host)), host);
	if (k < 0 || (size_t)k >= size)
		return -E2BIG;
	o = (size_t)k;
	for (const struct curl_slist *h = r->headers; h; h = h->next) {
		if (strncasecmp(h->data, "sec-websocket-extensions:", 25) ==
			    0 ||
		    strncasecmp(h->data, "expect:", 7) == 0)
			continue; /* lgrun reads the frames: no compression */
		k = snprintf(out + o, size - o, "%s\r\n", h->data);
		if (k < 0 || (size_t)k >= size - o)
			return -E2BIG;
		o += (size_t)k;
	}
	if (o + 3 > size)
		return -E2BIG;
	memcpy(out + o, "\r\n", 3);
	return (int)o + 2;
}

static enum MHD_Result ws_fail(struct ws *w, struct MHD_Connection *con,
			       const char *why)
{
	char msg[1200], body[2048];
	int status = 502;

	snprintf(msg, sizeof(msg),
		 "lgrun proxy: no websocket to the upstream %s: %s",
		 w->r->route->upstream, why);
	if (lg_llm_error_body(w->r->api, msg, body, sizeof(body), &status) < 0)
		snprintf(body, sizeof(body),
			 "{\"error\":\"lgrun proxy: no websocket upstream\"}");
	COUNT(w->r->p->st.upstream_errors);
	curl_easy_cleanup(w->h);
	free(w->extra);
	free(w);
	return answer(con, 502, body, "application/json");
}

/*
 * The agent asks to upgrade: the same upgrade to the upstream first, and
 * its answer is the agent's (a 101 with the upstream's accept key, or the
 * upstream's refusal).
 */
static enum MHD_Result ws_start(struct req *r, struct MHD_Connection *con)
{
	struct ws *w = calloc(1, sizeof(*w));
	char url[4096], *head = NULL;
	const char *rest = r->uri + 1 + strlen(r->route->name), *le;
	struct MHD_Response *resp;
	enum MHD_Result ret;
	long status = 0, hl;
	int n;

	if (!w)
		return MHD_NO;
	w->r = r;
	snprintf(url, sizeof(url), "%s%s", r->route->upstream, rest);
	w->h = curl_easy_init();
	head = malloc(WS_HEAD_MAX);
	if (!w->h || !head) {
		free(head);
		return ws_fail(w, con, "out of memory");
	}
	curl_easy_setopt(w->h, CURLOPT_URL, url);
	curl_easy_setopt(w->h, CURLOPT_CONNECT_ONLY, 1L);
	curl_easy_setopt(w->h, CURLOPT_HTTP_VERSION,
			 (long)CURL_HTTP_VERSION_1_1); /* ALPN: no h2 */
	curl_easy_setopt(w->h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(w->h, CURLOPT_TCP_KEEPALIVE, 1L);
	curl_easy_setopt(w->h, CURLOPT_CONNECTTIMEOUT, 30L);
	curl_easy_setopt(w->h, CURLOPT_ERRORBUFFER, r->error);
	if (curl_easy_perform(w->h) != CURLE_OK ||
	    curl_easy_getinfo(w->h, CURLINFO_ACTIVESOCKET, &w->ufd) !=
		    CURLE_OK) {
		free(head);
		return ws_fail(w, con,
			       r->error[0] ? r->error : "no connection");
	}
	n = up_request(r, url, head, WS_HEAD_MAX);
	if (n < 0 || up_send(w, head, (size_t)n) < 0 ||
	    (hl = up_head(w, head, WS_HEAD_MAX - 1)) < 0) {
		free(head);
		return ws_fail(w, con, "the upgrade got no answer");
	}
	head[hl] = '\0';
	if (sscanf(head, "HTTP/1.%*d %ld", &status) != 1 || status < 100) {
		free(head);
		return ws_fail(w, con, "the upgrade got no HTTP answer");
	}
	if (status != 101) {
		/* the upstream's refusal (an expired token: 401), as it was */
		resp = MHD_create_response_from_buffer(
			w->extra_len, w->extra ? w->extra : (void *)"",
			MHD_RESPMEM_MUST_COPY);
	} else {
		resp = MHD_create_response_for_upgrade(ws_upgraded, w);
		MHD_add_response_header(resp, MHD_HTTP_HEADER_UPGRADE,
					"websocket");
	}
	for (const char *p = strstr(head, "\r\n"); resp && p;) {
		p += 2;
		le = strstr(p, "\r\n");
		if (!le || le == p)
			break;
		if (!hop_by_hop(p, (size_t)(le - p))) {
			const char *colon = memchr(p, ':', (size_t)(le - p));

			if (colon) {
				char k[256], v[8192];

				snprintf(k, sizeof(k), "%.*s", (int)(colon - p),
					 p);
				colon++;
				colon += strspn(colon, " \t");
				snprintf(v, sizeof(v), "%.*s",
					 (int)(le - colon), colon);
				MHD_add_response_header(resp, k, v);
			}
		}
		p = le;
	}
	free(head);
	if (!resp)
		return ws_fail(w, con, "out of memory");
	ret = MHD_queue_response(con, (unsigned)status, resp);
	MHD_destroy_response(resp);
	if (status != 101) {
		curl_easy_cleanup(w->h);
		free(w->extra);
		free(w);
	}
	return ret;
}

static const struct lg_proxy_route *route_of(struct lg_proxy *p,
					     const char *uri)
{
	for (size_t i = 0; i < p->nroutes; i++) {
		size_t n = strlen(p->routes[i].name);

		if (uri[0] == '/' &&
		    strncmp(uri + 1, p->routes[i].name, n) == 0 &&
		    (uri[1 + n] == '/' || uri[1 + n] == '\0' ||
		     uri[1 + n] == '?'))
			return &p->routes[i];
	}
	return NULL;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *con,
			      const char *url, const char *method,
			      const char *version, const char *upload,
			      size_t *upload_size, void **con_cls)
{
	struct lg_proxy *p = cls;
	struct req *r = *con_cls;
	bool stopped;
	char model[128];

	(void)url;
	(void)version;
	if (!r)
		return MHD_NO;
	if (!r->method[0]) { /* the first call: headers are in */
		snprintf(r->method, sizeof(r->method), "%s", method);
		r->route = route_of(p, r->uri);
		MHD_get_connection_values(con, MHD_HEADER_KIND, copy_header, r);
		/* the body must reach us as it is: no 100-continue dance */
		r->headers = curl_slist_append(r->headers, "Expect:");
		return MHD_YES;
	}
	if (*upload_size) {
		if (r->len + *upload_size > MAX_BODY) {
			r->too_big = true;
		} else {
			if (r->len + *upload_size + 1 > r->cap) {
				size_t cap = (r->len + *upload_size + 1) * 2;
				char *b = realloc(r->body, cap);

				if (!b)
					return MHD_NO;
				r->body = b;
				r->cap = cap;
			}
			memcpy(r->body + r->len, upload, *upload_size);
			r->len += *upload_size;
			r->body[r->len] = '\0';
		}
		*upload_size = 0;
		return MHD_YES;
	}
	COUNT(p->st.requests);
	if (!r->route)
		return answer(
			con, 404,
			"{\"error\":\"lgrun proxy: unknown route; use /anthropic, /openai or /gemini\"}",
			"application/json");
	if (r->too_big)
		return answer(con, 413,
			      "{\"error\":\"lgrun proxy: body too large\"}",
			      "application/json");
	r->api = lg_llm_api_of(r->route->format,
			       r->uri + 1 + strlen(r->route->name));
	if (r->zstd && r->len &&
	    lg_zbody_decode(r->body, r->len, MAX_BODY, &r->plain,
			    &r->plain_len) < 0)
		COUNT(p->st.unparsed); /* forwarded all the same, unread */
	if (r->ws && strcmp(r->method, "GET") == 0 &&
	    r->api == LG_LLM_OPENAI_RESPONSES) {
		stopped = ops.model_blocked(p->s);
		if (stopped) {
			r->wake_when_sent = true;
			return refuse(r, con);
		}
		return ws_start(r, con);
	}
	r->conv = conversation(r->route->name, BODY(r), BODY_LEN(r));
	/* The results in this request complete the calls of the last turn. */
	if (r->api != LG_LLM_UNKNOWN && BODY_LEN(r) &&
	    lg_llm_request_last_results(r->api, BODY(r), BODY_LEN(r), on_result,
					r, model, sizeof(model)) < 0)
		COUNT(p->st.unparsed);
	stopped = ops.model_blocked(p->s);
	if (stopped && r->api != LG_LLM_UNKNOWN) {
		r->wake_when_sent =
			true; /* the action applies once it is out */
		return refuse(r, con);
	}
	return forward(r, con);
}

/*
 * Which conversation a request continues: its first message (task prompt)
 * identifies it, whatever was said since. Parallel subagents differ there.
 */
static uint64_t conversation(const char *route, const char *body, size_t len)
{
	static const char *const lists[] = { "messages", "input", "contents" };
	json_t *root = body && len ? json_loadb(body, len, 0, NULL) : NULL;
	const char *model = json_string_value(json_object_get(root, "model"));
	/* Code Assist (gemini-cli's Google login): {model, request} */
	json_t *req = json_object_get(root, "request");
	json_t *in = json_is_object(req) && !json_object_get(root, "contents") ?
			     req :
			     root;
	uint64_t key = 0;

	for (size_t i = 0; root && i < 3 && !key; i++) {
		json_t *l = json_object_get(in, lists[i]);
		char *first =
			json_is_array(l) && json_array_size(l) ?
				json_dumps(json_array_get(l, 0),
					   JSON_COMPACT | JSON_SORT_KEYS) :
				NULL;

		if (first) {
			/* the API and model too: the same prompt elsewhere
			 * is another agent */
			char head[300];

			snprintf(head, sizeof(head), "%s\n%s\n", route,
				 model ? model : "");
			key = (lg_digest(head, strlen(head)) * 31 +
			       lg_digest(first, strlen(first))) |
			      1;
		}
		free(first);
	}
	json_decref(root);
	return key;
}

static void *on_uri(void *cls, const char *uri, struct MHD_Connection *con)
{
	struct req *r = calloc(1, sizeof(*r));

	(void)con;
	if (!r)
		return NULL;
	r->p = cls;
	r->uri = strdup(uri);
	r->pipe[0] = r->pipe[1] = -1;
	pthread_mutex_init(&r->m, NULL);
	pthread_cond_init(&r->c, NULL);
	return r;
}

static void on_done(void *cls, struct MHD_Connection *con, void **con_cls,
		    enum MHD_RequestTerminationCode toe)
{
	struct req *r = *con_cls;

	(void)con;
	(void)toe;
	if (!r)
		return;
	if (r->wake_when_sent && ((struct lg_proxy *)cls)->wake)
		((struct lg_proxy *)cls)
			->wake(((struct lg_proxy *)cls)->wake_ctx);
	if (r->pipe[0] >= 0)
		close(r->pipe[0]); /* a still-running upload sees EPIPE */
	if (r->thread_started)
		pthread_join(r->thread, NULL);
	if (r->pipe[1] >= 0)
		close(r->pipe[1]);
	lg_llm_stream_free(r->stream);
	free(r->held);
	sb_free(&r->pend);
	sb_free(&r->hold);
	sb_free(&r->out);
	curl_slist_free_all(r->headers);
	curl_slist_free_all(r->resp_headers);
	pthread_mutex_destroy(&r->m);
	pthread_cond_destroy(&r->c);
	free(r->uri);
	free(r->body);
	free(r->plain);
	free(r);
	*con_cls = NULL;
}

LG_PROXY_EXPORT struct lg_proxy *
lg_proxy_start(const struct lg_proxy_ops *o, struct lg_session *s,
	       int listen_fd, const struct lg_proxy_route *routes, size_t n,
	       void (*wake)(void *ctx), void *ctx, char *err, size_t errsize)
{
	const union MHD_DaemonInfo *info;
	struct lg_proxy *p;

	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		snprintf(err, errsize, "libcurl would not initialise");
		return NULL;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	ops = *o;
	p->s = s;
	pthread_mutex_init(&p->calls_lock, NULL);
	p->wake = wake;
	p->wake_ctx = ctx;
	p->nroutes = n < 16 ? n : 16;
	memcpy(p->routes, routes, p->nroutes * sizeof(*routes));
	pthread_mutex_init(&p->pool_lock, NULL);
	/* lgrun made the socket before the agent started: no request is lost */
	p->d = MHD_start_daemon(MHD_USE_THREAD_PER_CONNECTION |
					MHD_USE_INTERNAL_POLLING_THREAD |
					MHD_USE_POLL | MHD_ALLOW_UPGRADE,
				0, NULL, NULL, handle, p,
				MHD_OPTION_LISTEN_SOCKET, listen_fd,
				MHD_OPTION_URI_LOG_CALLBACK, on_uri, p,
				MHD_OPTION_NOTIFY_COMPLETED, on_done, p,
				MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)0,
				MHD_OPTION_END);
	if (!p->d) {
		snprintf(err, errsize, "libmicrohttpd would not start: %s",
			 strerror(errno));
		free(p);
		return NULL;
	}
	info = MHD_get_daemon_info(p->d, MHD_DAEMON_INFO_BIND_PORT);
	p->port = info ? info->port : 0;
	return p;
}

LG_PROXY_EXPORT uint16_t lg_proxy_port(const struct lg_proxy *p)
{
	return p->port;
}

LG_PROXY_EXPORT void lg_proxy_stats(struct lg_proxy *p,
				    struct lg_proxy_stats *st)
{
	st->requests = __atomic_load_n(&p->st.requests, __ATOMIC_RELAXED);
	st->forwarded = __atomic_load_n(&p->st.forwarded, __ATOMIC_RELAXED);
	st->refused = __atomic_load_n(&p->st.refused, __ATOMIC_RELAXED);
	st->unparsed = __atomic_load_n(&p->st.unparsed, __ATOMIC_RELAXED);
	st->upstream_errors =
		__atomic_load_n(&p->st.upstream_errors, __ATOMIC_RELAXED);
}

LG_PROXY_EXPORT void lg_proxy_stop(struct lg_proxy *p)
{
	if (!p)
		return;
	atomic_store(&p->stopping, true);
	MHD_stop_daemon(p->d);
	for (size_t i = 0; i < p->npool; i++)
		curl_easy_cleanup(p->pool[i]);
	for (size_t i = 0; i < MAX_CALLS; i++)
		free(p->calls[i].input);
	pthread_mutex_destroy(&p->pool_lock);
	pthread_mutex_destroy(&p->calls_lock);
	free(p);
	curl_global_cleanup();
}
