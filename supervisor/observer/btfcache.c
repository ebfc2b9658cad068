// SPDX-License-Identifier: MIT
/*
 * The kernel's types, minimized for lgrun's programs and kept for this
 * boot (liblgbpf.so). libbpf relocates the programs against the kernel's
 * BTF: parsing all 5 MB of it was more than half of a load's CPU (25 ms
 * against 11 with the minimized copy, `perf stat` of `lgrun --bpf=on --
 * true`). The copy is bpftool's (`gen min_core_btf`), made once per boot
 * and per build of the programs, at the end of the first session that
 * loaded them without it: the kernel's types cannot change without a
 * reboot, so the boot id names the file, with a digest of the programs
 * (made at build time: reading the object's bytes in the loader thread
 * is what ThreadSanitizer took for a race with a ring lgrun had once
 * mapped at that address).
 *
 * Read only when it is lgrun's own: a regular file of its user, one link,
 * written by no one else, in a folder of its user no one else may write
 * (the state dir, read-only in the tree's view). A copy the load refuses
 * is removed, and the load goes on with the kernel's own BTF.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "btfcache.h"

#define VMLINUX "/sys/kernel/btf/vmlinux"
#define MAX_BTF (64u << 20)
#define GEN_MS 5000 /* bpftool takes some 40 ms */

extern char **environ;

static int boot_id(char out[40])
{
	int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, out, 39);
	close(fd);
	if (n < 32)
		return -EIO;
	out[n] = '\0';
	out[strcspn(out, "\n")] = '\0';
	for (char *c = out; *c; c++)
		if (!((*c >= '0' && *c <= '9') || (*c >= 'a' && *c <= 'f') ||
		      *c == '-'))
			return -EIO;
	return 0;
}

int lgb_btf_path(const char *dir, const char *progs, char *out, size_t size)
{
	char id[40];
	int r = boot_id(id);

	if (r)
		return r;
	if ((size_t)snprintf(out, size, "%s/vmlinux-%s-%s.btf", dir, id,
			     progs) >= size)
		return -ENAMETOOLONG;
	return 0;
}

/* The folder, or the file in it, is this user's alone. */
static bool owned(const struct stat *st, bool dir)
{
	if (st->st_uid != geteuid() || (st->st_mode & 022))
		return false;
	return dir ? S_ISDIR(st->st_mode) :
		     S_ISREG(st->st_mode) && st->st_nlink == 1 &&
			       st->st_size > 0 && st->st_size <= MAX_BTF;
}

static bool dir_owned(const char *dir)
{
	struct stat st;

	return lstat(dir, &st) == 0 && owned(&st, true);
}

bool lgb_btf_usable(const char *dir, const char *path)
{
	struct stat st;

	return dir_owned(dir) && lstat(path, &st) == 0 && owned(&st, false);
}

/* The first bpftool of the usual places: no PATH search as root. */
static const char *bpftool(void)
{
	static const char *const at[] = { "/usr/sbin/bpftool",
					  "/usr/bin/bpftool",
					  "/usr/local/sbin/bpftool",
					  "/usr/local/bin/bpftool" };

	for (size_t i = 0; i < sizeof(at) / sizeof(at[0]); i++)
		if (access(at[i], X_OK) == 0)
			return at[i];
	return NULL;
}

/* Runs argv, its output to /dev/null, for at most GEN_MS: its status. */
static int run_tool(char *const argv[])
{
	posix_spawn_file_actions_t fa;
	pid_t pid;
	int st = -1, pfd, r;

	if (posix_spawn_file_actions_init(&fa))
		return -ENOMEM;
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	r = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (r)
		return -r;
	/* bounded: a tool that hangs is killed */
	pfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (pfd >= 0) {
		struct pollfd p = { .fd = pfd, .events = POLLIN };

		if (poll(&p, 1, GEN_MS) != 1)
			kill(pid, SIGKILL);
		close(pfd);
	}
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -EIO;
}

/*
 * Earlier boots' copies (and what their makers left). This boot's copies
 * for other builds of the programs stay: two lgrun builds sharing a state
 * dir would otherwise remove each other's at every session's end.
 */
static void forget_other_boots(const char *dir, const char *keep)
{
	const char *base = strrchr(keep, '/') + 1;
	/* "vmlinux-BOOTID-": up to the digest, which has no '-' */
	size_t boot = (size_t)(strrchr(base, '-') - base) + 1;
	DIR *d = opendir(dir);
	struct dirent *de;

	if (!d)
		return;
	while ((de = readdir(d)))
		if (strncmp(de->d_name, "vmlinux-", 8) == 0 &&
		    strncmp(de->d_name, base, boot) != 0)
			unlinkat(dirfd(d), de->d_name, 0);
	closedir(d);
}

int lgb_btf_make(const char *dir, const char *path, const void *obj,
		 size_t objsz)
{
	char tmp[4200], objpath[4200];
	const char *tool = bpftool();
	int fd, r;

	if (!tool)
		return -ENOENT;
	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		return -errno;
	if (!dir_owned(dir))
		return -EPERM;
	/* one maker at a time: the others go on without it */
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	snprintf(objpath, sizeof(objpath), "%s.o", path);
	fd = open(objpath, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0) {
		struct stat st;

		/* a maker that died left it: gone after a minute */
		if (errno == EEXIST && lstat(objpath, &st) == 0 &&
		    st.st_mtime + 60 < time(NULL))
			unlink(objpath);
		return errno == EEXIST ? 0 : -errno;
	}
	/* a short write is a failure: no copy this time */
	r = write(fd, obj, objsz) == (ssize_t)objsz ? 0 : -EIO;
	close(fd);
	if (!r) {
		char *argv[] = { (char *)tool,
				 "gen",
				 "min_core_btf",
				 (char *)VMLINUX,
				 tmp,
				 objpath,
				 NULL };

		unlink(tmp);
		r = run_tool(argv);
	}
	if (!r && rename(tmp, path) < 0)
		r = -errno;
	unlink(tmp);
	unlink(objpath);
	if (!r)
		forget_other_boots(dir, path);
	return r ? r : 1;
}
