// SPDX-License-Identifier: MIT
/*
 * The event loop: each time it turns, a pending kill is run when it is
 * due (trip.c) and the session ends with its tree (tree.c); between turns
 * lib/sources.h dispatches each ready fd to the source watching it and
 * each deadline to its source's tick. Its own sources: the wake-ups from
 * other threads, the guard's timers and the recording's flush; every
 * other source is its part's (run.h).
 */
#include "run.h"

int event_loop(struct loop *l)
{
	for (;;) {
		int r;

		if (lg_session_kill_pending(l->s) && trip_due(l))
			return run_trip(l);
		if (tree_over(l))
			return 0;
		r = lg_sources_wait(&l->src);
		if (r < 0) {
			lg_err("epoll_wait: %s", strerror(-r));
			return r;
		}
	}
}

/*
 * Woken by another thread: the observer loaded, the proxy answered, an
 * exec waits for syscall tracing, the store's kill channel reopened (a
 * trip needs nothing more: the loop looks at the session as it turns).
 */
static void wake_handle(void *ctx, int fd, uint32_t events)
{
	struct loop *l = ctx;
	uint64_t x;

	(void)events;
	if (read(fd, &x, sizeof(x)) < 0) {
		/* the flag is what matters */
	}
	if (l->observer.obs && !lg_observer_attached(l->observer.obs))
		observer_ready(l);
	exec_watch_serve(l); /* an exec waits for syscall tracing */
	store_watch(l);
}

static const struct lg_loop_source wake_source = { "wake", wake_handle, NULL,
						   NULL, NULL };

/* The guard's time-based rules (budgets). */
static uint64_t session_deadline(void *ctx)
{
	return lg_session_next_deadline(((struct loop *)ctx)->s);
}

static void session_tick(void *ctx, uint64_t now)
{
	struct loop *l = ctx;
	uint64_t next = lg_session_next_deadline(l->s);

	if (next && now >= next)
		lg_session_feed(l->s,
				&(struct lg_event){ .kind = LG_EV_TICK,
						    .source = LG_SRC_TIMER },
				NULL);
}

static const struct lg_loop_source session_source = { "session", NULL,
						      session_deadline,
						      session_tick, NULL };

/* The session recording, written within 250 ms (lgctl top reads it). */
static uint64_t record_deadline(void *ctx)
{
	return lg_session_record_due(((struct loop *)ctx)->s);
}

static void record_tick(void *ctx, uint64_t now)
{
	(void)now;
	lg_session_record_flush(((struct loop *)ctx)->s);
}

static const struct lg_loop_source record_source = { "record", NULL,
						     record_deadline,
						     record_tick, NULL };

void add_sources(struct loop *l)
{
	lg_sources_watch(&l->src, l->efd, EPOLLIN, &wake_source, l);
	lg_sources_add(&l->src, &observer_source, l);
	lg_sources_add(&l->src, &store_source, l);
	lg_sources_add(&l->src, &proxy_source, l);
	lg_sources_add(&l->src, &control_source, l);
	lg_sources_add(&l->src, &notify_source, l);
	lg_sources_add(&l->src, &procs_source, l);
	lg_sources_add(&l->src, &session_source, l);
	lg_sources_add(&l->src, &record_source, l);
	lg_sources_add(&l->src, &trip_source, l);
	lg_sources_add(&l->src, &tree_source, l);
}
