// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "guard/classify.h"
#include "lib/cleanup.h"
#include "filter.h"
#include "gitodb.h"
#include "lib/log.h"
#include "notify.h"
#include "pathres.h"
#include "session/session.h"
#include "where.h"

#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS SECCOMP_IOW(4, __u64)
#endif
#ifndef SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
#define SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (1UL << 0)
#endif

struct lg_notifier {
	int fd;
	struct seccomp_notif *req;
	struct seccomp_notif_resp *resp;
	size_t req_size, resp_size;
	struct lg_gitodb *odb; /* repositories and pack lists, cached */
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

struct lg_notifier *lg_notifier_new(int fd)
{
	struct seccomp_notif_sizes sz = { 0 };
	struct lg_notifier *n = calloc(1, sizeof(*n));

	if (!n)
		return NULL;
	n->fd = fd;
	/* The kernel's structs may be larger than our headers' ones. */
	if (syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sz) < 0) {
		sz.seccomp_notif = sizeof(struct seccomp_notif);
		sz.seccomp_notif_resp = sizeof(struct seccomp_notif_resp);
	}
	n->req_size = sz.seccomp_notif > sizeof(*n->req) ? sz.seccomp_notif :
							   sizeof(*n->req);
	n->resp_size = sz.seccomp_notif_resp > sizeof(*n->resp) ?
			       sz.seccomp_notif_resp :
			       sizeof(*n->resp);
	n->req = calloc(1, n->req_size);
	n->resp = calloc(1, n->resp_size);
	n->odb = lg_gitodb_new(0);
	if (!n->req || !n->resp || !n->odb) {
		lg_notifier_free(n);
		return NULL;
	}
	return n;
}

struct lg_notifier *lg_notifier_spare(const struct lg_notifier *n)
{
	int fd = fcntl(n->fd, F_DUPFD_CLOEXEC, 3);
	struct lg_notifier *m;

	if (fd < 0)
		return NULL;
	m = lg_notifier_new(fd);
	if (!m) {
		close(fd);
		return NULL;
	}
	m->own_fd = true;
	m->exec_wanted = n->exec_wanted;
	m->on_exec = n->on_exec;
	m->exec_ctx = n->exec_ctx;
	return m;
}

void lg_notifier_abandon(struct lg_notifier *n)
{
	atomic_store(&n->abandoned, true);
}

bool lg_notifier_abandoned(struct lg_notifier *n)
{
	return atomic_load(&n->abandoned);
}

void lg_notifier_free(struct lg_notifier *n)
{
	if (!n)
		return;
	if (n->own_fd)
		close(n->fd);
	free(n->req);
	free(n->resp);
	lg_gitodb_free(n->odb);
	free(n);
}

int lg_notifier_fd(const struct lg_notifier *n)
{
	return n->fd;
}

int lg_notifier_sync_wakeup(struct lg_notifier *n)
{
	if (ioctl(n->fd, SECCOMP_IOCTL_NOTIF_SET_FLAGS,
		  SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP, 0) == 0)
		return 1;
	return 0; /* EINVAL: older kernel, the loop works without it */
}

/*
 * Copies a NUL-terminated string from the target, a page at a time so a
 * string ending just before an unmapped page is still read.
 */
static int read_string(pid_t pid, uint64_t addr, char *buf, size_t size)
{
	size_t got = 0;

	if (!addr)
		return -EFAULT;
	while (got < size) {
		uint64_t a = addr + got;
		size_t chunk = 4096 - (a & 4095);
		struct iovec local, remote;
		ssize_t r;
		char *nul;

		if (chunk > size - got)
			chunk = size - got;
		local = (struct iovec){ buf + got, chunk };
		remote = (struct iovec){ (void *)(uintptr_t)a, chunk };
		r = process_vm_readv(pid, &local, 1, &remote, 1, 0);
		if (r <= 0)
			return r < 0 ? -errno : -EFAULT;
		nul = memchr(buf + got, '\0', (size_t)r);
		if (nul)
			return (int)(nul - buf);
		got += (size_t)r;
	}
	return -ENAMETOOLONG;
}

static int read_mem(pid_t pid, uint64_t addr, void *buf, size_t size)
{
	struct iovec local = { buf, size };
	struct iovec remote = { (void *)(uintptr_t)addr, size };
	ssize_t r = process_vm_readv(pid, &local, 1, &remote, 1, 0);

	if (r < 0)
		return -errno;
	return (size_t)r == size ? 0 : -EFAULT;
}

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
	f->is_dir = S_ISDIR(st->stx_mode);
	f->is_symlink = S_ISLNK(st->stx_mode);
	f->is_reg = S_ISREG(st->stx_mode);
}

