/* SPDX-License-Identifier: MIT */
/*
 * The session's control socket: every process of the tree that carries the
 * shim connects on its own and says hello; its frames become events for
 * the session, through the sink lgrun hands it (guard/sink.h). Peers
 * outside the session's tree are refused and counted. Runs on lgrun's main
 * thread; the session locks itself.
 */
#ifndef LG_CONTROL_H
#define LG_CONTROL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct lg_sink;
struct lg_cgroup;
struct lg_control;

struct lg_control_stats {
	uint64_t accepted, refused, malformed, frames, dropped, gates,
		op_results, tool_calls, tls;
	uint64_t enters, enter_refused, a2a_calls;
};

/*
 * sink: the session's way in, copied (its ctx and strings must outlive c);
 * target_keys, url_targets: see [shim]; the strings must outlive c.
 */
struct lg_control *lg_control_new(const char *path, const struct lg_sink *sink,
				  const struct lg_cgroup *cg,
				  const char *target_keys,
				  const char *url_targets);
void lg_control_free(struct lg_control *c);
/* [shim] max_memory: what calls awaiting their results may hold (0: no cap). */
void lg_control_set_memory_cap(struct lg_control *c, uint64_t bytes);

int lg_control_listen_fd(const struct lg_control *c);
const char *lg_control_path(const struct lg_control *c);

/* Accepts what is pending; new connections are added to epfd. */
void lg_control_accept(struct lg_control *c, int epfd);
/* True if fd is one of ours (then it was handled). */
bool lg_control_handle(struct lg_control *c, int epfd, int fd);

/*
 * A nested lgrun was refused and is still connected: it is telling the
 * user why. A kill waits for it (briefly).
 */
bool lg_control_lingering(const struct lg_control *c);
/*
 * Called with the pid of every process whose shim says hello, and when it
 * sent it (CLOCK_MONOTONIC ns; 0 from a shim that does not say). Called
 * at once for every process connected so far.
 */
void lg_control_on_hello(struct lg_control *c,
			 void (*fn)(void *ctx, pid_t pid, uint64_t sent_ns),
			 void *ctx);

/* Called before an agent-to-agent call is judged (work done since?). */
void lg_control_on_call(struct lg_control *c, void (*fn)(void *ctx), void *ctx);

void lg_control_stats(const struct lg_control *c, struct lg_control_stats *st);

/* The shims' rings: drained on a tick while events flow (0: none due). */
uint64_t lg_control_next_deadline(const struct lg_control *c);
void lg_control_tick(struct lg_control *c, int epfd);

#endif
