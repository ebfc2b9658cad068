/* SPDX-License-Identifier: MIT */
/*
 * What the observer's files share: its state. Calls go one way:
 * observer.c (loading, events, the tick) -> watch.c (when syscalls are
 * traced) -> procs.c (the process table).
 */
#ifndef LG_OBSERVER_INT_H
#define LG_OBSERVER_INT_H

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "bpfobs.h"
#include "tree/cgroup.h"
#include "lib/cleanup.h"
#include "lib/clock.h"
#include "lib/log.h"
#include "observer.h"

#define NPROC 8192 /* process table slots, a power of 2 */
#define NPENDING 1024
#define HELLO_WAIT_MS 100 /* a shim's hello may trail its process's acts */
/*
 * sys_enter and sys_exit put every syscall on the machine through the
 * kernel's syscall-tracing path (0.4 us each on the development VM), so
 * they are attached only once a process of the session runs without the
 * shim: at its exec when the kernel says so (static, AT_SECURE), else when
 * no hello came within EXEC_WAIT_MS of it (a cleared environment). A
 * spurious attach only costs time.
 */
#define EXEC_WAIT_MS 10
#define NCHECKS 512

struct proc {
	pid_t pid; /* 0: free */
	pid_t ppid;
	bool exited, warned;
	uint64_t exec_ns, hello_ns; /* CLOCK_MONOTONIC */
	uint64_t fork_ns; /* when it was born, if the observer saw it */
	char exe[32];
	char arg0[64];
};

struct pending {
	uint64_t due_ms;
	uint64_t ts_ns; /* when it happened */
	pid_t pid;
	uint32_t type, op;
	int err;
	char what[PATH_MAX]; /* the resolved path, or the destination */
};

struct lg_observer {
	struct lg_observer_cfg cfg;
	void *dl;
	const struct lg_bpfobs_ops *ops;
	struct lg_bpfobs *bo;
	pthread_t thread;
	bool threaded;
	atomic_bool done;
	int load_err;
	struct lg_error load_why;
	bool attached;
	bool failed; /* it could not load: said once (load_why) */
	int fd;
	struct proc procs[NPROC];
	unsigned nprocs;
	struct pending *pend;
	unsigned phead, pn;
	uint64_t bypass_warnings;
	/* connects off this host around the egress proxy, and who made them */
	uint64_t direct;
	char direct_exe[8][32];
	unsigned ndirect_exe;
	uint64_t wchar_seen; /* what the session had written, last asked */
	/* execs waiting for their hello (EXEC_WAIT_MS) */
	struct hello_check {
		pid_t pid;
		bool late; /* it had ended at its first check */
		uint64_t exec_ns, due_ms;
	} checks[NCHECKS];
	unsigned chead, cn;
	unsigned watching; /* LGB_WATCH_* */
	uint64_t start_ms; /* when the observer attached */
	char tracing[200]; /* "off", or since when and why */
};

/* procs.c */
/* pid's slot in the process table (made when add), or NULL */
struct proc *obs_proc_get(struct lg_observer *o, pid_t pid, bool add);
/* The process's name: from its exec, else /proc, else comm. */
const char *obs_exe_of(struct lg_observer *o, pid_t pid, const char *comm);

/* watch.c */
/* From now on the session's syscalls are traced (once; why is said). */
void obs_watch_syscalls(struct lg_observer *o, const char *why);
/*
 * pid exec'd at exec_ns (0: before the observer): a hello is due within
 * EXEC_WAIT_MS; late: it has ended, HELLO_WAIT_MS more for it to be read.
 * False when NCHECKS checks wait already: none is added.
 */
bool obs_check_later(struct lg_observer *o, pid_t pid, uint64_t exec_ns,
		     bool late);
/* A check that is due: has pid's shim said hello since its exec? */
void obs_check_now(struct lg_observer *o, const struct hello_check *c);

#endif
