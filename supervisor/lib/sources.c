// SPDX-License-Identifier: MIT
#include <errno.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "sources.h"

int lg_sources_init(struct lg_sources *ls, int epfd)
{
	struct epoll_event ev = { .events = EPOLLIN };

	ls->n = 0;
	ls->armed = 0;
	ls->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (ls->tfd < 0)
		return -errno;
	ev.data.fd = ls->tfd;
	if (epoll_ctl(epfd, EPOLL_CTL_ADD, ls->tfd, &ev) < 0) {
		int e = -errno;

		close(ls->tfd);
		ls->tfd = -1;
		return e;
	}
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

bool lg_sources_dispatch(struct lg_sources *ls, int fd)
{
	if (fd == ls->tfd) {
		uint64_t x, now = lg_mono_ms();

		if (read(ls->tfd, &x, sizeof(x)) < 0) {
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
		return true;
	}
	for (unsigned i = 0; i < ls->n; i++)
		if (ls->v[i].src->handle &&
		    ls->v[i].src->handle(ls->v[i].ctx, fd))
			return true;
	return false;
}

void lg_sources_finish(struct lg_sources *ls)
{
	for (unsigned i = ls->n; i-- > 0;)
		if (ls->v[i].src->finish)
			ls->v[i].src->finish(ls->v[i].ctx);
	ls->n = 0;
	if (ls->tfd >= 0)
		close(ls->tfd);
	ls->tfd = -1;
}
