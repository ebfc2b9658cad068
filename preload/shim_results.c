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

static void http_result(int fd, uint32_t k, unsigned status,
			struct lg_span body)
{
	struct lg_wire_buf w;
	uint64_t h = lg_wire_hash(0, &status, sizeof(status));

	if (fd >= 0 && fd < HTTP_TRACK && http_req[fd].used == gen &&
	    http_req[fd].mcp) {
		mcp_http_result(fd, k, status, body);
		return;
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
}

static void incoming(int fd, const char *p, ssize_t got)
{
	struct lg_http_resp hr;
	struct lg_jrpc jr;
	struct lg_wire_buf w;
	size_t n;

	if (got <= 0 || atomic_load(&outstanding) <= 0)
		return;
	n = (size_t)got;
	if (fd >= 0 && fd < FD_TRACK && http_body[fd].waiting == gen) {
		struct lg_span body = { p, n };

		http_body[fd].waiting = 0;
		http_result(fd, http_body[fd].k, http_body[fd].status, body);
		return;
	}
	if (!lg_recog_maybe(p, n) || !channel(fd))
		return;
	if (lg_recog_http_response(p, n, &hr)) {
		uint32_t k = fd < FD_TRACK ? http_seen[fd]++ : 0;

		/* Headers alone (buffered readers): the body comes next. */
		if (hr.body.n == 0 && fd < FD_TRACK && hr.status != 204 &&
		    hr.status != 304) {
			http_body[fd].k = k;
			http_body[fd].status = (uint16_t)hr.status;
			http_body[fd].waiting = gen;
			return;
		}
		http_result(fd, k, hr.status, hr.body);
		return;
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
}

#define IN_HOOK(name, params, call)                                            \
	LG_EXPORT ssize_t name params                                          \
	{                                                                      \
		ssize_t r;                                                     \
                                                                               \
		ensure();                                                      \
		r = real.call;                                                 \
		/* Only while a call waits for its result: rare. */            \
		if (r > 0 &&                                                   \
		    atomic_load_explicit(&outstanding, memory_order_relaxed) > \
			    0 &&                                               \
		    enter()) {                                                 \
			int e = errno;                                         \
                                                                               \
			incoming(fd, (const char *)b, r);                      \
			leave();                                               \
			errno = e;                                             \
		}                                                              \
		return r;                                                      \
	}

IN_HOOK(read, (int fd, void *b, size_t n), read(fd, b, n))
IN_HOOK(recv, (int fd, void *b, size_t n, int f), recv(fd, b, n, f))
IN_HOOK(recvfrom,
	(int fd, void *b, size_t n, int f, struct sockaddr *a, socklen_t *al),
	recvfrom(fd, b, n, f, a, al))

/* Vectored reads: the first buffer holds the start of the message. */
static void incoming_iov(int fd, const struct iovec *iov, int cnt, ssize_t r)
{
	if (r > 0 && cnt > 0 &&
	    atomic_load_explicit(&outstanding, memory_order_relaxed) > 0 &&
	    enter()) {
		int e = errno;
		size_t n = (size_t)r < iov[0].iov_len ? (size_t)r :
							iov[0].iov_len;

		incoming(fd, iov[0].iov_base, (ssize_t)n);
		leave();
		errno = e;
	}
}

LG_EXPORT ssize_t readv(int fd, const struct iovec *iov, int cnt)
{
	ssize_t r;

	ensure();
	r = real.readv(fd, iov, cnt);
	incoming_iov(fd, iov, cnt, r);
	return r;
}

LG_EXPORT ssize_t recvmsg(int fd, struct msghdr *m, int f)
{
	ssize_t r;

	ensure();
	r = real.recvmsg(fd, m, f);
	if (m)
		incoming_iov(fd, m->msg_iov, (int)m->msg_iovlen, r);
	return r;
}
