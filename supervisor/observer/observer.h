/* SPDX-License-Identifier: MIT */
/*
 * lgrun's side of the eBPF observer (bpf/, liblgbpf.so): the session's
 * process table (fork, exec, exit), the processes the shim does not see,
 * and their file-op results for the failures detector. Runs on lgrun's
 * main thread; the session locks itself. The observer
 * may load in a thread of its own (--bpf=auto) so that lgrun's start does
 * not wait for the kernel.
 */
#ifndef LG_OBSERVER_H
#define LG_OBSERVER_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/error.h"

struct lg_sink;
struct lg_observer;

struct lg_observer_cfg {
	const char *lib; /* path of liblgbpf.so */
	uint64_t cgid; /* the session's cgroup id, 0: none */
	unsigned level; /* its level */
	size_t ring_bytes;
	int verbose;
	bool async; /* load in a thread; wake_fd is written when done */
	int wake_fd; /* an eventfd of lgrun's loop */
	unsigned proxy_port; /* connects there are seen by the proxy */
	/*
	 * The tree is led to lgrun's egress proxy ([llm] mode proxy or both):
	 * a connect to an address off this host goes around it. sealed: it
	 * cannot succeed (the tree's network has loopback only).
	 */
	bool egress, sealed;
	/* the session's cgroup directory (connect hooks), or NULL */
	const char *cgroup_path;
	/* where the kernel's types for the programs are kept, or NULL */
	const char *btf_cache;
	/* the preload shim is on (its hellos say which processes it sees) */
	bool shim;
	/* the session's way in (guard/sink.h), as long-lived as the observer */
	const struct lg_sink *sink;
};

/* 0 (loading or loaded), or -errno with err (then nothing was started). */
int lg_observer_start(struct lg_observer **out,
		      const struct lg_observer_cfg *cfg, struct lg_error *err);
/*
 * After a wake-up: if an asynchronous load finished, true (err says why
 * when it failed, and is "" when it loaded); loaded, its ring buffer is
 * lg_observer_fd's to watch.
 */
bool lg_observer_ready(struct lg_observer *o, struct lg_error *err);
/* The fd that is ready when events wait (lg_observer_handle); -1: none. */
int lg_observer_fd(const struct lg_observer *o);
/* The pid set (no cgroup): the session's first process. */
void lg_observer_add_pid(struct lg_observer *o, pid_t pid);
/* True if fd is the observer's (then its events were handled). */
bool lg_observer_handle(struct lg_observer *o, int fd);
/* The shim of pid said hello at sent_ns (CLOCK_MONOTONIC; 0: now). */
void lg_observer_hello(struct lg_observer *o, pid_t pid, uint64_t sent_ns);
/* Pending decisions (shim-less results wait briefly for a late hello). */
uint64_t lg_observer_next_deadline(const struct lg_observer *o);
void lg_observer_tick(struct lg_observer *o);
/*
 * The tree's processes when the observer attached (it may load after the
 * command started): each is checked for a hello as a new exec would be.
 */
void lg_observer_existing(struct lg_observer *o, const pid_t *pids, size_t n);
/* True if the session wrote bytes since the last time this was asked. */
bool lg_observer_worked(struct lg_observer *o);
/* "rm[12] <- bash[10] <- python3[9]" as far as it is known. */
void lg_observer_lineage(struct lg_observer *o, pid_t pid, char *out,
			 size_t size);
/* Before lgrun exits: the last events, and the counters to the session. */
void lg_observer_finish(struct lg_observer *o);
bool lg_observer_attached(const struct lg_observer *o);
/*
 * From now on the session's syscalls are traced (once attached; why is
 * said): an exec of an image without the shim asked for it (lgrun/observer.c).
 */
void lg_observer_watch_syscalls(struct lg_observer *o, const char *why);
/* It could not load; lg_observer_ready said why (once). */
bool lg_observer_failed(const struct lg_observer *o);

/*
 * The processes the observer saw born in the session and not end (it
 * stops seeing one that leaves the session's cgroup): up to max of them.
 */
struct lg_observed {
	pid_t pid;
	uint64_t fork_ns; /* CLOCK_MONOTONIC */
};
size_t lg_observer_live(const struct lg_observer *o, struct lg_observed *out,
			size_t max);
void lg_observer_free(struct lg_observer *o);

#endif
