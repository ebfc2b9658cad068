// SPDX-License-Identifier: MIT
/*
 * The eBPF observer's life in lgrun: loaded before the command (--bpf=on,
 * or a command without the shim) or in the background (--bpf=auto),
 * wired in once loaded, its ring and timers served by the loop, finished
 * before the session's last records; and syscall tracing asked for at an
 * exec (on_exec, exec_watch_serve).
 */
#include "run.h"

/* The level of the session's leaf: lgrun's own cgroup's, plus one. */
static unsigned cgroup_level(void)
{
	char line[PATH_MAX + 8];
	unsigned level = 1;
	LG_AUTOFCLOSE FILE *f = fopen("/proc/self/cgroup", "re");

	while (f && fgets(line, sizeof(line), f)) {
		if (strncmp(line, "0::", 3) != 0)
			continue;
		for (const char *p = line + 3; *p && *p != '\n'; p++)
			if (*p == '/' && p[1] && p[1] != '\n')
				level++;
	}
	return level;
}

static void obs_hello(void *ctx, pid_t pid, uint64_t sent_ns)
{
	lg_observer_hello(ctx, pid, sent_ns);
}

/* Before an agent call: bytes written since the last one are work. */
static void obs_call(void *ctx)
{
	struct loop *l = ctx;

	if (lg_observer_worked(l->observer.obs))
		lg_session_feed(l->s,
				&(struct lg_event){ .kind = LG_EV_WORK,
						    .source = LG_SRC_BPF },
				NULL);
}

static void obs_lineage(void *ctx, pid_t pid, char *out, size_t size)
{
	lg_observer_lineage(ctx, pid, out, size);
}

/* The observer loaded (or failed to): wire it in, or say why not. */
void observer_ready(struct loop *l)
{
	struct lg_error why;

	if (!lg_observer_ready(l->observer.obs, &why))
		return;
	if (why.msg[0]) {
		char st[340];

		snprintf(st, sizeof(st), "off: %s", why.msg);
		lg_session_counters(l->s,
				    &(struct lg_counters){ .bpf_state = st });
		lg_info("the eBPF observer is off: %s", why.msg);
		exec_watch_serve(l);
		return;
	}
	lg_sources_watch(&l->src, lg_observer_fd(l->observer.obs), EPOLLIN,
			 &observer_source, l);
	exec_watch_serve(l); /* an exec waited for it: trace from now on */
	lg_session_counters(l->s,
			    &(struct lg_counters){ .bpf_state = "attached" });
	lg_session_bind(l->s, &(struct lg_session_hooks){
				      .lineage = obs_lineage,
				      .lineage_ctx = l->observer.obs });
	if (l->child.pid > 0)
		lg_session_write_state(l->s, "running", -1, l->child.pid);
	if (l->ctl.ctl) {
		lg_control_on_hello(l->ctl.ctl, obs_hello, l->observer.obs);
		lg_control_on_call(l->ctl.ctl, obs_call, l);
	}
	if (l->child.pid > 0) {
		/* the tree as it is: each process owes a hello (observer.c) */
		static pid_t tree[4096];
		int n = lg_descendants(tree, 4096);

		lg_observer_existing(l->observer.obs, tree,
				     n > 0 ? (size_t)n : 0);
	}
	if (!(l->cg->ok && l->child.in_cgroup) && l->child.pid > 0) {
		/* no cgroup: the pid set, seeded with the tree as it is */
		static pid_t pids[4096];
		int n = lg_descendants(pids, 4096);

		lg_observer_add_pid(l->observer.obs, l->child.pid);
		for (int i = 0; i < n; i++)
			lg_observer_add_pid(l->observer.obs, pids[i]);
	}
	lg_info("the eBPF observer is attached (%s)",
		l->cg->ok && l->child.in_cgroup ? "the session's cgroup" :
						  "the session's pids");
}

