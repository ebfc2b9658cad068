// SPDX-License-Identifier: MIT
#include "run.h"

/*
 * The agent talks to its model for the first time: load liblgproxy.so
 * (next to the shim) and let it serve the socket, where the connection
 * waits in the backlog.
 */
void load_proxy(struct loop *l)
{
	__typeof__(lg_proxy_start) *start;
	char path[PATH_MAX + 32], err[256] = "";
	void *h;

	epoll_ctl(l->epfd, EPOLL_CTL_DEL, l->proxy_fd, NULL);
	if (!libdir_file("liblgproxy.so", path, sizeof(path))) {
		snprintf(err, sizeof(err),
			 "liblgproxy.so is not next to lgrun");
		goto fail;
	}
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		snprintf(err, sizeof(err), "%s", dlerror());
		goto fail;
	}
	start = (__typeof__(start))dlsym(h, "lg_proxy_start");
	l->proxy_stop = (__typeof__(l->proxy_stop))dlsym(h, "lg_proxy_stop");
	if (!start || !l->proxy_stop) {
		snprintf(err, sizeof(err), "%s lacks lg_proxy_start", path);
		goto fail;
	}
	l->proxy = start(lg_session_proxy_ops(), l->s, l->proxy_fd, l->routes,
			 l->nroutes, l->secret, wake_main, l, err, sizeof(err));
	if (l->proxy)
		return;
fail:
	/* The agent's model calls get "connection refused", not a hang. */
	lg_warn("the LLM proxy could not start: %s", err);
	close(l->proxy_fd);
	l->proxy_fd = -1;
}

/* The store was lost or is back (called under the session's lock). */
void store_state(void *ctx, bool up, const char *what)
{
	struct loop *l = ctx;
	struct epoll_event ev = { .events = EPOLLIN };

	lg_session_notice(l->s, LG_EV_WARN,
			  &(struct lg_notice){ .rule = "store",
					       .reason = up ? "store_back" :
							      "store_lost",
					       .pid = 0,
					       .exe = "lgrun",
					       .summary = what });
	ev.data.fd = lg_store_sub_fd(l->store);
	if (up && ev.data.fd >= 0) /* the kill channel, reopened */
		epoll_ctl(l->epfd, EPOLL_CTL_ADD, ev.data.fd, &ev);
}

bool store_is_up(void *ctx)
{
	return lg_store_check(ctx);
}

/* The kill channel: another supervisor of the session tripped. */
static void store_message(struct loop *l)
{
	char summary[LG_SUMMARY_MAX];
	int r = lg_store_sub_read(l->store, summary, sizeof(summary));

	if (r < 0) {
		int fd = lg_store_sub_fd(l->store);

		if (fd >= 0)
			epoll_ctl(l->epfd, EPOLL_CTL_DEL, fd, NULL);
		lg_session_notice(
			l->s, LG_EV_WARN,
			&(struct lg_notice){
				.rule = "store",
				.reason = "store_lost",
				.pid = 0,
				.exe = "lgrun",
				.summary =
					"the store's kill channel was lost: a trip on another host no longer stops this one" });
		return;
	}
	if (r == 0)
		return;
	lg_warn("another supervisor of the session stopped it: %s", summary);
	lg_session_notice(l->s, LG_EV_STOP,
			  &(struct lg_notice){ .rule = "store",
					       .summary = summary });
}

