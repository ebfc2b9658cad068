// SPDX-License-Identifier: MIT
/*
 * A rename answered (notify_answer_rename): both paths read and resolved,
 * their facts and whether they cross mounts, fed to the session as an
 * LG_EV_RENAME. Never counted; the session learns where pre-existing
 * content goes.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <sys/stat.h>

#include "notify_int.h"

/* The mount the target is on, or its directory's when it does not exist. */
static uint64_t mount_of(const struct lg_where *w, const struct lg_facts *f)
{
	struct statx st;

	if (f->exists)
		return f->mnt_id;
	if (lg_where_statx_dir(w, STATX_MNT_ID, &st) < 0 ||
	    !(st.stx_mask & STATX_MNT_ID))
		return 0;
	return st.stx_mnt_id;
}

/*
 * Both paths of a rename or a link, read outside the session's lock
 * (busy_since). Released when either could not be read or the
 * notification is no longer valid (*valid): r < 0, or 0.
 */
static int read_both(struct lg_notifier *n, struct attempt *a, bool follow_src,
		     struct lg_where *ws, struct lg_where *wd, bool *valid)
{
	pid_t pid = (pid_t)n->req->pid;
	int r;

	notify_busy(n, a);
	r = notify_arg_where(pid, a->dirfd, a->path, follow_src, ws);
	if (r >= 0)
		r = notify_arg_where(pid, a->dirfd2, a->path2, false, wd);
	atomic_store(&n->busy_since, 0);
	*valid = notify_still_valid(n, n->req->id);
	if (r < 0 || !*valid) {
		lg_where_done(ws);
		lg_where_done(wd);
	}
	return r;
}

/*
 * A rename is never counted: it runs, unless it would move or replace
 * lgrun's own state. What the session learns from it is where
 * pre-existing content goes (lineage.h).
 */
int notify_answer_rename(struct lg_notifier *n, struct attempt *a)
{
	pid_t pid = (pid_t)n->req->pid;
	struct lg_where ws = { .dirfd = -1 }, wd = { .dirfd = -1 };
	struct lg_facts fs, fd;
	struct statx st; /* the facts' source, not kept */
	uint64_t ms, md;
	bool valid;
	int r, err;

	/*
	 * Directory paths remembered from now on are read again, and again
	 * once it is answered (it runs after): a path read by another
	 * thread in between is at most DIRCACHE_MS old (where.c).
	 */
	lg_where_moved();
	r = read_both(n, a, false, &ws, &wd, &valid);
	if (!valid)
		return 0;
	if (r < 0) {
		err = notify_unreadable(&n->sink, pid, a->op, -r);
		if (notify_kernel_refusal(r))
			return notify_respond(n, n->req->id, -r);
		return notify_respond(n, n->req->id, err);
	}
	notify_stat_where(&ws, false, &fs, &st);
	notify_stat_where(&wd, false, &fd, &st);
	ms = fs.exists ? fs.mnt_id : 0;
	md = ms ? mount_of(&wd, &fd) : 0;
	lg_where_done(&ws);
	lg_where_done(&wd);
	{
		struct lg_event ev = { .kind = LG_EV_RENAME,
				       .source = LG_SRC_SECCOMP,
				       .op = LG_OP_RENAME,
				       .pid = pid,
				       .target = ws.path,
				       .facts = &fs,
				       .dst = wd.path,
				       .dst_facts = &fd,
				       .rename_flags = a->rflags,
				       .cross_fs = ms && md && ms != md };

		err = n->sink.feed(n->sink.ctx, &ev, NULL);
	}
	r = notify_respond(n, n->req->id, err);
	lg_where_moved();
	return r;
}

/*
 * A hard link answered: it runs (a name more loses nothing) unless it
 * would name lgrun's state. What the session learns is the inode's other
 * name, so that what is done through it counts and is put back under the
 * name from before (lineage.h). An fd given a name (AT_EMPTY_PATH: an
 * O_TMPFILE), or paths that cannot be read, teach nothing: it runs.
 */
int notify_answer_link(struct lg_notifier *n, struct attempt *a)
{
	pid_t pid = (pid_t)n->req->pid;
	bool follow = a->rflags & AT_SYMLINK_FOLLOW;
	struct lg_where ws = { .dirfd = -1 }, wd = { .dirfd = -1 };
	struct lg_facts fs, fd;
	struct statx st;
	bool valid;
	int r, err;

	if (a->rflags & AT_EMPTY_PATH)
		return notify_respond(n, n->req->id, 0);
	r = read_both(n, a, follow, &ws, &wd, &valid);
	if (r < 0 || !valid)
		return valid ? notify_respond(n, n->req->id, 0) : 0;
	notify_stat_where(&ws, follow, &fs, &st);
	notify_stat_where(&wd, false, &fd, &st);
	lg_where_done(&ws);
	lg_where_done(&wd);
	{
		struct lg_event ev = { .kind = LG_EV_RENAME,
				       .source = LG_SRC_SECCOMP,
				       .op = LG_OP_LINK,
				       .pid = pid,
				       .target = ws.path,
				       .facts = &fs,
				       .dst = wd.path,
				       .dst_facts = &fd };

		err = n->sink.feed(n->sink.ctx, &ev, NULL);
	}
	return notify_respond(n, n->req->id, err);
}

/*
 * A name made (mkdir, mkdirat, symlink, symlinkat): it runs; the session
 * records it for the undo (a restore sets aside what the session made).
 * A path that cannot be read teaches nothing: it runs.
 */
int notify_answer_make(struct lg_notifier *n, struct attempt *a)
{
	pid_t pid = (pid_t)n->req->pid;
	struct lg_where w = { .dirfd = -1 };
	struct lg_facts f;
	struct statx st;
	bool valid;
	int r, err;

	notify_busy(n, a);
	r = notify_arg_where(pid, a->dirfd, a->path, false, &w);
	atomic_store(&n->busy_since, 0);
	valid = notify_still_valid(n, n->req->id);
	if (r < 0 || !valid) {
		lg_where_done(&w);
		return valid ? notify_respond(n, n->req->id, 0) : 0;
	}
	notify_stat_where(&w, false, &f, &st);
	lg_where_done(&w);
	{
		struct lg_event ev = { .kind = LG_EV_RENAME,
				       .source = LG_SRC_SECCOMP,
				       .op = LG_OP_MAKE,
				       .pid = pid,
				       .target = w.path,
				       .facts = &f };

		err = n->sink.feed(n->sink.ctx, &ev, NULL);
	}
	return notify_respond(n, n->req->id, err);
}
