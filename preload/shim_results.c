// SPDX-License-Identifier: MIT
/* Tool traffic's results: what a process reads back for its calls. */
#include "shim_traffic.h"

/*
 * A result's digest for the repeat detector. An agent's tool call gets its
 * volatile parts (pids, clocks, temp names) masked first, hashed in blocks
 * of a fixed size so that only the masked text decides the digest.
 */
struct vhash {
	uint64_t h;
	size_t n;
	char b[256];
};

static void vhash_add(void *ctx, const char *s, size_t k)
{
	struct vhash *v = ctx;

	while (k) {
		size_t m = sizeof(v->b) - v->n < k ? sizeof(v->b) - v->n : k;

		memcpy(v->b + v->n, s, m);
		v->n += m;
		s += m;
		k -= m;
		if (v->n == sizeof(v->b)) {
			v->h = lg_wire_hash(v->h, v->b, v->n);
			v->n = 0;
		}
	}
}

static uint64_t result_digest(uint64_t seed, struct lg_span body, bool decision)
{
	struct vhash v = { seed, 0, { 0 } };

	if (!decision)
		return lg_wire_hash(seed, body.p, body.n);
	lg_volatile_scan(body.p, body.n, vhash_add, &v);
	return lg_wire_hash(v.h, v.b, v.n);
}

static bool is_call_id(uint64_t id)
{
	for (unsigned i = 0; i < CALL_IDS; i++)
		if (call_ids[i] == id)
			return true;
	return false;
}

/*
 * The JSON-RPC response in an HTTP body: plain JSON, or an SSE event
 * ("event: message", "data: {...}"), maybe behind a chunk-size line.
 */
static bool body_jsonrpc(struct lg_span body, struct lg_jrpc *jr)
{
	const char *p = body.p, *e = body.p + body.n, *d;
	size_t i;

	for (i = 0; i < 10 && p + i < e && isxdigit((unsigned char)p[i]); i++)
		;
	if (i && p + i + 1 < e && p[i] == '\r' && p[i + 1] == '\n')
		p += i + 2; /* a chunk's size */
	if (p < e && *p != '{' &&
	    (d = memmem(p, (size_t)(e - p), "data:", 5)) != NULL)
		p = d + 5;
	while (p < e && *p == ' ')
		p++;
	return lg_recog_jsonrpc(p, (size_t)(e - p), jr) && !jr->request;
}

/* The result of an MCP tools/call over HTTP, paired by its channel. */
static void mcp_http_result(int fd, uint32_t k, unsigned status,
			    struct lg_span body)
{
	struct lg_wire_buf w;
	struct lg_jrpc jr;
	bool ok = body_jsonrpc(body, &jr);
	struct lg_span res = ok ? jr.result : body;

	lg_wire_start(&w, LG_W_TOOL_RESULT, 0);
	lg_wire_put_u32(&w, LG_T_PROTO, LG_P_JSONRPC);
	lg_wire_put_u64(&w, LG_T_CHAN, ((uint64_t)fd << 32) | k);
	lg_wire_put_u64(&w, LG_T_ENDPOINT, endpoint_of(fd));
	lg_wire_put_u32(&w, LG_T_STATUS, ok ? (jr.error ? 1 : 0) : status);
	lg_wire_put_u64(&w, LG_T_DIGEST, result_digest(0, res, true));
	put_span(&w, LG_T_PREVIEW, res, 160);
	http_req[fd].used = 0;
	atomic_fetch_sub(&outstanding, 1);
	emit(&w);
}

/*
 * The id a 201's JSON body gives what it made: {"id": 7, ...} or
 * {"id": "abc", ...} at the top level. 0: none.
 */
