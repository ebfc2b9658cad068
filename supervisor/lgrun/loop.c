// SPDX-License-Identifier: MIT
#include "run.h"

/*
 * The agent talks to its model for the first time: load liblgproxy.so
 * (next to the shim) and let it serve the socket, where the connection
 * waits in the backlog.
 */
void load_proxy(struct loop *l)
{
	static const struct lg_proxy_ops ops = {
		lg_session_defer_kill,	  lg_session_feed,
		lg_session_model_blocked, lg_session_stop_message,
		lg_session_judge_calls,	  lg_session_ignore_keys,
		lg_session_steer,	  lg_session_refused,
	};
	__typeof__(lg_proxy_start) *start;
	char path[PATH_MAX + 32], err[256] = "";
	void *h;

	lg_sources_unwatch(&l->src, l->proxy_fd);
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
	l->proxy = start(&ops, l->s, l->proxy_fd, l->routes, l->nroutes,
			 l->secret, wake_main, l, err, sizeof(err));
	if (l->proxy)
		return;
fail:
	/* The agent's model calls get "connection refused", not a hang. */
	lg_warn("the LLM proxy could not start: %s", err);
	close(l->proxy_fd);
	l->proxy_fd = -1;
}

/*
 * The store was lost or is back (on whichever thread found it so): the
 * kill channel, reopened, is watched by the main thread (store_watch).
 */
void store_state(void *ctx, bool up, const char *what)
{
	struct loop *l = ctx;
	uint64_t one = 1;

	lg_session_warn(l->s, "store", up ? "store_back" : "store_lost", 0,
			"lgrun", what);
	if (up && write(l->efd, &one, sizeof(one)) < 0)
		lg_dbg("cannot wake the main loop: %s", strerror(errno));
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
		/* the store closed it (only this thread does) */
		lg_sources_unwatch(&l->src, l->store_fd);
		l->store_fd = -1;
		lg_session_warn(
			l->s, "store", "store_lost", 0, "lgrun",
			"the store's kill channel was lost: a trip on another host no longer stops this one");
		return;
	}
	if (r == 0)
		return;
	lg_warn("another supervisor of the session stopped it: %s", summary);
	lg_session_peer_kill(l->s, summary);
}

int event_loop(struct loop *l)
{
	for (;;) {
		int r;

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
		r = lg_sources_wait(&l->src);
		if (r < 0) {
			lg_err("epoll_wait: %s", strerror(-r));
			return r;
		}
	}
}

/*
 * The sources of the main loop (sources.h). Signals: forwarded to the
 * tree, or its end.
 */
static void signals_handle(void *ctx, int fd, uint32_t events)
{
	(void)fd;
	(void)events;
	on_signal(ctx);
}

const struct lg_loop_source signals_source = { "signals", signals_handle, NULL,
					       NULL, NULL };

/* --watch-output: the command's output, and our terminal's keys to it */
static void output_handle(void *ctx, int fd, uint32_t events)
{
	struct loop *l = ctx;

	(void)events;
	if (fd != STDIN_FILENO)
		pass_output(l, fd == l->out_r[1]);
	else if (l->tty_raw)
		relay_input(l);
}

const struct lg_loop_source output_source = { "output", output_handle, NULL,
					      NULL, NULL };

/* The eBPF observer: kernel events, its own timers, --bpf=auto's load. */
static void observer_handle(void *ctx, int fd, uint32_t events)
{
	struct loop *l = ctx;

	(void)events;
	lg_observer_handle(l->obs, fd);
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

const struct lg_loop_source observer_source = { "observer", observer_handle,
						observer_deadline,
						observer_tick, observer_free };

/* The store's kill channel: another supervisor of the session tripped. */
static void store_handle(void *ctx, int fd, uint32_t events)
{
	(void)fd;
	(void)events;
	store_message(ctx);
}

/* The kill channel, watched (again: reopened on another thread). */
void store_watch(struct loop *l)
{
	int fd = l->store ? lg_store_sub_fd(l->store) : -1;

	if (fd < 0 || fd == l->store_fd)
		return;
	if (lg_sources_watch(&l->src, fd, EPOLLIN, &store_source, l) == 0)
		l->store_fd = fd;
}

void store_free(void *ctx)
{
	struct loop *l = ctx;

	lg_store_free(l->store);
	l->store = NULL;
	l->store_fd = -1;
}

const struct lg_loop_source store_source = { "store", store_handle, NULL, NULL,
					     store_free };

/* The LLM proxy's socket: its library is loaded on the first connection. */
static void proxy_handle(void *ctx, int fd, uint32_t events)
{
	struct loop *l = ctx;

	(void)fd;
	(void)events;
	if (!l->proxy)
		load_proxy(l);
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

const struct lg_loop_source proxy_source = { "proxy", proxy_handle, NULL, NULL,
					     proxy_free };

/*
 * The control socket and the shims' rings, nested sessions' pidfds: the
 * control module's own epoll set (its connections come and go by the
 * hundred, each found by its fd in its table), watched as one fd here.
 */
static void control_handle(void *ctx, int fd, uint32_t events)
{
	struct loop *l = ctx;
	struct epoll_event evs[16];
	int n = epoll_wait(fd, evs, 16, 0);

	(void)events;
	for (int i = 0; i < n && l->ctl; i++)
		if (!lg_control_handle(l->ctl, l->ctl_epfd, evs[i].data.fd))
			lg_dbg("control: fd %d is none of its own",
			       evs[i].data.fd);
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
	lg_control_tick(l->ctl, l->ctl_epfd);
}

void control_free(void *ctx)
{
	struct loop *l = ctx;

	lg_control_free(l->ctl);
	l->ctl = NULL;
	if (l->ctl_epfd >= 0)
		close(l->ctl_epfd);
	l->ctl_epfd = -1;
}

const struct lg_loop_source control_source = { "control", control_handle,
					       control_deadline, control_tick,
					       control_free };

/*
 * Woken by another thread: the observer loaded, the proxy answered, an
 * exec waits for syscall tracing, the store's kill channel reopened.
 */
static void wake_handle(void *ctx, int fd, uint32_t events)
{
	struct loop *l = ctx;
	uint64_t x;

	(void)events;
	if (read(fd, &x, sizeof(x)) < 0) {
		/* the flag is what matters */
	}
	if (l->obs && !lg_observer_attached(l->obs))
		observer_ready(l);
	exec_watch_serve(l); /* an exec waits for syscall tracing */
	store_watch(l);
}

const struct lg_loop_source wake_source = { "wake", wake_handle, NULL, NULL,
					    NULL };

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

/*
 * The sources with deadlines or a finish, in the order they tick (and the
 * reverse of the order they finish); each fd is watched by its part.
 */
void add_sources(struct loop *l)
{
	lg_sources_watch(&l->src, l->sfd, EPOLLIN, &signals_source, l);
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
}
