// SPDX-License-Identifier: MIT
#include <errno.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"
#include "log.h"
#include "clock.h"
#include "sources.h"

/* The timer fired: every source whose deadline passed ticks. */
static void timer_handle(void *ctx, int fd, uint32_t events)
{
	struct lg_sources *ls = ctx;
	uint64_t x, now = lg_mono_ms();

	(void)events;
	if (read(fd, &x, sizeof(x)) < 0) {
		/* spurious: the deadlines say what is due */
	}
	ls->armed = 0;
	for (unsigned i = 0; i < ls->n; i++) {
		const struct lg_loop_source *s = ls->v[i].src;
		uint64_t t;

		if (!s->tick || !s->next_deadline)
			continue;
		t = s->next_deadline(ls->v[i].ctx);
		if (t && now >= t)
			s->tick(ls->v[i].ctx, now);
	}
}

static const struct lg_loop_source timer_source = { "timer", timer_handle, NULL,
						    NULL, NULL };

int lg_sources_init(struct lg_sources *ls)
{
	struct epoll_event ev = { .events = EPOLLIN };
	LG_AUTOCLOSE int epfd = -1, tfd = -1;

	ls->n = 0;
	ls->armed = 0;
	ls->tfd = ls->epfd = -1;
	for (unsigned i = 0; i < LG_WATCHES_MAX; i++)
		ls->w[i] = (struct lg_watch){ .fd = -1 };
	epfd = epoll_create1(EPOLL_CLOEXEC);
	tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (epfd < 0 || tfd < 0)
		return -errno;
	ls->timer = (struct lg_watch){ &timer_source, ls, tfd, false };
	ev.data.ptr = &ls->timer;
	if (epoll_ctl(epfd, EPOLL_CTL_ADD, tfd, &ev) < 0)
		return -errno;
	ls->epfd = lg_steal_fd(&epfd);
	ls->tfd = lg_steal_fd(&tfd);
	return 0;
}

void lg_sources_add(struct lg_sources *ls, const struct lg_loop_source *src,
		    void *ctx)
{
	if (ls->n >= LG_SOURCES_MAX)
		return; /* a build with more sources raises the limit */
	ls->v[ls->n].src = src;
	ls->v[ls->n].ctx = ctx;
	ls->n++;
}

int lg_sources_watch(struct lg_sources *ls, int fd, uint32_t events,
		     const struct lg_loop_source *src, void *ctx)
{
	struct epoll_event ev = { .events = events };
	struct lg_watch *w = NULL;

	if (fd < 0)
		return -EBADF;
	for (unsigned i = 0; i < LG_WATCHES_MAX; i++) {
		struct lg_watch *x = &ls->w[i];

		if (x->src && !x->dead && x->fd == fd)
			x->dead = true; /* its fd was closed: this is another */
		else if (!x->src && !w)
			w = x;
	}
	if (!w)
		return -ENOSPC; /* a build with more fds raises the limit */
	*w = (struct lg_watch){ src, ctx, fd, false };
	ev.data.ptr = w;
	/* still in the set (watched twice): the set points at this one now */
	if (epoll_ctl(ls->epfd, EPOLL_CTL_ADD, fd, &ev) < 0 &&
	    (errno != EEXIST ||
	     epoll_ctl(ls->epfd, EPOLL_CTL_MOD, fd, &ev) < 0)) {
		int e = -errno;

		*w = (struct lg_watch){ .fd = -1 };
		return e;
	}
	return 0;
}

void lg_sources_unwatch(struct lg_sources *ls, int fd)
{
	for (unsigned i = 0; i < LG_WATCHES_MAX; i++) {
		struct lg_watch *w = &ls->w[i];

		if (w->src && !w->dead && w->fd == fd) {
			/* a closed fd has left the set already */
			epoll_ctl(ls->epfd, EPOLL_CTL_DEL, fd, NULL);
			w->dead = true;
		}
	}
}

uint64_t lg_sources_next_deadline(const struct lg_sources *ls)
{
	uint64_t next = 0;

	for (unsigned i = 0; i < ls->n; i++) {
		uint64_t t;

		if (!ls->v[i].src->next_deadline)
			continue;
		t = ls->v[i].src->next_deadline(ls->v[i].ctx);
		if (t && (!next || t < next))
			next = t;
	}
	return next;
}

void lg_sources_arm(struct lg_sources *ls)
{
	struct itimerspec its = { 0 };
	uint64_t next = lg_sources_next_deadline(ls);

	if (next == ls->armed)
		return;
	ls->armed = next;
	if (next) {
		its.it_value.tv_sec = (time_t)(next / 1000);
		its.it_value.tv_nsec = (long)(next % 1000) * 1000000;
	}
	timerfd_settime(ls->tfd, TFD_TIMER_ABSTIME, &its, NULL);
}

void lg_sources_dispatch(struct lg_sources *ls, const struct epoll_event *ev)
{
	const struct lg_watch *w = ev->data.ptr;

	(void)ls;
	if (!w || !w->src || w->dead) {
		lg_dbg("epoll: an event of an fd no longer watched");
		return;
	}
	if (w->src->handle)
		w->src->handle(w->ctx, w->fd, ev->events);
}

int lg_sources_wait(struct lg_sources *ls)
{
	struct epoll_event evs[8];
	int n;

	/* no event of the last batch is left to find them */
	for (unsigned i = 0; i < LG_WATCHES_MAX; i++)
		if (ls->w[i].dead)
			ls->w[i] = (struct lg_watch){ .fd = -1 };
	lg_sources_arm(ls);
	n = epoll_wait(ls->epfd, evs, 8, -1);
	if (n < 0)
		return errno == EINTR ? 0 : -errno;
	for (int i = 0; i < n; i++)
		lg_sources_dispatch(ls, &evs[i]);
	return 0;
}

void lg_sources_finish(struct lg_sources *ls)
{
	for (unsigned i = ls->n; i-- > 0;)
		if (ls->v[i].src->finish)
			ls->v[i].src->finish(ls->v[i].ctx);
	ls->n = 0;
	for (unsigned i = 0; i < LG_WATCHES_MAX; i++)
		ls->w[i] = (struct lg_watch){ .fd = -1 };
	if (ls->tfd >= 0)
		close(ls->tfd);
	if (ls->epfd >= 0)
		close(ls->epfd);
	ls->tfd = ls->epfd = -1;
}
