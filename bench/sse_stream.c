// SPDX-License-Identifier: MIT
/*
 * The proxy row: a streamed model response, through lgrun's LLM proxy or not.
 *
 *   sse_stream serve PORTFILE EVENTS EVSIZE WSIZE chunked|length
 *        listen on 127.0.0.1 (a free port), write the port to PORTFILE once
 *        listening, answer every POST .../v1/messages with a 200
 *        text/event-stream: an Anthropic Messages stream whose text comes in
 *        EVENTS content_block_delta events of exactly EVSIZE bytes each
 *        (event line, data line, blank line), framed by the usual
 *        message_start ... message_stop events; the body is sent in WSIZE
 *        writes (one writev per chunk with chunked framing), no delay; a
 *        thread per connection, keep-alive; until killed
 *   sse_stream client N EVENTS EVSIZE keepalive|fresh [proxy]
 *        N requests to $ANTHROPIC_BASE_URL/v1/messages (http://HOST:PORT
 *        [/path]), each a POST with a small JSON body ("stream":true, a
 *        sequence number); on one keep-alive connection, or a new
 *        connection per request (then the connect is in the times). Each
 *        response is read in full (Content-Length or chunked), checked
 *        byte for byte against the stream the server sends, and timed:
 *        TTFB = from just before the request's write() (or connect(),
 *        fresh) to the read() that returned the first body byte; total =
 *        the same start to the read() that completed the body. With
 *        "proxy", fails unless the base URL's path is /anthropic (lgrun's
 *        proxy, not the upstream). Prints key=value lines:
 *          n, bytes (body bytes per response), ttfb_med_us, ttfb_p90_us,
 *          ttfb_min_us, total_med_us, total_p90_us, total_sum_us
 *
 * Plain blocking read()/write(), TCP_NODELAY, CLOCK_MONOTONIC (vDSO: no
 * syscall). Exit status: 0 done, 1 error, 2 usage.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define BUF 65536

static char *body;
static size_t body_len, wsize;
static bool chunked;

/* --- the stream both ends agree on --------------------------------------- */

static int add(char *out, size_t *off, size_t cap, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int add(char *out, size_t *off, size_t cap, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(out + *off, cap - *off, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= cap - *off)
		return -1;
	*off += (size_t)n;
	return 0;
}

/*
 * Prose that does not repeat (lgrun's output-repeat detector reads the
 * text): words drawn by a fixed xorshift, so both ends make the same.
 */
static void prose(char *out, size_t n, uint64_t *x)
{
	static const char *const w[] = {
		"the",	   "model",    "reads",	   "a",	      "file",
		"and",	   "then",     "writes",   "tests",   "for",
		"each",	   "function", "it",	   "found",   "in",
		"that",	   "module",   "before",   "running", "them",
		"again",   "with",     "more",	   "verbose", "output",
		"so",	   "failures", "show",	   "their",   "cause",
		"while",   "build",    "logs",	   "stay",    "short",
		"because", "nobody",   "scrolls",  "back",    "through",
		"pages",   "of",       "compiler", "noise",   "when",
		"one",	   "line",     "says",	   "what",    "broke",
		"where",   "how",      "fix",	   "patch",   "review",
		"commit",  "branch",   "merge",	   "config",  "parser",
		"buffer",  "socket",   "thread",   "lock",
	};
	size_t off = 0;

	while (off < n) {
		const char *s;
		size_t k;

		*x ^= *x << 13;
		*x ^= *x >> 7;
		*x ^= *x << 17;
		s = w[*x % (sizeof(w) / sizeof(w[0]))];
		k = strlen(s);
		if (off && (*x >> 20) % 11 == 0 && off < n)
			out[off++] = ',';
		if (off && off < n)
			out[off++] = ' ';
		for (size_t j = 0; j < k && off < n; j++)
			out[off++] = s[j];
	}
}

/* An Anthropic Messages stream with EVENTS text deltas of EVSIZE bytes. */
static int make_body(long events, long evsize)
{
	static const char pre[] =
		"event: content_block_delta\n"
		"data: {\"type\":\"content_block_delta\",\"index\":0,"
		"\"delta\":{\"type\":\"text_delta\",\"text\":\"";
	static const char post[] = "\"}}\n\n";
	size_t text = (size_t)evsize - (sizeof(pre) - 1) - (sizeof(post) - 1);
	size_t cap = (size_t)events * (size_t)evsize + 4096, off = 0;
	uint64_t x = 0x9e3779b97f4a7c15ull;

	if (evsize < (long)(sizeof(pre) + sizeof(post) + 16))
		return -1;
	body = malloc(cap);
	if (!body)
		return -1;
	if (add(body, &off, cap,
		"event: message_start\n"
		"data: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_lgbench\","
		"\"type\":\"message\",\"role\":\"assistant\",\"model\":\"lgbench-model\","
		"\"content\":[],\"stop_reason\":null,\"stop_sequence\":null,"
		"\"usage\":{\"input_tokens\":12,\"output_tokens\":1}}}\n\n"
		"event: content_block_start\n"
		"data: {\"type\":\"content_block_start\",\"index\":0,"
		"\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n"))
		return -1;
	for (long i = 0; i < events; i++) {
		memcpy(body + off, pre, sizeof(pre) - 1);
		off += sizeof(pre) - 1;
		prose(body + off, text, &x);
		off += text;
		memcpy(body + off, post, sizeof(post) - 1);
		off += sizeof(post) - 1;
	}
	if (add(body, &off, cap,
		"event: content_block_stop\n"
		"data: {\"type\":\"content_block_stop\",\"index\":0}\n\n"
		"event: message_delta\n"
		"data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":"
		"\"end_turn\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":%ld}}\n\n"
		"event: message_stop\n"
		"data: {\"type\":\"message_stop\"}\n\n",
		events))
		return -1;
	body_len = off;
	return 0;
}

