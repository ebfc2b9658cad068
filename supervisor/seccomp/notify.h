/* SPDX-License-Identifier: MIT */
/*
 * The seccomp notify loop's one step: receive a notification, read what
 * the target asked for, turn it into an lg_event, let the session decide
 * (through the sink lgrun hands the notifier: guard/sink.h), answer. Every notification is answered; a target that died is not an error.
 */
#ifndef LG_NOTIFY_H
#define LG_NOTIFY_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

struct lg_sink;
struct lg_notifier;

/* sink: the session's way in, copied (its ctx must outlive n). */
struct lg_notifier *lg_notifier_new(int fd, const struct lg_sink *sink);
void lg_notifier_free(struct lg_notifier *n);

int lg_notifier_fd(const struct lg_notifier *n);

/* Tries SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP; returns 1 if enabled. */
int lg_notifier_sync_wakeup(struct lg_notifier *n);

/*
 * Waits for the next notification (blocking: the kernel's synchronous
 * wake-up only helps a waiter blocked here). 0, -EINTR, -ENOENT (the
 * target went away), or -errno when the listener itself failed.
 */
int lg_notifier_recv(struct lg_notifier *n);

/*
 * Decides and answers what lg_notifier_recv() received. Every notification
 * is answered, except one whose target is gone. The session (which locks
 * itself) is asked through n's sink, only after the target's memory is
 * read. 0 or -errno.
 */
int lg_notifier_answer(struct lg_notifier *n);

/* What the notify thread is reading from its target, and since when. */
struct lg_busy {
	uint64_t id; /* the notification */
	uint64_t since_ms; /* monotonic */
	int pid; /* the target */
	int op; /* enum lg_op */
};

/*
 * Any thread: true while the notify thread reads the target of a
 * notification (into *b). A read that never ends (a userfaultfd page
 * nobody serves) is left to its thread, which answers that notification
 * when the read returns: the caller abandons n (lg_notifier_abandon) and
 * reads the other notifications with a spare (lg_notifier_spare).
 */
bool lg_notifier_busy(struct lg_notifier *n, struct lg_busy *b);

/*
 * A second notifier on a duplicate of n's listener, for a new notify
 * thread; it closes its own fd when freed. NULL when out of fds or memory.
 */
struct lg_notifier *lg_notifier_spare(const struct lg_notifier *n);

/*
 * Any thread: n's thread is to stop at its next chance and free n, without
 * touching the session again (its read may return long after the session
 * is gone).
 */
void lg_notifier_abandon(struct lg_notifier *n);
bool lg_notifier_abandoned(struct lg_notifier *n);

/* What an exec's image is (lg_notifier_on_exec). */
enum { LG_IMAGE_STATIC = 1u << 0, LG_IMAGE_SECURE = 1u << 1 };

/*
 * The file name in dirfd (AT_FDCWD: a path) read as an image: a mask of
 * LG_IMAGE_*; 0 for a dynamic ELF, a script, or what cannot be read.
 */
unsigned lg_image_flags(int dirfd, const char *name);

/*
 * Execs (LG_SC_EXEC in the filter): while wanted(ctx) is true, an exec of
 * an image the shim cannot enter calls fn(ctx, pid, path, flags) before
 * the exec is let through; fn may block (bounded) until the session's
 * syscalls are traced. Spares made later inherit it.
 */
void lg_notifier_on_exec(struct lg_notifier *n, bool (*wanted)(void *ctx),
			 void (*fn)(void *ctx, pid_t pid, const char *path,
				    unsigned flags),
			 void *ctx);

#endif
