/* SPDX-License-Identifier: MIT */
/*
 * When lgrun itself dies (SIGKILL, the OOM killer, a crash), its tree must
 * die with it, and the session must say so.
 *
 * The watchdog is a small child forked before the tree starts, outside the
 * tree: it blocks on a pipe whose write end only lgrun holds. lgrun writes
 * the tree's process group once launched and "done" at its end; end of
 * file without "done" means lgrun is gone: the watchdog kills the tree
 * (cgroup.kill, else the process group) and writes the session's end as
 * supervisor_lost. lgctl status does the same for a session whose lgrun
 * and watchdog are both gone (lg_session_lost).
 */
#ifndef LG_WATCHDOG_H
#define LG_WATCHDOG_H

#include <stddef.h>
#include <sys/types.h>

struct lg_cgroup;

struct lg_watchdog {
	pid_t pid; /* 0: none */
	int fd; /* the pipe's write end: lgrun's alone (close-on-exec) */
	int pidfd; /* its pidfd, opened before anyone could reap it; -1: none */
};

/*
 * Forks the watchdog. 0, or -errno (the session then runs without one).
 * index and record (each or NULL): lines lgrun had not written yet, which
 * it writes when lgrun is gone (the quarantine's index, the recording).
 */
struct lg_spill;
int lg_watchdog_start(struct lg_watchdog *w, const struct lg_cgroup *cg,
		      const char *state_dir, const char *id,
		      struct lg_spill *index, struct lg_spill *record);
/*
 * What the watchdog does once it has killed the tree of a dead lgrun and
 * written what lgrun held (lgrun's: the quarantine index sealed). Set
 * before lg_watchdog_start.
 */
void lg_watchdog_after(void (*fn)(void));
/* The tree's process group (its first process), for a session with no cgroup. */
void lg_watchdog_tree(struct lg_watchdog *w, pid_t pgid);
/* lgrun ends the session itself: the watchdog leaves, and is reaped. */
void lg_watchdog_done(struct lg_watchdog *w);

/*
 * A session whose lgrun is gone: kills what is left of its tree (cgroup,
 * from the argument or its state record; else pgid's group) and, if it was
 * still recorded as running and nobody did it yet, writes its end:
 * state supervisor_lost and a session_end audit record, saying who noticed
 * (by). 1 when this call wrote the end, 0 when there was nothing to write,
 * -errno. summary: what was done, for a message.
 */
int lg_session_lost(const char *state_dir, const char *id, const char *cgroup,
		    pid_t pgid, const char *by, char *summary, size_t size);

#endif
