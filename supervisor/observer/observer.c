// SPDX-License-Identifier: MIT
#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "observer_int.h"
#include "lib/log.h"
#include "observer.h"
#include "seccomp/pathres.h"
#include "guard/sink.h"

/* The library and its programs: in the loader thread when async. */
static int load(struct lg_observer *o)
{
	struct lg_bpfobs_cfg bc = { o->cfg.cgid,	o->cfg.level,
				    o->cfg.ring_bytes,	o->cfg.verbose,
				    o->cfg.cgroup_path, o->cfg.btf_cache };

	o->dl = dlopen(o->cfg.lib, RTLD_NOW | RTLD_LOCAL);
	if (o->dl)
		o->ops = dlsym(o->dl, "lg_bpfobs_ops");
	if (!o->ops)
		return lg_error_set(&o->load_why, ENOENT, "cannot load %s: %s",
				    o->cfg.lib,
				    o->dl ? "no lg_bpfobs_ops" : dlerror());
	return o->ops->open(&o->bo, &bc, &o->load_why);
}

/*
 * Loading takes 10 to 25 ms of CPU (libbpf parses the kernel's 5 MB of BTF,
 * or the copy minimized for these programs, btfcache.c; the verifier, the
 * maps): at nice 10, so that on a busy machine the
 * session's own work comes first and the load takes the idle time.
 */
static void *loader(void *arg)
{
	struct lg_observer *o = arg;
	uint64_t one = 1;

	if (setpriority(PRIO_PROCESS, (id_t)gettid(), 10) < 0) {
		/* at the session's priority, then */
	}
	o->load_err = load(o);
	if (o->load_err < 0 && !o->load_why.msg[0])
		lg_error_set(&o->load_why, -o->load_err, "%s",
			     strerror(-o->load_err));
	atomic_store(&o->done, true);
	if (write(o->cfg.wake_fd, &one, sizeof(one)) < 0) {
		/* the loop polls done at its next wake-up anyway */
	}
	return NULL;
}

int lg_observer_start(struct lg_observer **out,
		      const struct lg_observer_cfg *cfg, struct lg_error *err)
{
	struct lg_observer *o = calloc(1, sizeof(*o));
	int r;

	*out = NULL;
	if (!o)
		return lg_error_set(err, ENOMEM, "out of memory");
	o->cfg = *cfg;
	o->fd = -1;
	o->pend = calloc(NPENDING, sizeof(*o->pend));
	if (!o->pend) {
		lg_observer_free(o);
		return lg_error_set(err, ENOMEM, "out of memory");
	}
	if (cfg->async) {
		if (pthread_create(&o->thread, NULL, loader, o) != 0) {
			lg_observer_free(o);
			return lg_error_set(err, EAGAIN,
					    "cannot start a thread");
		}
		o->threaded = true;
	} else {
		r = load(o);
		if (r < 0) {
			lg_error_set(err, -r, "%s",
				     o->load_why.msg[0] ? o->load_why.msg :
							  strerror(-r));
			lg_observer_free(o);
			return r;
		}
		atomic_store(&o->done, true);
	}
	*out = o;
	return 0;
}

bool lg_observer_ready(struct lg_observer *o, struct lg_error *err)
{
	/* done first: until then the loader thread writes load_err */
	if (!o || o->attached || o->failed || !atomic_load(&o->done))
		return false;
	if (o->threaded) {
		pthread_join(o->thread, NULL);
		o->threaded = false;
	}
	if (o->load_err < 0) { /* said once: the caller records why */
		lg_error_set(err, -o->load_err, "%s", o->load_why.msg);
		o->failed = true;
		return true;
	}
	o->attached = true;
	o->fd = o->ops->fd(o->bo);
	if (o->ops->btf_used(o->bo))
		lg_info("eBPF: the kernel's types read from the copy kept for this boot, %s",
			o->ops->btf_used(o->bo));
	lg_error_clear(err);
	o->start_ms = lg_mono_ms();
	o->watching = o->ops->watching(o->bo);
	snprintf(o->tracing, sizeof(o->tracing), "off");
	if (!o->cfg.shim)
		obs_watch_syscalls(o, "the shim is off");
	else if (o->cfg.egress && !(o->watching & LGB_WATCH_CONNECT))
		obs_watch_syscalls(
			o,
			"connects around the egress proxy, with no cgroup connect hooks");
	return true;
}

