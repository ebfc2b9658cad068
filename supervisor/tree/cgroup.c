// SPDX-License-Identifier: MIT
#include <dirent.h>
#include <errno.h>
#include <stdatomic.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cgroup.h"
#include "lib/cleanup.h"
#include "lib/clock.h"
#include "lib/log.h"

/*
 * The cgroup2 mount point: the usual places first (a statfs each), else
 * mountinfo (field 5 is the mount point), which is slow on busy hosts.
 */
static int cgroup2_mount(char *out, size_t size)
{
	static const char *const usual[] = { "/sys/fs/cgroup",
					     "/sys/fs/cgroup/unified" };
	char line[4096];
	struct statfs sfs;
	int r = -ENOENT;
	FILE *f;

	for (size_t i = 0; i < 2; i++) {
		if (statfs(usual[i], &sfs) == 0 &&
		    sfs.f_type == CGROUP2_SUPER_MAGIC) {
			snprintf(out, size, "%s", usual[i]);
			return 0;
		}
	}
	f = fopen("/proc/self/mountinfo", "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char *sep = strstr(line, " - ");
		char mnt[PATH_MAX];

		if (!sep || strncmp(sep + 3, "cgroup2 ", 8) != 0)
			continue;
		if (sscanf(line, "%*s %*s %*s %*s %4095s", mnt) != 1)
			continue;
		snprintf(out, size, "%s", mnt);
		r = 0;
		break;
	}
	fclose(f);
	return r;
}

static int own_cgroup(char *out, size_t size)
{
	char line[4096];
	FILE *f = fopen("/proc/self/cgroup", "re");
	int r = -ENOENT;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "0::", 3) != 0)
			continue;
		line[strcspn(line, "\n")] = '\0';
		snprintf(out, size, "%s", line + 3);
		r = 0;
		break;
	}
	fclose(f);
	return r;
}

/*
 * Leaves of lgrun processes that died without cleaning up (killed with
 * SIGKILL): removed once empty. The leaf's name ends in the lgrun's pid.
 */
static void remove_stale_leaves(const char *parent)
{
	struct dirent *de;
	DIR *d = opendir(parent);

	if (!d)
		return;
	while ((de = readdir(d))) {
		const char *dash = strrchr(de->d_name, '-');
		char p[PATH_MAX + 300];
		pid_t pid;

		if (strncmp(de->d_name, "lgrun-", 6) != 0 || !dash)
			continue;
		pid = (pid_t)atoi(dash + 1);
		if (pid <= 0 || kill(pid, 0) == 0 || errno != ESRCH)
			continue;
		snprintf(p, sizeof(p), "%s/%s", parent, de->d_name);
		rmdir(p); /* EBUSY while something still runs in it */
	}
	closedir(d);
}

void lg_cgroup_create(struct lg_cgroup *cg, const char *name)
{
	char mnt[PATH_MAX], own[PATH_MAX], kill_file[PATH_MAX + 16];

	memset(cg, 0, sizeof(*cg));
	cg->dirfd = -1;
	if (cgroup2_mount(mnt, sizeof(mnt)) < 0) {
		snprintf(cg->why, sizeof(cg->why), "no cgroup2 mount");
		return;
	}
	if (own_cgroup(own, sizeof(own)) < 0) {
		snprintf(cg->why, sizeof(cg->why),
			 "not in a cgroup v2 hierarchy");
		return;
	}
	if (strcmp(own, "/") == 0)
		own[0] = '\0';
	{
		char parent[PATH_MAX * 2];

		snprintf(parent, sizeof(parent), "%s%s", mnt, own);
		remove_stale_leaves(parent);
	}
	if (snprintf(cg->path, sizeof(cg->path), "%s%s/%s", mnt, own, name) >=
	    (int)sizeof(cg->path)) {
		snprintf(cg->why, sizeof(cg->why), "cgroup path too long");
		return;
	}
	if (mkdir(cg->path, 0755) < 0 && errno != EEXIST) {
		snprintf(cg->why, sizeof(cg->why), "cannot create %s: %s",
			 cg->path, strerror(errno));
		return;
	}
	snprintf(kill_file, sizeof(kill_file), "%s/cgroup.kill", cg->path);
	if (access(kill_file, W_OK) < 0) {
		snprintf(cg->why, sizeof(cg->why),
			 "%s has no writable cgroup.kill (kernel < 5.14?)",
			 cg->path);
		rmdir(cg->path);
		return;
	}
	cg->dirfd = open(cg->path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (cg->dirfd < 0) {
		snprintf(cg->why, sizeof(cg->why), "cannot open %s: %s",
			 cg->path, strerror(errno));
		rmdir(cg->path);
		return;
	}
	snprintf(cg->mnt, sizeof(cg->mnt), "%s", mnt);
	cg->ok = true;
}

static int write_file(const char *dir, const char *file, const char *text)
{
	char p[PATH_MAX + 32];
	int fd, r = 0;

	snprintf(p, sizeof(p), "%s/%s", dir, file);
	fd = open(p, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, text, strlen(text)) < 0)
		r = -errno;
	close(fd);
	return r;
}

