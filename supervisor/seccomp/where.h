/* SPDX-License-Identifier: MIT */
/*
 * A target's path argument, resolved the way the kernel will resolve it for
 * the target: from the target's own root, working directory or directory
 * fd (in its mount namespace and chroot), with symlinks and ".." walked by
 * the kernel, never lexically. /proc/self and /proc/thread-self name the
 * target, not lgrun.
 *
 * The result is the directory that holds the final component, as an
 * O_PATH fd, plus that component: the facts are read relative to it, so a
 * path longer than PATH_MAX works as it does for the target. A display path
 * in lgrun's view is made for the guard and the records.
 */
#ifndef LG_WHERE_H
#define LG_WHERE_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "lib/cleanup.h"

struct lg_where {
	int dirfd; /* O_PATH; -1: the directory does not resolve (err) */
	int err; /* why dirfd is -1 (ENOENT, ENOTDIR, EACCES, ELOOP...) */
	char last[NAME_MAX + 1]; /* "": the path names dirfd itself */
	/*
	 * Absolute, in lgrun's view. When the directory's path is longer
	 * than the kernel will print, "…/[dir DEV:INO]/last" names it.
	 */
	char path[PATH_MAX + 1];
	uint64_t dir_dev, dir_ino; /* dirfd's directory (makedev); 0: unknown */
	/*
	 * The task still held its pid after every read of it by that
	 * number: its directory was taken, last, through a pidfd of it
	 * opened before this notification came and vouched for by an
	 * earlier one (lg_where_vouch). So the bytes read were the
	 * notifying task's, which is what the notification's own validity
	 * check is for (pid reuse). What it does not prove: that the task
	 * is still in its syscall. A sibling thread's exec kills a waiting
	 * thread group leader and takes its pid: a read that loses the race
	 * to the whole exec reads the new image, and the answer then goes
	 * nowhere (the kernel drops it), as with a task killed after the
	 * check.
	 */
	bool alive;
};

/*
 * Resolves raw (as the target passed it, relative to its dirfd: AT_FDCWD
 * or a fd number) for task pid; with follow, a final symlink is followed
 * as the kernel would (truncate, open without O_NOFOLLOW). 0 with w filled (w->dirfd may be -1 with
 * w->err: the kernel will fail the call the same way, unless the tree
 * races us); or -errno when the call is malformed the way the kernel
 * would refuse it (EBADF: dirfd is not open, ENOTDIR: dirfd is not a
 * directory, ENAMETOOLONG: a component is too long, ENOENT: raw is "").
 * Release with lg_where_done().
 */
int lg_where_resolve(pid_t pid, int dirfd, const char *raw, bool follow,
		     struct lg_where *w);
void lg_where_done(struct lg_where *w);
/* Released on every return (cleanup.h's idiom); w.dirfd starts at -1. */
#define LG_WHERE_AUTO LG_AUTO(lg_where_done)

/*
 * A rename in the tree is about to run, or ran: the directory paths this
 * module remembers are read again (see dir_path in where.c).
 */
void lg_where_moved(void);

/*
 * The notification of the last lg_where_resolve on this thread was found
 * valid after it: the pidfd that resolve opened (if any) is its task's,
 * and vouches for it in later resolves (lg_where.alive).
 */
void lg_where_vouch(void);

/* Frees the calling thread's remembered paths (at a notify thread's end). */
void lg_where_forget(void);

/* statx of the target (following its final symlink when follow). */
int lg_where_statx(const struct lg_where *w, bool follow, unsigned mask,
		   struct statx *st);

/* The target opened as a directory for reading (getdents), or -errno. */
int lg_where_opendir(const struct lg_where *w);

/*
 * The target itself opened in lgrun (flags: O_RDONLY and the like; never
 * following a final symlink, which resolve followed when the op does),
 * or -errno.
 */
int lg_where_open(const struct lg_where *w, int flags);

/*
 * statx of the directory that holds the target (for the mount a rename
 * goes to when its destination does not exist yet).
 */
int lg_where_statx_dir(const struct lg_where *w, unsigned mask,
		       struct statx *st);

#endif
