// SPDX-License-Identifier: MIT
/*
 * The http-loop row: a loopback HTTP/1.1 keep-alive request loop.
 *
 *   http_loop serve PORTFILE     listen on 127.0.0.1 (a free port), write
 *                                the port to PORTFILE once listening, answer
 *                                every POST /echo with its own body (200,
 *                                Content-Length), one connection after the
 *                                other, until SIGTERM/SIGINT
 *   http_loop client PORT N      N requests on one connection, each a
 *                                POST /echo with a 1024-byte JSON body
 *                                ({"seq":i,"pad":"..."}: every call differs,
 *                                so lgrun's repeat detector stays quiet),
 *                                each response read in full and checked;
 *                                prints "us=<microseconds of the loop>"
 *
 * Plain blocking read()/write() on both ends, one write() per request and
 * per response (headers and body together, as most clients and servers do),
 * TCP_NODELAY: what the preload shim sees is exactly one write and
 * (normally) one read per message. Exit status: 0 done, 1 error, 2 usage.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define BODY 1024
#define BUF 65536

static volatile sig_atomic_t stop;

static void on_stop(int sig)
{
	(void)sig;
	stop = 1;
}

static int write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0) {
			if (errno == EINTR && !stop)
				continue;
			return -1;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/*
 * Reads one message (headers + Content-Length body) into buf, which may
 * already hold *have bytes; returns the message length, 0 on a clean EOF
 * before any byte, -1 on error. Bytes past the message stay in buf.
 */
static ssize_t read_msg(int fd, char *buf, size_t *have, const char **body,
			size_t *blen)
{
	size_t hlen = 0, clen = 0;

	for (;;) {
		if (!hlen) {
			char *e = memmem(buf, *have, "\r\n\r\n", 4);

			if (e) {
				const char *p;

				hlen = (size_t)(e - buf) + 4;
				clen = 0;
				for (p = buf; p && p < e;
				     p = memchr(p, '\n', (size_t)(e - p))) {
					if (*p == '\n')
						p++;
					if (!strncasecmp(
						    p, "Content-Length:", 15)) {
						clen = strtoul(p + 15, NULL,
							       10);
						break;
					}
				}
				if (hlen + clen > BUF)
					return -1;
			}
		}
		if (hlen && *have >= hlen + clen) {
			*body = buf + hlen;
			*blen = clen;
			return (ssize_t)(hlen + clen);
		}
		if (*have == BUF)
			return -1;
		ssize_t r = read(fd, buf + *have, BUF - *have);

		if (r < 0 && errno == EINTR && !stop)
			continue;
		if (r < 0)
			return -1;
		if (r == 0)
			return *have ? -1 : 0;
		*have += (size_t)r;
	}
}

static void consume(char *buf, size_t *have, size_t n)
{
	memmove(buf, buf + n, *have - n);
	*have -= n;
}

static int serve(const char *portfile)
{
	static char in[BUF], out[BUF];
	struct sockaddr_in a = { .sin_family = AF_INET };
	struct sigaction sa = { .sa_handler = on_stop };
	socklen_t al = sizeof(a);
	char tmp[4096];
	FILE *f;
	int ls, one = 1;

	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ls = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (ls < 0 ||
	    setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(ls, (struct sockaddr *)&a, sizeof(a)) || listen(ls, 16) ||
	    getsockname(ls, (struct sockaddr *)&a, &al)) {
		perror("http_loop serve: listen");
		return 1;
	}
	snprintf(tmp, sizeof(tmp), "%s.tmp", portfile);
	f = fopen(tmp, "w");
	if (!f || fprintf(f, "%u\n", ntohs(a.sin_port)) < 0 || fclose(f) ||
	    rename(tmp, portfile)) {
		perror("http_loop serve: port file");
		return 1;
	}
	while (!stop) {
		size_t have = 0;
		int c = accept4(ls, NULL, NULL, SOCK_CLOEXEC);

		if (c < 0) {
			if (errno == EINTR)
				continue;
			perror("http_loop serve: accept");
			return 1;
		}
		setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		while (!stop) {
			const char *body;
			size_t blen;
			ssize_t m = read_msg(c, in, &have, &body, &blen);
			int h;

			if (m <= 0)
				break;
			h = snprintf(out, sizeof(out),
				     "HTTP/1.1 200 OK\r\n"
				     "Content-Type: application/json\r\n"
				     "Content-Length: %zu\r\n\r\n",
				     blen);
			if ((size_t)h + blen > sizeof(out))
				break;
			memcpy(out + h, body, blen);
			consume(in, &have, (size_t)m);
			if (write_all(c, out, (size_t)h + blen))
				break;
		}
		close(c);
	}
	close(ls);
	return 0;
}

static int client(unsigned port, long n)
{
	static char in[BUF], req[BUF];
	struct sockaddr_in a = { .sin_family = AF_INET };
	struct timespec t0, t1;
	size_t have = 0;
	int s, one = 1, h;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	a.sin_port = htons((uint16_t)port);
	s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0 || connect(s, (struct sockaddr *)&a, sizeof(a))) {
		perror("http_loop client: connect");
		return 1;
	}
	setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	h = snprintf(req, sizeof(req),
		     "POST /echo HTTP/1.1\r\n"
		     "Host: 127.0.0.1:%u\r\n"
		     "User-Agent: lgbench-http-loop\r\n"
		     "Accept: application/json\r\n"
		     "Content-Type: application/json\r\n"
		     "Content-Length: %d\r\n\r\n",
		     port, BODY);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (long i = 0; i < n; i++) {
		char *b = req + h;
		const char *body;
		size_t blen;
		ssize_t m;
		/* {"seq":<10 digits>,"pad":"xxx...x"} = exactly BODY bytes */
		int k = snprintf(b, BODY + 1, "{\"seq\":%010ld,\"pad\":\"", i);

		memset(b + k, 'x', BODY - k - 2);
		memcpy(b + BODY - 2, "\"}", 2);
		if (write_all(s, req, (size_t)h + BODY)) {
			perror("http_loop client: write");
			return 1;
		}
		m = read_msg(s, in, &have, &body, &blen);
		if (m <= 0 || memcmp(in, "HTTP/1.1 200 ", 13) || blen != BODY ||
		    memcmp(body, b, BODY)) {
			fprintf(stderr,
				"http_loop client: bad response to request %ld\n",
				i);
			return 1;
		}
		consume(in, &have, (size_t)m);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	close(s);
	printf("us=%.0f\n", (double)(t1.tv_sec - t0.tv_sec) * 1e6 +
				    (double)(t1.tv_nsec - t0.tv_nsec) / 1e3);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "serve"))
		return serve(argv[2]);
	if (argc == 4 && !strcmp(argv[1], "client")) {
		unsigned port = (unsigned)strtoul(argv[2], NULL, 10);
		long n = strtol(argv[3], NULL, 10);

		if (port && port < 65536 && n > 0)
			return client(port, n);
	}
	fprintf(stderr,
		"usage: http_loop serve PORTFILE | http_loop client PORT N\n");
	return 2;
}