static size_t made_id(struct lg_span body, char *out, size_t size)
{
	const char *p = body.p, *e = body.p + (body.n < 4096 ? body.n : 4096);
	const char *k;
	size_t n = 0;

	while (p < e && (k = memmem(p, (size_t)(e - p), "\"id\"", 4))) {
		const char *b = k, *v = k + 4;

		p = k + 4;
		while (b > body.p && (b[-1] == ' ' || b[-1] == '\n' ||
				      b[-1] == '\r' || b[-1] == '\t'))
			b--;
		if (b == body.p || (b[-1] != '{' && b[-1] != ','))
			continue;
		while (v < e && (*v == ' ' || *v == ':'))
			v++;
		if (v < e && *v == '"')
			v++;
		while (v + n < e && n + 1 < size &&
		       (isalnum((unsigned char)v[n]) || v[n] == '-' ||
			v[n] == '_' || v[n] == '.'))
			n++;
		memcpy(out, v, n);
		out[n] = '\0';
		return n;
	}
	return 0;
}

/* Told to the supervisor before the program reads on (a gate). */
static int remote_frame(const char *op_tool, uint64_t chan, const char *made,
			const char *target, unsigned status)
{
	struct lg_wire_buf w;

	lg_wire_start(&w, LG_W_GATE, 0);
	lg_wire_put_u32(&w, LG_T_PROTO, LG_P_HTTP);
	lg_wire_put_str(&w, LG_T_SYSTEM, "http");
	lg_wire_put_u64(&w, LG_T_CHAN, chan);
	lg_wire_put_str(&w, LG_T_TOOL, op_tool);
	if (made) {
		lg_wire_put_str(&w, LG_T_MADE, made);
	} else {
		lg_wire_put_u32(&w, LG_T_OP, OP_REMOTE_DELETE);
		lg_wire_put_u32(&w, LG_T_DECISION, 1);
		lg_wire_put_u32(&w, LG_T_STATUS, status);
		lg_wire_put_str(&w, LG_T_TARGET, target);
	}
	return gate(&w);
}

/*
 * What an answer says of a request remote_request kept: a DELETE answered
 * 2xx destroyed its target; a POST answered 201 made what its Location or
 * its body's id names, a PUT answered 201 its own URL. Returns 0 or the
 * errno the read fails with (the session was stopped).
 */
static int remote_answer(int fd, uint32_t k, unsigned status,
			 struct lg_span location, struct lg_span body,
			 bool headers_only)
{
	struct http_remote *h = http_remote_of(fd, k);
	uint64_t chan = ((uint64_t)fd << 32) | k;
	char made[300], id[80];

	if (!h)
		return 0;
	if (h->del) {
		h->used = 0;
		if (status < 200 || status > 299)
			return 0;
		return remote_frame("DELETE", chan, NULL, h->url, status);
	}
	if (status != 201) {
		h->used = 0;
		return 0;
	}
	if (location.n) {
		struct lg_span l = location;
		const char *slash;

		if (l.n > 8 && (memcmp(l.p, "http://", 7) == 0 ||
				memcmp(l.p, "https://", 8) == 0)) {
			snprintf(made, sizeof(made), "%.*s", (int)l.n, l.p);
		} else if (l.p[0] == '/' &&
			   (slash = strchr(h->url + 8, '/')) != NULL) {
			snprintf(made, sizeof(made), "%.*s%.*s",
				 (int)(slash - h->url), h->url, (int)l.n, l.p);
		} else {
			snprintf(made, sizeof(made), "%s/%.*s", h->url,
				 (int)l.n, l.p);
		}
	} else if (h->put) {
		snprintf(made, sizeof(made), "%s", h->url);
	} else if (headers_only) {
		return 0; /* the id is in the body, read next */
	} else if (made_id(body, id, sizeof(id))) {
		snprintf(made, sizeof(made), "%s/%s", h->url, id);
	} else {
		h->used = 0;
		return 0;
	}
	h->used = 0;
	made[strcspn(made, "?#")] = '\0';
	return remote_frame(h->put ? "PUT" : "POST", chan, made, NULL, status);
}

