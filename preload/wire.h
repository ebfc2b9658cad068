/* SPDX-License-Identifier: MIT */
/*
 * The shim -> supervisor wire format, one header for both sides.
 *
 * Transport: an AF_UNIX SOCK_SEQPACKET connection per process, so every
 * frame is one send() and arrives whole or not at all. A frame is a fixed
 * header followed by `len` bytes of fields; each field is a tag byte, a
 * 16-bit little-endian length and that many bytes. The supervisor checks
 * every frame: wrong magic or version, a length that disagrees with what
 * arrived, a frame over LG_WIRE_MAX, a field running past the end or an
 * unknown type is counted and dropped, and the connection closed.
 */
#ifndef LG_WIRE_H
#define LG_WIRE_H

#include <stddef.h>
#include <stdint.h>

#define LG_WIRE_MAGIC 0x474cu /* "LG" little-endian */
#define LG_WIRE_VERSION 1
#define LG_WIRE_MAX 8192 /* a whole frame, header included */
#define LG_WIRE_ENV_SOCK "LGRUN_SOCK"
#define LG_WIRE_ENV_FLOW "LGRUN_FLOW"

enum lg_wire_type {
	LG_W_HELLO = 1, /* pid, ppid, exe: first frame of a connection */
	LG_W_OP_RESULT = 2, /* op, path, result */
	LG_W_TOOL_CALL =
		3, /* proto, chan, tool, method, target, args, digest */
	LG_W_TOOL_RESULT = 4, /* proto, chan, status, digest, preview */
	LG_W_GATE = 5, /* a destructive tool call waiting for a verdict */
	LG_W_VERDICT = 6, /* supervisor -> shim: seq echoed, verdict */
	LG_W_DROPS = 7, /* events the shim could not send */
	/*
	 * A nested lgrun asks to start: flow, name. Answered with a VERDICT
	 * (seq echoed; a refusal carries the reason as PREVIEW).
	 */
	LG_W_ENTER = 8,
	/* the doorbell: frames wait in this process's ring (no fields) */
	LG_W_RING = 9,
	LG_W_TYPE_MAX = 9,
};

enum lg_wire_tag {
	LG_T_PID = 1, /* u32 */
	LG_T_PPID = 2, /* u32 */
	LG_T_EXE = 3, /* string */
	LG_T_OP = 4, /* u32: enum lg_op */
	LG_T_PATH = 5, /* string */
	LG_T_RESULT = 6, /* u32: 0 or errno */
	LG_T_PROTO = 7, /* u32: enum lg_wire_proto */
	LG_T_CHAN = 8, /* u64: pairs a call with its result */
	LG_T_TOOL = 9, /* string: tool name, or HTTP method + path */
	LG_T_TARGET = 10, /* string: what a destructive call acts on */
	LG_T_ARGS = 11, /* bytes: arguments as sent (JSON), bounded */
	LG_T_DIGEST = 12, /* u64: hash of a body */
	LG_T_STATUS = 13, /* u32: HTTP status, or 0/1 for JSON-RPC ok/error */
	LG_T_PREVIEW = 14, /* string: the start of a body, for humans */
	LG_T_VERDICT = 15, /* u32: 0 allow, else the errno to fail with */
	LG_T_COUNT = 16, /* u64 */
	LG_T_ARGS_DIGEST = 17, /* u64: hash of the arguments (HTTP bodies) */
	LG_T_FLOW = 18, /* string: the flow's correlation id */
	LG_T_NAME = 19, /* string: a nested session's name */
	LG_T_CALL_TO = 20, /* string: a GATE that is an agent call (A2A) */
	LG_T_TIME = 21, /* u64: CLOCK_MONOTONIC ns when a HELLO was sent */
	/*
	 * u32 1: the call is an agent's decision (MCP tools/call, a declared
	 * tool endpoint, or everything with judge_all); without it a call is
	 * a program's routine, observed and judged by no rule.
	 */
	LG_T_DECISION = 22,
	/*
	 * u64: who a call goes to, from the caller's side (a pipe's inode, a
	 * socket's peer address or path): "in a row" for the repeat rule is
	 * per process and server, so parallel workers of one process talking
	 * to servers of their own are not one run. 0 or absent: unknown.
	 */
	LG_T_ENDPOINT = 23,
	/*
	 * string: the system a remote delete ran on ("http", "postgres"), on
	 * a GATE of op LG_OP_REMOTE_DELETE; with LG_T_STATUS it is the
	 * answer (it ran), without it the request (before it leaves)
	 */
	LG_T_SYSTEM = 24,
	/*
	 * string: a remote resource the session made (a POST answered 201,
	 * a CREATE TABLE a database answered), on a GATE: its deletion later
	 * is no loss
	 */
	LG_T_MADE = 25,
	LG_T_TAG_MAX = 25,
};

