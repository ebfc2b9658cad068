/* SPDX-License-Identifier: MIT */
/*
 * What the shim's two traffic halves share: shim_traffic.c sees a
 * process's requests (writes), shim_results.c their results (reads).
 */
#ifndef LG_SHIM_TRAFFIC_H
#define LG_SHIM_TRAFFIC_H

#include "shim_int.h"

/* The ids of the last MCP tools/call requests: their results are masked. */
#define CALL_IDS 16
extern uint64_t call_ids[CALL_IDS];

/* HTTP requests sent and responses seen per fd (FIFO pairing). */
extern uint32_t http_sent[FD_TRACK], http_seen[FD_TRACK];

/*
 * An HTTP request waiting for its response, per connection: the call and
 * its result go to the supervisor as one frame, one wake-up per call.
 */
#define HTTP_TRACK 1024
struct http_req {
	uint32_t used; /* == gen: in use (a fork makes every entry stale) */
	uint64_t args;
	bool decision; /* a declared tool endpoint's call */
	bool mcp; /* an MCP tools/call in the body: its result is JSON-RPC */
	char tool[96];
	char pv[64];
};
extern struct http_req http_req[HTTP_TRACK];

/* A response whose headers came without its body: the next read has it. */
struct http_body {
	uint32_t k;
	uint16_t status;
	uint32_t waiting; /* == gen */
};
extern struct http_body http_body[FD_TRACK];

/*
 * An HTTP request whose answer tells what it did off this host (issue
 * 38): a DELETE no config declares (answered 2xx: a remote delete), a
 * POST or PUT (answered 201: a resource the session made). A few at once.
 */
#define HTTP_REMOTE 16
struct http_remote {
	uint32_t used; /* == gen */
	int fd;
	uint32_t k; /* the request's number on fd */
	bool del; /* a DELETE; else a POST or PUT */
	bool put;
	char url[256]; /* "http://host:port/path", query left out */
};
/* fd's request k, if it is one (NULL: not) */
struct http_remote *http_remote_of(int fd, uint32_t k);

/*
 * PostgreSQL's and MySQL's wires (shim_sql.c): true when fd is a
 * connection of one. whole: p..n is all a read took off the stream (not a
 * peek, not a vectored read's first buffer only).
 */
bool pg_outgoing(int fd, const char *p, size_t n, int *refuse);
bool pg_incoming(int fd, const char *p, size_t n, bool whole, int *refuse);
void pg_forget(int fd);
/* a startup was seen in this process: its reads go to pg_incoming */
extern atomic_bool pg_seen;
/* PostgreSQL connections by fd (== gen): every write of theirs is seen */
extern uint32_t pg_fd[FD_TRACK];
static inline bool pg_watched(int fd)
{
	return fd >= 0 && fd < FD_TRACK && pg_fd[fd] == gen && gen;
}
/*
 * The program's bytes a probe read off fd before its Query left (its next
 * reads get them first): how many were copied into iov, or -1 (none).
 */
extern atomic_bool pg_stashed;
ssize_t pg_unstash(int fd, const struct iovec *iov, int cnt, bool peek);

/* Sockets and pipes carry tool traffic; files and ttys never do. */
bool channel(int fd);
/* Who fd talks to (LG_T_ENDPOINT), cached per fd; 0: unknown. */
uint64_t endpoint_of(int fd);

/* s as field tag of w, at most max bytes of it. */
void put_span(struct lg_wire_buf *w, uint8_t tag, struct lg_span s, size_t max);

#endif
