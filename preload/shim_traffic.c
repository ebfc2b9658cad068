// SPDX-License-Identifier: MIT
#include "shim_int.h"
#include "shim_traffic.h"

/*
 * Tool traffic: the requests a process sends (here) and the results it
 * reads (shim_results.c), with the state they share (shim_traffic.h).
 */
uint64_t call_ids[CALL_IDS];
static atomic_uint call_id_next;

static unsigned char tls_seen[FD_TRACK]; /* TLS reported on this fd */
static uint64_t endpoints[FD_TRACK]; /* endpoint_of, 0: not known yet */
uint32_t http_sent[FD_TRACK], http_seen[FD_TRACK];
struct http_req http_req[HTTP_TRACK];
struct http_body http_body[FD_TRACK];
static struct http_remote http_remote[HTTP_REMOTE];
static atomic_uint http_remote_next;

/* --- descriptors: keep our socket ours --------------------------------- */

static void forget_fd(int fd)
{
	if (fd >= 0 && fd < FD_TRACK) {
		fd_kind[fd] = 0;
		http_sent[fd] = http_seen[fd] = 0;
		http_body[fd].waiting = 0;
		tls_seen[fd] = 0;
		endpoints[fd] = 0;
	}
	if (fd >= 0 && fd < HTTP_TRACK)
		http_req[fd].used = 0;
	for (unsigned i = 0; i < HTTP_REMOTE; i++)
		if (http_remote[i].used == gen && http_remote[i].fd == fd)
			http_remote[i].used = 0;
	pg_forget(fd);
}

LG_EXPORT int close(int fd)
{
	int e, r;

	ensure();
	/* Closing our socket (close_fds loops) just means reconnecting later. */
	if (fd >= 0 && fd == atomic_load(&conn_fd))
		atomic_store(&conn_fd, -1);
	forget_fd(fd);
	r = real.close ? real.close(fd) : (int)syscall(SYS_close, fd);
	e = errno;
	errno = e;
	return r;
}

LG_EXPORT int close_range(unsigned lo, unsigned hi, int flags)
{
	int c = atomic_load(&conn_fd);

	ensure();
	if (c >= 0 && (unsigned)c >= lo && (unsigned)c <= hi &&
	    !(flags & CLOSE_RANGE_CLOEXEC))
		atomic_store(&conn_fd, -1);
	for (unsigned fd = lo; fd <= hi && fd < FD_TRACK; fd++)
		forget_fd((int)fd);
	if (real.close_range)
		return real.close_range(lo, hi, flags);
	return (int)syscall(SYS_close_range, lo, hi, flags);
}

LG_EXPORT int dup2(int a, int b)
{
	ensure();
	if (b == atomic_load(&conn_fd))
		atomic_store(&conn_fd, -1);
	forget_fd(b);
	return real.dup2 ? real.dup2(a, b) : (int)syscall(SYS_dup2, a, b);
}

LG_EXPORT int dup3(int a, int b, int f)
{
	ensure();
	if (b == atomic_load(&conn_fd))
		atomic_store(&conn_fd, -1);
	forget_fd(b);
	return real.dup3 ? real.dup3(a, b, f) : (int)syscall(SYS_dup3, a, b, f);
}

/* --- tool traffic -------------------------------------------------------- */

/* Sockets and pipes carry tool traffic; files and ttys never do. */
bool channel(int fd)
{
	struct stat st;
	unsigned char k;

	if (fd < 0)
		return false;
	if (fd < FD_TRACK && (k = fd_kind[fd]))
		return k == 1;
	if (fstat(fd, &st) < 0)
		return false;
	k = (S_ISSOCK(st.st_mode) || S_ISFIFO(st.st_mode)) ? 1 : 2;
	/*
	 * The agent's model traffic to lgrun's own LLM proxy is seen there,
	 * in full: reporting it here too would count every turn twice.
	 */
	if (k == 1 && proxy_port && S_ISSOCK(st.st_mode)) {
		struct sockaddr_in a;
		socklen_t al = sizeof(a);

		if (getpeername(fd, (struct sockaddr *)&a, &al) == 0 &&
		    a.sin_family == AF_INET &&
		    ntohs(a.sin_port) == proxy_port &&
		    ntohl(a.sin_addr.s_addr) == INADDR_LOOPBACK)
			k = 2;
	}
	if (fd < FD_TRACK)
		fd_kind[fd] = k;
	return k == 1;
}