static int http_result(int fd, uint32_t k, unsigned status, struct lg_span body)
{
	struct lg_wire_buf w;
	uint64_t h = lg_wire_hash(0, &status, sizeof(status));
	struct lg_span none = { NULL, 0 };
	int r = remote_answer(fd, k, status, none, body, false);

	if (fd >= 0 && fd < HTTP_TRACK && http_req[fd].used == gen &&
	    http_req[fd].mcp) {
		mcp_http_result(fd, k, status, body);
		return r;
	}
	lg_wire_start(&w, LG_W_TOOL_RESULT, 0);
	lg_wire_put_u32(&w, LG_T_PROTO, LG_P_HTTP);
	lg_wire_put_u64(&w, LG_T_CHAN, ((uint64_t)fd << 32) | k);
	lg_wire_put_u64(&w, LG_T_ENDPOINT, endpoint_of(fd));
	lg_wire_put_u32(&w, LG_T_STATUS, status);
	/* The status is part of the result: 200 "x" is not 500 "x". */
	lg_wire_put_u64(&w, LG_T_DIGEST,
			result_digest(h, body,
				      fd >= 0 && fd < HTTP_TRACK &&
					      http_req[fd].used == gen &&
					      http_req[fd].decision));
	put_span(&w, LG_T_PREVIEW, body, 160);
	/* The call itself travels with its result (one frame, one wake-up). */
	if (fd >= 0 && fd < HTTP_TRACK && http_req[fd].used == gen) {
		http_req[fd].used = 0;
		lg_wire_put_str(&w, LG_T_TOOL, http_req[fd].tool);
		lg_wire_put_str(&w, LG_T_ARGS, http_req[fd].pv);
		lg_wire_put_u64(&w, LG_T_ARGS_DIGEST, http_req[fd].args);
		if (http_req[fd].decision)
			lg_wire_put_u32(&w, LG_T_DECISION, 1);
	}
	atomic_fetch_sub(&outstanding, 1);
	emit(&w);
	return r;
}

/*
 * What a process read: 0, or the errno its read fails with. whole: p..got
 * is all the read took off the stream (pg_incoming).
 */
static int incoming(int fd, const char *p, ssize_t got, bool whole)
{
	struct lg_http_resp hr;
	struct lg_jrpc jr;
	struct lg_wire_buf w;
	size_t n;
	int r;

	if (got <= 0)
		return 0;
	n = (size_t)got;
	if (atomic_load_explicit(&pg_seen, memory_order_relaxed) &&
	    pg_incoming(fd, p, n, whole, &r))
		return r;
	if (atomic_load(&outstanding) <= 0)
		return 0;
	if (fd >= 0 && fd < FD_TRACK && http_body[fd].waiting == gen) {
		struct lg_span body = { p, n };

		http_body[fd].waiting = 0;
		return http_result(fd, http_body[fd].k, http_body[fd].status,
				   body);
	}
	if (!lg_recog_maybe(p, n) || !channel(fd))
		return 0;
	if (lg_recog_http_response(p, n, &hr)) {
		uint32_t k = fd < FD_TRACK ? http_seen[fd]++ : 0;

		/* Headers alone (buffered readers): the body comes next. */
		if (hr.body.n == 0 && fd < FD_TRACK && hr.status != 204 &&
		    hr.status != 304) {
			http_body[fd].k = k;
			http_body[fd].status = (uint16_t)hr.status;
			http_body[fd].waiting = gen;
			/* a Location is in the headers: what was made */
			return remote_answer(fd, k, hr.status, hr.location,
					     hr.body, true);
		}
		if (hr.location.n &&
		    (r = remote_answer(fd, k, hr.status, hr.location, hr.body,
				       false)) != 0)
			return r;
		return http_result(fd, k, hr.status, hr.body);
	}
	if (lg_recog_jsonrpc(p, n, &jr) && !jr.request && jr.id.n) {
		lg_wire_start(&w, LG_W_TOOL_RESULT, 0);
		lg_wire_put_u32(&w, LG_T_PROTO, LG_P_JSONRPC);
		lg_wire_put_u64(&w, LG_T_CHAN,
				lg_wire_hash(0, jr.id.p, jr.id.n));
		lg_wire_put_u32(&w, LG_T_STATUS, jr.error ? 1 : 0);
		lg_wire_put_u64(&w, LG_T_DIGEST,
				result_digest(0, jr.result,
					      is_call_id(lg_wire_hash(
						      0, jr.id.p, jr.id.n))));
		put_span(&w, LG_T_PREVIEW, jr.result, 160);
		atomic_fetch_sub(&outstanding, 1);
		emit(&w);
	}
	return 0;
}

