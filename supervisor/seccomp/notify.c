// SPDX-License-Identifier: MIT
/*
 * One notify step (lg_notifier_answer): what a notification asks for,
 * decoded from its raw arguments (decode), its target read and stat'ed
 * (gather; git's removals asked about through lg_facts.git_recoverable),
 * fed to the session as an LG_EV_DESTRUCTIVE, answered. An exec goes to
 * exec.c, a rename to rename.c; the notifier's life and ioctls are
 * notifier.c's, the reads of the target args.c's.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <linux/seccomp.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "guard/classify.h"
#include "filter.h"
#include "gitodb.h"
#include "lib/log.h"
#include "lib/procmem.h"
#include "notify_int.h"
#include "pathres.h"
#include "where.h"

static int proc_link(pid_t pid, const char *what, char *buf, size_t size)
{
	char p[64];
	ssize_t r;

	snprintf(p, sizeof(p), "/proc/%d/%s", pid, what);
	r = readlink(p, buf, size - 1);
	if (r < 0)
		return -errno;
	buf[r] = '\0';
	return (int)r;
}

/* True when dir has an entry besides "." and "..": rmdir would fail. */
static bool dir_nonempty(const struct lg_where *w)
{
	char buf[1024];
	bool found = false;
	long n;
	int fd;

	fd = lg_where_opendir(w);
	if (fd < 0)
		return false;
	while (!found &&
	       (n = syscall(SYS_getdents64, fd, buf, sizeof(buf))) > 0) {
		for (long off = 0; off < n;) {
			struct {
				uint64_t ino;
				int64_t off;
				unsigned short reclen;
				unsigned char type;
				char name[];
			} *d = (void *)(buf + off);

			if (strcmp(d->name, ".") != 0 &&
			    strcmp(d->name, "..") != 0) {
				found = true;
				break;
			}
			off += d->reclen;
		}
	}
	close(fd);
	return found;
}

/*
 * An open's flags: an O_TRUNC open empties the file; any other open for
 * writing but an append, an O_EXCL create or an O_PATH may change it in
 * place (the filter lets the rest run in the kernel). O_EXCL alone is not
 * a create: it opens an existing file.
 */
static void open_flags(struct attempt *a, uint64_t flags)
{
	a->follow = !(flags & O_NOFOLLOW);
	a->writes = (flags & O_ACCMODE) != O_RDONLY && !(flags & O_PATH);
	a->creates = flags & O_CREAT;
	a->appends = (flags & O_APPEND) && a->writes;
	a->excl = (flags & (O_EXCL | O_CREAT)) == (O_EXCL | O_CREAT);
	a->undo_only = !(flags & O_TRUNC) && (a->appends || a->excl);
	if (flags & O_TRUNC) {
		a->op = LG_OP_OPEN_TRUNC;
		a->relevant = true;
		return;
	}
	a->op = LG_OP_OPEN_WRITE;
	/* an O_EXCL create makes a name, an append grows a file: recorded */
	a->relevant = (flags & O_ACCMODE) != O_RDONLY && !(flags & O_PATH);
}

static bool decode(const struct seccomp_notif *req, enum lg_sys sys,
		   struct attempt *a)
{
	const struct lg_syscall *sc = lg_syscall_of(sys);
	const __u64 *arg = req->data.args;
	bool compat = lg_filter_arch_is_32(req->data.arch);
	uint64_t flags;

