// SPDX-License-Identifier: MIT
#include "proxy_int.h"

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
	/*
	 * A looping response was ended here (output_repeat, [output_repeat]
	 * cut): the agent has its end; the upstream's rest of that response
	 * is dropped, up to and with its own last event.
	 */
	bool discarding;
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

	ops.stop_message(ops.sink.ctx, msg, sizeof(msg));
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

/*
 * A text message from the agent: a request, read before it goes on; with
 * lgrun's notes put in, the message to send instead into *steered.
 */
static bool ws_request(struct ws *w, const char *p, size_t n, char **steered,
		       size_t *steered_len)
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
	stopped = ops.model_blocked(ops.sink.ctx);
	r->judged = !stopped && ops.judge_calls(ops.sink.ctx);
	if (stopped) {
		COUNT(r->p->st.refused);
		ws_refuse(w);
		return false;
	}
	COUNT(r->p->st.forwarded);
	r->text_len = 0;
	r->text[0] = '\0';
	r->withheld = false;
	r->cut = false;
	/* a looping response may be ended, as over SSE (proxy.c) */
	r->framed = !r->judged && ops.cuts_text(ops.sink.ctx);
	if (!prewarm) { /* a prewarm makes no output: not a turn */
		struct lg_llm_sink sink = { on_tool_call, on_text, on_turn, r };

		r->stream = lg_llm_stream_new(r->api, true, &sink);
		steer_body(r, p, n, steered, steered_len);
	}
	return true;
}

static void from_agent(void *ctx, unsigned op, const char *p, size_t n)
{
	struct ws *w = ctx;
	char *steered = NULL;
	size_t steered_len = 0;

	if (op == LG_WS_TEXT && !ws_request(w, p, n, &steered, &steered_len))
		return;
	if (steered) /* the same request with lgrun's notes */
		ws_send(w, true, op, steered, steered_len);
	else
		ws_send(w, true, op, p, n);
	free(steered);
	if (op == LG_WS_CLOSE)
		w->stopped = true; /* the upstream's close ends it */
}

/* A Responses event that ends its response, as the upstream sends it. */
static bool last_event(const char *p, size_t n)
{
	static const char *const ends[] = { "\"response.completed\"",
					    "\"response.failed\"",
					    "\"response.incomplete\"",
					    "\"error\"" };
	const char *t = memmem(p, n, "\"type\"", 6);

	if (!t)
		return false;
	t += 6;
	while (t < p + n && (*t == ' ' || *t == ':'))
		t++;
	for (size_t i = 0; i < sizeof(ends) / sizeof(ends[0]); i++)
		if ((size_t)(p + n - t) >= strlen(ends[i]) &&
		    memcmp(t, ends[i], strlen(ends[i])) == 0)
			return true;
	return false;
}

/*
 * output_repeat asked to end the response (r->cut) and no tool call
 * streams: the agent gets its end as the API sends one (each SSE event
 * of lg_llm_stream_close as a message), and the upstream's rest of it is
 * dropped (discarding) until its own last event: the connection carries
 * the conversation on.
 */
static void ws_cut(struct ws *w)
{
	struct req *r = w->r;
	char *end;
	size_t n;

	if (lg_llm_stream_close(r->stream, &end, &n) < 0)
		return; /* not now: tried again after the next event */
	r->cut = false;
	if (!n) { /* it had ended already: nothing to drop */
		free(end);
		return;
	}
	for (const char *d = end;
	     (d = memmem(d, (size_t)(end + n - d), "data: ", 6));) {
		size_t len;

		d += 6;
		len = strcspn(d, "\r\n");
		ws_send(w, false, LG_WS_TEXT, d, len);
		d += len;
	}
	lg_llm_stream_feed(r->stream, end,
			   n); /* the turn, as the agent has it */
	free(end);
	w->discarding = true;
	COUNT(r->p->st.cut);
}

static void from_up(void *ctx, unsigned op, const char *p, size_t n)
{
	struct ws *w = ctx;
	struct req *r = w->r;

	if (w->discarding && op == LG_WS_TEXT) {
		if (last_event(p, n))
			w->discarding = false; /* the cut response ended */
		return;
	}
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
	else if (op == LG_WS_TEXT && r->cut && r->stream &&
		 !lg_llm_stream_call_open(r->stream))
		ws_cut(w);
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
enum MHD_Result ws_start(struct req *r, struct MHD_Connection *con)
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