size_t lg_observer_live(const struct lg_observer *o, struct lg_observed *out,
			size_t max)
{
	size_t n = 0;

	if (!o)
		return 0;
	for (unsigned i = 0; i < NPROC && n < max; i++) {
		const struct proc *p = &o->procs[i];

		if (p->pid && !p->exited && p->fork_ns)
			out[n++] = (struct lg_observed){ p->pid, p->fork_ns };
	}
	return n;
}

void lg_observer_watch_syscalls(struct lg_observer *o, const char *why)
{
	if (o && o->attached)
		obs_watch_syscalls(o, why);
}

bool lg_observer_attached(const struct lg_observer *o)
{
	return o && o->attached;
}

bool lg_observer_failed(const struct lg_observer *o)
{
	return o && o->failed;
}

void lg_observer_add_pid(struct lg_observer *o, pid_t pid)
{
	if (o && o->attached && !o->cfg.cgid)
		o->ops->add_pid(o->bo, pid);
}

void lg_observer_hello(struct lg_observer *o, pid_t pid, uint64_t sent_ns)
{
	struct proc *p;

	if (!o)
		return;
	p = obs_proc_get(o, pid, true);
	if (!sent_ns)
		sent_ns = lg_mono_ns();
	if (p && sent_ns > p->hello_ns)
		p->hello_ns = sent_ns;
	if (o->attached)
		o->ops->seen(o->bo, pid, sent_ns);
}