/* --- buffered reading ---------------------------------------------------- */

struct conn {
	int fd;
	char buf[BUF];
	size_t pos, have;
};

/* More bytes after what is unread; -1 on EOF or error. */
static int fill(struct conn *c)
{
	ssize_t r;

	if (c->pos == c->have) {
		c->pos = c->have = 0;
	} else if (c->have == BUF) {
		if (!c->pos)
			return -1; /* a line or header block too long */
		memmove(c->buf, c->buf + c->pos, c->have - c->pos);
		c->have -= c->pos;
		c->pos = 0;
	}
	do
		r = read(c->fd, c->buf + c->have, BUF - c->have);
	while (r < 0 && errno == EINTR);
	if (r <= 0)
		return -1;
	c->have += (size_t)r;
	return 0;
}

/* Waits for s (e.g. "\r\n") in the unread bytes; returns its offset. */
static ssize_t wait_for(struct conn *c, const char *s, size_t n)
{
	for (;;) {
		char *e = memmem(c->buf + c->pos, c->have - c->pos, s, n);

		if (e)
			return e - c->buf;
		if (fill(c))
			return -1;
	}
}

/* The value of header name in the block [p, e), or NULL. */
static const char *header(const char *p, const char *e, const char *name)
{
	size_t k = strlen(name);

	for (p = memchr(p, '\n', (size_t)(e - p)); p && p < e;
	     p = memchr(p, '\n', (size_t)(e - p))) {
		p++;
		if ((size_t)(e - p) > k && !strncasecmp(p, name, k) &&
		    p[k] == ':') {
			p += k + 1;
			while (*p == ' ' || *p == '\t')
				p++;
			return p;
		}
	}
	return NULL;
}

static int write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

static int writev_all(int fd, struct iovec *iov, int cnt)
{
	while (cnt) {
		ssize_t w = writev(fd, iov, cnt);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		while (cnt && (size_t)w >= iov->iov_len) {
			w -= (ssize_t)iov->iov_len;
			iov++;
			cnt--;
		}
		if (cnt) {
			iov->iov_base = (char *)iov->iov_base + w;
			iov->iov_len -= (size_t)w;
		}
	}
	return 0;
}

/* --- server -------------------------------------------------------------- */

