// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "lib/cleanup.h"
#include "bpfobs.h"
#include "btfcache.h"

#ifndef LGB_PROGS_DIGEST /* the Makefile's: of build/bpf/lgobserve.bpf.o */
#error "LGB_PROGS_DIGEST: the digest of the BPF object (the Makefile sets it)"
#endif
#include "lgobserve.skel.h"

#define EXPORT __attribute__((visibility("default")))

struct lg_bpfobs {
	struct lgobserve *skel;
	unsigned watching; /* LGB_WATCH_* */
	struct ring_buffer *rb;
	lg_bpfobs_fn fn;
	void *ctx;
	int ncpu;
	/*
	 * The kernel's types kept for this boot (btfcache.c): btf_used when
	 * the load read them there, btf_wanted when it read the kernel's own
	 * and the copy is to be made (obs_cache_btf).
	 */
	char btf_dir[4096], btf[4200];
	bool btf_used, btf_wanted;
};

static int quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	(void)fmt;
	(void)ap;
	return 0;
}

static int loud(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG)
		return 0;
	fputs("lgrun: libbpf: ", stderr);
	return vfprintf(stderr, fmt, ap);
}

static int on_event(void *ctx, void *data, size_t size)
{
	struct lg_bpfobs *o = ctx;

	if (size >= sizeof(struct lgb_event) && o->fn)
		o->fn(o->ctx, data);
	return 0;
}

static void obs_free(struct lg_bpfobs *o)
{
	if (!o)
		return;
	ring_buffer__free(o->rb);
	lgobserve__destroy(o->skel);
	free(o);
}

LG_DEFINE_CLEANUP(obs_freep, struct lg_bpfobs *, obs_free)

/* The connect hooks on the session's cgroup: 0, or -errno. */
static int attach_hooks(struct lg_bpfobs *o, const char *path)
{
	struct lgobserve *sk = o->skel;
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC), r = 0;

	if (fd < 0)
		return -errno;
	sk->links.lg_connect4 =
		bpf_program__attach_cgroup(sk->progs.lg_connect4, fd);
	if (!sk->links.lg_connect4)
		r = -errno;
	if (!r) {
		sk->links.lg_connect6 =
			bpf_program__attach_cgroup(sk->progs.lg_connect6, fd);
		if (!sk->links.lg_connect6)
			r = -errno;
	}
	close(fd);
	if (r)
		return r;
	sk->bss->hooks_connect = 1;
	o->watching |= LGB_WATCH_CONNECT;
	return 0;
}

/* The skeleton opened (relocated against btf, NULL: the kernel's) and loaded. */
static int load_skel(struct lg_bpfobs *o, const struct lg_bpfobs_cfg *cfg,
		     const char *btf)
{
	int r = 0;

	/*
	 * With the cgroup connect hooks first; a kernel whose verifier
	 * refuses them (helpers a cgroup program could not call before 6.x)
	 * gets the rest, and sys_enter reports every connect instead.
	 */
	for (int hooks = cfg->cgroup_path && cfg->cgid ? 1 : 0; hooks >= 0;
	     hooks--) {
		LIBBPF_OPTS(bpf_object_open_opts, oo, .btf_custom_path = btf);
		lgobserve__destroy(o->skel);
		o->skel = lgobserve__open_opts(&oo);
		if (!o->skel)
			return errno ? -errno : -EINVAL;
		o->skel->rodata->target_cgid = cfg->cgid;
		o->skel->rodata->cg_level = cfg->level;
		if (cfg->ring_bytes)
			bpf_map__set_max_entries(o->skel->maps.events,
						 (__u32)cfg->ring_bytes);
		/* attached when the observer asks (obs_syscalls) */
		bpf_program__set_autoattach(o->skel->progs.lg_sys_enter, false);
		bpf_program__set_autoattach(o->skel->progs.lg_sys_exit, false);
		bpf_program__set_autoattach(o->skel->progs.lg_connect4, false);
		bpf_program__set_autoattach(o->skel->progs.lg_connect6, false);
		bpf_program__set_autoload(o->skel->progs.lg_connect4, hooks);
		bpf_program__set_autoload(o->skel->progs.lg_connect6, hooks);
		r = lgobserve__load(o->skel);
		if (!r && hooks && attach_hooks(o, cfg->cgroup_path) == 0)
			break;
		if (!r && !hooks)
			break;
	}
	return r;
}

/*
 * Which types the load relocates against: LGB_BTF's, else the copy kept
 * for this boot when there is a usable one, else the kernel's own (and
 * the copy is wanted).
 */
static const char *pick_btf(struct lg_bpfobs *o,
			    const struct lg_bpfobs_cfg *cfg)
{
	const char *env = getenv("LGB_BTF");

	if (env || !cfg->btf_cache)
		return env;
	snprintf(o->btf_dir, sizeof(o->btf_dir), "%s", cfg->btf_cache);
	if (lgb_btf_path(o->btf_dir, LGB_PROGS_DIGEST, o->btf, sizeof(o->btf)) <
	    0)
		return NULL;
	o->btf_used = lgb_btf_usable(o->btf_dir, o->btf);
	o->btf_wanted = !o->btf_used;
	return o->btf_used ? o->btf : NULL;
}

