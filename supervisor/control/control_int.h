/* SPDX-License-Identifier: MIT */
/*
 * Inside the control socket: control.c (the transport: connections, peer
 * checks, the rings, the loop's entry points), frames.c (a frame to the
 * session's call, and the verdict that answers a gate or a registration)
 * and flows.c (nested sessions and A2A calls: who called whom) share
 * these. Calls go one way: control.c -> frames.c -> flows.c.
 */
#ifndef LG_CONTROL_INT_H
#define LG_CONTROL_INT_H

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>
#include "lib/canon.h"
#include "lib/clock.h"
#include "tree/cgroup.h"
#include "control.h"
#include "lib/log.h"
#include "seccomp/pathres.h"
#include "guard/sink.h"
#include "lib/text.h"
#include "wiredec.h"

#define MAX_CONNS 65536 /* by descriptor number; lgrun raises its fd limit */
#define MAX_PENDING 64 /* calls awaiting their result, per connection */
#define ARGS_KEEP 2048
#define MAX_NESTED 256 /* nested sessions alive at once */
#define LISTEN_PAUSE_MS 50 /* out of descriptors: the listener rests */
#define MAX_A2A 8 /* A2A calls awaiting their response, per connection */
#define FLOW_NAME 64 /* LG_FLOW_NAME_MAX */

struct pending {
	bool used;
	uint64_t chan;
	uint64_t endpoint; /* LG_T_ENDPOINT of the call, 0: unknown */
	uint32_t proto;
	bool decision; /* an agent's call, else a program's routine */
	char tool[160];
	char args[ARGS_KEEP];
};

struct a2a {
	bool used;
	uint64_t chan;
	char from[FLOW_NAME], to[FLOW_NAME + 8];
};

struct conn {
	int fd;
	pid_t pid;
	struct lg_ring *ring; /* mapped from the shim's memfd, or NULL */
	bool hello;
	bool refused; /* a nested lgrun that was refused: it is saying why */
	uint64_t hello_ns; /* when its hello was sent (CLOCK_MONOTONIC) */
	char exe[64];
	/* made at its first call: most connections (every process of the
	 * tree says hello) make none, and the slots are 140 KB */
	struct pending *calls;
	unsigned next; /* round-robin slot when full */
	struct a2a a2a[MAX_A2A];
};

/*
 * A nested session: an lgrun that registered and exec'd its command (the
 * same pid). Its end, seen through a pidfd, is the return to its caller.
 */
struct nested {
	bool used;
	pid_t pid;
	int pidfd;
	uint64_t seq; /* registration order */
	char name[FLOW_NAME], caller[FLOW_NAME];
};

struct lg_control {
	int lfd;
	char path[108];
	struct lg_sink sink; /* the session's way in (lgrun's) */
	const struct lg_cgroup *cg;
	const char *target_keys, *url_targets;
	int reserve_fd; /* given up to refuse a peer when out of descriptors */
	/*
	 * Out of descriptors with no reserve to refuse with: the listener is
	 * not watched (it would wake the loop for nothing) from then until a
	 * connection ends or LISTEN_PAUSE_MS pass (lg_mono_ms; 0: watched).
	 */
	uint64_t listen_paused_ms;
	bool paused_said; /* said once a session */
	char cg_rel[PATH_MAX]; /* our leaf, as /proc/PID/cgroup shows it */
	struct conn *conns[MAX_CONNS];
	/*
	 * Above the highest descriptor a connection ever had, every slot is
	 * NULL: the loops over conns stop there (the whole table is 512 KiB,
	 * which a short session would fault in page by page at its end).
	 */
	int conns_end;
	struct nested nested[MAX_NESTED];
	uint64_t nested_seq;
	unsigned lingering; /* refused nested lgruns still connected */
	uint64_t mem_cap, mem_used; /* [shim] max_memory: pending calls */
	bool mem_warned;
	void (*on_hello)(void *ctx, pid_t pid, uint64_t sent_ns);
	void (*on_call)(void *ctx);
	void *on_call_ctx;
	/* rings: drained on a 1 ms tick while events flow, else rung */
	int *ring_fds; /* connections that have one */
	size_t nrings, rings_cap;
	bool rings_awake;
	unsigned rings_idle;
	uint64_t rings_next_ms;
	void *on_hello_ctx;
	struct lg_control_stats st;
};

void ctl_on_frame(struct lg_control *c, int epfd, struct conn *k,
		  const struct lg_wire_msg *m);

int ctl_on_enter(struct lg_control *c, int epfd, struct conn *k,
		 const struct lg_wire_msg *m, struct lg_session_verdict *v);

bool ctl_on_pidfd(struct lg_control *c, int epfd, int fd);

int ctl_on_a2a(struct lg_control *c, struct conn *k,
	       const struct lg_wire_msg *m);

bool ctl_a2a_done(struct lg_control *c, struct conn *k, uint64_t chan);

#endif