	memset(a, 0, sizeof(*a));
	a->dirfd = AT_FDCWD;
	a->relevant = true;
	if (!sc || sc->kind == LG_KIND_EXEC)
		return false;
	if (sc->dirfd >= 0)
		a->dirfd = (int)arg[sc->dirfd];
	if (sc->path >= 0)
		a->path = arg[sc->path];
	else
		a->fd = (int)arg[0];
	flags = sc->flags >= 0 ? arg[sc->flags] : 0;
	switch (sc->kind) {
	case LG_KIND_UNLINK:
		a->op = (flags & AT_REMOVEDIR) ? LG_OP_RMDIR : LG_OP_UNLINK;
		break;
	case LG_KIND_RMDIR:
		a->op = LG_OP_RMDIR;
		break;
	case LG_KIND_TRUNCATE:
		a->length = arg[1];
		if (sys == LG_SYS_TRUNCATE64 || sys == LG_SYS_FTRUNCATE64)
			a->length = (arg[1] & 0xffffffffULL) | (arg[2] << 32);
		a->follow = sc->path >= 0;
		a->op = a->length ? LG_OP_SHRINK : LG_OP_TRUNCATE;
		if (compat && !(a->length >> 32))
			a->length = (uint32_t)a->length;
		break;
	case LG_KIND_OPEN:
		open_flags(a, flags);
		break;
	case LG_KIND_CREAT:
	case LG_KIND_OPEN_HOW: /* its flags are read with the target */
		a->op = LG_OP_OPEN_TRUNC;
		a->follow = true;
		a->writes = true; /* creat's; openat2's are read with it */
		a->creates = true;
		a->how = sc->kind == LG_KIND_OPEN_HOW;
		break;
	case LG_KIND_MAKE:
		a->op = LG_OP_MAKE;
		break;
	case LG_KIND_CHMOD:
		a->op = LG_OP_CHMOD;
		a->undo_only = true;
		a->follow = sys != LG_SYS_FCHMODAT2 ||
			    !(flags & AT_SYMLINK_NOFOLLOW);
		break;
	case LG_KIND_RENAME:
	case LG_KIND_LINK:
		a->op = sc->kind == LG_KIND_LINK ? LG_OP_LINK : LG_OP_RENAME;
		a->dirfd2 = sc->dirfd >= 0 ? (int)arg[sc->path + 1] : AT_FDCWD;
		a->path2 = arg[sc->path + 1 + (sc->dirfd >= 0)];
		a->rflags = (unsigned)flags;
		break;
	case LG_KIND_EXEC:
		return false;
	}
	if (compat) {
		a->path &= 0xffffffffULL;
		a->path2 &= 0xffffffffULL;
	}
	return true;
}

/*
 * Gathers the path (for the guard and the records) and the facts about
 * the target. Returns 0, or -errno when the target's memory or links could
 * not be read (the caller then denies: a read that fails never allows).
 */
static int gather(const struct seccomp_notif *req, struct attempt *a,
		  char *path, size_t size, struct lg_facts *f, struct statx *st,
		  struct lg_where *wout)
{
	pid_t pid = (pid_t)req->pid;
	struct lg_where w;
	int r;

	st->stx_mask = 0;
	if (!a->path) { /* ftruncate: the fd names the file */
		char fdlink[32];

		snprintf(fdlink, sizeof(fdlink), "fd/%d", a->fd);
		r = proc_link(pid, fdlink, path, size);
		if (r == -ENOENT)
			return -EBADF;
		if (r == -ENAMETOOLONG) /* the file is there all the same */
			snprintf(path, size, "\u2026/[fd %d of pid %d]", a->fd,
				 pid);
		else if (r < 0)
			return r;
		snprintf(fdlink, sizeof(fdlink), "/proc/%d/fd/%d", pid, a->fd);
		notify_stat_target(fdlink, 0, f);
		/*
		 * Unlinked by the kernel's own account (nlink 0), not by the
		 * " (deleted)" it prints: a file may be named that.
		 */
		f->fd_deleted = f->exists && f->nlink == 0;
		if (f->fd_deleted)
			lg_path_strip_deleted(path);
		if (path[0] != '/' && r >= 0) /* a pipe or socket */
			f->fd_deleted = true;
		return 0;
	}
	if (a->how) {
		struct open_how how;

		if (lg_proc_read(pid, req->data.args[2], &how, sizeof(how)) < 0)
			return -EFAULT;
		open_flags(a, how.flags);
		a->follow = a->follow && !(how.resolve & RESOLVE_NO_SYMLINKS);
		if (!a->relevant)
			return 0;
	}
	r = notify_arg_where(pid, a->dirfd, a->path, a->follow, &w);
	if (r < 0)
		return r;
	{
		size_t n = strnlen(w.path, size - 1);

		memcpy(path, w.path, n);
		path[n] = '\0';
	}
	notify_stat_where(&w, a->follow, f, st);
	if (a->op == LG_OP_RMDIR && f->exists)
		f->nonempty_dir = dir_nonempty(&w);
	/* mkfs, dd of=, wipefs: what the device holds (reading it never counts) */
	if (f->is_blockdev && a->writes &&
	    (a->op == LG_OP_OPEN_WRITE || a->op == LG_OP_OPEN_TRUNC))
		notify_probe_device(pid, &w, f);
	*wout = w; /* the caller's, until the session has kept what it needs */
	return 0;
}