int lg_cgroup_add(const struct lg_cgroup *cg, pid_t pid)
{
	char b[32];

	snprintf(b, sizeof(b), "%d", pid);
	return write_file(cg->path, "cgroup.procs", b);
}

bool lg_cgroup_populated(const struct lg_cgroup *cg)
{
	char p[PATH_MAX + 32], buf[256];
	ssize_t n;
	int fd;

	snprintf(p, sizeof(p), "%s/cgroup.events", cg->path);
	fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	return strstr(buf, "populated 1") != NULL;
}

/* Removes the cgroups the tree made below path, deepest first. */
static void remove_below(const char *path, int depth)
{
	struct dirent *de;
	DIR *d;

	if (depth > 32 || !(d = opendir(path)))
		return;
	while ((de = readdir(d))) {
		char p[PATH_MAX];

		if (de->d_type != DT_DIR || de->d_name[0] == '.' ||
		    snprintf(p, sizeof(p), "%s/%s", path, de->d_name) >=
			    (int)sizeof(p))
			continue;
		remove_below(p, depth + 1);
		rmdir(p);
	}
	closedir(d);
}

void lg_cgroup_destroy(struct lg_cgroup *cg)
{
	if (!cg->ok)
		return;
	if (cg->dirfd >= 0)
		close(cg->dirfd);
	cg->dirfd = -1;
	/* EBUSY when something is still inside; nothing more we can do. */
	if (rmdir(cg->path) < 0 && errno == EBUSY) {
		remove_below(cg->path, 0);
		rmdir(cg->path);
	}
	if (access(cg->path, F_OK) == 0)
		lg_dbg("cannot remove %s: something still runs in it",
		       cg->path);
	cg->ok = false;
}

static void reap(void)
{
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
}

int lg_proc_stat(pid_t pid, char *state, pid_t *ppid)
{
	char p[64], buf[512], *rp;
	ssize_t n;
	int fd, pp;

	snprintf(p, sizeof(p), "/proc/%d/stat", pid);
	fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -EIO;
	buf[n] = '\0';
	rp = strrchr(buf, ')'); /* comm may hold spaces and parens */
	if (!rp || sscanf(rp + 1, " %c %d", state, &pp) != 2)
		return -EIO;
	*ppid = (pid_t)pp;
	return 0;
}

/* lgrun's one child that is not the tree's: its watchdog */
static pid_t not_tree;

void lg_descendants_skip(pid_t pid)
{
	not_tree = pid;
}

