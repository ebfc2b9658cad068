/* SPDX-License-Identifier: MIT */
/*
 * Starting the command: its own process group (the terminal's foreground
 * group when we have one), the session's cgroup leaf, no new privileges,
 * the seccomp filter, then exec. The notify fd comes back to us over a
 * socketpair made before the fork.
 */
#ifndef LG_LAUNCH_H
#define LG_LAUNCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct lg_cgroup;
struct lg_bpf;

struct lg_child {
	pid_t pid;
	int notify_fd;
	bool in_cgroup;
	int tty_fd; /* the terminal we handed to the child, or -1 */
	pid_t our_pgrp; /* to take the terminal back */
	int isolated; /* LG_ISOLATED_* that took effect */
	int sealed_fd; /* lg_launch_seal(): the listener in the tree's net, or -1 */
	int args_way; /* enum lg_procmem_way: how its arguments are read */
	int args_vm_err; /* what process_vm_readv answered the probe */
};

#define LG_ISOLATED_STATE 1 /* lgrun's state read-only in the tree's mounts */
#define LG_ISOLATED_CGROUP 2 /* the tree cannot leave its cgroup */

/*
 * [network] egress = proxy-only (root): the tree gets a network namespace
 * with loopback only, where it makes a listening socket on 127.0.0.1:port
 * and hands it back as c->sealed_fd: lgrun's egress proxy accepts there
 * and dials out from lgrun's own network. Failing to do so fails the
 * launch (-errno): a seal asked for is never silently absent.
 */
void lg_launch_seal(uint16_t port);

/*
 * When run as root: path (lgrun's state dir, audit log, metrics file) is
 * read-only in the tree's own mount namespace, and the tree gets a cgroup
 * namespace at its leaf. Call before lg_launch().
 */
void lg_launch_protect(const char *path);
/* Whether to do any of that ([guard] isolate). */
void lg_launch_isolate(bool on);

/*
 * cmd as execvp finds it on PATH: the first entry whose file is regular and
 * executable for us; a name with a '/' is itself. 0 with the path in out,
 * else -ENOENT (or -ENAMETOOLONG). Looks with stat alone: nothing is
 * executed.
 */
int lg_launch_which(const char *cmd, char *out, size_t size);
/*
 * Returns 0, or -errno with *exec_errno set when the command could not be
 * executed (the child is reaped then). A name on PATH is found first
 * (lg_launch_which) and that file executed; execvpe only if that fails.
 */
int lg_launch(struct lg_child *c, char *const argv[], char *const envp[],
	      const struct lg_bpf *filter, struct lg_cgroup *cg,
	      int *exec_errno);

/*
 * Raises lgrun's own soft fd limit (each shimmed process holds a
 * connection); the command is started with the original limit.
 */
void lg_launch_raise_nofile(void);

/* The command's stdout and stderr become these (pipe write ends). */
void lg_launch_set_stdio(int out_w, int err_w);
/*
 * The command gets a session of its own with this pty slave as its
 * controlling terminal and stdout (stdin and stderr too if in, err).
 */
void lg_launch_set_pty(int slave, bool in, bool err);

/* Gives the terminal back to lgrun's own process group. */
void lg_launch_restore_tty(struct lg_child *c);

#endif
