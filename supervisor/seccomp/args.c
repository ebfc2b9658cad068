// SPDX-License-Identifier: MIT
/*
 * A notification's arguments read from its target: a string from its
 * memory, a path argument resolved in its view (notify_arg_where,
 * where.h), the target's facts (notify_stat_where, notify_stat_target);
 * an argument that could not be read, refused (notify_unreadable) with
 * the kernel's own error where the kernel would refuse it too
 * (notify_kernel_refusal).
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "lib/procmem.h"
#include "notify_int.h"

static void facts_from_statx(struct lg_facts *f, const struct statx *st)
{
	f->exists = true;
	f->has_btime = (st->stx_mask & STATX_BTIME) != 0;
	f->btime_ns = (int64_t)st->stx_btime.tv_sec * 1000000000LL +
		      st->stx_btime.tv_nsec;
	f->ctime_ns = (int64_t)st->stx_ctime.tv_sec * 1000000000LL +
		      st->stx_ctime.tv_nsec;
	f->mtime_ns = (int64_t)st->stx_mtime.tv_sec * 1000000000LL +
		      st->stx_mtime.tv_nsec;
	f->size = (int64_t)st->stx_size;
	f->nlink = (st->stx_mask & STATX_NLINK) ? st->stx_nlink : 0;
	f->dev = makedev(st->stx_dev_major, st->stx_dev_minor);
	f->ino = (st->stx_mask & STATX_INO) ? st->stx_ino : 0;
	f->mnt_id = (st->stx_mask & STATX_MNT_ID) ? st->stx_mnt_id : 0;
	f->mode = st->stx_mode;
	f->is_dir = S_ISDIR(st->stx_mode);
	f->is_symlink = S_ISLNK(st->stx_mode);
	f->is_reg = S_ISREG(st->stx_mode);
	f->is_blockdev = S_ISBLK(st->stx_mode);
	if (f->is_blockdev)
		f->rdev = makedev(st->stx_rdev_major, st->stx_rdev_minor);
}

/* all a quarantine entry records too (notify_stat_where's st) */
#define STAT_MASK (STATX_BASIC_STATS | STATX_BTIME | STATX_MNT_ID)

void notify_stat_target(const char *path, int flags, struct lg_facts *f)
{
	struct statx st;

	memset(f, 0, sizeof(*f));
	if (statx(AT_FDCWD, path, flags, STAT_MASK, &st) == 0)
		facts_from_statx(f, &st);
}

/*
 * An argument the kernel itself would refuse, the same way: answered with
 * its own error, not the guard's.
 */
bool notify_kernel_refusal(int r)
{
	return r == -EFAULT || r == -ENAMETOOLONG || r == -EBADF ||
	       r == -ENOENT || r == -ENOTDIR;
}

/*
 * Reads a path argument and resolves it in the target's view (where.h).
 * 0, or -errno when the target's memory could not be read or the kernel
 * would refuse the argument itself (the caller then answers for it).
 */
int notify_arg_where(pid_t pid, int dirfd, uint64_t addr, bool follow,
		     struct lg_where *w)
{
	char raw[PATH_MAX + 1];
	int r;

	r = lg_proc_string(pid, addr, raw, sizeof(raw));
	if (r < 0)
		return r;
	return lg_where_resolve(pid, dirfd, raw, follow, w);
}

void notify_stat_where(const struct lg_where *w, bool follow,
		       struct lg_facts *f, struct statx *st)
{
	memset(f, 0, sizeof(*f));
	st->stx_mask = 0;
	if (lg_where_statx(w, follow, STAT_MASK, st) == 0)
		facts_from_statx(f, st);
	else
		st->stx_mask = 0;
}

/* What the target's arguments could not be read for: refused. */
int notify_unreadable(const struct lg_sink *k, pid_t pid, enum lg_op op,
		      int err)
{
	struct lg_event ev = { .kind = LG_EV_UNREADABLE,
			       .source = LG_SRC_SECCOMP,
			       .op = op,
			       .pid = pid,
			       .result = err };

	return k->feed(k->ctx, &ev, NULL);
}
