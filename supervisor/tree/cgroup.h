/* SPDX-License-Identifier: MIT */
/*
 * The session's cgroup v2 leaf, and killing the whole tree: cgroup.kill
 * where we have a leaf, else a repeated walk over our descendants (we are
 * their child subreaper, so double-forked daemons come back to us).
 */
#ifndef LG_CGROUP_H
#define LG_CGROUP_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct lg_cgroup {
	bool ok;
	int dirfd; /* O_PATH|O_DIRECTORY on the leaf, for CLONE_INTO_CGROUP */
	char path[PATH_MAX];
	char mnt[PATH_MAX]; /* the cgroup2 mount the leaf is under */
	char why[256]; /* why there is no leaf, for -v */
};

/* Creates <cgroup2 mount>/<our cgroup>/<name>. Leaves cg->ok false if not. */
void lg_cgroup_create(struct lg_cgroup *cg, const char *name);
bool lg_cgroup_populated(const struct lg_cgroup *cg);
/* Adds pid to the leaf (fallback when clone3 cannot place it). */
int lg_cgroup_add(const struct lg_cgroup *cg, pid_t pid);
void lg_cgroup_destroy(struct lg_cgroup *cg);

/* Sends sig to every process of the tree (cgroup, else our descendants). */
int lg_tree_signal(const struct lg_cgroup *cg, int sig);

/*
 * SIGKILLs the whole tree and waits until it is empty or timeout_ms ran out.
 * Reaps what it can. Returns the number of processes still alive (0).
 * method is set to "cgroup.kill" or "descendant walk".
 */
int lg_tree_kill(const struct lg_cgroup *cg, int timeout_ms,
		 const char **method);

/*
 * After the tree's kill: SIGKILLs lgrun's live descendants but its
 * watchdog (lg_descendants), until none is left or timeout_ms ran out:
 * processes that left the cgroup stay lgrun's (it is their subreaper).
 * Returns how many it signalled; *survivors: how many are still alive.
 */
int lg_kill_leftovers(int timeout_ms, int *survivors);

/*
 * Starts the kill without waiting: cgroup.kill, else SIGKILL to the
 * process group of pgid. lg_tree_kill() then finishes the job.
 */
void lg_tree_kill_start(const struct lg_cgroup *cg, pid_t pgid);

/* State letter and parent of pid, from /proc/PID/stat. 0 or -errno. */
int lg_proc_stat(pid_t pid, char *state, pid_t *ppid);

/* Number of live descendants of this process (zombies excluded). */
int lg_descendants(pid_t *out, int max);
/* A child of ours that is not the tree's (the watchdog): never counted. */
void lg_descendants_skip(pid_t pid);

/*
 * A process of the tree that was born at fork_ns (CLOCK_MONOTONIC, as the
 * observer saw it) and may have left the leaf: if it is that process and
 * not in the leaf, it is killed by pid. 0: not such a process (gone, pid
 * reused, or in the leaf); -1: it had escaped and is dead now; 1: it had
 * escaped and survives.
 */
int lg_kill_escaped(const struct lg_cgroup *cg, pid_t pid, uint64_t fork_ns);

#endif