/* LG_T_OP of a remote delete: enum lg_op's LG_OP_REMOTE_DELETE */
#define LG_WIRE_OP_REMOTE_DELETE 11

enum lg_wire_proto {
	LG_P_HTTP = 1,
	LG_P_JSONRPC = 2,
	LG_P_TLS = 3, /* opaque: seen, not readable */
	LG_P_POSTGRES = 4, /* PostgreSQL's frontend protocol */
	LG_P_MYSQL = 5, /* MySQL's and MariaDB's client protocol */
};

struct lg_wire_hdr {
	uint16_t magic;
	uint8_t version;
	uint8_t type;
	uint32_t len; /* bytes of fields after the header */
	uint32_t seq; /* a gate's number, echoed in its verdict */
	uint32_t reserved;
};

#define LG_WIRE_HDR_SIZE ((size_t)sizeof(struct lg_wire_hdr))

/*
 * Building a frame without allocation (the shim's hot path): a fixed buffer,
 * fields appended, the header's len filled in at the end.
 */
struct lg_wire_buf {
	unsigned char b[LG_WIRE_MAX];
	size_t n;
	int overflow;
};

static inline void lg_wire_start(struct lg_wire_buf *w, uint8_t type,
				 uint32_t seq)
{
	struct lg_wire_hdr h = {
		LG_WIRE_MAGIC, LG_WIRE_VERSION, type, 0, seq, 0
	};

	__builtin_memcpy(w->b, &h, sizeof(h));
	w->n = sizeof(h);
	w->overflow = 0;
}

/* Appends a field, cutting bytes to what fits (strings end up truncated). */
static inline void lg_wire_put(struct lg_wire_buf *w, uint8_t tag,
			       const void *p, size_t len)
{
	uint16_t l16;

	if (w->n + 3 > sizeof(w->b)) {
		w->overflow = 1;
		return;
	}
	if (len > sizeof(w->b) - w->n - 3) {
		len = sizeof(w->b) - w->n - 3;
		w->overflow = 1;
	}
	if (len > 0xffff)
		len = 0xffff;
	l16 = (uint16_t)len;
	w->b[w->n] = tag;
	__builtin_memcpy(w->b + w->n + 1, &l16, 2);
	if (len)
		__builtin_memcpy(w->b + w->n + 3, p, len);
	w->n += 3 + len;
}

static inline void lg_wire_put_u32(struct lg_wire_buf *w, uint8_t tag,
				   uint32_t v)
{
	lg_wire_put(w, tag, &v, sizeof(v));
}

static inline void lg_wire_put_u64(struct lg_wire_buf *w, uint8_t tag,
				   uint64_t v)
{
	lg_wire_put(w, tag, &v, sizeof(v));
}

static inline void lg_wire_put_str(struct lg_wire_buf *w, uint8_t tag,
				   const char *s)
{
	size_t n = 0;

	while (s && s[n])
		n++;
	lg_wire_put(w, tag, s, n);
}