/*
 * A pipe: its inode (one server's stdin). A socket: its peer (an inet
 * address and port, a named unix socket's path), else its own inode (one
 * connection). Asked for calls only, and cached.
 */
uint64_t endpoint_of(int fd)
{
	union {
		struct sockaddr sa;
		struct sockaddr_in in;
		struct sockaddr_in6 in6;
		struct sockaddr_un un;
	} a;
	socklen_t al = sizeof(a);
	struct stat st;
	uint64_t h = 0;

	if (fd >= 0 && fd < FD_TRACK && endpoints[fd])
		return endpoints[fd];
	if (fd < 0 || fstat(fd, &st) < 0)
		return 0;
	memset(&a, 0, sizeof(a));
	if (S_ISSOCK(st.st_mode) && getpeername(fd, &a.sa, &al) == 0) {
		if (a.sa.sa_family == AF_INET)
			h = lg_wire_hash(2, &a.in.sin_addr, 4) ^ a.in.sin_port;
		else if (a.sa.sa_family == AF_INET6)
			h = lg_wire_hash(10, &a.in6.sin6_addr, 16) ^
			    a.in6.sin6_port;
		else if (a.sa.sa_family == AF_UNIX &&
			 al > sizeof(sa_family_t) && a.un.sun_path[0])
			h = lg_wire_hash(1, a.un.sun_path,
					 strnlen(a.un.sun_path,
						 sizeof(a.un.sun_path)));
	}
	if (!h)
		h = lg_wire_hash(st.st_dev, &st.st_ino, sizeof(st.st_ino));
	if (!h)
		h = 1;
	if (fd < FD_TRACK)
		endpoints[fd] = h;
	return h;
}

void put_span(struct lg_wire_buf *w, uint8_t tag, struct lg_span s, size_t max)
{
	lg_wire_put(w, tag, s.p, s.n < max ? s.n : max);
}

/* A2A (agent-to-agent) JSON-RPC methods that hand work to another agent. */
static bool a2a_method(struct lg_span m)
{
	static const char *const names[] = { "message/send", "message/stream",
					     "tasks/send",
					     "tasks/sendSubscribe" };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (m.n == strlen(names[i]) && memcmp(m.p, names[i], m.n) == 0)
			return true;
	return false;
}

/* Copies at most max bytes of s into dst (size > max), NUL-terminated. */
static size_t span_copy(char *dst, size_t size, struct lg_span s, size_t max)
{
	size_t n = s.n < max ? s.n : max;

	if (n >= size)
		n = size - 1;
	memcpy(dst, s.p, n);
	dst[n] = '\0';
	return n;
}

/*
 * A cheap look before parsing: every HTTP body passes here, and only
 * A2A's JSON-RPC methods contain these (bounded like the recogniser).
 */
static bool maybe_body_call(const char *p, size_t n)
{
	/*
	 * message/send, message/stream, tasks/send, tasks/sendSubscribe; and
	 * MCP's tools/call
	 */
	const char *e;

	if (n > 4096)
		n = 4096;
	e = p + n;
	/* memchr is vectorised; memmem of a 2-byte needle is not */
	while (p < e && (p = memchr(p, '/', (size_t)(e - p)))) {
		if (++p < e && (*p == 's' || *p == 'c'))
			return true;
	}
	return false;
}

/* "127.0.0.1:9000/agent": the peer of fd and the request's path. */
static void a2a_endpoint(int fd, const char *path, size_t path_n, char *out,
			 size_t size)
{
	char host[INET6_ADDRSTRLEN] = "?";
	unsigned port;

	peer_of(fd, host, sizeof(host), &port);
	snprintf(out, size, "%s:%u%.*s", host, port,
		 (int)(path_n < 200 ? path_n : 200), path);
}