/*
 * lg_classify's question about git's removals that would count: is the
 * content in the repository's object database? Asked once per such
 * removal: one read of the file and a few lookups, git never run.
 */
static int git_recoverable(void *ctx, enum lg_op op, const char *path)
{
	int r;

	if (op == LG_OP_RMDIR)
		return lg_gitodb_in_worktree(ctx, path);
	r = lg_gitodb_stored(ctx, path);
	if (r <= 0)
		lg_dbg("git removes %s: %s", path,
		       r == 0	    ? "not in its object database" :
		       r == -EFBIG  ? "too large to hash" :
		       r == -ENOENT ? "no repository" :
				      strerror(-r));
	return r;
}

int lg_notifier_answer(struct lg_notifier *n)
{
	LG_WHERE_AUTO struct lg_where w = { .dirfd = -1 };
	char path[PATH_MAX + 1];
	struct lg_facts f;
	struct statx st;
	struct attempt a;
	enum lg_sys sys;
	int r, err;

	sys = lg_filter_classify(n->req->data.arch, n->req->data.nr);
	if (sys == LG_SYS_EXECVE || sys == LG_SYS_EXECVEAT)
		return notify_answer_exec(n, sys);
	if (!decode(n->req, sys, &a)) {
		/* Not ours (cannot happen with our filter): let it run. */
		return notify_respond(n, n->req->id, 0);
	}
	err = n->sink.refusal(n->sink.ctx);
	if (err)
		return notify_respond(n, n->req->id, err);
	if (a.op == LG_OP_RENAME)
		return notify_answer_rename(n, &a);
	if (a.op == LG_OP_LINK)
		return notify_answer_link(n, &a);
	if (a.op == LG_OP_MAKE)
		return notify_answer_make(n, &a);

	/*
	 * Reading the target happens outside the session's lock: it may
	 * block (see busy_since), and the main thread must stay free.
	 */
	notify_busy(n, &a);
	r = gather(n->req, &a, path, sizeof(path), &f, &st, &w);
	atomic_store(&n->busy_since, 0);
	/*
	 * Read, check, use: the task may have ended and its pid gone to
	 * another. A directory taken through a pidfd vouched for proves it
	 * did not (where.h, lg_where.alive): one ioctl fewer per removal.
	 */
	if (!(r == 0 && w.alive)) {
		if (!notify_still_valid(n, n->req->id))
			return 0; /* the target is gone, or answered for */
		if (a.path)
			lg_where_vouch(); /* the pidfd gather opened, if any */
	}
	/*
	 * What destroys nothing (an append, an O_EXCL create, a chmod) left
	 * the kernel only for the undo's record: unread, it runs unrecorded;
	 * an O_EXCL create of a name that exists fails in the kernel.
	 */
	if (a.undo_only && (r < 0 || (a.excl && f.exists)))
		return notify_respond(n, n->req->id, 0);
	if (r < 0) {
		/* Never allow what we could not read; say what the kernel would. */
		err = notify_unreadable(&n->sink, (pid_t)n->req->pid, a.op, -r);
		if (notify_kernel_refusal(r))
			return notify_respond(n, n->req->id, -r);
		return notify_respond(n, n->req->id, err);
	}
	if (!a.relevant)
		return notify_respond(n, n->req->id, 0);
	if (a.path) {
		f.git_recoverable = git_recoverable;
		f.git_ctx = n->odb;
	}
	{
		struct lg_event ev = { .kind = LG_EV_DESTRUCTIVE,
				       .source = LG_SRC_SECCOMP,
				       .op = a.op,
				       .pid = (pid_t)n->req->pid,
				       .target = path,
				       .facts = &f,
				       .at = w.dirfd >= 0,
				       .creates = a.creates,
				       .appends = a.appends,
				       .at_dirfd = w.dirfd,
				       .at_name = w.last,
				       .at_st = st.stx_mask ? &st : NULL,
				       .at_dir_dev = w.dir_dev,
				       .at_dir_ino = w.dir_ino };

		err = n->sink.feed(n->sink.ctx, &ev, NULL);
	}
	return notify_respond(n, n->req->id, err);
}
