/* SPDX-License-Identifier: MIT */
/*
 * Inside the notify step (notify.h): the notifier and what its files
 * share. notify.c (the step: decode, gather, answer) calls exec.c (an
 * exec) and rename.c (a rename); all of them use notifier.c (the
 * notifier's life and ioctls) and args.c (the target's arguments read,
 * resolved and stat'ed; blockdev.c: what a block device opened for
 * writing holds). Calls go notify.c -> exec.c and rename.c -> notifier.c
 * and args.c; notify.c -> blockdev.c.
 */
#ifndef LG_NOTIFY_INT_H
#define LG_NOTIFY_INT_H

#include <linux/seccomp.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "filter.h"
#include "guard/classify.h"
#include "guard/sink.h"
#include "notify.h"
#include "where.h"

struct lg_notifier {
	int fd;
	struct seccomp_notif *req;
	struct seccomp_notif_resp *resp;
	size_t req_size, resp_size;
	struct lg_gitodb *odb; /* repositories and pack lists, cached */
	struct lg_sink sink; /* the session's way in (lgrun's) */
	/*
	 * The notification being read from the target, and since when
	 * (monotonic ms; 0: none). A read of the target's memory can block
	 * for good (a userfaultfd page nobody serves): another thread sees
	 * it here and can answer for it.
	 */
	_Atomic uint64_t busy_id, busy_since;
	_Atomic int busy_pid, busy_op;
	atomic_bool abandoned; /* another thread reads the notifications now */
	bool own_fd;
	/* an exec of a static or setuid image (lg_notifier_on_exec) */
	bool (*exec_wanted)(void *ctx);
	void (*on_exec)(void *ctx, pid_t pid, const char *path, unsigned flags);
	void *exec_ctx;
};

/* What a notification asks for, decoded from the raw arguments. */
struct attempt {
	enum lg_op op;
	int dirfd; /* AT_FDCWD or the target's fd */
	uint64_t path; /* address in the target, 0 for fd-only ops */
	int fd; /* ftruncate */
	uint64_t length;
	int dirfd2; /* rename: the destination */
	uint64_t path2;
	unsigned rflags; /* renameat2's RENAME_* */
	bool follow; /* the final component is followed (truncate, open) */
	bool relevant; /* false: an open without O_TRUNC slipped through */
	bool writes; /* an open for writing (O_WRONLY, O_RDWR; creat) */
	bool creates; /* O_CREAT: a missing target is made */
	bool appends; /* O_APPEND: the size it had is recorded */
	bool excl; /* O_CREAT | O_EXCL: fails when the name exists */
	/* it destroys nothing: left the kernel only for the undo's record */
	bool undo_only;
	bool how; /* openat2: its flags are in the open_how it points at */
};

/* notifier.c: the notifier's listener */
int notify_respond(struct lg_notifier *n, uint64_t id, int error);
bool notify_still_valid(struct lg_notifier *n, uint64_t id);
/* The notification n->req is read from its target from now on. */
void notify_busy(struct lg_notifier *n, const struct attempt *a);

/* args.c: the target's arguments (a path resolved: 0 or -errno) */
int notify_arg_where(pid_t pid, int dirfd, uint64_t addr, bool follow,
		     struct lg_where *w);
/* f from the target's statx, which st holds (stx_mask 0: none) */
void notify_stat_where(const struct lg_where *w, bool follow,
		       struct lg_facts *f, struct statx *st);
void notify_stat_target(const char *path, int flags, struct lg_facts *f);
bool notify_kernel_refusal(int r);
int notify_unreadable(const struct lg_sink *k, pid_t pid, enum lg_op op,
		      int err);

/*
 * blockdev.c: f is a block device (is_blockdev) the target pid opens for
 * writing: what it holds, read through w (blockdev_data, blockdev_holds,
 * blockdev_seq)
 */
void notify_probe_device(pid_t pid, const struct lg_where *w,
			 struct lg_facts *f);

/* rename.c, exec.c */
int notify_answer_link(struct lg_notifier *n, struct attempt *a);
int notify_answer_make(struct lg_notifier *n, struct attempt *a);
int notify_answer_rename(struct lg_notifier *n, struct attempt *a);
int notify_answer_exec(struct lg_notifier *n, enum lg_sys sys);

#endif