/* --bpf: on loads before the command starts, auto in the background. */
int observer_start(struct loop *l, bool async, struct lg_error *err)
{
	const struct lg_config *cfg = l->cfg;
	char lib[PATH_MAX + 32];
	struct lg_observer_cfg oc = { 0 };
	struct stat st;

	if (!lg_libdir_file("liblgbpf.so", lib, sizeof(lib)))
		return lg_error_set(
			err, ENOENT,
			"lgrun was built without the eBPF observer (no %s: the kernel had no BTF at build time)",
			lib);
	if (!lg_may_load_bpf())
		return lg_error_set(
			err, EPERM,
			"loading eBPF programs needs CAP_SYS_ADMIN, or CAP_BPF and CAP_PERFMON (by default a container's root has none of them)");
	oc.lib = lib;
	if (l->cg->ok && stat(l->cg->path, &st) == 0) {
		oc.cgid = st.st_ino; /* a cgroup v2 directory's id */
		oc.level = cgroup_level();
		oc.cgroup_path = l->cg->path;
	}
	oc.shim = cfg->shim;
	if (l->state_dir) {
		snprintf(l->observer.btf_cache, sizeof(l->observer.btf_cache),
			 "%s/bpf", l->state_dir);
		oc.btf_cache = l->observer.btf_cache;
	}
	oc.ring_bytes = (size_t)cfg->bpf_ring_kb * 1024;
	oc.verbose = lg_log_verbosity - LG_LOG_WARN;
	oc.async = async;
	oc.wake_fd = l->efd;
	oc.proxy_port = l->proxy.port;
	oc.egress = cfg->llm_mode != LG_LLM_BASE_URL || cfg->sealed;
	oc.sealed = cfg->sealed;
	oc.sink = &l->sink;
	return lg_observer_start(&l->observer.obs, &oc, err);
}

/* --bpf=auto, once the session has lasted BPF_AUTO_DELAY_MS. */
static void observer_auto(struct loop *l)
{
	struct lg_error why;
	char st[340];

	l->observer.bpf_at = 0;
	if (l->tree.main_exited || l->observer.obs)
		return; /* loaded already: the command is static */
	if (observer_start(l, true, &why) < 0) {
		snprintf(st, sizeof(st), "off: %s", why.msg);
		lg_info("the eBPF observer is off: %s", why.msg);
	} else {
		snprintf(st, sizeof(st), "loading");
	}
	lg_session_counters(l->s, &(struct lg_counters){ .bpf_state = st });
	exec_watch_serve(l); /* an exec that waits: it may go on now */
}

/* Once, before the session's last records: the last events, counters. */
void observer_finish(struct loop *l)
{
	if (!l->observer.obs || l->observer.finished)
		return; /* the state says why (off, or ended before loading) */
	l->observer.finished = true;
	if (!lg_observer_attached(l->observer.obs)) {
		observer_ready(l); /* it may have finished just now */
		if (lg_observer_failed(l->observer.obs))
			return; /* the state says why it could not load */
		if (!lg_observer_attached(l->observer.obs)) {
			lg_session_counters(
				l->s,
				&(struct lg_counters){
					.bpf_state =
						"off: the session ended before the observer had loaded" });
			return;
		}
	}
	lg_observer_finish(l->observer.obs);
}

/* The eBPF observer: kernel events, its own timers, --bpf=auto's load. */
static void observer_handle(void *ctx, int fd, uint32_t events)
{
	struct loop *l = ctx;

	(void)events;
	lg_observer_handle(l->observer.obs, fd);
}

static uint64_t observer_deadline(void *ctx)
{
	struct loop *l = ctx;
	uint64_t o = lg_observer_next_deadline(l->observer.obs);
	uint64_t at = l->observer.bpf_at;

	return at && (!o || at < o) ? at : o;
}

static void observer_tick(void *ctx, uint64_t now)
{
	struct loop *l = ctx;
	uint64_t next = lg_observer_next_deadline(l->observer.obs);

	if (next && now >= next)
		lg_observer_tick(l->observer.obs);
	if (l->observer.bpf_at && now >= l->observer.bpf_at)
		observer_auto(l);
}

void observer_free(void *ctx)
{
	struct loop *l = ctx;

	lg_observer_free(l->observer.obs);
	l->observer.obs = NULL;
}

const struct lg_loop_source observer_source = { "observer", observer_handle,
						observer_deadline,
						observer_tick, observer_free };

void observer_at_start(struct loop *l)
{
	if (l->observer.obs) {
		observer_ready(l); /* --bpf=on: loaded before the start */
	} else if (l->cfg->bpf_mode == LG_BPF_AUTO) {
		/*
		 * Loading takes some 10-20 ms of kernel work a short command
		 * would wait for at its exit: a session that lasts loads it.
		 */
		if (lg_may_load_bpf()) {
			l->observer.bpf_at = lg_mono_ms() + BPF_AUTO_DELAY_MS;
			lg_session_counters(
				l->s,
				&(struct lg_counters){
					.bpf_state =
						"off: the session ended before the observer was loaded" });
		} else {
			lg_session_counters(
				l->s,
				&(struct lg_counters){
					.bpf_state =
						"off: lgrun has neither CAP_SYS_ADMIN nor CAP_BPF with CAP_PERFMON" });
			lg_info("the eBPF observer is off: lgrun has neither CAP_SYS_ADMIN nor CAP_BPF with CAP_PERFMON (by default a container's root has none of them)");
		}
	} else {
		lg_session_counters(
			l->s, &(struct lg_counters){ .bpf_state = "off" });
	}
}

