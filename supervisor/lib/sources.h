/* SPDX-License-Identifier: MIT */
/*
 * lgrun's main loop as a set of event sources. Each source (seccomp
 * notify's watch, the control socket and rings, the eBPF observer, the LLM
 * proxy, the store's channel, output watching, signals, the trip's timers)
 * registers one table: handle() for a ready fd it owns, next_deadline()
 * and tick() for its time-based work, finish() at the end. The loop
 * dispatches every ready fd and every deadline through the tables; its one
 * timer is the earliest of the sources' deadlines. A new source is its
 * table and one lg_sources_add().
 */
#ifndef LG_SOURCES_H
#define LG_SOURCES_H

#include <stdbool.h>
#include <stdint.h>

struct lg_loop_source {
	const char *name;
	/* fd is ready: true when it is this source's (and was handled) */
	bool (*handle)(void *ctx, int fd);
	/* monotonic ms at which tick() is wanted; 0: none (may be NULL) */
	uint64_t (*next_deadline)(void *ctx);
	/* a deadline passed (now: monotonic ms); may be NULL */
	void (*tick)(void *ctx, uint64_t now);
	/* the loop ends: release what the source holds (may be NULL) */
	void (*finish)(void *ctx);
};

#define LG_SOURCES_MAX 16

struct lg_sources {
	struct {
		const struct lg_loop_source *src;
		void *ctx;
	} v[LG_SOURCES_MAX];
	unsigned n;
	int tfd; /* the loop's timer (timerfd, CLOCK_MONOTONIC) */
	uint64_t armed; /* what it is set to */
};

/* The timer, added to epfd. 0 or -errno. */
int lg_sources_init(struct lg_sources *ls, int epfd);
/* Registers src with ctx; in the order added, handle() is asked. */
void lg_sources_add(struct lg_sources *ls, const struct lg_loop_source *src,
		    void *ctx);
/* The earliest deadline of all sources (0: none). */
uint64_t lg_sources_next_deadline(const struct lg_sources *ls);
/* Sets the timer to the earliest deadline. */
void lg_sources_arm(struct lg_sources *ls);
/*
 * A ready fd: the timer (every source whose deadline passed ticks) or the
 * source's that owns it. false when no source claimed it.
 */
bool lg_sources_dispatch(struct lg_sources *ls, int fd);
/* finish() of every source, the last added first; closes the timer. */
void lg_sources_finish(struct lg_sources *ls);

#endif
