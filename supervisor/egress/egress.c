// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "egress.h"
#include "lib/cleanup.h"
#include "lib/clock.h"

#define HEAD_MAX 16384 /* a request head longer than this is refused */
#define HEAD_TIMEOUT_MS 30000
#define RELAY_BUF 65536
#define STOP_WAIT_MS 2000

struct conn {
	struct lg_egress *e;
	int fd;
	bool sealed; /* from the sealed tree's listener */
	struct sockaddr_in peer;
	struct conn *next;
};

struct lg_egress {
	int fd, wake;
	_Atomic int fd2; /* a second listener (the sealed tree's), or -1 */
	struct lg_egress_cfg cfg;
	pthread_t acceptor;
	atomic_bool stop;
	pthread_mutex_t mu; /* conns, nconns */
	struct conn *conns;
	unsigned nconns;
};

/* ---- the connections ------------------------------------------------- */

static int write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			struct pollfd pfd = { fd, POLLOUT, 0 };

			if (poll(&pfd, 1, HEAD_TIMEOUT_MS) <= 0)
				return -ETIMEDOUT;
			continue;
		}
		if (w <= 0)
			return -errno;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/*
 * Reads up to the blank line that ends the head. Returns its length (the
 * bytes after it, already read, follow in buf up to *got), or -errno.
 */
static ssize_t read_head(int fd, char *buf, size_t size, size_t *got)
{
	uint64_t deadline = lg_mono_ms() + HEAD_TIMEOUT_MS;
	size_t n = 0;

	while (n < size) {
		struct pollfd pfd = { fd, POLLIN, 0 };
		uint64_t now = lg_mono_ms();
		ssize_t r;

		if (now >= deadline)
			return -ETIMEDOUT;
		if (poll(&pfd, 1, (int)(deadline - now)) <= 0)
			return -ETIMEDOUT;
		r = recv(fd, buf + n, size - n, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r < 0 ? -errno : -ECONNRESET;
		for (size_t i = n >= 3 ? n - 3 : 0; i + 3 < n + (size_t)r; i++)
			if (!memcmp(buf + i, "\r\n\r\n", 4)) {
				*got = n + (size_t)r;
				return (ssize_t)(i + 4);
			}
		n += (size_t)r;
	}
	return -E2BIG;
}

static int dial(const char *host, uint16_t port, int timeout_ms,
		const char **why)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res, *ai;
	char ps[8];
	int fd = -1, r;

	snprintf(ps, sizeof(ps), "%u", port);
	r = getaddrinfo(host, ps, &hints, &res);
	if (r) {
		*why = "the host name does not resolve";
		return -EHOSTUNREACH;
	}
	*why = "the host refuses the connection";
	for (ai = res; ai; ai = ai->ai_next) {
		struct pollfd pfd;
		int err = 0;
		socklen_t el = sizeof(err);

		fd = socket(ai->ai_family,
			    ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK,
			    ai->ai_protocol);
		if (fd < 0)
			continue;
		if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
			break;
		if (errno == EINPROGRESS) {
			pfd = (struct pollfd){ fd, POLLOUT, 0 };
			if (poll(&pfd, 1, timeout_ms) == 1 &&
			    getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) ==
				    0 &&
			    err == 0)
				break;
			if (!err)
				*why = "the connection timed out";
		}
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd < 0)
		return -ECONNREFUSED;
	/* blocking again; the relay polls */
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	r = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &r, sizeof(r));
	*why = NULL;
	return fd;
}

/* One direction of a relay: socket -> pipe -> socket, no copy to us. */
struct way {
	int from, to;
	int pipe[2];
	size_t queued; /* in the pipe, not yet written to to */
	bool eof, done;
	bool stalled; /* the last read found nothing or no room */
	uint64_t *bytes;
};

#define PIPE_CAP (RELAY_BUF * 16) /* 1 MB a direction: fewer turns */

/* Both ways' pipes, closed when the relay ends. */
static void ways_close(struct way (*w)[2])
{
	for (int i = 0; i < 2; i++)
		for (int k = 0; k < 2; k++)
			lg_closep(&(*w)[i].pipe[k]);
}

/*
 * Moves what is ready, reading while the pipe has room and writing while
 * it holds bytes, until neither moves (then poll); false when this way is
 * broken.
 */
