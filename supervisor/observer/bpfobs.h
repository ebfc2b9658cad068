/* SPDX-License-Identifier: MIT */
/*
 * The eBPF observer's user-space side: loads bpf/lgobserve.bpf.c (raw
 * tracepoints, filtered to the session in the kernel) and hands its events
 * to a callback. Built as liblgbpf.so and loaded by lgrun only when the
 * observer is wanted, so a session without it pays nothing for libbpf.
 */
#ifndef LG_BPFOBS_H
#define LG_BPFOBS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "../../bpf/lgobserve.h"
#include "lib/error.h"

struct lg_bpfobs;

struct lg_bpfobs_cfg {
	uint64_t cgid; /* the session's cgroup id; 0: follow a pid set */
	unsigned level; /* that cgroup's level (the root is 0) */
	size_t ring_bytes; /* ring buffer size, a power of 2 >= 4096 */
	int verbose; /* 2: libbpf's own messages */
	/*
	 * The session's cgroup directory (with cgid): its connect hooks
	 * report inet connects without sys_enter. NULL: none.
	 */
	const char *cgroup_path;
	/*
	 * The folder where the kernel's types, minimized for these
	 * programs, are kept for this boot (btfcache.c); NULL: none.
	 */
	const char *btf_cache;
};

typedef void (*lg_bpfobs_fn)(void *ctx, const struct lgb_event *e);

/* The table liblgbpf.so exports as lg_bpfobs_ops. */
struct lg_bpfobs_ops {
	/* 0, or -errno with err filled ("needs root or CAP_BPF ...") */
	int (*open)(struct lg_bpfobs **out, const struct lg_bpfobs_cfg *cfg,
		    struct lg_error *err);
	/* pid-set mode: the first process of the session */
	int (*add_pid)(struct lg_bpfobs *o, pid_t pid);
	/* pid's shim said hello at sent_ns: the kernel sends nothing of it
	 * until it execs again */
	int (*seen)(struct lg_bpfobs *o, pid_t pid, uint64_t sent_ns);
	/* readable when events wait */
	int (*fd)(const struct lg_bpfobs *o);
	/* hands every waiting event to fn; returns how many */
	int (*consume)(struct lg_bpfobs *o, lg_bpfobs_fn fn, void *ctx);
	/* summed over CPUs */
	void (*counters)(const struct lg_bpfobs *o, uint64_t c[LGB_C_MAX]);
	void (*free)(struct lg_bpfobs *o);
	/*
	 * open attaches the process tracepoints (fork, exec, exit) only:
	 * sys_enter and sys_exit, which put every syscall on the machine
	 * through the kernel's syscall-tracing path, wait for this (once is
	 * enough). 0, or -errno.
	 */
	int (*syscalls)(struct lg_bpfobs *o);
	/* LGB_WATCH_* : what is attached now */
	unsigned (*watching)(const struct lg_bpfobs *o);
	/* the kept copy of the kernel's types the load read, or NULL */
	const char *(*btf_used)(const struct lg_bpfobs *o);
	/*
	 * The load read the kernel's own types: the copy made in the
	 * btf_cache folder (bpftool, some 40 ms; once). 1 made, 0 nothing
	 * to do, -errno (-ENOENT: no bpftool).
	 */
	int (*cache_btf)(struct lg_bpfobs *o);
};

#define LGB_WATCH_CONNECT 1 /* the cgroup connect hooks */
#define LGB_WATCH_SYSCALLS 2 /* sys_enter and sys_exit */

#endif