int event_loop(struct loop *l)
{
	struct epoll_event evs[8];

	for (;;) {
		int n;

		if (lg_session_kill_pending(l->s)) {
			uint64_t g = trip_grace(l);
			uint64_t now = lg_mono_ms();
			bool linger = l->ctl && lg_control_lingering(l->ctl);

			if (linger && !l->linger_until)
				l->linger_until = now + NESTED_LINGER_MS;
			if (!(linger && now < l->linger_until) &&
			    (!g || l->main_exited || now >= g))
				return run_trip(l);
			/* else: the agent (or a refused nested lgrun) is
			 * reading why; the timer wakes us */
		}
		if (l->main_exited && !l->draining) {
			if (!tree_alive(l))
				return 0;
			if (l->cfg->kill_leftovers) {
				lg_info("the command exited; stopping the processes it left behind");
				lg_tree_signal(l->cg, SIGTERM);
				l->kill_at =
					lg_mono_ms() + l->cfg->kill_grace_ms;
			}
			l->draining = true;
		}
		if (l->draining && !tree_alive(l))
			return 0;
		if (l->kill_at && lg_mono_ms() >= l->kill_at) {
			const char *method;

			lg_tree_kill(l->cg, KILL_WAIT_MS, &method);
			l->kill_at = 0;
			reap_children(l);
			if (l->main_exited)
				return 0;
		}
		lg_sources_arm(&l->src);
		n = epoll_wait(l->epfd, evs, 8, -1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			lg_err("epoll_wait: %s", strerror(errno));
			return -errno;
		}
		for (int i = 0; i < n; i++)
			if (!lg_sources_dispatch(&l->src, evs[i].data.fd))
				lg_dbg("epoll: fd %d is no source's",
				       evs[i].data.fd);
	}
}

/*
 * The sources of the main loop (sources.h), in the order a ready fd is
 * offered to them. Signals: forwarded to the tree, or its end.
 */
static bool signals_handle(void *ctx, int fd)
{
	struct loop *l = ctx;

	if (fd != l->sfd)
		return false;
	on_signal(l);
	return true;
}

static const struct lg_loop_source signals_source = { "signals", signals_handle,
						      NULL, NULL, NULL };

/* --watch-output: the command's output, and our terminal's keys to it */
static bool output_handle(void *ctx, int fd)
{
	struct loop *l = ctx;

	if (fd == l->out_r[0] || fd == l->out_r[1]) {
		pass_output(l, fd == l->out_r[1]);
		return true;
	}
	if (fd == STDIN_FILENO && l->tty_raw) {
		relay_input(l);
		return true;
	}
	return false;
}

static const struct lg_loop_source output_source = { "output", output_handle,
						     NULL, NULL, NULL };

/* The eBPF observer: kernel events, its own timers, --bpf=auto's load. */
static bool observer_handle(void *ctx, int fd)
{
	struct loop *l = ctx;

	return lg_observer_handle(l->obs, fd);
}

static uint64_t observer_deadline(void *ctx)
{
	struct loop *l = ctx;
	uint64_t o = lg_observer_next_deadline(l->obs);

	return l->bpf_at && (!o || l->bpf_at < o) ? l->bpf_at : o;
}

static void observer_tick(void *ctx, uint64_t now)
{
	struct loop *l = ctx;
	uint64_t next = lg_observer_next_deadline(l->obs);

	if (next && now >= next)
		lg_observer_tick(l->obs);
	if (l->bpf_at && now >= l->bpf_at)
		observer_auto(l);
}

void observer_free(void *ctx)
{
	struct loop *l = ctx;

	lg_observer_free(l->obs);
	l->obs = NULL;
}

static const struct lg_loop_source observer_source = {
	"observer", observer_handle, observer_deadline, observer_tick,
	observer_free
};

/* The store's kill channel: another supervisor of the session tripped. */
static bool store_handle(void *ctx, int fd)
{
	struct loop *l = ctx;

	if (!l->store || fd != lg_store_sub_fd(l->store))
		return false;
	store_message(l);
	return true;
}

void store_free(void *ctx)
{
	struct loop *l = ctx;

	lg_store_free(l->store);
	l->store = NULL;
}

static const struct lg_loop_source store_source = { "store", store_handle, NULL,
						    NULL, store_free };

/* The LLM proxy's socket: its library is loaded on the first connection. */
static bool proxy_handle(void *ctx, int fd)
{
	struct loop *l = ctx;

	if (fd != l->proxy_fd || l->proxy)
		return false;
	load_proxy(l);
	return true;
}

void proxy_free(void *ctx)
{
	struct loop *l = ctx;

	if (l->proxy && l->proxy_stop)
		l->proxy_stop(l->proxy);
	else if (l->proxy_fd >= 0)
		close(l->proxy_fd);
	l->proxy = NULL;
	l->proxy_fd = -1;
}