/* An A2A call waits for the supervisor: it is a call of the flow. */
static int a2a_gate(uint64_t chan, struct lg_span method, const char *endpoint)
{
	struct lg_wire_buf w;
	char tool[64];

	snprintf(tool, sizeof(tool), "a2a %.*s", (int)method.n, method.p);
	lg_wire_start(&w, LG_W_GATE, 0);
	lg_wire_put_u32(&w, LG_T_PROTO, LG_P_HTTP);
	lg_wire_put_u64(&w, LG_T_CHAN, chan);
	lg_wire_put_str(&w, LG_T_TOOL, tool);
	lg_wire_put_str(&w, LG_T_CALL_TO, endpoint);
	return gate(&w);
}

/*
 * MCP over HTTP (the streamable HTTP transport): a tools/call in a request
 * body is an agent's tool call like one on a pipe, and waits the same way.
 * Its result is the JSON-RPC response in the HTTP response's body.
 */
static int mcp_http_gate(int fd, uint32_t k, const struct lg_jrpc *jr)
{
	struct lg_wire_buf w;

	if (fd >= 0 && fd < HTTP_TRACK && http_req[fd].used == gen)
		http_req[fd].mcp = true;
	lg_wire_start(&w, LG_W_GATE, 0);
	lg_wire_put_u32(&w, LG_T_PROTO, LG_P_JSONRPC);
	if (lg_recog_name_in(jr->name.p, jr->name.n, gate_tools))
		lg_wire_put_u32(&w, LG_T_OP, OP_TOOL_DELETE);
	lg_wire_put_u32(&w, LG_T_DECISION, 1);
	lg_wire_put_u64(&w, LG_T_CHAN, ((uint64_t)fd << 32) | k);
	put_span(&w, LG_T_TOOL, jr->name, 128);
	put_span(&w, LG_T_ARGS, jr->args, LG_WIRE_MAX / 2);
	return gate(&w);
}

/*
 * A JSON-RPC request in the body of HTTP request k on fd (path: its
 * target): an A2A call or an MCP tools/call waits for the supervisor.
 * True, and *refuse set, when it was one.
 */
static bool body_call(int fd, uint32_t k, const char *p, size_t n,
		      const char *path, size_t path_n, int *refuse)
{
	struct lg_jrpc jr;
	char ep[300];

	if (!maybe_body_call(p, n) || !lg_recog_jsonrpc(p, n, &jr) ||
	    !jr.request)
		return false;
	if (a2a_method(jr.method)) {
		a2a_endpoint(fd, path, path_n, ep, sizeof(ep));
		*refuse = a2a_gate(((uint64_t)fd << 32) | k, jr.method, ep);
		return true;
	}
	if (!jr.name.n)
		return false;
	*refuse = mcp_http_gate(fd, k, &jr);
	return true;
}

/*
 * The body of an HTTP request whose headers went first (a write of its
 * own, or writev's second part) that is an A2A call or an MCP tools/call.
 */
static bool later_body(int fd, const char *p, size_t n, int *refuse)
{
	const char *path;

	if (fd < 0 || fd >= HTTP_TRACK || http_req[fd].used != gen ||
	    !http_sent[fd])
		return false;
	path = strchr(http_req[fd].tool, ' ');
	path = path ? path + 1 : "";
	return body_call(fd, http_sent[fd] - 1, p, n, path, strlen(path),
			 refuse);
}

/* Is this HTTP request a call of a declared tool endpoint? */
static bool declared(int fd, const struct lg_http_req *hq)
{
	char host[INET6_ADDRSTRLEN] = "";
	unsigned port = 0;

	if (judge_all)
		return true;
	if (!tool_endpoints)
		return false;
	if (endpoints_peer)
		peer_of(fd, host, sizeof(host), &port);
	return lg_recog_endpoint_in(tool_endpoints, hq->host, host, port,
				    hq->target);
}

/* TLS: opaque, but never "nothing": reported once per connection. */
static void tls_once(int fd)
{
	struct lg_wire_buf w;

	if (fd < FD_TRACK && !tls_seen[fd]) {
		tls_seen[fd] = 1;
		lg_wire_start(&w, LG_W_TOOL_CALL, 0);
		lg_wire_put_u32(&w, LG_T_PROTO, LG_P_TLS);
		lg_wire_put_str(&w, LG_T_TOOL, "tls");
		emit(&w);
	}
}