/* Live descendants of this process, from /proc/<pid>/stat ppid links. */
int lg_descendants(pid_t *out, int max)
{
	struct {
		pid_t pid, ppid;
	} *procs = NULL;
	size_t n = 0, cap = 0;
	pid_t self = getpid();
	struct dirent *de;
	int found = 0;
	DIR *d = opendir("/proc");

	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		pid_t pid = (pid_t)atoi(de->d_name), ppid;
		char state;

		if (pid <= 0)
			continue;
		if (lg_proc_stat(pid, &state, &ppid) < 0)
			continue;
		if (state == 'Z' || state == 'X')
			continue;
		if (n == cap) {
			void *np;

			cap = cap ? cap * 2 : 512;
			np = realloc(procs, cap * sizeof(*procs));
			if (!np)
				break;
			procs = np;
		}
		procs[n].pid = pid;
		procs[n].ppid = ppid;
		n++;
	}
	closedir(d);
	/* Each pass adds children of what was found; stops when none is new. */
	for (bool more = true; more;) {
		more = false;
		for (size_t i = 0; i < n; i++) {
			bool parent_in = procs[i].ppid == self;

			if (procs[i].pid == 0 || procs[i].pid == not_tree)
				continue;
			for (int k = 0; k < found && !parent_in; k++)
				parent_in = out[k] == procs[i].ppid;
			if (!parent_in)
				continue;
			if (found < max)
				out[found++] = procs[i].pid;
			procs[i].pid = 0;
			more = true;
		}
	}
	free(procs);
	return found;
}

int lg_tree_signal(const struct lg_cgroup *cg, int sig)
{
	pid_t pids[4096];
	int n;

	if (cg && cg->ok) {
		char p[PATH_MAX + 32];
		FILE *f;
		int pid;

		snprintf(p, sizeof(p), "%s/cgroup.procs", cg->path);
		f = fopen(p, "re");
		if (f) {
			while (fscanf(f, "%d", &pid) == 1)
				kill(pid, sig);
			fclose(f);
			return 0;
		}
	}
	n = lg_descendants(pids, (int)(sizeof(pids) / sizeof(pids[0])));
	for (int i = 0; i < n; i++)
		kill(pids[i], sig);
	return n < 0 ? n : 0;
}

/*
 * Waits for "populated 0". Reading cgroup.events re-arms POLLPRI, so the
 * state is taken from that same read: a change between a check and the
 * re-arm is never missed. Exited tasks leave the count before they are
 * reaped, so reaping waits until the tree is gone (the caller does it).
 */
static int wait_cgroup_empty(const struct lg_cgroup *cg, int timeout_ms)
{
	char p[PATH_MAX + 32], buf[256];
	uint64_t end = lg_mono_ms() + (uint64_t)timeout_ms;
	int fd, populated = 1;

	snprintf(p, sizeof(p), "%s/cgroup.events", cg->path);
	fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return lg_cgroup_populated(cg) ? 1 : 0;
	for (;;) {
		struct pollfd pfd = { fd, POLLPRI, 0 };
		ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
		uint64_t now = lg_mono_ms();

		if (n > 0) {
			buf[n] = '\0';
			populated = strstr(buf, "populated 1") != NULL;
		}
		if (!populated || now >= end)
			break;
		poll(&pfd, 1, (int)(end - now < 50 ? end - now : 50));
	}
	close(fd);
	return populated;
}

/*
 * cgroup.kill already asked for this tree: written by the thread that
 * decided the kill (the notify thread's), read by the main thread.
 */
static atomic_bool kill_written;

void lg_tree_kill_start(const struct lg_cgroup *cg, pid_t pgid)
{
	if (cg && cg->ok && write_file(cg->path, "cgroup.kill", "1") == 0) {
		atomic_store(&kill_written, true);
		return;
	}
	if (pgid > 0)
		kill(-pgid, SIGKILL);
}

int lg_tree_kill(const struct lg_cgroup *cg, int timeout_ms,
		 const char **method)
{
	uint64_t end = lg_mono_ms() + (uint64_t)timeout_ms;
	pid_t pids[4096];
	int n;

	/* Once is enough: a second write walks all the dying tasks again. */
	if (cg && cg->ok &&
	    (atomic_load(&kill_written) ||
	     write_file(cg->path, "cgroup.kill", "1") == 0)) {
		*method = "cgroup.kill";
		if (wait_cgroup_empty(cg, timeout_ms) == 0)
			return 0;
	} else {
		*method = "descendant walk";
	}
	/*
	 * Walk until nothing is left: a process may fork between our scan
	 * and its kill, and its child is found on the next pass.
	 */
	for (;;) {
		n = lg_descendants(pids, (int)(sizeof(pids) / sizeof(pids[0])));
		if (n <= 0)
			break;
		for (int i = 0; i < n; i++)
			kill(pids[i], SIGKILL);
		reap();
		if (lg_mono_ms() >= end)
			break;
		usleep(200);
	}
	reap();
	return n > 0 ? n : 0;
}