static const struct lg_loop_source proxy_source = { "proxy", proxy_handle, NULL,
						    NULL, proxy_free };

/* The control socket and the shims' rings, nested sessions' pidfds. */
static bool control_handle(void *ctx, int fd)
{
	struct loop *l = ctx;

	return l->ctl && lg_control_handle(l->ctl, l->epfd, fd);
}

static uint64_t control_deadline(void *ctx)
{
	struct loop *l = ctx;

	return lg_control_next_deadline(l->ctl);
}

static void control_tick(void *ctx, uint64_t now)
{
	struct loop *l = ctx;

	(void)now;
	lg_control_tick(l->ctl, l->epfd);
}

void control_free(void *ctx)
{
	struct loop *l = ctx;

	lg_control_free(l->ctl);
	l->ctl = NULL;
}

static const struct lg_loop_source control_source = {
	"control", control_handle, control_deadline, control_tick, control_free
};

/* Woken by another thread: the observer loaded, the proxy answered. */
static bool wake_handle(void *ctx, int fd)
{
	struct loop *l = ctx;
	uint64_t x;

	if (fd != l->efd)
		return false;
	if (read(l->efd, &x, sizeof(x)) < 0) {
		/* the flag is what matters */
	}
	if (l->obs && !lg_observer_attached(l->obs))
		observer_ready(l);
	exec_watch_serve(l); /* an exec waits for syscall tracing */
	return true;
}

static const struct lg_loop_source wake_source = { "wake", wake_handle, NULL,
						   NULL, NULL };

/* The notify thread's reads, watched (watch_reader). */
static uint64_t notify_deadline(void *ctx)
{
	struct loop *l = ctx;
	struct lg_busy b;

	if (!l->thread_started)
		return 0;
	return lg_notifier_busy(l->nt, &b) ? b.since_ms + READ_DEADLINE_MS :
					     (lg_mono_ms() / 1000 + 1) * 1000;
}

static void notify_tick(void *ctx, uint64_t now)
{
	(void)now;
	watch_reader(ctx);
}

static const struct lg_loop_source notify_source = { "notify", NULL,
						     notify_deadline,
						     notify_tick, NULL };

/* The tree's process count (budget.max_processes). */
static uint64_t procs_deadline(void *ctx)
{
	return ((struct loop *)ctx)->procs_at;
}

static void procs_tick(void *ctx, uint64_t now)
{
	(void)now;
	count_processes(ctx);
}

static const struct lg_loop_source procs_source = { "processes", NULL,
						    procs_deadline, procs_tick,
						    NULL };

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

/*
 * The loop's own moments (event_loop acts on them when it wakes): a
 * forwarded signal's or a drain's grace, a nested lgrun's linger, the
 * grace of a kill decided on the proxy's path, the drain's poll.
 */
static uint64_t trip_deadline(void *ctx)
{
	struct loop *l = ctx;
	uint64_t next = 0, t[4] = { l->kill_at, l->linger_until, 0, 0 };

	/* only while a deferred kill waits (a deny never arms it) */
	if (lg_session_kill_pending(l->s))
		t[2] = trip_grace(l);
	if (l->draining)
		t[3] = lg_mono_ms() + 20;
	for (int i = 0; i < 4; i++)
		if (t[i] && (!next || t[i] < next))
			next = t[i];
	return next;
}

static const struct lg_loop_source trip_source = { "trip", NULL, trip_deadline,
						   NULL, NULL };

void add_sources(struct loop *l)
{
	lg_sources_add(&l->src, &signals_source, l);
	lg_sources_add(&l->src, &output_source, l);
	lg_sources_add(&l->src, &observer_source, l);
	lg_sources_add(&l->src, &store_source, l);
	lg_sources_add(&l->src, &proxy_source, l);
	lg_sources_add(&l->src, &control_source, l);
	lg_sources_add(&l->src, &wake_source, l);
	lg_sources_add(&l->src, &notify_source, l);
	lg_sources_add(&l->src, &procs_source, l);
	lg_sources_add(&l->src, &session_source, l);
	lg_sources_add(&l->src, &record_source, l);
	lg_sources_add(&l->src, &trip_source, l);
}