struct http_remote *http_remote_of(int fd, uint32_t k)
{
	for (unsigned i = 0; i < HTTP_REMOTE; i++)
		if (http_remote[i].used == gen && http_remote[i].fd == fd &&
		    http_remote[i].k == k)
			return &http_remote[i];
	return NULL;
}

/*
 * "http://host:port/path" of a request: its absolute target (a proxy's
 * form), else the Host header's, else the peer's; no query, no trailing
 * slash.
 */
static void url_of(int fd, const struct lg_http_req *hq, char *out, size_t size)
{
	struct lg_span t = hq->target;
	size_t q = 0;

	while (q < t.n && t.p[q] != '?' && t.p[q] != '#')
		q++;
	while (q > 1 && t.p[q - 1] == '/')
		q--;
	if ((q > 7 && memcmp(t.p, "http://", 7) == 0) ||
	    (q > 8 && memcmp(t.p, "https://", 8) == 0)) {
		snprintf(out, size, "%.*s", (int)q, t.p);
	} else if (hq->host.n) {
		snprintf(out, size, "http://%.*s%.*s",
			 (int)(hq->host.n < 120 ? hq->host.n : 120), hq->host.p,
			 (int)q, t.p);
	} else {
		char host[INET6_ADDRSTRLEN] = "?";
		unsigned port;

		peer_of(fd, host, sizeof(host), &port);
		snprintf(out, size, "http://%s:%u%.*s", host, port, (int)q,
			 t.p);
	}
}

/*
 * A DELETE no config declares, a POST or a PUT: remembered for its
 * answer. A DELETE is asked about before it leaves: a blocked session
 * refuses it, and the supervisor knows it is coming (the same decision,
 * if a server of the tree removes a file for it). Returns 0 or the errno.
 */
static int remote_request(int fd, uint32_t k, const struct lg_http_req *hq,
			  bool delete)
{
	bool post = hq->method.n == 4 && memcmp(hq->method.p, "POST", 4) == 0;
	bool put = hq->method.n == 3 && memcmp(hq->method.p, "PUT", 3) == 0;
	struct http_remote *h;
	struct lg_wire_buf w;

	if (!delete &&!post && !put)
		return 0;
	h = &http_remote[atomic_fetch_add(&http_remote_next, 1) % HTTP_REMOTE];
	h->used = gen;
	h->fd = fd;
	h->k = k;
	h->del = delete;
	h->put = put;
	url_of(fd, hq, h->url, sizeof(h->url));
	if (!delete)
		return 0;
	lg_wire_start(&w, LG_W_GATE, 0);
	lg_wire_put_u32(&w, LG_T_PROTO, LG_P_HTTP);
	lg_wire_put_u32(&w, LG_T_OP, OP_REMOTE_DELETE);
	lg_wire_put_u32(&w, LG_T_DECISION, 1);
	lg_wire_put_str(&w, LG_T_SYSTEM, "http");
	lg_wire_put_u64(&w, LG_T_CHAN, ((uint64_t)fd << 32) | k);
	lg_wire_put_str(&w, LG_T_TOOL, "DELETE");
	lg_wire_put_str(&w, LG_T_TARGET, h->url);
	return gate(&w);
}

/*
 * An HTTP request: kept until its response, which reports both (a DELETE
 * to a declared endpoint, an A2A call and an MCP tools/call in its body
 * wait for the supervisor first). Returns 0 or the errno to refuse it with.
 */