/* Some connection's reads are followed, or a call waits for its result. */
static inline bool reading(void)
{
	return atomic_load_explicit(&outstanding, memory_order_relaxed) > 0 ||
	       atomic_load_explicit(&pg_seen, memory_order_relaxed);
}

/*
 * A read: what a probe of shim_sql.c read for the program comes first
 * (rare: one atomic load), then the real call and what it read.
 */
#define IN_HOOK(name, params, call, peek)                                      \
	LG_EXPORT ssize_t name params                                          \
	{                                                                      \
		ssize_t r;                                                     \
                                                                               \
		ensure();                                                      \
		if (atomic_load_explicit(&pg_stashed, memory_order_relaxed)) { \
			struct iovec v = { b, n };                             \
                                                                               \
			r = pg_unstash(fd, &v, 1, peek);                       \
			if (r >= 0)                                            \
				return r;                                      \
		}                                                              \
		r = real.call;                                                 \
		/* Only while a call waits for its result, or a database's \
		 * connection is open: rare. */   \
		if (r > 0 && reading() && enter()) {                           \
			int e = errno;                                         \
			int refuse =                                           \
				incoming(fd, (const char *)b, r, !(peek));     \
                                                                               \
			leave();                                               \
			errno = refuse ? ECONNRESET : e;                       \
			if (refuse)                                            \
				return -1;                                     \
		}                                                              \
		return r;                                                      \
	}

IN_HOOK(read, (int fd, void *b, size_t n), read(fd, b, n), false)
IN_HOOK(recv, (int fd, void *b, size_t n, int f), recv(fd, b, n, f),
	(f & MSG_PEEK) != 0)
IN_HOOK(recvfrom,
	(int fd, void *b, size_t n, int f, struct sockaddr *a, socklen_t *al),
	recvfrom(fd, b, n, f, a, al), (f & MSG_PEEK) != 0)

/*
 * Vectored reads: the first buffer holds the start of the message.
 * Returns r, or -1 (errno ECONNRESET) when the session refused what was read.
 */
static ssize_t incoming_iov(int fd, const struct iovec *iov, int cnt, ssize_t r,
			    bool peek)
{
	if (r > 0 && cnt > 0 && reading() && enter()) {
		int e = errno;
		size_t n = (size_t)r < iov[0].iov_len ? (size_t)r :
							iov[0].iov_len;
		int refuse = incoming(fd, iov[0].iov_base, (ssize_t)n,
				      !peek && n == (size_t)r);

		leave();
		errno = refuse ? ECONNRESET : e;
		if (refuse)
			return -1;
	}
	return r;
}

LG_EXPORT ssize_t readv(int fd, const struct iovec *iov, int cnt)
{
	ssize_t r;

	ensure();
	if (atomic_load_explicit(&pg_stashed, memory_order_relaxed) &&
	    (r = pg_unstash(fd, iov, cnt, false)) >= 0)
		return r;
	r = real.readv(fd, iov, cnt);
	return incoming_iov(fd, iov, cnt, r, false);
}

LG_EXPORT ssize_t recvmsg(int fd, struct msghdr *m, int f)
{
	ssize_t r;

	ensure();
	if (m && atomic_load_explicit(&pg_stashed, memory_order_relaxed) &&
	    (r = pg_unstash(fd, m->msg_iov, (int)m->msg_iovlen,
			    (f & MSG_PEEK) != 0)) >= 0) {
		m->msg_controllen = 0;
		m->msg_flags = 0;
		return r;
	}
	r = real.recvmsg(fd, m, f);
	if (m)
		r = incoming_iov(fd, m->msg_iov, (int)m->msg_iovlen, r,
				 (f & MSG_PEEK) != 0);
	return r;
}