static int respond(int fd)
{
	char h[256], framing[64];
	int n;

	if (chunked)
		snprintf(framing, sizeof(framing),
			 "Transfer-Encoding: chunked");
	else
		snprintf(framing, sizeof(framing), "Content-Length: %zu",
			 body_len);
	n = snprintf(h, sizeof(h),
		     "HTTP/1.1 200 OK\r\n"
		     "Content-Type: text/event-stream\r\n"
		     "Cache-Control: no-cache\r\n"
		     "request-id: req_lgbench\r\n"
		     "%s\r\n\r\n",
		     framing);
	if (write_all(fd, h, (size_t)n))
		return -1;
	for (size_t off = 0; off < body_len; off += wsize) {
		size_t k = body_len - off < wsize ? body_len - off : wsize;
		bool last = off + k == body_len;
		char size[32];
		struct iovec iov[3] = {
			{ size, 0 },
			{ body + off, k },
			{ (char *)(last ? "\r\n0\r\n\r\n" : "\r\n"),
			  last ? 7 : 2 },
		};

		if (!chunked) {
			if (write_all(fd, body + off, k))
				return -1;
			continue;
		}
		iov[0].iov_len =
			(size_t)snprintf(size, sizeof(size), "%zx\r\n", k);
		if (writev_all(fd, iov, 3))
			return -1;
	}
	return 0;
}

static void *serve_conn(void *arg)
{
	struct conn *c = arg;
	int one = 1;

	setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	for (;;) {
		ssize_t e = wait_for(c, "\r\n\r\n", 4);
		const char *cl, *start = c->buf + c->pos;
		size_t clen, hend;
		bool ok;

		if (e < 0)
			break;
		hend = (size_t)e + 4;
		cl = header(start, c->buf + e + 2, "Content-Length");
		clen = cl ? strtoul(cl, NULL, 10) : 0;
		ok = !strncmp(start, "POST ", 5) &&
		     memmem(start, (size_t)(c->buf + e - start),
			    "/v1/messages ", 13);
		c->pos = hend;
		while (clen) { /* the request body: not looked at */
			size_t k;

			if (c->pos == c->have && fill(c))
				goto out;
			k = c->have - c->pos < clen ? c->have - c->pos : clen;
			c->pos += k;
			clen -= k;
		}
		if (!ok) {
			static const char nf[] = "HTTP/1.1 404 Not Found\r\n"
						 "Content-Length: 0\r\n\r\n";

			if (write_all(c->fd, nf, sizeof(nf) - 1))
				break;
			continue;
		}
		if (respond(c->fd))
			break;
	}
out:
	close(c->fd);
	free(c);
	return NULL;
}

static int serve(const char *portfile)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t al = sizeof(a);
	char tmp[4096];
	pthread_attr_t at;
	FILE *f;
	int ls, one = 1;

	signal(SIGPIPE, SIG_IGN);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ls = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (ls < 0 ||
	    setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(ls, (struct sockaddr *)&a, sizeof(a)) || listen(ls, 64) ||
	    getsockname(ls, (struct sockaddr *)&a, &al)) {
		perror("sse_stream serve: listen");
		return 1;
	}
	snprintf(tmp, sizeof(tmp), "%s.tmp", portfile);
	f = fopen(tmp, "w");
	if (!f || fprintf(f, "%u\n", ntohs(a.sin_port)) < 0 || fclose(f) ||
	    rename(tmp, portfile)) {
		perror("sse_stream serve: port file");
		return 1;
	}
	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	for (;;) {
		int fd = accept4(ls, NULL, NULL, SOCK_CLOEXEC);
		struct conn *c;
		pthread_t t;

		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			perror("sse_stream serve: accept");
			return 1;
		}
		c = calloc(1, sizeof(*c));
		if (!c) {
			close(fd);
			continue;
		}
		c->fd = fd;
		if (pthread_create(&t, &at, serve_conn, c)) {
			close(fd);
			free(c);
		}
	}
}

/* --- client -------------------------------------------------------------- */

static double us_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0->tv_sec) * 1e6 +
	       (double)(t.tv_nsec - t0->tv_nsec) / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double pct(double *v, long n, double p)
{
	long i = (long)(p * (double)(n - 1) + 0.5);

	return v[i < n ? i : n - 1];
}