/*
 * The ring: events that need no answer go through shared memory instead of
 * one send (and one wake-up of the supervisor) each. The shim makes a
 * memfd of LG_RING_BYTES, sealed against shrinking, maps it, and passes it
 * with its hello (SCM_RIGHTS). It appends whole frames at head (bytes
 * written, mod 2^32; frames may wrap around the end of data); the
 * supervisor consumes up to head and advances tail. While the supervisor
 * sleeps it sets `sleeping`; a producer that finds it set clears it and
 * sends a LG_W_RING frame on its socket. Anything sent on the socket is
 * handled after what was in the ring before it, so order per process is
 * kept. The supervisor copies every frame out and validates it: the ring
 * is the agent's memory.
 */
#define LG_RING_DATA (64u * 1024u) /* a power of 2: head wraps at 2^32 */
#define LG_RING_MAGIC 0x4c47524eu /* "LGRN" */

struct lg_ring {
	uint32_t magic;
	uint32_t size; /* of data[]: LG_RING_DATA */
	uint32_t head; /* producer, __atomic */
	uint32_t pad0[13];
	uint32_t tail; /* consumer, __atomic */
	uint32_t sleeping; /* consumer sets, producer clears, __atomic */
	uint32_t closed; /* consumer: this ring is no longer read */
	uint32_t pad1[13];
	unsigned char data[];
};

#define LG_RING_BYTES (LG_RING_DATA + (uint32_t)sizeof(struct lg_ring))

/* Copies n bytes into the ring at offset off (mod size), wrapping. */
static inline void lg_ring_put(struct lg_ring *r, uint32_t off, const void *p,
			       uint32_t n)
{
	uint32_t o = off % LG_RING_DATA, first = LG_RING_DATA - o;

	if (first > n)
		first = n;
	__builtin_memcpy(r->data + o, p, first);
	if (n > first)
		__builtin_memcpy(r->data, (const unsigned char *)p + first,
				 n - first);
}

static inline void lg_ring_get(const struct lg_ring *r, uint32_t off, void *p,
			       uint32_t n)
{
	uint32_t o = off % LG_RING_DATA, first = LG_RING_DATA - o;

	if (first > n)
		first = n;
	__builtin_memcpy(p, r->data + o, first);
	if (n > first)
		__builtin_memcpy((unsigned char *)p + first, r->data,
				 n - first);
}

/* Fills in the header's length; returns the frame size. */
static inline size_t lg_wire_finish(struct lg_wire_buf *w)
{
	uint32_t len = (uint32_t)(w->n - sizeof(struct lg_wire_hdr));

	__builtin_memcpy(w->b + offsetof(struct lg_wire_hdr, len), &len,
			 sizeof(len));
	return w->n;
}

/*
 * The first frame of every connection, the shim's and a nested lgrun's:
 * who speaks (pid, ppid, the program's path) and, from the shim, when its
 * image said hello (CLOCK_MONOTONIC ns; 0: not sent). Returns its size.
 */
static inline size_t lg_wire_hello(struct lg_wire_buf *w, uint32_t pid,
				   uint32_t ppid, const char *exe,
				   uint64_t sent_ns)
{
	lg_wire_start(w, LG_W_HELLO, 0);
	lg_wire_put_u32(w, LG_T_PID, pid);
	lg_wire_put_u32(w, LG_T_PPID, ppid);
	lg_wire_put_str(w, LG_T_EXE, exe);
	if (sent_ns)
		lg_wire_put_u64(w, LG_T_TIME, sent_ns);
	return lg_wire_finish(w);
}

/*
 * The body digest: 8 bytes per step (the shim hashes whole request and
 * response bodies on the agent's hot path), byte-wise for the tail. For
 * telling equal bodies from different ones, not against an adversary.
 * Chainable: pass the previous value as h (0 to start).
 */
static inline uint64_t lg_wire_hash(uint64_t h, const void *p, size_t n)
{
	const unsigned char *c = (const unsigned char *)p;

	if (!h)
		h = 0x9e3779b97f4a7c15ULL;
	for (; n >= 8; c += 8, n -= 8) {
		uint64_t v;

		__builtin_memcpy(&v, c, 8);
		h = (h ^ v) * 0xff51afd7ed558ccdULL;
		h ^= h >> 32;
	}
	for (; n; c++, n--)
		h = (h ^ *c) * 0x100000001b3ULL;
	return h ^ (h >> 29);
}

#endif