static int http_request(int fd, const struct lg_http_req *hq)
{
	/* an HTTP DELETE is a tool delete on a declared endpoint */
	bool decision = declared(fd, hq);
	bool delete = hq->method.n == 6 &&
		      memcmp(hq->method.p, "DELETE", 6) == 0;
	bool del = decision && delete;
	uint32_t k = fd < FD_TRACK ? http_sent[fd]++ : 0;
	uint64_t args = lg_wire_hash(0, hq->body.p, hq->body.n);
	struct lg_wire_buf w;
	char tool[160];
	int r;

	{ /* "METHOD /target" without printf: every call passes here */
		size_t m = span_copy(tool, sizeof(tool), hq->method, 16);

		tool[m++] = ' ';
		span_copy(tool + m, sizeof(tool) - m, hq->target, 80);
	}
	atomic_fetch_add(&outstanding, 1);
	if (fd < HTTP_TRACK) {
		http_req[fd].used = gen;
		http_req[fd].args = args;
		http_req[fd].decision = decision;
		http_req[fd].mcp = false;
		memcpy(http_req[fd].tool, tool,
		       sizeof(http_req[fd].tool) < sizeof(tool) ?
			       sizeof(http_req[fd].tool) :
			       sizeof(tool));
		http_req[fd].tool[sizeof(http_req[fd].tool) - 1] = '\0';
		span_copy(http_req[fd].pv, sizeof(http_req[fd].pv), hq->body,
			  63);
	}
	if (!del && body_call(fd, k, hq->body.p, hq->body.n, hq->target.p,
			      hq->target.n, &r))
		return r;
	/* elsewhere, a remote delete or a resource made, told by the answer */
	if (!del && fd < HTTP_TRACK) {
		r = remote_request(fd, k, hq, delete);
		if (r)
			return r;
	}
	if (!del && fd < HTTP_TRACK)
		return 0; /* reported with its response */
	lg_wire_start(&w, del ? LG_W_GATE : LG_W_TOOL_CALL, 0);
	lg_wire_put_u32(&w, LG_T_PROTO, LG_P_HTTP);
	if (del)
		lg_wire_put_u32(&w, LG_T_OP, OP_TOOL_DELETE);
	if (decision)
		lg_wire_put_u32(&w, LG_T_DECISION, 1);
	lg_wire_put_u64(&w, LG_T_CHAN, ((uint64_t)fd << 32) | k);
	lg_wire_put_u64(&w, LG_T_ENDPOINT, endpoint_of(fd));
	lg_wire_put_str(&w, LG_T_TOOL, tool);
	put_span(&w, LG_T_TARGET, hq->target, 1024);
	put_span(&w, LG_T_ARGS, hq->body, 4096);
	lg_wire_put_u64(&w, LG_T_ARGS_DIGEST, args);
	if (del)
		return gate(&w);
	emit(&w);
	return 0;
}

/*
 * A JSON-RPC request (MCP on a pipe or a socket): a tools/call waits for
 * the supervisor, other methods are reported. Returns 0 or the errno.
 */
static int jsonrpc_request(int fd, const struct lg_jrpc *jr)
{
	bool call = jr->name.n > 0;
	bool destructive = call &&
			   lg_recog_name_in(jr->name.p, jr->name.n, gate_tools);
	struct lg_wire_buf w;

	if (!call && jr->id.n == 0)
		return 0; /* a notification: nothing comes back */
	/*
	 * Every tools/call waits for the supervisor: it has then seen the
	 * results before it, so a call after a tripping result never leaves.
	 * Only destructive ones count as deletes.
	 */
	lg_wire_start(&w, call ? LG_W_GATE : LG_W_TOOL_CALL, 0);
	lg_wire_put_u32(&w, LG_T_PROTO, LG_P_JSONRPC);
	if (destructive)
		lg_wire_put_u32(&w, LG_T_OP, OP_TOOL_DELETE);
	/* other methods (LSP, health checks) are a program's routine */
	if (call || judge_all) {
		lg_wire_put_u32(&w, LG_T_DECISION, 1);
		call_ids[atomic_fetch_add(&call_id_next, 1) % CALL_IDS] =
			lg_wire_hash(0, jr->id.p, jr->id.n);
	}
	lg_wire_put_u64(&w, LG_T_CHAN, lg_wire_hash(0, jr->id.p, jr->id.n));
	if (call || judge_all)
		lg_wire_put_u64(&w, LG_T_ENDPOINT, endpoint_of(fd));
	if (call)
		put_span(&w, LG_T_TOOL, jr->name, 128);
	else
		put_span(&w, LG_T_TOOL, jr->method, 128);
	put_span(&w, LG_T_ARGS, jr->args, LG_WIRE_MAX / 2);
	atomic_fetch_add(&outstanding, 1);
	if (call)
		return gate(&w);
	emit(&w);
	return 0;
}

