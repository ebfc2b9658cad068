// SPDX-License-Identifier: MIT
#include <ctype.h>

#include "proxy_int.h"

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

/*
 * output_repeat fired (r->cut) and no tool call streams: the response ends
 * here, as its API ends one (lg_llm_stream_close), and nothing more of it
 * is read: the socketpair's reading side is shut (the upstream thread's
 * next send fails) and curl's progress callback aborts the transfer.
 */
static void cut_response(struct req *r)
{
	char *end;
	size_t n;

	if (lg_llm_stream_close(r->stream, &end, &n) < 0)
		return; /* not now: relayed on, tried again after each event */
	if (!sb_add(&r->out, end, n)) {
		free(end);
		return;
	}
	lg_llm_stream_feed(r->stream, end,
			   n); /* the turn, as the agent has it */
	free(end);
	lg_llm_stream_end(r->stream);
	r->finished = true;
	r->pend.off = r->pend.len = 0;
	atomic_store(&r->stop, true);
	shutdown(r->pipe[0], SHUT_RD);
	COUNT(r->p->st.cut);
}

/*
 * Takes the complete events in pend: to out, or held with an open call
 * (when calls are judged); ends the response when output_repeat asks.
 */
static void judge_events(struct req *r)
{
	size_t e;

	while (!r->withheld && !r->finished &&
	       (e = event_end(r->pend.p + r->pend.off,
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

			ops.stop_message(ops.sink.ctx, msg, sizeof(msg));
			n = lg_llm_stream_error_event(r->api, msg, err,
						      sizeof(err));
			r->hold.len = 0;
			if (n > 0)
				sb_add(&r->out, err, (size_t)n);
			r->wake_when_sent = true;
			break;
		}
		if (r->judged && (was_open || now_open))
			sb_add(&r->hold, ev, e);
		else
			sb_add(&r->out, ev, e);
		if (!now_open && r->hold.len) { /* judged and allowed */
			sb_add(&r->out, r->hold.p, r->hold.len);
			r->hold.len = 0;
		}
		if (r->cut)
			cut_response(r);
	}
	if (r->pend.off == r->pend.len)
		r->pend.off = r->pend.len = 0;
}

/*
 * The response of a streamed request whose tool calls are judged first, or
 * that output_repeat may end (framed): event by event.
 */
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
	if (r->judged || r->framed)
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

/*
 * The response is server-sent events: a JSON body (an error, Gemini's
 * stream without alt=sse) has no events to end it between.
 */
static bool event_stream(const struct curl_slist *h)
{
	static const char ct[] = "content-type:";

	for (; h; h = h->next)
		if (strncasecmp(h->data, ct, sizeof(ct) - 1) == 0)
			return strcasestr(h->data, "text/event-stream") != NULL;
	return false;
}

/* The session stopped: tell the agent, in its model's own words. */
static enum MHD_Result refuse(struct req *r, struct MHD_Connection *con)
{
	char msg[1024], body[2048];
	int status = 400;

	ops.stop_message(ops.sink.ctx, msg, sizeof(msg));
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
		r->judged = r->stream && sse && ops.judge_calls(ops.sink.ctx);
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
	/* Relayed event by event when a looping response may be ended. */
	r->framed = r->stream && sse && !r->judged && r->status == 200 &&
		    event_stream(r->resp_headers) &&
		    ops.cuts_text(ops.sink.ctx);
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

/*
 * The list without its header name ("name:" with its colon, any case), a
 * new list; NULL without memory (l is kept either way).
 */
static struct curl_slist *without_header(const struct curl_slist *l,
					 const char *name)
{
	struct curl_slist *kept = NULL, *k;
	size_t n = strlen(name);

	for (const struct curl_slist *h = l; h; h = h->next) {
		if (strncasecmp(h->data, name, n) == 0)
			continue;
		k = curl_slist_append(kept, h->data);
		if (!k) {
			curl_slist_free_all(kept);
			return NULL;
		}
		kept = k;
	}
	return kept;
}

/*
 * lgrun's notes for the model (ops.steer) go into the body the upstream
 * gets. A zstd-encoded body goes plain then, without its encoding: lgrun
 * would have to compress it again for nothing (curl sends the length).
 */
static void steer_request(struct req *r)
{
	struct curl_slist *plain_headers = NULL;
	char *out;
	size_t len;

	if (strcmp(r->method, "POST") != 0 ||
	    !steer_body(r, BODY(r), BODY_LEN(r), &out, &len))
		return;
	if (r->zstd) {
		plain_headers = without_header(r->headers, "content-encoding:");
		if (!plain_headers) { /* no memory: as the agent sent it */
			free(out);
			return;
		}
		curl_slist_free_all(r->headers);
		r->headers = plain_headers;
		free(r->plain);
		r->plain = NULL;
		r->plain_len = 0;
		r->zstd = false;
	}
	free(r->body);
	r->body = out;
	r->len = len;
	r->cap = len + 1;
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

/* A client without the session's secret: told, and answered 403. */
static enum MHD_Result
refuse_outsider(struct req *r, struct MHD_Connection *con, const char *method)
{
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(
		con, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	const struct sockaddr_in *peer =
		ci && ci->client_addr && ci->client_addr->sa_family == AF_INET ?
			(const struct sockaddr_in *)ci->client_addr :
			NULL;

	snprintf(r->method, sizeof(r->method), "%s", method);
	lg_sink_notice(
		&ops.sink, LG_EV_REFUSED,
		&(struct lg_notice){
			.rule = "LLM",
			.summary = "the path lacks the session's secret: 403",
			.peer = peer });
	return answer(
		con, 403,
		"{\"error\":\"lgrun proxy: this proxy serves only the tree of the lgrun session that started it\"}",
		"application/json");
}

/* The first call: the method and headers are in, the body to come. */
static enum MHD_Result take_headers(struct lg_proxy *p, struct req *r,
				    struct MHD_Connection *con,
				    const char *method)
{
	snprintf(r->method, sizeof(r->method), "%s", method);
	r->route = route_of(p, r->uri);
	MHD_get_connection_values(con, MHD_HEADER_KIND, copy_header, r);
	/* the body must reach us as it is: no 100-continue dance */
	r->headers = curl_slist_append(r->headers, "Expect:");
	return MHD_YES;
}

/* A piece of the body, kept (up to MAX_BODY: then too_big). */
static enum MHD_Result take_body(struct req *r, const char *upload,
				 size_t *upload_size)
{
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

/*
 * A path under no route: 404, naming the routes this proxy has (the
 * built-in ones and [llm] variables'), each as /NAME. A name that is not
 * plain (letters, digits, '-', '_', '.') is left out rather than escaped.
 */
static enum MHD_Result unknown_route(struct lg_proxy *p,
				     struct MHD_Connection *con)
{
	char body[1024];
	size_t n = 0;
	bool first = true;

	n += (size_t)snprintf(body, sizeof(body),
			      "{\"error\":\"lgrun proxy: unknown route; use");
	for (size_t i = 0; i < p->nroutes && n < sizeof(body) - 80; i++) {
		const char *name = p->routes[i].name;
		bool plain = *name && strlen(name) < 64;

		for (const char *c = name; plain && *c; c++)
			plain = isalnum((unsigned char)*c) || *c == '-' ||
				*c == '_' || *c == '.';
		if (plain)
			n += (size_t)snprintf(body + n, sizeof(body) - n,
					      "%s /%s", first ? "" : ",", name);
		first = first && !plain;
	}
	snprintf(body + n, sizeof(body) - n, "\"}");
	return answer(con, 404, body, "application/json");
}

/*
 * The request is whole: read (the results it carries complete the last
 * turn's calls), then refused while the model is blocked, or steered and
 * forwarded (a websocket started).
 */
static enum MHD_Result take_request(struct lg_proxy *p, struct req *r,
				    struct MHD_Connection *con)
{
	char model[128];

	COUNT(p->st.requests);
	if (!r->route)
		return unknown_route(p, con);
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
	    lg_llm_api_websocket(r->api)) {
		if (ops.model_blocked(ops.sink.ctx)) {
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
	if (ops.model_blocked(ops.sink.ctx) && r->api != LG_LLM_UNKNOWN) {
		r->wake_when_sent =
			true; /* the action applies once it is out */
		return refuse(r, con);
	}
	if (r->api != LG_LLM_UNKNOWN)
		steer_request(r);
	return forward(r, con);
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *con,
			      const char *url, const char *method,
			      const char *version, const char *upload,
			      size_t *upload_size, void **con_cls)
{
	struct lg_proxy *p = cls;
	struct req *r = *con_cls;

	(void)url;
	(void)version;
	if (!r)
		return MHD_NO;
	if (!r->method[0] && r->outsider)
		return refuse_outsider(r, con, method);
	if (!r->method[0])
		return take_headers(p, r, con, method);
	if (*upload_size)
		return take_body(r, upload, upload_size);
	return take_request(p, r, con);
}

/*
 * The rest of uri after /SECRET (a path, "/..." or "?..." or ""), or NULL
 * when it does not start with it; compared in a time that does not say
 * where it differs.
 */
static const char *past_secret(const char *secret, const char *uri)
{
	size_t n = strlen(secret), i;
	unsigned char d = 0;

	if (!n)
		return uri;
	if (uri[0] != '/')
		return NULL;
	uri++;
	for (i = 0; i < n && uri[i]; i++)
		d |= (unsigned char)(uri[i] ^ secret[i]);
	if (i < n || d || (uri[n] && uri[n] != '/' && uri[n] != '?'))
		return NULL;
	return uri + n;
}

static void *on_uri(void *cls, const char *uri, struct MHD_Connection *con)
{
	struct req *r = calloc(1, sizeof(*r));
	struct lg_proxy *p = cls;
	const char *rest = past_secret(p->secret, uri);

	(void)con;
	if (!r)
		return NULL;
	r->p = cls;
	r->outsider = !rest;
	/* "/SECRET" or "/SECRET?q" alone: the path is "/" */
	if (rest && rest[0] != '/') {
		if (asprintf(&r->uri, "/%s", rest) < 0)
			r->uri = NULL;
	} else {
		r->uri = strdup(rest ? rest : uri);
	}
	if (!r->uri) {
		free(r);
		return NULL;
	}
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
lg_proxy_start(const struct lg_proxy_ops *o, int listen_fd,
	       const struct lg_proxy_route *routes, size_t n,
	       const char *secret, void (*wake)(void *ctx), void *ctx,
	       struct lg_error *err)
{
	struct lg_proxy *p;

	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		lg_error_set(err, 0, "libcurl would not initialise");
		return NULL;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	ops = *o;
	snprintf(p->secret, sizeof(p->secret), "%s", secret ? secret : "");
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
		lg_error_set(err, errno, "libmicrohttpd would not start: %s",
			     strerror(errno));
		free(p);
		return NULL;
	}
	return p;
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
	st->steered = __atomic_load_n(&p->st.steered, __ATOMIC_RELAXED);
	st->cut = __atomic_load_n(&p->st.cut, __ATOMIC_RELAXED);
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