int lg_kill_leftovers(int timeout_ms, int *survivors)
{
	uint64_t end = lg_mono_ms() + (uint64_t)timeout_ms;
	pid_t pids[4096], seen[256];
	int n, killed = 0, nseen = 0;

	/*
	 * lgrun is the tree's subreaper: what left the cgroup (a root process
	 * that moved itself out, before the observer could see it born) is
	 * still a descendant, or became one when its parent died in the kill.
	 */
	for (;;) {
		n = lg_descendants(pids, (int)(sizeof(pids) / sizeof(pids[0])));
		if (n <= 0)
			break;
		for (int i = 0; i < n; i++) {
			bool again = false;

			if (kill(pids[i], SIGKILL) != 0)
				continue;
			/* one dying process may be found on several passes */
			for (int k = 0; k < nseen && !again; k++)
				again = seen[k] == pids[i];
			if (again)
				continue;
			if (nseen < (int)(sizeof(seen) / sizeof(seen[0])))
				seen[nseen++] = pids[i];
			killed++;
		}
		reap();
		if (lg_mono_ms() >= end)
			break;
		usleep(200);
	}
	reap();
	*survivors = n > 0 ? n : 0;
	return killed;
}

/*
 * When a live process was born (CLOCK_MONOTONIC ns), from its /proc dir;
 * 0 if unknown or it has ended (a zombie).
 */
static uint64_t born_ns(int dirfd)
{
	char buf[1024], *p, state = 0;
	unsigned long long ticks = 0;
	uint64_t b, mono, slept;
	ssize_t n;
	int fd = openat(dirfd, "stat", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	p = strrchr(buf, ')');
	/* after the name: the state, then fields 4-21, then starttime */
	if (!p ||
	    sscanf(p + 2,
		   "%c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u "
		   "%*d %*d %*d %*d %*d %*d %llu",
		   &state, &ticks) != 2 ||
	    state == 'Z' || state == 'X')
		return 0;
	mono = lg_mono_ns();
	slept = lg_boot_ns() - mono;
	b = ticks * (1000000000ULL / (uint64_t)sysconf(_SC_CLK_TCK));
	return b > slept ? b - slept : 0;
}

int lg_kill_escaped(const struct lg_cgroup *cg, pid_t pid, uint64_t fork_ns)
{
	char p[64], line[PATH_MAX + 8];
	const char *rel = cg->ok ? cg->path + strlen(cg->mnt) : NULL;
	uint64_t born;
	LG_AUTOCLOSE int pidfd = -1;
	LG_AUTOCLOSE int dirfd = -1;

	pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (pidfd < 0)
		return 0; /* gone */
	/* pinned by the pidfd from here: the same process throughout */
	snprintf(p, sizeof(p), "/proc/%d", pid);
	dirfd = open(p, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0)
		return 0;
	born = born_ns(dirfd);
	/* not the process the observer saw born (a reused pid): not ours */
	if (!born || born + 20000000ULL < fork_ns ||
	    born > fork_ns + 20000000ULL)
		return 0;
	if (rel) {
		LG_AUTOCLOSE int fd =
			openat(dirfd, "cgroup", O_RDONLY | O_CLOEXEC);
		LG_AUTOFCLOSE FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;
		size_t n = strlen(rel);

		if (f)
			(void)lg_steal_fd(&fd); /* f's to close */
		while (f && fgets(line, sizeof(line), f))
			if (strncmp(line, "0::", 3) == 0 &&
			    strncmp(line + 3, rel, n) == 0 &&
			    (line[3 + n] == '/' || line[3 + n] == '\n'))
				return 0; /* in the leaf: the cgroup's to kill */
	}
	lg_warn("pid %d left the session's cgroup: killing it by pid", pid);
	syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0);
	{
		/* a pidfd is readable once its process has exited */
		struct pollfd pfd = { pidfd, POLLIN, 0 };

		return poll(&pfd, 1, 200) == 1 ? -1 : 1;
	}
}