/*
 * An outgoing message. Returns 0 to let it go, or the errno the program
 * should see (the supervisor refused it).
 */
static int outgoing(int fd, const char *p, size_t n)
{
	struct lg_http_req hq;
	struct lg_jrpc jr;
	int r;

	if (!channel(fd))
		return 0;
	if ((p[0] == '\0' || p[0] == 'Q' || p[0] == 'P' || pg_watched(fd) ||
	     lg_recog_my_packet(p, n)) &&
	    pg_outgoing(fd, p, n, &r))
		return r;
	if (lg_recog_tls(p, n)) {
		tls_once(fd);
		return 0;
	}
	if (lg_recog_http_request(p, n, &hq))
		return http_request(fd, &hq);
	if (later_body(fd, p, n, &r))
		return r;
	if (lg_recog_jsonrpc(p, n, &jr) && jr.request)
		return jsonrpc_request(fd, &jr);
	return 0;
}

/* The hooks: check, then do the real thing, errno untouched. */
/*
 * The hooks: a first-byte test decides before anything else (most writes
 * are not tool traffic), then the real call, whose errno is left as is.
 */
#define OUT_HOOK(name, params, buf, len, call)                 \
	LG_EXPORT ssize_t name params                          \
	{                                                      \
		if (((len >= 4 && lg_recog_maybe(buf, len)) || \
		     (len > 0 && pg_watched(fd))) &&           \
		    enter()) {                                 \
			int refuse = outgoing(fd, buf, len);   \
			leave();                               \
			if (refuse) {                          \
				errno = ECONNRESET;            \
				return -1;                     \
			}                                      \
		}                                              \
		return real.call;                              \
	}

OUT_HOOK(write, (int fd, const void *b, size_t n), (const char *)b, n,
	 write(fd, b, n))
OUT_HOOK(send, (int fd, const void *b, size_t n, int f), (const char *)b, n,
	 send(fd, b, n, f))
OUT_HOOK(sendto,
	 (int fd, const void *b, size_t n, int f, const struct sockaddr *a,
	  socklen_t al),
	 (const char *)b, n, sendto(fd, b, n, f, a, al))

/* HTTP headers in the first part, the body in the second (Node). */
static int outgoing_iov(int fd, const struct iovec *iov, int cnt)
{
	int refuse = outgoing(fd, iov[0].iov_base, iov[0].iov_len);

	if (!refuse && cnt > 1 && iov[1].iov_len >= 4 &&
	    lg_recog_maybe(iov[1].iov_base, iov[1].iov_len))
		later_body(fd, iov[1].iov_base, iov[1].iov_len, &refuse);
	return refuse;
}

LG_EXPORT ssize_t writev(int fd, const struct iovec *iov, int cnt)
{
	if (cnt > 0 &&
	    ((iov[0].iov_len >= 4 &&
	      lg_recog_maybe(iov[0].iov_base, iov[0].iov_len)) ||
	     (iov[0].iov_len > 0 && pg_watched(fd))) &&
	    enter()) {
		int refuse = outgoing_iov(fd, iov, cnt);

		leave();
		if (refuse) {
			errno = ECONNRESET;
			return -1;
		}
	}
	return real.writev(fd, iov, cnt);
}

LG_EXPORT ssize_t sendmsg(int fd, const struct msghdr *m, int f)
{
	if (m && m->msg_iovlen > 0 &&
	    ((m->msg_iov[0].iov_len >= 4 &&
	      lg_recog_maybe(m->msg_iov[0].iov_base, m->msg_iov[0].iov_len)) ||
	     (m->msg_iov[0].iov_len > 0 && pg_watched(fd))) &&
	    enter()) {
		int refuse = outgoing_iov(fd, m->msg_iov, (int)m->msg_iovlen);

		leave();
		if (refuse) {
			errno = ECONNRESET;
			return -1;
		}
	}
	return real.sendmsg(fd, m, f);
}
