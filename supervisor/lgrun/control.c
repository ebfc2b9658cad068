// SPDX-License-Identifier: MIT
/*
 * The control socket in lgrun: the shims' connections and rings, nested
 * lgruns' registrations and their pidfds. The control module adds and
 * removes those fds itself, by the hundred, and finds each by its fd in
 * its table: it gets an epoll set of its own, which the loop watches as
 * one fd (as the observer's ring buffer is libbpf's own set).
 */
#include "run.h"

/* Something of the control module's is ready: each ready fd to it. */
static void control_handle(void *ctx, int fd, uint32_t events)
{
	struct loop *l = ctx;
	struct epoll_event evs[16];
	int n = epoll_wait(fd, evs, 16, 0);

	(void)events;
	for (int i = 0; i < n && l->ctl.ctl; i++)
		if (!lg_control_handle(l->ctl.ctl, l->ctl.epfd, evs[i].data.fd))
			lg_dbg("control: fd %d is none of its own",
			       evs[i].data.fd);
}

/* The shims' rings: drained on a tick while events flow. */
static uint64_t control_deadline(void *ctx)
{
	struct loop *l = ctx;

	return lg_control_next_deadline(l->ctl.ctl);
}

static void control_tick(void *ctx, uint64_t now)
{
	struct loop *l = ctx;

	(void)now;
	lg_control_tick(l->ctl.ctl, l->ctl.epfd);
}

void control_free(void *ctx)
{
	struct loop *l = ctx;

	lg_control_free(l->ctl.ctl);
	l->ctl.ctl = NULL;
	if (l->ctl.epfd >= 0)
		close(l->ctl.epfd);
	l->ctl.epfd = -1;
}

const struct lg_loop_source control_source = { "control", control_handle,
					       control_deadline, control_tick,
					       control_free };

int control_start(struct loop *l, const char *path)
{
	struct epoll_event ev = { .events = EPOLLIN };
	const struct lg_config *cfg = l->cfg;
	int r;

	l->ctl.ctl = lg_control_new(path, &l->sink, l->cg,
				    cfg->target_keys ? cfg->target_keys :
						       LG_DEFAULT_TARGET_KEYS,
				    cfg->url_targets);
	if (!l->ctl.ctl)
		return 0;
	lg_control_set_memory_cap(l->ctl.ctl, cfg->shim_max_memory);
	/* its own set: the socket, its connections, nested sessions' pidfds */
	l->ctl.epfd = epoll_create1(EPOLL_CLOEXEC);
	ev.data.fd = lg_control_listen_fd(l->ctl.ctl);
	if (l->ctl.epfd < 0 ||
	    epoll_ctl(l->ctl.epfd, EPOLL_CTL_ADD, ev.data.fd, &ev) < 0)
		r = -errno;
	else
		r = lg_sources_watch(&l->src, l->ctl.epfd, EPOLLIN,
				     &control_source, l);
	if (r < 0) {
		lg_err("cannot watch the control socket: %s", strerror(-r));
		return LG_EXIT_ERROR;
	}
	return 0;
}

/* What the shims did and could not do, on record at the session's end. */
void record_shim_stats(struct loop *l)
{
	struct lg_control_stats st;

	if (!l->ctl.ctl)
		return;
	lg_control_stats(l->ctl.ctl, &st);
	lg_session_counters(
		l->s, &(struct lg_counters){ .shim = &(struct lg_shim_stats){
						     .accepted = st.accepted,
						     .refused = st.refused,
						     .malformed = st.malformed,
						     .dropped = st.dropped,
						     .gates = st.gates,
						     .tls = st.tls } });
	if (st.dropped) {
		char msg[160];

		/* Nothing is lost silently: the gap itself is on record. */
		snprintf(
			msg, sizeof(msg),
			"warning: the shim dropped %llu event(s): its socket was full",
			(unsigned long long)st.dropped);
		lg_session_audit_simple(l->s, "warn", msg);
	}
}
