// SPDX-License-Identifier: MIT
/*
 * An exec (LG_SC_EXEC, while the observer's syscall tracing is off): its
 * image read (lg_image_flags: no PT_INTERP, setuid or setgid) and, for
 * one the shim cannot enter, the callback of lg_notifier_on_exec waits
 * until the session's syscalls are traced (notify_answer_exec).
 */
#include <fcntl.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "filter.h"
#include "lib/cleanup.h"
#include "notify_int.h"

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
int notify_answer_exec(struct lg_notifier *n, enum lg_sys sys)
{
	const struct lg_syscall *sc = lg_syscall_of(sys);
	LG_WHERE_AUTO struct lg_where w = { .dirfd = -1 };
	const __u64 *arg = n->req->data.args;
	pid_t pid = (pid_t)n->req->pid;
	struct attempt a = { .op = LG_OP_NONE };
	unsigned flags = 0;
	int r;

	if (!n->on_exec || !n->exec_wanted(n->exec_ctx))
		return notify_respond(n, n->req->id, 0);
	notify_busy(n, &a);
	r = notify_arg_where(
		pid, sc->dirfd >= 0 ? (int)arg[sc->dirfd] : AT_FDCWD,
		lg_filter_arch_is_32(n->req->data.arch) ?
			arg[sc->path] & 0xffffffffULL :
			arg[sc->path],
		!(sc->flags >= 0 && (arg[sc->flags] & AT_SYMLINK_NOFOLLOW)),
		&w);
	atomic_store(&n->busy_since, 0);
	if (r == 0 && w.dirfd >= 0)
		flags = lg_image_flags(w.dirfd, w.last);
	if (flags && notify_still_valid(n, n->req->id))
		n->on_exec(n->exec_ctx, pid, w.path, flags);
	return notify_respond(n, n->req->id, 0);
}