/*
 * Syscall tracing decided at an exec (issue 29): the notify thread asks
 * (on_exec), the main thread serves (exec_watch_serve).
 */
#define EXEC_WAIT_MS 2000 /* an exec waits for the tracing at most this */

static bool exec_wanted(void *ctx)
{
	struct loop *l = ctx;

	return !atomic_load(&l->observer.exec_traced);
}

/*
 * A static or setuid image is about to run (its exec waits in the
 * kernel): the main thread has the observer trace the session's syscalls
 * first, so its very first failed write is seen. Bounded: the exec goes
 * on after EXEC_WAIT_MS whatever happened.
 */
static void on_exec(void *ctx, pid_t pid, const char *path, unsigned flags)
{
	struct loop *l = ctx;
	struct timespec until;
	uint64_t one = 1;
	const char *base = strrchr(path, '/');

	pthread_mutex_lock(&l->observer.exec_mu);
	if (!l->observer.exec_asked)
		snprintf(
			l->observer.exec_why, sizeof(l->observer.exec_why),
			"pid %d (%s) is %s (decided at its exec)", pid,
			base ? base + 1 : path,
			flags & LG_IMAGE_STATIC ?
				"a static binary" :
				"setuid, setgid or privileged (no LD_PRELOAD)");
	l->observer.exec_asked = true;
	pthread_mutex_unlock(&l->observer.exec_mu);
	if (write(l->efd, &one, sizeof(one)) < 0) {
		/* the main loop looks at least at its next tick */
	}
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_nsec += EXEC_WAIT_MS * 1000000L;
	until.tv_sec += until.tv_nsec / 1000000000L;
	until.tv_nsec %= 1000000000L;
	pthread_mutex_lock(&l->observer.exec_mu);
	while (l->observer.exec_asked &&
	       !atomic_load(&l->observer.exec_traced) &&
	       !atomic_load(&l->notify.stop))
		if (pthread_cond_timedwait(&l->observer.exec_cv,
					   &l->observer.exec_mu, &until))
			break;
	pthread_mutex_unlock(&l->observer.exec_mu);
	if (!atomic_load(&l->observer.exec_traced))
		lg_info("pid %d (%s) runs without the shim and is not traced: the eBPF observer did not load within %d ms",
			pid, base ? base + 1 : path, EXEC_WAIT_MS);
}

void exec_watch_init(struct loop *l)
{
	pthread_mutex_init(&l->observer.exec_mu, NULL);
	pthread_cond_init(&l->observer.exec_cv, NULL);
	if (l->notify.nt)
		lg_notifier_on_exec(l->notify.nt, exec_wanted, on_exec, l);
}

/*
 * On the main thread: an exec asked for syscall tracing. Done once the
 * observer is attached; given up when it is off or failed (the exec goes
 * on untraced, as it would have).
 */
void exec_watch_serve(struct loop *l)
{
	bool done = false;

	/* --bpf=auto and not loading yet: an exec waits, load it now */
	if (!l->observer.obs && l->observer.bpf_at && l->observer.exec_asked)
		observer_auto(l); /* it serves us again when it is done */
	pthread_mutex_lock(&l->observer.exec_mu);
	if (l->observer.exec_asked) {
		if (l->observer.obs && lg_observer_attached(l->observer.obs)) {
			lg_observer_watch_syscalls(l->observer.obs,
						   l->observer.exec_why);
			atomic_store(&l->observer.exec_traced, true);
			done = true;
		} else if (!l->observer.obs ||
			   lg_observer_failed(l->observer.obs)) {
			done = !l->observer.obs ? l->observer.bpf_at == 0 :
						  true;
			if (done) /* it will not load: no exec asks again */
				atomic_store(&l->observer.exec_traced, true);
		}
		if (done) {
			l->observer.exec_asked = false;
			pthread_cond_broadcast(&l->observer.exec_cv);
		}
	}
	pthread_mutex_unlock(&l->observer.exec_mu);
}