/*
 * The skeleton opened, loaded and attached, its ring buffer made: NULL, or
 * the step that failed with *r.
 */
static const char *obs_load(struct lg_bpfobs *o,
			    const struct lg_bpfobs_cfg *cfg, int *r)
{
	const char *btf = pick_btf(o, cfg);

	*r = load_skel(o, cfg, btf);
	if (*r && o->btf_used) { /* a copy the load refuses: made again */
		unlink(o->btf);
		o->btf_used = false;
		o->btf_wanted = true;
		*r = load_skel(o, cfg, NULL);
	}
	if (!o->skel)
		return "open";
	if (*r)
		return "load";
	*r = lgobserve__attach(o->skel);
	if (*r)
		return "attach";
	o->rb = ring_buffer__new(bpf_map__fd(o->skel->maps.events), on_event, o,
				 NULL);
	if (!o->rb) {
		*r = -errno;
		return "ring buffer";
	}
	return NULL;
}

static int obs_open(struct lg_bpfobs **out, const struct lg_bpfobs_cfg *cfg,
		    struct lg_error *err)
{
	LG_AUTO(obs_freep) struct lg_bpfobs *o = calloc(1, sizeof(*o));
	const char *step;
	int r = 0;

	*out = NULL;
	if (!o)
		return -ENOMEM;
	libbpf_set_print(cfg->verbose >= 2 ? loud : quiet);
	o->ncpu = libbpf_num_possible_cpus();
	step = obs_load(o, cfg, &r);
	if (step) {
		if (r > 0)
			r = -r;
		if (!r)
			r = -EINVAL;
		return lg_error_set(
			err, -r, "eBPF %s failed: %s%s", step, strerror(-r),
			r == -EPERM || r == -EACCES ?
				" (needs CAP_SYS_ADMIN, or CAP_BPF and CAP_PERFMON, and a seccomp profile that allows bpf())" :
				"");
	}
	*out = lg_steal_ptr(&o);
	return 0;
}

static int obs_add_pid(struct lg_bpfobs *o, pid_t pid)
{
	__u32 k = (__u32)pid;
	__u8 one = 1;

	return bpf_map__update_elem(o->skel->maps.pids, &k, sizeof(k), &one,
				    sizeof(one), BPF_ANY) ?
		       -errno :
		       0;
}

static int obs_seen(struct lg_bpfobs *o, pid_t pid, uint64_t sent_ns)
{
	__u32 k = (__u32)pid;
	__u64 v = sent_ns;

	return bpf_map__update_elem(o->skel->maps.seen, &k, sizeof(k), &v,
				    sizeof(v), BPF_ANY) ?
		       -errno :
		       0;
}

static int obs_fd(const struct lg_bpfobs *o)
{
	return ring_buffer__epoll_fd(o->rb);
}

static int obs_consume(struct lg_bpfobs *o, lg_bpfobs_fn fn, void *ctx)
{
	o->fn = fn;
	o->ctx = ctx;
	return ring_buffer__consume(o->rb);
}

static void obs_counters(const struct lg_bpfobs *o, uint64_t c[LGB_C_MAX])
{
	for (__u32 k = 0; k < LGB_C_MAX; k++) {
		__u64 v[o->ncpu > 0 ? o->ncpu : 1];

		c[k] = 0;
		if (bpf_map__lookup_elem(o->skel->maps.counters, &k, sizeof(k),
					 v, sizeof(v), 0) == 0)
			for (int i = 0; i < o->ncpu; i++)
				c[k] += v[i];
	}
}

static int obs_syscalls(struct lg_bpfobs *o)
{
	struct lgobserve *sk = o->skel;

	/* exit first: an enter's inflight entry always finds its exit */
	if (!sk->links.lg_sys_exit) {
		sk->links.lg_sys_exit =
			bpf_program__attach(sk->progs.lg_sys_exit);
		if (!sk->links.lg_sys_exit)
			return -errno;
	}
	if (!sk->links.lg_sys_enter) {
		sk->links.lg_sys_enter =
			bpf_program__attach(sk->progs.lg_sys_enter);
		if (!sk->links.lg_sys_enter)
			return -errno;
	}
	sk->bss->sys_watch = 1;
	o->watching |= LGB_WATCH_SYSCALLS;
	return 0;
}

static unsigned obs_watching(const struct lg_bpfobs *o)
{
	return o->watching;
}

static const char *obs_btf_used(const struct lg_bpfobs *o)
{
	return o->btf_used ? o->btf : NULL;
}

static int obs_cache_btf(struct lg_bpfobs *o)
{
	const void *elf;
	size_t sz;

	if (!o->btf_wanted)
		return 0;
	o->btf_wanted = false;
	elf = lgobserve__elf_bytes(&sz);
	return lgb_btf_make(o->btf_dir, o->btf, elf, sz);
}

EXPORT const struct lg_bpfobs_ops lg_bpfobs_ops = {
	.open = obs_open,
	.add_pid = obs_add_pid,
	.seen = obs_seen,
	.fd = obs_fd,
	.consume = obs_consume,
	.counters = obs_counters,
	.free = obs_free,
	.syscalls = obs_syscalls,
	.watching = obs_watching,
	.btf_used = obs_btf_used,
	.cache_btf = obs_cache_btf,
};
