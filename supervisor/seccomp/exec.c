// SPDX-License-Identifier: MIT
/*
 * An exec (LG_SC_EXEC): the command line of a CLI of [remote]'s table
 * read and judged (judge_command: kubectl delete, psql -c "DROP ...",
 * issue 38); while the observer's syscall tracing is off, its image read
 * (lg_image_flags: no PT_INTERP, setuid or setgid) and, for one the shim
 * cannot enter, the callback of lg_notifier_on_exec waits until the
 * session's syscalls are traced (notify_answer_exec).
 */
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "filter.h"
#include "lib/cleanup.h"
#include "lib/procmem.h"
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

#define EXEC_ARGS 128 /* arguments read at most */
#define EXEC_ARG_MAX 4096 /* of each, bytes */
#define EXEC_ENVS 1024 /* environment entries looked through at most */

/* The pointer at index i of the NULL-terminated array at addr, or 0. */
static uint64_t vec_at(pid_t pid, uint64_t addr, unsigned i, bool compat)
{
	uint64_t v = 0;
	uint32_t v32;

	if (!addr)
		return 0;
	if (compat)
		return lg_proc_read(pid, addr + 4ULL * i, &v32, 4) == 0 ? v32 :
									  0;
	return lg_proc_read(pid, addr + 8ULL * i, &v, 8) == 0 ? v : 0;
}

/*
 * Will the shim be in the new image? Its LD_PRELOAD (in the envp the
 * exec passes) names lgrun's shim, and the image is dynamic and not
 * setuid (lg_image_flags).
 */
static bool shim_in(pid_t pid, uint64_t envp, bool compat, unsigned flags)
{
	char buf[EXEC_ARG_MAX];

	if (flags & (LG_IMAGE_STATIC | LG_IMAGE_SECURE))
		return false;
	for (unsigned i = 0; i < EXEC_ENVS; i++) {
		uint64_t a = vec_at(pid, envp, i, compat);

		if (!a || lg_proc_string(pid, a, buf, sizeof(buf)) < 0)
			return false;
		if (strncmp(buf, "LD_PRELOAD=", 11) == 0)
			return strstr(buf, "liblgshim") != NULL;
	}
	return false;
}

/*
 * A command of [remote]'s table (kubectl, psql, curl...): its command
 * line read from the caller's memory and judged by the session, which may
 * refuse the exec (the trip of a remote delete: the command never runs).
 * Returns 0 or the errno.
 */
static int judge_command(struct lg_notifier *n, const struct lg_syscall *sc,
			 const struct lg_where *w, const char *program)
{
	const __u64 *arg = n->req->data.args;
	pid_t pid = (pid_t)n->req->pid;
	bool compat = lg_filter_arch_is_32(n->req->data.arch);
	uint64_t argv = arg[sc->path + 1], envp = arg[sc->path + 2];
	char *args[EXEC_ARGS + 1], cwd[PATH_MAX], link[64];
	struct lg_event ev = { .kind = LG_EV_DESTRUCTIVE,
			       .source = LG_SRC_SECCOMP,
			       .op = LG_OP_REMOTE_DELETE,
			       .pid = pid,
			       .exe = program,
			       .program = program,
			       .system = "exec",
			       .target = w->path };
	int argc = 0, err;
	ssize_t k;

	if (compat) {
		argv &= 0xffffffffULL;
		envp &= 0xffffffffULL;
	}
	for (; argc < EXEC_ARGS; argc++) {
		uint64_t a = vec_at(pid, argv, (unsigned)argc, compat);
		char buf[EXEC_ARG_MAX];

		if (!a || lg_proc_string(pid, a, buf, sizeof(buf)) < 0 ||
		    !(args[argc] = strdup(buf)))
			break;
	}
	args[argc] = NULL;
	snprintf(link, sizeof(link), "/proc/%d/cwd", pid);
	k = readlink(link, cwd, sizeof(cwd) - 1);
	cwd[k > 0 ? k : 0] = '\0';
	ev.argc = argc;
	ev.argv = (const char *const *)args;
	ev.cwd = cwd;
	/* the shim's wire says more than the command line, where it reads */
	ev.shim = argc > 0 &&
		  shim_in(pid, envp, compat, lg_image_flags(w->dirfd, w->last));
	err = argc > 0 && notify_still_valid(n, n->req->id) ?
		      n->sink.feed(n->sink.ctx, &ev, NULL) :
		      0;
	for (int i = 0; i < argc; i++)
		free(args[i]);
	return err;
}

/*
 * Is the exec's path one of [remote]'s commands, by its last name? One
 * read of the path's string: every exec of a build passes here.
 */
static bool wanted(struct lg_notifier *n, const struct lg_syscall *sc,
		   char *prog, size_t size)
{
	const __u64 *arg = n->req->data.args;
	uint64_t addr = arg[sc->path];
	char path[PATH_MAX];
	const char *base;

	if (!n->sink.reads_commands(n->sink.ctx))
		return false;
	if (lg_filter_arch_is_32(n->req->data.arch))
		addr &= 0xffffffffULL;
	if (lg_proc_string((pid_t)n->req->pid, addr, path, sizeof(path)) < 0)
		return false;
	base = strrchr(path, '/');
	base = base ? base + 1 : path;
	snprintf(prog, size, "%s", base);
	return n->sink.reads_command_of(n->sink.ctx, base);
}

/*
 * An exec: a command of [remote]'s table judged (judge_command); when the
 * image will run without the shim (static, setuid), the session's
 * syscalls traced from before its first instruction: on_exec returns
 * once they are (or it gave up).
 */
int notify_answer_exec(struct lg_notifier *n, enum lg_sys sys)
{
	const struct lg_syscall *sc = lg_syscall_of(sys);
	LG_WHERE_AUTO struct lg_where w = { .dirfd = -1 };
	const __u64 *arg = n->req->data.args;
	pid_t pid = (pid_t)n->req->pid;
	struct attempt a = { .op = LG_OP_NONE };
	bool traced = n->on_exec && n->exec_wanted(n->exec_ctx);
	char prog[NAME_MAX + 1] = "";
	unsigned flags = 0;
	int r, err = 0;

	/* by the name it was run by: a symlink's (psql -> pg_wrapper) */
	bool judge = wanted(n, sc, prog, sizeof(prog));

	if (!traced && !judge)
		return notify_respond(n, n->req->id, 0);
	notify_busy(n, &a);
	r = notify_arg_where(
		pid, sc->dirfd >= 0 ? (int)arg[sc->dirfd] : AT_FDCWD,
		lg_filter_arch_is_32(n->req->data.arch) ?
			arg[sc->path] & 0xffffffffULL :
			arg[sc->path],
		!(sc->flags >= 0 && (arg[sc->flags] & AT_SYMLINK_NOFOLLOW)),
		&w);
	if (judge && r == 0 && w.dirfd >= 0)
		err = judge_command(n, sc, &w, prog);
	atomic_store(&n->busy_since, 0);
	if (err)
		return notify_respond(n, n->req->id, err);
	if (traced && r == 0 && w.dirfd >= 0)
		flags = lg_image_flags(w.dirfd, w.last);
	if (flags && notify_still_valid(n, n->req->id))
		n->on_exec(n->exec_ctx, pid, w.path, flags);
	return notify_respond(n, n->req->id, 0);
}