#define STAT_MASK                                                            \
	(STATX_TYPE | STATX_SIZE | STATX_BTIME | STATX_CTIME | STATX_MTIME | \
	 STATX_NLINK | STATX_INO | STATX_MNT_ID)

static void stat_target(const char *path, int flags, struct lg_facts *f)
{
	struct statx st;

	memset(f, 0, sizeof(*f));
	if (statx(AT_FDCWD, path, flags, STAT_MASK, &st) == 0)
		facts_from_statx(f, &st);
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
	bool how; /* openat2: its flags are in the open_how it points at */
};

/*
 * An open's flags: an O_TRUNC open empties the file; any other open for
 * writing but an append, an O_EXCL create or an O_PATH may change it in
 * place (the filter lets the rest run in the kernel).
 */
static void open_flags(struct attempt *a, uint64_t flags)
{
	a->follow = !(flags & O_NOFOLLOW);
	if (flags & O_TRUNC) {
		a->op = LG_OP_OPEN_TRUNC;
		a->relevant = true;
		return;
	}
	a->op = LG_OP_OPEN_WRITE;
	a->relevant = (flags & O_ACCMODE) != O_RDONLY &&
		      !(flags & (O_APPEND | O_EXCL | O_PATH));
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
		a->how = sc->kind == LG_KIND_OPEN_HOW;
		break;
	case LG_KIND_RENAME:
		a->op = LG_OP_RENAME;
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

static int respond(struct lg_notifier *n, uint64_t id, int error)
{
	memset(n->resp, 0, n->resp_size);
	n->resp->id = id;
	if (error) {
		n->resp->error = -error;
	} else {
		n->resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
	}
	if (ioctl(n->fd, SECCOMP_IOCTL_NOTIF_SEND, n->resp) < 0) {
		/* ENOENT: the target died or its syscall was interrupted. */
		return errno == ENOENT ? 0 : -errno;
	}
	return 0;
}

/*
 * An argument the kernel itself would refuse, the same way: answered with
 * its own error, not the guard's.
 */
static bool kernel_refusal(int r)
{
	return r == -EFAULT || r == -ENAMETOOLONG || r == -EBADF ||
	       r == -ENOENT || r == -ENOTDIR;
}

static bool still_valid(struct lg_notifier *n, uint64_t id)
{
	return ioctl(n->fd, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0;
}

/*
 * Reads a path argument and resolves it in the target's view (where.h).
 * 0, or -errno when the target's memory could not be read or the kernel
 * would refuse the argument itself (the caller then answers for it).
 */
static int arg_where(pid_t pid, int dirfd, uint64_t addr, bool follow,
		     struct lg_where *w)
{
	char raw[PATH_MAX + 1];
	int r;

	r = read_string(pid, addr, raw, sizeof(raw));
	if (r < 0)
		return r;
	return lg_where_resolve(pid, dirfd, raw, follow, w);
}

static void stat_where(const struct lg_where *w, bool follow,
		       struct lg_facts *f)
{
	struct statx st;

	memset(f, 0, sizeof(*f));
	if (lg_where_statx(w, follow, STAT_MASK, &st) == 0)
		facts_from_statx(f, &st);
}

/*
 * Gathers the path (for the guard and the records) and the facts about
 * the target. Returns 0, or -errno when the target's memory or links could
 * not be read (the caller then denies: a read that fails never allows).
 */
static int gather(const struct seccomp_notif *req, struct attempt *a,
		  char *path, size_t size, struct lg_facts *f,
		  struct lg_where *wout)
{
	pid_t pid = (pid_t)req->pid;
	struct lg_where w;
	int r;

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
		stat_target(fdlink, 0, f);
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

		if (read_mem(pid, req->data.args[2], &how, sizeof(how)) < 0)
			return -EFAULT;
		open_flags(a, how.flags);
		a->follow = a->follow && !(how.resolve & RESOLVE_NO_SYMLINKS);
		if (!a->relevant)
			return 0;
	}
	r = arg_where(pid, a->dirfd, a->path, a->follow, &w);
	if (r < 0)
		return r;
	snprintf(path, size, "%s", w.path);
	stat_where(&w, a->follow, f);
	if (a->op == LG_OP_RMDIR && f->exists)
		f->nonempty_dir = dir_nonempty(&w);
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

int lg_notifier_recv(struct lg_notifier *n)
{
	memset(n->req, 0, n->req_size);
	if (ioctl(n->fd, SECCOMP_IOCTL_NOTIF_RECV, n->req) < 0)
		return -errno;
	return 0;
}

bool lg_notifier_busy(struct lg_notifier *n, struct lg_busy *b)
{
	uint64_t since = atomic_load(&n->busy_since);

	if (!since)
		return false;
	b->id = atomic_load(&n->busy_id);
	b->pid = atomic_load(&n->busy_pid);
	b->op = atomic_load(&n->busy_op);
	b->since_ms = since;
	return since == atomic_load(&n->busy_since);
}

/* The notification n->req is read from its target from now on. */
static void busy(struct lg_notifier *n, const struct attempt *a)
{
	atomic_store(&n->busy_id, n->req->id);
	atomic_store(&n->busy_pid, (int)n->req->pid);
	atomic_store(&n->busy_op, (int)a->op);
	atomic_store(&n->busy_since, lg_mono_ms());
}

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

/* What the target's arguments could not be read for: refused. */
static int unreadable(struct lg_session *s, pid_t pid, enum lg_op op, int err)
{
	struct lg_event ev = { .kind = LG_EV_UNREADABLE,
			       .source = LG_SRC_SECCOMP,
			       .op = op,
			       .pid = pid,
			       .result = err };

	return lg_session_feed(s, &ev, NULL);
}

/*
 * A rename is never counted: it runs, unless it would move or replace
 * lgrun's own state. What the session learns from it is where
 * pre-existing content goes (lineage.h).
 */
static int answer_rename(struct lg_notifier *n, struct lg_session *s,
			 struct attempt *a)
{
	pid_t pid = (pid_t)n->req->pid;
	struct lg_where ws = { .dirfd = -1 }, wd = { .dirfd = -1 };
	struct lg_facts fs, fd;
	uint64_t ms, md;
	bool valid;
	int r, err;

	/*
	 * Directory paths remembered from now on are read again, and again
	 * once it is answered (it runs after): a path read by another
	 * thread in between is at most DIRCACHE_MS old (where.c).
	 */
	lg_where_moved();
	busy(n, a);
	r = arg_where(pid, a->dirfd, a->path, false, &ws);
	if (r >= 0)
		r = arg_where(pid, a->dirfd2, a->path2, false, &wd);
	atomic_store(&n->busy_since, 0);
	valid = still_valid(n, n->req->id);
	if (r < 0 || !valid) {
		lg_where_done(&ws);
		lg_where_done(&wd);
	}
	if (!valid)
		return 0;
	if (r < 0) {
		err = unreadable(s, pid, a->op, -r);
		if (kernel_refusal(r))
			return respond(n, n->req->id, -r);
		return respond(n, n->req->id, err);
	}
	stat_where(&ws, false, &fs);
	stat_where(&wd, false, &fd);
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

		err = lg_session_feed(s, &ev, NULL);
	}
	r = respond(n, n->req->id, err);
	lg_where_moved();
	return r;
}

void lg_notifier_on_exec(struct lg_notifier *n, bool (*wanted)(void *ctx),
			 void (*fn)(void *ctx, pid_t pid, const char *path,
				    unsigned flags),
			 void *ctx)
{
	n->exec_wanted = wanted;
	n->on_exec = fn;
	n->exec_ctx = ctx;
}

/*
 * What an image is, from its file: LG_IMAGE_STATIC (an ELF without an
 * interpreter), LG_IMAGE_SECURE (setuid or setgid: the loader ignores
 * LD_PRELOAD); 0 for a dynamic ELF, a script or what cannot be read.
 */
unsigned lg_image_flags(int dirfd, const char *name)
{
	LG_AUTOCLOSE int fd =
		openat(dirfd, name[0] ? name : ".", O_RDONLY | O_CLOEXEC);
	unsigned char h[64];
	unsigned flags = 0;
	struct stat st;
	uint64_t phoff;
	unsigned phnum, phsize;
	bool wide;

	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		return 0;
	if (st.st_mode & (S_ISUID | S_ISGID))
		flags |= LG_IMAGE_SECURE;
	if (pread(fd, h, sizeof(h), 0) != (ssize_t)sizeof(h) ||
	    memcmp(h, "\177ELF", 4) != 0 || (h[4] != 1 && h[4] != 2) ||
	    h[5] != 1) /* little-endian only: x86 */
		return flags;
	wide = h[4] == 2;
	if (wide) {
		memcpy(&phoff, h + 32, 8);
		phsize = (unsigned)(h[54] | h[55] << 8);
		phnum = (unsigned)(h[56] | h[57] << 8);
	} else {
		uint32_t o;

		memcpy(&o, h + 28, 4);
		phoff = o;
		phsize = (unsigned)(h[42] | h[43] << 8);
		phnum = (unsigned)(h[44] | h[45] << 8);
	}
	if (!phnum || phnum > 128 || phsize < (wide ? 56u : 32u) ||
	    phsize > 128)
		return flags;
	for (unsigned i = 0; i < phnum; i++) {
		uint32_t type;

		if (pread(fd, &type, 4,
			  (off_t)(phoff + (uint64_t)i * phsize)) != 4)
			return flags;
		if (type == 3) /* PT_INTERP: the loader, and the shim with it */
			return flags;
	}
	return flags | LG_IMAGE_STATIC;
}

/*
 * An exec: when the image will run without the shim (static, setuid),
 * the session's syscalls are traced from before its first instruction:
 * on_exec returns once they are (or it gave up). Always let through.
 */
static int answer_exec(struct lg_notifier *n, enum lg_sys sys)
{
	const struct lg_syscall *sc = lg_syscall_of(sys);
	LG_WHERE_AUTO struct lg_where w = { .dirfd = -1 };
	const __u64 *arg = n->req->data.args;
	pid_t pid = (pid_t)n->req->pid;
	struct attempt a = { .op = LG_OP_NONE };
	unsigned flags = 0;
	int r;

	if (!n->on_exec || !n->exec_wanted(n->exec_ctx))
		return respond(n, n->req->id, 0);
	busy(n, &a);
	r = arg_where(pid, sc->dirfd >= 0 ? (int)arg[sc->dirfd] : AT_FDCWD,
		      lg_filter_arch_is_32(n->req->data.arch) ?
			      arg[sc->path] & 0xffffffffULL :
			      arg[sc->path],
		      !(sc->flags >= 0 &&
			(arg[sc->flags] & AT_SYMLINK_NOFOLLOW)),
		      &w);
	atomic_store(&n->busy_since, 0);
	if (r == 0 && w.dirfd >= 0)
		flags = lg_image_flags(w.dirfd, w.last);
	if (flags && still_valid(n, n->req->id))
		n->on_exec(n->exec_ctx, pid, w.path, flags);
	return respond(n, n->req->id, 0);
}

int lg_notifier_answer(struct lg_notifier *n, struct lg_session *s)
{
	LG_WHERE_AUTO struct lg_where w = { .dirfd = -1 };
	char path[PATH_MAX + 1];
	struct lg_facts f;
	struct attempt a;
	enum lg_sys sys;
	int r, err;

	sys = lg_filter_classify(n->req->data.arch, n->req->data.nr);
	if (sys == LG_SYS_EXECVE || sys == LG_SYS_EXECVEAT)
		return answer_exec(n, sys);
	if (!decode(n->req, sys, &a)) {
		/* Not ours (cannot happen with our filter): let it run. */
		return respond(n, n->req->id, 0);
	}
	err = lg_session_refusal(s);
	if (err)
		return respond(n, n->req->id, err);
	if (a.op == LG_OP_RENAME)
		return answer_rename(n, s, &a);

	/*
	 * Reading the target happens outside the session's lock: it may
	 * block (see busy_since), and the main thread must stay free.
	 */
	busy(n, &a);
	r = gather(n->req, &a, path, sizeof(path), &f, &w);
	atomic_store(&n->busy_since, 0);
	if (!still_valid(n, n->req->id))
		return 0; /* the target is gone, or it was answered for */
	if (r < 0) {
		/* Never allow what we could not read; say what the kernel would. */
		err = unreadable(s, (pid_t)n->req->pid, a.op, -r);
		if (kernel_refusal(r))
			return respond(n, n->req->id, -r);
		return respond(n, n->req->id, err);
	}
	if (!a.relevant)
		return respond(n, n->req->id, 0);
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
				       .at_dirfd = w.dirfd,
				       .at_name = w.last };

		err = lg_session_feed(s, &ev, NULL);
	}
	return respond(n, n->req->id, err);
}