static double median(double *v, long n)
{
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

struct got {
	const struct timespec *t0;
	size_t off;
	double ttfb;
	bool bad;
};

static void take(struct got *g, const char *p, size_t n)
{
	if (!n)
		return;
	if (g->off == 0 && g->ttfb < 0)
		g->ttfb = us_since(g->t0);
	if (g->off + n > body_len || memcmp(body + g->off, p, n))
		g->bad = true;
	g->off += n;
}

/* Reads one response's headers and body into g; 0 ok, -1 error. */
static int read_response(struct conn *c, struct got *g, bool *close_after)
{
	ssize_t e = wait_for(c, "\r\n\r\n", 4);
	const char *start, *v;
	bool is_chunked;
	size_t clen = 0;

	if (e < 0)
		return -1;
	start = c->buf + c->pos;
	if (strncmp(start, "HTTP/1.1 200 ", 13) &&
	    strncmp(start, "HTTP/1.0 200 ", 13)) {
		fprintf(stderr, "sse_stream client: %.*s\n",
			(int)strcspn(start, "\r\n"), start);
		return -1;
	}
	v = header(start, c->buf + e + 2, "Transfer-Encoding");
	is_chunked = v && !strncasecmp(v, "chunked", 7);
	v = header(start, c->buf + e + 2, "Content-Length");
	if (v)
		clen = strtoul(v, NULL, 10);
	else if (!is_chunked)
		return -1; /* read-to-close bodies are not expected here */
	v = header(start, c->buf + e + 2, "Connection");
	*close_after = v && !strncasecmp(v, "close", 5);
	c->pos = (size_t)e + 4;
	if (!is_chunked) {
		while (clen) {
			size_t k;

			if (c->pos == c->have && fill(c))
				return -1;
			k = c->have - c->pos < clen ? c->have - c->pos : clen;
			take(g, c->buf + c->pos, k);
			c->pos += k;
			clen -= k;
		}
		return 0;
	}
	for (;;) {
		size_t size;

		e = wait_for(c, "\r\n", 2);
		if (e < 0)
			return -1;
		size = strtoul(c->buf + c->pos, NULL, 16);
		c->pos = (size_t)e + 2;
		if (!size)
			break;
		while (size) {
			size_t k;

			if (c->pos == c->have && fill(c))
				return -1;
			k = c->have - c->pos < size ? c->have - c->pos : size;
			take(g, c->buf + c->pos, k);
			c->pos += k;
			size -= k;
		}
		while (c->have - c->pos < 2)
			if (fill(c))
				return -1;
		if (memcmp(c->buf + c->pos, "\r\n", 2))
			return -1;
		c->pos += 2;
	}
	for (;;) { /* trailers, up to the blank line */
		bool blank;

		e = wait_for(c, "\r\n", 2);
		if (e < 0)
			return -1;
		blank = (size_t)e == c->pos;
		c->pos = (size_t)e + 2;
		if (blank)
			return 0;
	}
}

static int dial(const struct addrinfo *ai)
{
	int s = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;

	if (s < 0)
		return -1;
	if (connect(s, ai->ai_addr, ai->ai_addrlen)) {
		close(s);
		return -1;
	}
	setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return s;
}

static int client(long n, bool fresh, bool want_proxy)
{
	const char *url = getenv("ANTHROPIC_BASE_URL");
	char host[256], port[16], path[1024], req[4096], rbody[256];
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *ai;
	static struct conn c;
	double *ttfb, *total, sum = 0;
	const char *p, *q;
	long i;

	if (!url || strncmp(url, "http://", 7)) {
		fprintf(stderr,
			"sse_stream client: ANTHROPIC_BASE_URL '%s' is not http://HOST:PORT[/path]\n",
			url ? url : "");
		return 1;
	}
	p = url + 7;
	q = p + strcspn(p, ":/");
	if (*q != ':' || (size_t)(q - p) >= sizeof(host))
		return fprintf(stderr, "sse_stream client: no port in %s\n",
			       url),
		       1;
	snprintf(host, sizeof(host), "%.*s", (int)(q - p), p);
	p = q + 1;
	q = p + strcspn(p, "/");
	snprintf(port, sizeof(port), "%.*s", (int)(q - p), p);
	snprintf(path, sizeof(path), "%s", q);
	while (*path && path[strlen(path) - 1] == '/')
		path[strlen(path) - 1] = '\0';
	if (want_proxy && strcmp(path, "/anthropic")) {
		fprintf(stderr,
			"sse_stream client: ANTHROPIC_BASE_URL=%s is not lgrun's proxy\n",
			url);
		return 1;
	}
	if (getaddrinfo(host, port, &hints, &ai)) {
		fprintf(stderr, "sse_stream client: cannot resolve %s\n", url);
		return 1;
	}
	ttfb = calloc((size_t)n, sizeof(double));
	total = calloc((size_t)n, sizeof(double));
	if (!ttfb || !total)
		return 1;
	signal(SIGPIPE, SIG_IGN);
	c.fd = -1;
	for (i = 0; i < n; i++) {
		struct timespec t0;
		struct got g = { &t0, 0, -1, false };
		bool close_after = false;
		int bl = snprintf(
			rbody, sizeof(rbody),
			"{\"model\":\"lgbench-model\",\"max_tokens\":4096,"
			"\"stream\":true,\"messages\":[{\"role\":\"user\","
			"\"content\":\"request %ld\"}]}",
			i);
		int rl = snprintf(req, sizeof(req),
				  "POST %s/v1/messages HTTP/1.1\r\n"
				  "Host: %s:%s\r\n"
				  "User-Agent: lgbench-sse-stream\r\n"
				  "Accept: application/json\r\n"
				  "Content-Type: application/json\r\n"
				  "anthropic-version: 2023-06-01\r\n"
				  "x-api-key: lgbench\r\n"
				  "Content-Length: %d\r\n\r\n%s",
				  path, host, port, bl, rbody);

		clock_gettime(CLOCK_MONOTONIC, &t0);
		if (c.fd < 0) {
			c.fd = dial(ai);
			c.pos = c.have = 0;
			if (c.fd < 0) {
				perror("sse_stream client: connect");
				return 1;
			}
		}
		if (write_all(c.fd, req, (size_t)rl) ||
		    read_response(&c, &g, &close_after)) {
			fprintf(stderr,
				"sse_stream client: request %ld failed\n", i);
			return 1;
		}
		total[i] = us_since(&t0);
		if (g.bad || g.off != body_len) {
			fprintf(stderr,
				"sse_stream client: response %ld differs from the stream sent (%zu of %zu bytes)\n",
				i, g.off, body_len);
			return 1;
		}
		ttfb[i] = g.ttfb;
		sum += total[i];
		if (fresh || close_after) {
			close(c.fd);
			c.fd = -1;
		}
	}
	if (c.fd >= 0)
		close(c.fd);
	freeaddrinfo(ai);
	qsort(ttfb, (size_t)n, sizeof(double), cmp_double);
	qsort(total, (size_t)n, sizeof(double), cmp_double);
	printf("n=%ld\nbytes=%zu\nttfb_med_us=%.1f\nttfb_p90_us=%.1f\n"
	       "ttfb_min_us=%.1f\ntotal_med_us=%.1f\ntotal_p90_us=%.1f\n"
	       "total_sum_us=%.0f\n",
	       n, body_len, median(ttfb, n), pct(ttfb, n, 0.9), ttfb[0],
	       median(total, n), pct(total, n, 0.9), sum);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 7 && !strcmp(argv[1], "serve")) {
		long ev = strtol(argv[3], NULL, 10),
		     sz = strtol(argv[4], NULL, 10);

		wsize = strtoul(argv[5], NULL, 10);
		chunked = !strcmp(argv[6], "chunked");
		if (ev > 0 && wsize > 0 &&
		    (chunked || !strcmp(argv[6], "length")) &&
		    !make_body(ev, sz))
			return serve(argv[2]);
	}
	if ((argc == 6 || argc == 7) && !strcmp(argv[1], "client")) {
		long n = strtol(argv[2], NULL, 10),
		     ev = strtol(argv[3], NULL, 10),
		     sz = strtol(argv[4], NULL, 10);
		bool fresh = !strcmp(argv[5], "fresh");

		if (n > 0 && ev > 0 &&
		    (fresh || !strcmp(argv[5], "keepalive")) &&
		    (argc == 6 || !strcmp(argv[6], "proxy")) &&
		    !make_body(ev, sz))
			return client(n, fresh, argc == 7);
	}
	fprintf(stderr,
		"usage: sse_stream serve PORTFILE EVENTS EVSIZE WSIZE chunked|length\n"
		"       sse_stream client N EVENTS EVSIZE keepalive|fresh [proxy]\n");
	return 2;
}