static const char *base(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

static void resolve(const struct lgb_event *e, char *out, size_t size)
{
	char link[64], dir[PATH_MAX];
	ssize_t n;

	if (e->path[0] == '/') {
		snprintf(out, size, "%s", e->path);
		return;
	}
	if (e->dirfd == LGB_AT_FDCWD)
		snprintf(link, sizeof(link), "/proc/%u/cwd", e->pid);
	else
		snprintf(link, sizeof(link), "/proc/%u/fd/%d", e->pid,
			 e->dirfd);
	n = readlink(link, dir, sizeof(dir) - 1);
	if (n <= 0) {
		snprintf(out, size, "%s", e->path[0] ? e->path : "?");
		return;
	}
	dir[n] = '\0';
	if (!e->path[0]) { /* ftruncate: the fd's own file */
		snprintf(out, size, "%s", dir);
		return;
	}
	if (lg_path_resolve(dir, e->path, out, size) < 0)
		snprintf(out, size, "%s", e->path);
}

static void queue(struct lg_observer *o, const struct lgb_event *e,
		  const char *what)
{
	struct pending *p;

	if (o->pn == NPENDING) { /* full: the oldest is decided now */
		lg_observer_tick(o);
		if (o->pn == NPENDING)
			return;
	}
	p = &o->pend[(o->phead + o->pn++) % NPENDING];
	p->due_ms = lg_mono_ms() + HELLO_WAIT_MS;
	p->ts_ns = e->ts_ns;
	p->pid = (pid_t)e->pid;
	p->type = e->type;
	p->op = e->op;
	p->err = e->ret < 0 ? -e->ret : 0;
	snprintf(p->what, sizeof(p->what), "%s", what);
}

static bool loopback(const struct lgb_event *e)
{
	static const unsigned char v6lo[16] = { [15] = 1 };
	static const unsigned char v4mapped[12] = { [10] = 0xff, [11] = 0xff };

	if (e->family == 2)
		return e->addr[0] == 127 || !memcmp(e->addr, "\0\0\0\0", 4);
	return !memcmp(e->addr, v6lo, 16) ||
	       (!memcmp(e->addr, v4mapped, 12) && e->addr[12] == 127);
}

/*
 * A connection off this host that is not lgrun's egress proxy: what goes
 * there is not read (an agent that ignores HTTPS_PROXY talks to its model
 * unseen). Counted; said once for each program (up to 8 of them).
 */
static void direct(struct lg_observer *o, const struct lgb_event *e)
{
	const char *exe = obs_exe_of(o, (pid_t)e->pid, e->comm);
	char where[80], msg[512];

	o->direct++;
	for (unsigned i = 0; i < o->ndirect_exe; i++)
		if (strcmp(o->direct_exe[i], exe) == 0)
			return;
	if (o->ndirect_exe == 8)
		return;
	snprintf(o->direct_exe[o->ndirect_exe++], sizeof(o->direct_exe[0]),
		 "%s", exe);
	if (e->family == 2) {
		snprintf(where, sizeof(where), "%u.%u.%u.%u:%u", e->addr[0],
			 e->addr[1], e->addr[2], e->addr[3], e->port);
	} else {
		char a[INET6_ADDRSTRLEN] = "?";

		inet_ntop(AF_INET6, e->addr, a, sizeof(a));
		snprintf(where, sizeof(where), "[%s]:%u", a, e->port);
	}
	snprintf(
		msg, sizeof(msg),
		"pid %u (%s) connects to %s directly, not through lgrun's egress proxy: %s",
		e->pid, exe, where,
		o->cfg.sealed ?
			"it cannot (the network is sealed), it fails instead" :
			"what it says there is not read (it ignores HTTPS_PROXY; [network] egress = proxy-only stops it)");
	lg_sink_notice(o->cfg.sink, LG_EV_WARN,
		       &(struct lg_notice){ .rule = "egress",
					    .reason = "direct_connection",
					    .pid = (pid_t)e->pid,
					    .exe = exe,
					    .summary = msg });
}

/*
 * pid exec'd at exec_ns (0: before the observer): its hello is awaited
 * (watch.c). When NCHECKS execs wait already, what is due is settled
 * first; still full, syscalls are traced from now on.
 */
static void await_hello(struct lg_observer *o, pid_t pid, uint64_t exec_ns)
{
	if (obs_check_later(o, pid, exec_ns, false))
		return;
	lg_observer_tick(o);
	if (!obs_check_later(o, pid, exec_ns, false))
		obs_watch_syscalls(o, "more execs than can wait for a hello");
}

static void on_event(void *ctx, const struct lgb_event *e)
{
	struct lg_observer *o = ctx;
	struct proc *p;
	char what[PATH_MAX];

	switch (e->type) {
	case LGB_FORK:
		p = obs_proc_get(o, (pid_t)e->pid, true);
		if (p) {
			struct proc *parent =
				obs_proc_get(o, (pid_t)e->ppid, false);

			p->ppid = (pid_t)e->ppid;
			p->exited = false;
			p->fork_ns = e->ts_ns;
			/* a fork runs its parent's image, shim and all */
			if (parent) {
				memcpy(p->exe, parent->exe, sizeof(p->exe));
				memcpy(p->arg0, parent->arg0, sizeof(p->arg0));
				p->exec_ns = parent->exec_ns;
				p->hello_ns = parent->hello_ns;
			}
		}
		break;
	case LGB_EXEC:
		p = obs_proc_get(o, (pid_t)e->pid, true);
		if (p) {
			if (!p->ppid)
				p->ppid = (pid_t)e->ppid;
			p->exec_ns = e->ts_ns;
			p->warned = false;
			snprintf(p->exe, sizeof(p->exe), "%s", base(e->path));
			snprintf(p->arg0, sizeof(p->arg0), "%s", e->arg0);
		}
		lg_dbg("bpf: exec %s (pid %u, parent %u)", e->path, e->pid,
		       e->ppid);
		if (e->op & (LGB_EXEC_STATIC | LGB_EXEC_SECURE)) {
			char why[160];

			snprintf(
				why, sizeof(why), "pid %u (%s) is %s", e->pid,
				base(e->path),
				e->op & LGB_EXEC_STATIC ?
					"a static binary" :
					"setuid, setgid or privileged (no LD_PRELOAD)");
			obs_watch_syscalls(o, why);
		} else {
			await_hello(o, (pid_t)e->pid, e->ts_ns);
		}
		break;
	case LGB_EXIT:
		p = obs_proc_get(o, (pid_t)e->pid, false);
		if (p)
			p->exited = true;
		break;
	case LGB_OP:
		p = obs_proc_get(o, (pid_t)e->pid, false);
		if (p && p->hello_ns && p->hello_ns >= p->exec_ns)
			break; /* its shim reports its results itself */
		resolve(e, what, sizeof(what));
		queue(o, e, what);
		break;
	case LGB_CONNECT:
		if (o->cfg.egress && e->family != 1 && e->port != 53 &&
		    !loopback(e))
			direct(o, e);
		if (e->family ==
		    1) { /* AF_UNIX: system sockets are not tools */
			if (!e->path[0] || strncmp(e->path, "/run/", 5) == 0 ||
			    strncmp(e->path, "/var/run/", 9) == 0 ||
			    strstr(e->path, "/run/"))
				break;
			snprintf(what, sizeof(what), "unix:%s", e->path);
		} else if (e->port == 53) {
			break; /* name lookups are not tool calls */
		} else if (e->family == 2) {
			/* lgrun's own LLM proxy sees that traffic in full */
			if (o->cfg.proxy_port && e->port == o->cfg.proxy_port &&
			    e->addr[0] == 127)
				break;
			snprintf(what, sizeof(what), "%u.%u.%u.%u:%u",
				 e->addr[0], e->addr[1], e->addr[2], e->addr[3],
				 e->port);
		} else {
			snprintf(what, sizeof(what), "[ipv6]:%u", e->port);
		}
		lg_dbg("bpf: pid %u (%s) connects to %s", e->pid, e->comm,
		       what);
		queue(o, e, what);
		break;
	default:
		break;
	}
}

int lg_observer_fd(const struct lg_observer *o)
{
	return o && o->attached ? o->fd : -1;
}

bool lg_observer_handle(struct lg_observer *o, int fd)
{
	if (!o || !o->attached || fd != o->fd)
		return false;
	o->ops->consume(o->bo, on_event, o);
	return true;
}

void lg_observer_existing(struct lg_observer *o, const pid_t *pids, size_t n)
{
	for (size_t i = 0; o && o->attached && i < n; i++)
		await_hello(o, pids[i], 0);
}

uint64_t lg_observer_next_deadline(const struct lg_observer *o)
{
	uint64_t a = o && o->pn ? o->pend[o->phead].due_ms : 0;
	uint64_t b = o && o->cn ? o->checks[o->chead].due_ms : 0;

	return !a ? b : !b ? a : a < b ? a : b;
}

static enum lg_op lg_op_of(uint32_t op)
{
	switch (op) {
	case LGB_OP_UNLINK:
		return LG_OP_UNLINK;
	case LGB_OP_RMDIR:
		return LG_OP_RMDIR;
	case LGB_OP_TRUNCATE:
		return LG_OP_TRUNCATE;
	case LGB_OP_RENAME:
		return LG_OP_RENAME;
	default:
		return LG_OP_WRITE;
	}
}

/* Decides one pending event: its process's shim has said hello or not. */
static void decide(struct lg_observer *o, const struct pending *pe)
{
	struct proc *p = obs_proc_get(o, pe->pid, true);
	const char *exe = obs_exe_of(o, pe->pid, "?");
	bool seen = p && p->hello_ns && p->hello_ns >= p->exec_ns;
	/*
	 * Tool traffic, or a removal: what the shim would have reported.
	 * Renames and truncations are how compilers and editors write files,
	 * not blind spots worth a warning (the seccomp filter judges them).
	 */
	bool blind_spot = pe->type == LGB_CONNECT ||
			  (pe->type == LGB_OP &&
			   (pe->op == LGB_OP_UNLINK || pe->op == LGB_OP_RMDIR));

	if (seen)
		return; /* the shim reported it itself */
	if (pe->type == LGB_OP) {
		struct lg_event ev = { .kind = LG_EV_OP_RESULT,
				       .source = LG_SRC_BPF,
				       .op = lg_op_of(pe->op),
				       .pid = pe->pid,
				       .exe = exe,
				       .target = pe->what,
				       .result = pe->err };

		o->cfg.sink->feed(o->cfg.sink->ctx, &ev, NULL);
	}
	if (blind_spot && p && !p->warned) {
		char msg[512];

		p->warned = true;
		o->bypass_warnings++;
		static const char *const verbs[] = {
			[LGB_OP_UNLINK] = "delete",
			[LGB_OP_RMDIR] = "remove",
			[LGB_OP_TRUNCATE] = "truncate",
			[LGB_OP_RENAME] = "rename",
		};
		const char *verb = pe->op < sizeof(verbs) / sizeof(verbs[0]) &&
						   verbs[pe->op] ?
					   verbs[pe->op] :
					   "change";
		char act[48];

		if (pe->type == LGB_CONNECT)
			snprintf(act, sizeof(act), "connected to");
		else
			snprintf(act, sizeof(act),
				 pe->err ? "tried to %s" : "%sd", verb);
		snprintf(
			msg, sizeof(msg),
			"pid %d (%s) is not seen by the shim: static binary or cleared environment; tool calls from it are not observed (it %s %s)",
			pe->pid, exe, act, pe->what);
		lg_sink_notice(o->cfg.sink, LG_EV_WARN,
			       &(struct lg_notice){ .rule = "bpf",
						    .reason = "shim_bypass",
						    .pid = pe->pid,
						    .exe = exe,
						    .summary = msg });
	}
}

void lg_observer_tick(struct lg_observer *o)
{
	uint64_t now = lg_mono_ms();

	while (o && o->pn && o->pend[o->phead].due_ms <= now) {
		decide(o, &o->pend[o->phead]);
		o->phead = (o->phead + 1) % NPENDING;
		o->pn--;
	}
	/* in order; a late one at the head holds the rest back a little */
	while (o && o->cn && o->checks[o->chead].due_ms <= now) {
		struct hello_check c = o->checks[o->chead];

		o->chead = (o->chead + 1) % NCHECKS;
		o->cn--;
		obs_check_now(o, &c);
	}
}

void lg_observer_lineage(struct lg_observer *o, pid_t pid, char *out,
			 size_t size)
{
	size_t len = 0;

	out[0] = '\0';
	for (int depth = 0; o && pid > 0 && depth < 16 && len < size; depth++) {
		struct proc *p = obs_proc_get(o, pid, false);

		if (!p)
			break;
		len += (size_t)snprintf(out + len, size - len, "%s%s[%d]",
					depth ? " <- " : "",
					p->exe[0] ? p->exe : "?", pid);
		pid = p->ppid;
	}
}

void lg_observer_finish(struct lg_observer *o)
{
	uint64_t c[LGB_C_MAX] = { 0 };

	if (!o || !o->attached)
		return;
	o->ops->consume(o->bo, on_event, o);
	while (o->pn) { /* every hello is in by now */
		decide(o, &o->pend[o->phead]);
		o->phead = (o->phead + 1) % NPENDING;
		o->pn--;
	}
	o->ops->counters(o->bo, c);
	lg_sink_counters(
		o->cfg.sink,
		&(struct lg_counters){
			.bpf = &(struct lg_bpf_stats){
				.drops = c[LGB_C_DROPS],
				.syscalls = c[LGB_C_SYSCALLS],
				/* the tree has ended: every thread is counted */
				.bytes_written = c[LGB_C_EXITED_WCHAR] ?
							 c[LGB_C_EXITED_WCHAR] :
							 c[LGB_C_BYTES_WRITTEN],
				.bypass_warnings = o->bypass_warnings,
				.direct = o->direct,
				.syscall_tracing = o->tracing } });
}

void lg_observer_free(struct lg_observer *o)
{
	if (!o)
		return;
	if (o->threaded) /* a load still running: a few ms at most */
		pthread_join(o->thread, NULL);
	/*
	 * Loaded against the kernel's own types: the copy for this boot's
	 * next sessions, made now that the tree is gone (bpftool, ~40 ms).
	 */
	if (o->bo) {
		int r = o->ops->cache_btf(o->bo);

		if (r > 0)
			lg_info("eBPF: the kernel's types for lgrun's programs kept in %s: this boot's next loads skip most of their parsing",
				o->cfg.btf_cache);
		else if (r < 0)
			lg_dbg("eBPF: no copy of the kernel's types kept in %s: %s",
			       o->cfg.btf_cache, strerror(-r));
	}
	if (o->bo)
		o->ops->free(o->bo);
	if (o->dl)
		dlclose(o->dl);
	free(o->pend);
	free(o);
}