static bool way_step(struct way *w)
{
	w->stalled = false;
	for (;;) {
		bool moved = false;
		ssize_t r;

		if (!w->eof && w->queued < PIPE_CAP) {
			r = splice(w->from, NULL, w->pipe[1], NULL,
				   PIPE_CAP - w->queued,
				   SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
			if (r > 0) {
				w->queued += (size_t)r;
				moved = true;
			} else if (r == 0) {
				w->eof = true;
			} else if (errno == EAGAIN) {
				w->stalled = true;
			} else if (errno != EINTR) {
				return false; /* a reset: the relay ends */
			}
		}
		if (w->queued) {
			r = splice(w->pipe[0], NULL, w->to, NULL, w->queued,
				   SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
			if (r > 0) {
				w->queued -= (size_t)r;
				*w->bytes += (uint64_t)r;
				moved = true;
			} else if (r < 0 && errno != EAGAIN && errno != EINTR) {
				return false;
			}
		}
		if (!moved)
			break;
	}
	if (w->eof && !w->queued && !w->done) {
		shutdown(w->to, SHUT_WR); /* the end passed on: a half-close */
		w->done = true;
	}
	return true;
}

/*
 * Both ways until both sides are done: an end on one side is passed on as
 * a half-close, so a request body's end or a download's end is kept.
 * splice(2) through a pipe per direction: the bytes never come up to us.
 */
static void relay(struct lg_egress *e, int a, int b, uint64_t *up,
		  uint64_t *down)
{
	LG_AUTO(ways_close)
	struct way w[2] = { { a, b, { -1, -1 }, 0, false, false, false, up },
			    { b, a, { -1, -1 }, 0, false, false, false, down } };

	/* non-blocking both: poll says which way can move */
	fcntl(a, F_SETFL, fcntl(a, F_GETFL) | O_NONBLOCK);
	fcntl(b, F_SETFL, fcntl(b, F_GETFL) | O_NONBLOCK);
	if (pipe2(w[0].pipe, O_CLOEXEC | O_NONBLOCK) < 0 ||
	    pipe2(w[1].pipe, O_CLOEXEC | O_NONBLOCK) < 0)
		return;
	/* a smaller pipe (a user's pipe limit) works too: splice fills it */
	fcntl(w[0].pipe[1], F_SETPIPE_SZ, PIPE_CAP);
	fcntl(w[1].pipe[1], F_SETPIPE_SZ, PIPE_CAP);
	while (!(w[0].done && w[1].done) && !atomic_load(&e->stop)) {
		struct pollfd p[2] = { { a, 0, 0 }, { b, 0, 0 } };
		bool ok = true;

		for (int i = 0; i < 2 && ok; i++)
			ok = way_step(&w[i]);
		if (!ok || (w[0].done && w[1].done))
			break;
		/*
		 * Read a side when its way's pipe is empty, or held bytes and
		 * a read still found room; else wait to write. A pipe's room
		 * is in pages, not bytes (a short segment takes a page), so
		 * a read's EAGAIN with bytes queued may mean a full pipe:
		 * polling that side for input then would spin.
		 */
		for (int i = 0; i < 2; i++) {
			struct pollfd *pf = &p[i], *pt = &p[1 - i];

			if (!w[i].eof && w[i].queued < PIPE_CAP &&
			    (!w[i].queued || !w[i].stalled))
				pf->events |= POLLIN;
			if (w[i].queued)
				pt->events |= POLLOUT;
		}
		if (poll(p, 2, -1) < 0 && errno != EINTR)
			break;
	}
}

static void answer(int fd, const char *status, const char *why)
{
	char msg[512];
	int n = snprintf(msg, sizeof(msg),
			 "HTTP/1.1 %s\r\nContent-Type: text/plain\r\n"
			 "Content-Length: %zu\r\nConnection: close\r\n\r\n"
			 "lgrun egress proxy: %s\n",
			 status, strlen(why) + 21, why);

	if (n > 0)
		write_all(fd, msg,
			  (size_t)n < sizeof(msg) ? (size_t)n :
						    sizeof(msg) - 1);
}

/*
 * The first request of a plain HTTP connection, in origin form, without
 * the hop-by-hop headers meant for us; "Connection: close" unless it
 * upgrades, so each request of the client comes on its own connection
 * and goes to its own host.
 */
static int forward_head(int up, const struct lg_egress_req *r,
			const char *prefix)
{
	const char *p = r->headers, *end = r->headers + r->headers_len;
	char line[64 + LG_EGRESS_HOST_MAX + HEAD_MAX];
	bool v6 = strchr(r->host, ':') != NULL;
	int n = prefix ? snprintf(line, sizeof(line),
				  "%s /%s/%s%s%s:%u%s%.*s HTTP/1.1\r\n",
				  r->method, prefix, v6 ? "[" : "", r->host,
				  v6 ? "]" : "", r->port,
				  r->path[0] == '?' ? "/" : "",
				  (int)r->path_len, r->path) :
			 snprintf(line, sizeof(line), "%s %s%.*s HTTP/1.1\r\n",
				  r->method, r->path[0] == '?' ? "/" : "",
				  (int)r->path_len, r->path);

	if (n < 0 || (size_t)n >= sizeof(line) ||
	    write_all(up, line, (size_t)n) < 0)
		return -EIO;
	while (p < end) {
		const char *le = memmem(p, (size_t)(end - p), "\r\n", 2);
		const char *colon;
		size_t kn;

		if (!le || le == p)
			break;
		colon = memchr(p, ':', (size_t)(le - p));
		kn = colon ? (size_t)(colon - p) : 0;
		if (!(colon &&
		      (lg_egress_token_eq(p, kn, "proxy-connection") ||
		       lg_egress_token_eq(p, kn, "proxy-authorization") ||
		       lg_egress_token_eq(p, kn, "keep-alive") ||
		       (!r->upgrade &&
			lg_egress_token_eq(p, kn, "connection"))))) {
			if (write_all(up, p, (size_t)(le - p + 2)) < 0)
				return -EIO;
		}
		p = le + 2;
	}
	if (!r->upgrade && write_all(up, "Connection: close\r\n", 19) < 0)
		return -EIO;
	return write_all(up, "\r\n", 2);
}

/* A name of this host's loopback, where lgrun's LLM proxy listens. */
static bool is_loopback(const char *host)
{
	return strncmp(host, "127.", 4) == 0 || strcmp(host, "::1") == 0 ||
	       strcasecmp(host, "localhost") == 0;
}

static void conn_done(struct conn *c)
{
	struct lg_egress *e = c->e;

	pthread_mutex_lock(&e->mu);
	for (struct conn **pp = &e->conns; *pp; pp = &(*pp)->next)
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	e->nconns--;
	pthread_mutex_unlock(&e->mu);
	close(c->fd);
	free(c);
}

static const char connected[] = "HTTP/1.1 200 Connection established\r\n\r\n";

/*
 * The request's head read, from a client that may use the proxy: its
 * length, got what was read in all. -1 when the connection ends here
 * (answered, or the client went away).
 */
static ssize_t admit(struct conn *c, char *head, size_t *got)
{
	struct lg_egress *e = c->e;
	ssize_t hl = read_head(c->fd, head, HEAD_MAX, got);

	if (hl < 0) {
		if (hl == -E2BIG)
			answer(c->fd, "431 Request Header Fields Too Large",
			       "the request head is too long");
		return -1; /* a client that went away says nothing */
	}
	if (e->cfg.auth && !c->sealed &&
	    !lg_egress_authorized(head, (size_t)hl, e->cfg.auth)) {
		static const char no[] =
			"HTTP/1.1 407 Proxy Authentication Required\r\n"
			"Proxy-Authenticate: Basic realm=\"lgrun\"\r\n"
			"Content-Type: text/plain\r\nContent-Length: 89\r\n"
			"Connection: close\r\n\r\n"
			"lgrun egress proxy: this proxy serves only the tree of "
			"the lgrun session that started it\n";

		/* told first: the peer still holds its socket (who is it?) */
		if (e->cfg.refused)
			e->cfg.refused(
				e->cfg.ctx, &c->peer,
				"no Proxy-Authorization with the session's secret: 407");
		write_all(c->fd, no, sizeof(no) - 1);
		return -1;
	}
	return hl;
}

/*
 * A CONNECT to a host the session decrypts (cfg.decrypt names a route),
 * when the client sent nothing after its head: answered and handed to
 * cfg.mitm. False when the request is relayed as it is.
 */
static bool decrypted(struct conn *c, const struct lg_egress_req *r,
		      bool head_only, struct lg_egress_flow *f)
{
	struct lg_egress *e = c->e;
	const char *route, *why = NULL;

	if (r->kind != LG_EGRESS_CONNECT || !e->cfg.decrypt || !head_only)
		return false;
	route = e->cfg.decrypt(e->cfg.ctx, r->host, r->port);
	if (!route)
		return false;
	f->decrypted = true;
	if (write_all(c->fd, connected, sizeof(connected) - 1) == 0 &&
	    e->cfg.mitm(e->cfg.ctx, c->fd, r, route, &f->up, &f->down, &why) <
		    0)
		f->error = why ? why : "decryption failed";
	return true;
}

/*
 * The upstream: a model gateway in clear goes through the LLM proxy
 * (read there), anything else to its host. An fd, or -1 with why.
 */
static int dial_upstream(struct lg_egress *e, const struct lg_egress_req *r,
			 struct lg_egress_flow *f, const char **why)
{
	int up = -1;

	if (r->kind == LG_EGRESS_HTTP && e->cfg.model_port &&
	    e->cfg.model_prefix && e->cfg.model_prefix[0] &&
	    lg_egress_is_model(r) &&
	    !(r->port == e->cfg.model_port && is_loopback(r->host))) {
		/* a model gateway in clear: read by the LLM proxy */
		up = dial("127.0.0.1", e->cfg.model_port,
			  e->cfg.connect_timeout_ms, why);
		if (up >= 0)
			f->read = true;
	}
	if (up < 0)
		up = dial(r->host, r->port, e->cfg.connect_timeout_ms, why);
	return up;
}

/*
 * The request passed upstream (CONNECT answered, or the head forwarded,
 * then what the client sent after its head), then relayed both ways.
 */
static void pass_on(struct conn *c, const struct lg_egress_req *r,
		    const char *head, size_t hl, size_t got,
		    struct lg_egress_flow *f)
{
	struct lg_egress *e = c->e;
	const char *why = NULL;
	LG_AUTOCLOSE int up = dial_upstream(e, r, f, &why);

	if (up < 0) {
		answer(c->fd, "502 Bad Gateway", why);
		f->error = why;
		return;
	}
	if (r->kind == LG_EGRESS_CONNECT) {
		if (write_all(c->fd, connected, sizeof(connected) - 1) < 0)
			return;
	} else if (forward_head(up, r, f->read ? e->cfg.model_prefix : NULL) <
		   0) {
		return;
	}
	/* what the client sent after its head (a TLS hello, a body) */
	if (hl < got) {
		if (write_all(up, head + hl, got - hl) < 0)
			return;
		f->up += got - hl;
	}
	relay(e, c->fd, up, &f->up, &f->down);
}

/* One request, admitted, served; its flow reported. */
static void serve(struct conn *c, const char *head, size_t hl, size_t got)
{
	struct lg_egress *e = c->e;
	struct lg_egress_flow f = { 0 };
	struct lg_egress_req r;
	const char *why = NULL;

	if (lg_egress_parse_head(head, hl, &r, &why) < 0) {
		answer(c->fd, "400 Bad Request", why);
		f.error = why;
		f.host = "";
	} else {
		f.kind = r.kind;
		f.host = r.host;
		f.port = r.port;
		if (!decrypted(c, &r, got == hl, &f))
			pass_on(c, &r, head, hl, got, &f);
	}
	if (e->cfg.flow)
		e->cfg.flow(e->cfg.ctx, &f);
}

static void *conn_main(void *arg)
{
	struct conn *c = arg;
	LG_AUTOFREE char *head = malloc(HEAD_MAX);
	size_t got = 0;
	ssize_t hl;

	if (head) {
		hl = admit(c, head, &got);
		if (hl >= 0)
			serve(c, head, (size_t)hl, got);
	}
	conn_done(c);
	return NULL;
}

static void *acceptor(void *arg)
{
	struct lg_egress *e = arg;

	while (!atomic_load(&e->stop)) {
		struct pollfd p[3] = { { e->wake, POLLIN, 0 },
				       { e->fd, POLLIN, 0 },
				       { atomic_load(&e->fd2), POLLIN, 0 } };
		struct conn *c;
		struct sockaddr_in peer = { 0 };
		socklen_t pl = sizeof(peer);
		pthread_attr_t at;
		pthread_t t;
		bool sealed;
		int fd;

		if (poll(p, 3, -1) < 0)
			continue;
		if (p[0].revents & POLLIN) {
			uint64_t x;

			if (read(e->wake, &x, sizeof(x)) < 0) {
				/* a wake-up: the loop looks again */
			}
			continue;
		}
		sealed = !(p[1].revents & POLLIN);
		fd = accept4(sealed ? p[2].fd : e->fd, (struct sockaddr *)&peer,
			     &pl, SOCK_CLOEXEC);
		if (fd < 0)
			continue;
		{
			/*
			 * What the client sends goes on at once: a TLS
			 * handshake's flights are small writes, which Nagle
			 * and a delayed ACK would hold for tens of ms.
			 */
			int one = 1;

			setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one,
				   sizeof(one));
		}
		pthread_mutex_lock(&e->mu);
		if (e->nconns >= e->cfg.max_conns ||
		    !(c = calloc(1, sizeof(*c)))) {
			struct lg_egress_flow f = {
				.host = "",
				.error = "too many connections at once"
			};

			pthread_mutex_unlock(&e->mu);
			answer(fd, "503 Service Unavailable", f.error);
			close(fd);
			if (e->cfg.flow) /* counted as a failed connection */
				e->cfg.flow(e->cfg.ctx, &f);
			continue;
		}
		c->e = e;
		c->fd = fd;
		c->sealed = sealed;
		c->peer = peer;
		c->next = e->conns;
		e->conns = c;
		e->nconns++;
		pthread_mutex_unlock(&e->mu);
		pthread_attr_init(&at);
		pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
		pthread_attr_setstacksize(&at, 256 * 1024);
		if (pthread_create(&t, &at, conn_main, c) != 0) {
			answer(fd, "503 Service Unavailable",
			       "cannot start a thread");
			conn_done(c);
		}
		pthread_attr_destroy(&at);
	}
	return NULL;
}

void lg_egress_listen_also(struct lg_egress *e, int fd)
{
	uint64_t one = 1;

	atomic_store(&e->fd2, fd);
	if (write(e->wake, &one, sizeof(one)) < 0) {
		/* the acceptor sees it at its next connection */
	}
}

struct lg_egress *lg_egress_start(int fd, const struct lg_egress_cfg *cfg)
{
	struct lg_egress *e = calloc(1, sizeof(*e));

	if (!e)
		return NULL;
	e->fd = fd;
	atomic_store(&e->fd2, -1);
	e->cfg = *cfg;
	if (!e->cfg.max_conns)
		e->cfg.max_conns = 512;
	if (!e->cfg.connect_timeout_ms)
		e->cfg.connect_timeout_ms = 30000;
	pthread_mutex_init(&e->mu, NULL);
	e->wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (e->wake < 0 || pthread_create(&e->acceptor, NULL, acceptor, e)) {
		if (e->wake >= 0)
			close(e->wake);
		free(e);
		return NULL;
	}
	return e;
}

bool lg_egress_stop(struct lg_egress *e)
{
	uint64_t one = 1, until;
	bool left;

	if (!e)
		return true;
	atomic_store(&e->stop, true);
	if (write(e->wake, &one, sizeof(one)) < 0) {
		/* the acceptor polls the flag as well */
	}
	pthread_join(e->acceptor, NULL);
	pthread_mutex_lock(&e->mu);
	for (struct conn *c = e->conns; c; c = c->next)
		shutdown(c->fd, SHUT_RDWR);
	pthread_mutex_unlock(&e->mu);
	until = lg_mono_ms() + STOP_WAIT_MS;
	do {
		pthread_mutex_lock(&e->mu);
		left = e->nconns > 0;
		pthread_mutex_unlock(&e->mu);
		if (left)
			usleep(2000);
	} while (left && lg_mono_ms() < until);
	if (left)
		return false; /* a thread still uses e: left to our exit */
	close(e->wake);
	close(e->fd);
	if (atomic_load(&e->fd2) >= 0)
		close(atomic_load(&e->fd2));
	pthread_mutex_destroy(&e->mu);
	free(e);
	return true;
}
