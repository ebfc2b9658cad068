/* SPDX-License-Identifier: MIT */
/*
 * lgrun's main loop as a set of event sources. Each source (seccomp
 * notify's watch, the control socket and rings, the eBPF observer, the LLM
 * proxy, the store's channel, output watching, signals, the trip's timers)
 * is one table: handle() for a ready fd it watches, next_deadline() and
 * tick() for its time-based work, finish() at the end.
 *
 * An fd is watched for one source (lg_sources_watch): epoll's data.ptr is
 * its registration {source, ctx, fd}, so a ready fd goes straight to its
 * source's handle(), as nginx's events carry their handler; no source is
 * asked "is this yours?". A source with deadlines or a finish() is added
 * once (lg_sources_add); the loop's one timer is the earliest of their
 * deadlines, and when it fires every source whose deadline passed ticks,
 * in the order added. A new source is its table, its watches and, if it
 * has time-based work, one lg_sources_add().
 *
 * Everything here runs on the thread that runs the loop; another thread
 * that wants an fd watched wakes that thread to do it.
 */
#ifndef LG_SOURCES_H
#define LG_SOURCES_H

#include <stdbool.h>
#include <stdint.h>

struct epoll_event;

struct lg_loop_source {
	const char *name;
	/* fd, watched for this source, is ready (events: EPOLLIN, ...) */
	void (*handle)(void *ctx, int fd, uint32_t events);
	/* monotonic ms at which tick() is wanted; 0: none (may be NULL) */
	uint64_t (*next_deadline)(void *ctx);
	/* a deadline passed (now: monotonic ms); may be NULL */
	void (*tick)(void *ctx, uint64_t now);
	/* the loop ends: release what the source holds (may be NULL) */
	void (*finish)(void *ctx);
};

/* One watched fd: what epoll's data.ptr points at. */
struct lg_watch {
	const struct lg_loop_source *src; /* NULL: a free slot */
	void *ctx;
	int fd;
	/*
	 * Unwatched: an event for it may still be in the batch being
	 * dispatched, so the slot is reused only from the next wait on.
	 */
	bool dead;
};

#define LG_SOURCES_MAX 16
#define LG_WATCHES_MAX 16

struct lg_sources {
	struct {
		const struct lg_loop_source *src;
		void *ctx;
	} v[LG_SOURCES_MAX];
	unsigned n;
	struct lg_watch w[LG_WATCHES_MAX];
	int epfd; /* the loop's epoll set */
	int tfd; /* the loop's timer (timerfd, CLOCK_MONOTONIC) */
	struct lg_watch timer; /* its registration */
	uint64_t armed; /* what it is set to */
};

/* The epoll set and the timer. 0 or -errno. */
int lg_sources_init(struct lg_sources *ls);
/* Registers src with ctx for its deadlines and finish (in this order). */
void lg_sources_add(struct lg_sources *ls, const struct lg_loop_source *src,
		    void *ctx);
/*
 * Watches fd for events (EPOLLIN, ...): when it is ready, src->handle(ctx,
 * fd, events). 0 or -errno. A registration of that fd number still there
 * (closed without lg_sources_unwatch, or watched already) is replaced.
 */
int lg_sources_watch(struct lg_sources *ls, int fd, uint32_t events,
		     const struct lg_loop_source *src, void *ctx);
/*
 * fd is no longer watched: before it is closed (or just after its owner
 * closed it, before anything else is watched).
 */
void lg_sources_unwatch(struct lg_sources *ls, int fd);
/* The earliest deadline of all sources (0: none). */
uint64_t lg_sources_next_deadline(const struct lg_sources *ls);
/* Sets the timer to the earliest deadline. */
void lg_sources_arm(struct lg_sources *ls);
/*
 * A ready event: its registration's source handles it (the timer's: every
 * source whose deadline passed ticks).
 */
void lg_sources_dispatch(struct lg_sources *ls, const struct epoll_event *ev);
/*
 * One turn of the loop: the timer armed, a wait until something is ready,
 * each ready event dispatched. 0 (also when a signal interrupted the wait),
 * or -errno of epoll_wait.
 */
int lg_sources_wait(struct lg_sources *ls);
/*
 * finish() of every source, the last added first; closes the timer and the
 * epoll set (the watched fds are their owners' to close).
 */
void lg_sources_finish(struct lg_sources *ls);

#endif
