// SPDX-License-Identifier: MIT
/*
 * lgctl doctor: what lgrun can do on this host (or in this container) for
 * this user, one line a layer: ok, degraded (what is lost) or missing,
 * with the one change that fixes it. Then a canary session in a temporary
 * folder: a delete loop of five files that lgrun must stop at the third
 * and lgctl restore must put back. Exit 0 when lgrun protects here, 1 with
 * the reason when it cannot, 2 on a usage error.
 *
 * Each probe does what lgrun itself does, in a throwaway child where it
 * changes the process (a seccomp filter, a namespace).
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <linux/bpf.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lgctl.h"
#include "lib/caps.h"
#include "lib/cleanup.h"
#include "lib/error.h"
#include "lib/libdir.h"
#include "lib/procmem.h"
#include "lib/termtext.h"
#include "seccomp/filter.h"
#include "store/state.h"
#include "tree/cgroup.h"

enum state { OK, DEGRADED, MISSING, INFO };

static const char *const state_word[] = {
	[OK] = "ok",
	[DEGRADED] = "degraded",
	[MISSING] = "missing",
	[INFO] = "info",
};

struct doctor {
	bool container; /* /.dockerenv, /run/.containerenv */
	bool root;
	bool quiet; /* --quiet: the verdict only */
	int missing; /* layers lgrun cannot protect without */
	int degraded;
	char lost[512]; /* what the degraded layers lose, for the verdict */
};

static void say(struct doctor *d, enum state st, const char *layer,
		const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void say(struct doctor *d, enum state st, const char *layer,
		const char *fmt, ...)
{
	char text[1536], safe[3072];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	if (st == DEGRADED) {
		size_t n = strlen(d->lost);

		d->degraded++;
		snprintf(d->lost + n, sizeof(d->lost) - n, "%s%s",
			 n ? ", " : "", layer);
	}
	if (st == MISSING)
		d->missing++;
	if (d->quiet)
		return;
	lg_term_escape(safe, sizeof(safe), text, strlen(text));
	printf("  %-9s %s: %s\n", state_word[st], layer, safe);
}

/* A child that runs fn and reports an int back; -errno if it could not. */
static int in_child(int (*fn)(void *), void *arg)
{
	int p[2], r = -EIO, status;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	pid = fork();
	if (pid < 0) {
		r = -errno;
		close(p[0]);
		close(p[1]);
		return r;
	}
	if (pid == 0) {
		close(p[0]);
		r = fn(arg);
		if (write(p[1], &r, sizeof(r)) != sizeof(r))
			_exit(1);
		_exit(0);
	}
	close(p[1]);
	if (read(p[0], &r, sizeof(r)) != sizeof(r))
		r = -EIO;
	close(p[0]);
	waitpid(pid, &status, 0);
	return r;
}

/*
 * seccomp: a filter with a listener, as lgrun's child loads it (an allow-
 * all program: the listener is what is asked), then the sync wake-up.
 * 0: both; 1: the listener only; -errno: no listener.
 */
static int seccomp_child(void *arg)
{
	struct sock_filter allow[] = { BPF_STMT(BPF_RET | BPF_K,
						SECCOMP_RET_ALLOW) };
	struct sock_fprog prog = { 1, allow };
	int fd;

	(void)arg;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -errno;
	fd = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
			  SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
	if (fd < 0)
		return -errno;
	return ioctl(fd, SECCOMP_IOCTL_NOTIF_SET_FLAGS,
		     SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP, 0) == 0 ?
		       0 :
		       1;
}

static bool check_seccomp(struct doctor *d)
{
	int r = in_child(seccomp_child, NULL);

	if (r == 0) {
		say(d, OK, "seccomp user notification",
		    "a filter with a listener loads, with the sync wake-up flag");
		return true;
	}
	if (r == 1) {
		say(d, OK, "seccomp user notification",
		    "a filter with a listener loads; no sync wake-up (Linux 6.6 or later adds it: each notified call takes a little longer)");
		return true;
	}
	say(d, MISSING, "seccomp user notification",
	    "a filter with a listener was refused (%s): lgrun cannot see the tree's file syscalls. Fix: %s",
	    strerror(-r),
	    r == -EINVAL || r == -ENOSYS ?
		    "a kernel with CONFIG_SECCOMP_FILTER, Linux 5.5 or later" :
	    d->container ?
		    "the container's seccomp profile must allow seccomp(2) (Docker's default does; a custom profile or --security-opt no-new-privileges=false with an old runtime may not)" :
		    "allow seccomp(2) in the security policy that refuses it");
	return false;
}

/* Bytes a forked child holds at the same address (the memory probe). */
static const char probe_bytes[] = "lgctl doctor: can a child's memory be read?";

/*
 * The arguments: read the way lgrun reads them (lg_procmem_probe), from a
 * child that waits; its directory, taken through pidfd_getfd or /proc.
 */
static bool check_memory(struct doctor *d)
{
	struct lg_procmem_probe why;
	enum lg_procmem_way way;
	int p[2], dirfd, pidfd, getfd_err = 0;
	char dirlink[64], target[PATH_MAX];
	bool proc_dir = false;
	pid_t pid;

	dirfd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0 || pipe2(p, O_CLOEXEC) < 0) {
		say(d, MISSING, "reading the syscalls' arguments",
		    "cannot set up the probe: %s", strerror(errno));
		return false;
	}
	pid = fork();
	if (pid == 0) {
		char c;

		close(p[1]);
		while (read(p[0], &c, 1) < 0 && errno == EINTR)
			;
		_exit(0);
	}
	close(p[0]);
	if (pid < 0) {
		say(d, MISSING, "reading the syscalls' arguments",
		    "cannot fork: %s", strerror(errno));
		close(p[1]);
		close(dirfd);
		return false;
	}
	way = lg_procmem_probe(pid, probe_bytes, sizeof(probe_bytes), &why);
	pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (pidfd >= 0) {
		int fd = (int)syscall(SYS_pidfd_getfd, pidfd, dirfd, 0);

		getfd_err = fd < 0 ? -errno : 0;
		if (fd >= 0)
			close(fd);
		close(pidfd);
	} else {
		getfd_err = -errno;
	}
	snprintf(dirlink, sizeof(dirlink), "/proc/%d/fd/%d", (int)pid, dirfd);
	proc_dir = readlink(dirlink, target, sizeof(target)) > 0;
	close(p[1]);
	waitpid(pid, NULL, 0);
	close(dirfd);

	if (way == LG_PROCMEM_VM)
		say(d, OK, "reading the syscalls' arguments",
		    "process_vm_readv");
	else if (way == LG_PROCMEM_FILE)
		say(d, DEGRADED, "reading the syscalls' arguments",
		    "through /proc/PID/mem, since %s%s: an open and a close more at each notified call (make bench measures it), and a path on a userfaultfd page nobody serves fails with EFAULT instead of waiting. Fix: %s",
		    why.vm_err == -ENOTSUP ? "LGRUN_ARGS_VIA=proc asks for it" :
					     "process_vm_readv was refused: ",
		    why.vm_err == -ENOTSUP ? "" : strerror(-why.vm_err),
		    d->container ?
			    "docker run --cap-add SYS_PTRACE" :
			    "allow process_vm_readv in the seccomp profile lgctl runs under");
	else
		say(d, MISSING, "reading the syscalls' arguments",
		    "neither process_vm_readv (%s) nor /proc/PID/mem (%s) reads a child's memory: lgrun refuses to start. Fix: %s",
		    strerror(-why.vm_err), strerror(-why.file_err),
		    lg_procmem_hint(&why));
	if (way == LG_PROCMEM_NONE)
		return false;
	if (getfd_err == 0)
		say(d, OK, "the calls' directories", "pidfd_getfd");
	else if (proc_dir)
		say(d, OK, "the calls' directories",
		    "through /proc/PID/fd/N, since pidfd_getfd was refused (%s): validated the same way, a lookup more per call",
		    strerror(-getfd_err));
	else {
		say(d, MISSING, "the calls' directories",
		    "neither pidfd_getfd (%s) nor /proc/PID/fd/N names a child's directory: calls relative to a directory are refused. Fix: mount /proc, or add CAP_SYS_PTRACE",
		    strerror(-getfd_err));
		return false;
	}
	return true;
}

static void check_cgroup(struct doctor *d)
{
	struct lg_cgroup cg;
	char name[64];

	snprintf(name, sizeof(name), "lgrun-doctor-%d", (int)getpid());
	lg_cgroup_create(&cg, name);
	if (cg.ok) {
		say(d, OK, "killing the tree",
		    "cgroup v2 with cgroup.kill: each session gets a leaf, killed at once with every process in it");
		lg_cgroup_destroy(&cg);
		return;
	}
	say(d, DEGRADED, "killing the tree",
	    "no cgroup of its own (%s): the tree is killed by walking lgrun's descendants, again and again until none is left; a process that leaves the tree's lineage (setsid and a re-parent to another reaper) escapes it. Fix: %s",
	    cg.why,
	    d->container ?
		    "a cgroup v2 hierarchy the container may write (docs/containers.md says which ways, and what each exposes)" :
	    d->root ?
		    "a cgroup v2 mount (systemd.unified_cgroup_hierarchy=1, or mount -t cgroup2 none /sys/fs/cgroup/unified)" :
		    "a delegated cgroup (systemd-run --user -p Delegate=yes --shell), or run lgrun as root");
}

static void check_bpf(struct doctor *d)
{
	char lib[PATH_MAX];
	union bpf_attr attr;
	int fd;

	if (!lg_libdir_file("liblgbpf.so", lib, sizeof(lib))) {
		say(d, DEGRADED, "eBPF observer",
		    "this lgrun was built without it (no liblgbpf.so: the build machine's kernel had no BTF): no kernel-side lineage, connects or work counters. Fix: build lgrun where /sys/kernel/btf/vmlinux exists");
		return;
	}
	if (!lg_may_load_bpf()) {
		say(d, DEGRADED, "eBPF observer",
		    "lgrun would run without CAP_SYS_ADMIN, or CAP_BPF with CAP_PERFMON: no kernel-side lineage, connects or work counters; the seccomp filter and the shim still see every destructive call. Fix: %s",
		    d->container && d->root ?
			    "docker run --cap-add SYS_ADMIN (Docker 20.10 knows no CAP_BPF, and its profile allows bpf(2) only with SYS_ADMIN)" :
		    d->container ?
			    "run lgrun as root in the container, with docker run --cap-add SYS_ADMIN (a plain user gets no capability)" :
			    "run lgrun as root");
		return;
	}
	memset(&attr, 0, sizeof(attr));
	attr.map_type = BPF_MAP_TYPE_ARRAY;
	attr.key_size = 4;
	attr.value_size = 4;
	attr.max_entries = 1;
	fd = (int)syscall(SYS_bpf, BPF_MAP_CREATE, &attr, sizeof(attr));
	if (fd < 0) {
		say(d, DEGRADED, "eBPF observer",
		    "bpf(2) was refused (%s): no kernel-side lineage, connects or work counters. Fix: %s",
		    strerror(errno),
		    d->container ?
			    "a seccomp profile that allows bpf(2) (Docker allows it with --cap-add SYS_ADMIN)" :
			    "kernel.unprivileged_bpf_disabled and the security module must let lgrun's user load programs");
		return;
	}
	close(fd);
	say(d, OK, "eBPF observer",
	    "bpf(2) answers, with the capabilities it needs (whether the programs load, lgrun -v says at a session's start)");
}

static int unshare_child(void *arg)
{
	return unshare((int)(intptr_t)arg) < 0 ? -errno : 0;
}

static int read_sysctl(const char *path)
{
	char v[16];
	LG_AUTOFCLOSE FILE *f = fopen(path, "re");

	if (!f || !fgets(v, sizeof(v), f))
		return -1;
	return atoi(v);
}

static void check_namespaces(struct doctor *d)
{
	int r, aa;

	if (d->root) {
		r = in_child(unshare_child, (void *)(intptr_t)CLONE_NEWNS);
		if (r == 0)
			say(d, OK, "mount namespace",
			    "lgrun's state dir is read-only in the tree's view, for root processes too");
		else
			say(d, DEGRADED, "mount namespace",
			    "refused (%s): lgrun's state dir is guarded by the seccomp filter only, and a root process of the tree could remount or rename around it. Fix: %s",
			    strerror(-r),
			    d->container ?
				    "docker run --cap-add SYS_ADMIN (the default profile refuses unshare(2) without it)" :
				    "allow unshare(CLONE_NEWNS) to root");
	} else {
		say(d, DEGRADED, "mount namespace",
		    "lgrun uses one only when it runs as root: the state dir is guarded by the seccomp filter and its owner's permissions. Fix: run lgrun as root");
	}
	r = in_child(unshare_child, (void *)(intptr_t)CLONE_NEWUSER);
	aa = read_sysctl(
		"/proc/sys/kernel/apparmor_restrict_unprivileged_userns");
	if (r == 0)
		say(d, INFO, "user namespaces",
		    "available to this user (lgrun does not need them)");
	else
		say(d, INFO, "user namespaces",
		    "refused (%s)%s; lgrun does not need them", strerror(-r),
		    aa == 1 ?
			    ", by AppArmor's kernel.apparmor_restrict_unprivileged_userns = 1 (Ubuntu 23.10 and later)" :
		    d->container ? ", by the container's seccomp profile" :
				   "");
}

/* The shim, preloaded into a test program: mapped into it, or why not. */
static void check_preload(struct doctor *d, const char *shim)
{
	char line[PATH_MAX + 128];
	bool mapped = false, refused = false;
	int p[2];
	pid_t pid;
	FILE *f;

	if (access("/bin/cat", X_OK) < 0) {
		say(d, INFO, "LD_PRELOAD shim", "no /bin/cat to try it on");
		return;
	}
	if (pipe2(p, O_CLOEXEC) < 0 || (pid = fork()) < 0) {
		say(d, INFO, "LD_PRELOAD shim", "cannot try it: %s",
		    strerror(errno));
		return;
	}
	if (pid == 0) {
		/* the shim finds no session here: it only loads */
		dup2(p[1], STDOUT_FILENO);
		dup2(p[1], STDERR_FILENO);
		unsetenv("LGRUN_SOCK");
		setenv("LD_PRELOAD", shim, 1);
		execl("/bin/cat", "cat", "/proc/self/maps", (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	f = fdopen(p[0], "re");
	while (f && fgets(line, sizeof(line), f)) {
		if (strstr(line, "liblgshim.so"))
			mapped = true;
		if (strstr(line, "cannot be preloaded"))
			refused = true;
	}
	if (f)
		fclose(f);
	else
		close(p[0]);
	waitpid(pid, NULL, 0);
	if (mapped)
		say(d, OK, "LD_PRELOAD shim",
		    "%s is loaded into a test program (tool calls on plaintext channels are seen; static and setuid programs are seen by seccomp and eBPF only)",
		    shim);
	else
		say(d, DEGRADED, "LD_PRELOAD shim",
		    "%s was not loaded into a test program%s: tool calls on pipes and loopback sockets are not seen (the model proxy still sees the model's). Fix: reinstall lgrun, and check that nothing clears LD_PRELOAD",
		    shim, refused ? " (the loader refused it)" : "");
}

/* One of lgrun's libraries, loaded with its dependencies; why not. */
static bool lib_loads(const char *name, char *why, size_t size)
{
	char lib[PATH_MAX];
	const char *e;
	void *h;

	if (!lg_libdir_file(name, lib, sizeof(lib))) {
		snprintf(why, size, "no %s next to lgrun", name);
		return false;
	}
	h = dlopen(lib, RTLD_LAZY | RTLD_LOCAL);
	if (!h) {
		e = dlerror();
		snprintf(why, size, "%s", e ? e : lib);
		return false;
	}
	dlclose(h);
	return true;
}

static void check_proxies(struct doctor *d)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	char why[PATH_MAX + 128];
	LG_AUTOCLOSE int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    listen(s, 1) < 0) {
		say(d, DEGRADED, "model proxy",
		    "cannot listen on 127.0.0.1 (%s): the model's turns, tool calls and tokens are not seen. Fix: a loopback interface (docker run without --network none, or ip link set lo up)",
		    strerror(errno));
		return;
	}
	if (!lib_loads("liblgproxy.so", why, sizeof(why))) {
		say(d, DEGRADED, "model proxy",
		    "its library does not load (%s): the model's traffic is not seen. Fix: reinstall lgrun with its dependencies (libmicrohttpd, libcurl, libwslay, libzstd)",
		    why);
		return;
	}
	say(d, OK, "model proxy",
	    "listens on 127.0.0.1; the agents' base URLs point at it");
	if (!lib_loads("liblgtls.so", why, sizeof(why))) {
		say(d, DEGRADED, "egress proxy and its CA",
		    "the TLS library does not load (%s): [llm] mode = proxy and a sealed network cannot start. Fix: reinstall lgrun with libssl3",
		    why);
		return;
	}
	say(d, OK, "egress proxy and its CA",
	    "the TLS library loads (a session CA is made per session, when asked for)");
}

static void check_state_dir(struct doctor *d, const char *dir)
{
	struct lg_error why;
	char fallback[64];
	struct stat st;
	int fd;

	if (!*dir) {
		say(d, MISSING, "state dir",
		    "none: no LGRUN_STATE_DIR, XDG_STATE_HOME or HOME. Fix: set LGRUN_STATE_DIR to a folder of this user's");
		return;
	}
	if (lg_state_dir_fallback(fallback, sizeof(fallback)) == 0 &&
	    strcmp(dir, fallback) == 0)
		say(d, INFO, "state dir",
		    "%s: no home this user may write (HOME=%s), so a private folder in /tmp, gone with the container or at reboot. Fix: set LGRUN_STATE_DIR to a folder of this user's that lasts",
		    dir, getenv("HOME") ? getenv("HOME") : "");
	/* lgrun's own check (store/strict.c), nothing made */
	fd = lg_state_open(dir, false, &why);
	if (fd == -ENOENT) {
		say(d, OK, "state dir",
		    "%s does not exist yet: lgrun makes it at its first session",
		    dir);
		return;
	}
	if (fd < 0 || lg_state_check_entries(fd, dir, NULL, &why) < 0) {
		say(d, MISSING, "state dir",
		    "lgrun refuses it: %s. Another user could plant what lgrun reads and writes there",
		    why.msg);
		if (fd >= 0)
			close(fd);
		return;
	}
	if (fstat(fd, &st) < 0) {
		close(fd);
		return;
	}
	close(fd);
	say(d, OK, "state dir", "%s, %s, mode %04o", dir,
	    st.st_uid == geteuid() ? "this user's" : "root's",
	    (unsigned)(st.st_mode & 07777));
}

/* Runs argv with stdout and stderr into log; its exit status, or -1. */
static int run(char *const argv[], const char *log)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (pid == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC,
			      0600);

		if (fd >= 0) {
			dup2(fd, STDOUT_FILENO);
			dup2(fd, STDERR_FILENO);
		}
		execv(argv[0], argv);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) < 0)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static int rm_entry(const char *p, const struct stat *st, int flag,
		    struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	remove(p);
	return 0;
}

/* The last line of a log, for a failure message. */
static void last_line(const char *log, char *out, size_t size)
{
	char line[512];
	LG_AUTOFCLOSE FILE *f = fopen(log, "re");

	snprintf(out, size, "(no output)");
	while (f && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (*line)
			snprintf(out, size, "%s", line);
	}
}

/*
 * The canary: lgrun (next to lgctl) runs `rm` of five files with the
 * built-in defaults and its own state dir; it must stop at the third, and
 * lgctl restore must put the first two back. true when both held.
 */
static bool canary(struct doctor *d)
{
	char tmpl[PATH_MAX], lgrun[PATH_MAX], self[PATH_MAX], f[PATH_MAX + 16];
	char ini[PATH_MAX + 16], state[PATH_MAX + 16], log[PATH_MAX + 16];
	char work[PATH_MAX + 16], last[512], *slash;
	const char *tmp = getenv("TMPDIR");
	bool ok = false;
	ssize_t n;
	int rc, gone = 0, back = 0;

	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0) {
		say(d, MISSING, "canary session",
		    "cannot find lgctl itself: %s", strerror(errno));
		return false;
	}
	self[n] = '\0';
	snprintf(lgrun, sizeof(lgrun), "%s", self);
	slash = strrchr(lgrun, '/');
	if (!slash || (size_t)(slash - lgrun) + 7 >= sizeof(lgrun)) {
		say(d, MISSING, "canary session",
		    "lgctl's path is too long: %s", self);
		return false;
	}
	strcpy(slash + 1, "lgrun");
	if (access(lgrun, X_OK) < 0) {
		say(d, MISSING, "canary session", "no lgrun next to lgctl (%s)",
		    lgrun);
		return false;
	}
	snprintf(tmpl, sizeof(tmpl), "%s/lgrun-doctor.XXXXXX",
		 tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(tmpl)) {
		say(d, MISSING, "canary session",
		    "cannot make a temporary folder in %s: %s (set TMPDIR)",
		    tmp && *tmp ? tmp : "/tmp", strerror(errno));
		return false;
	}
	snprintf(work, sizeof(work), "%s/work", tmpl);
	snprintf(state, sizeof(state), "%s/state", tmpl);
	snprintf(ini, sizeof(ini), "%s/lgrun.ini", tmpl);
	snprintf(log, sizeof(log), "%s/log", tmpl);
	mkdir(work, 0700);
	{
		LG_AUTOFCLOSE FILE *c = fopen(ini, "we");

		if (c)
			fputs("; lgctl doctor's canary: lgrun's built-in defaults\n",
			      c);
	}
	for (int i = 1; i <= 5; i++) {
		LG_AUTOFCLOSE FILE *c = NULL;

		snprintf(f, sizeof(f), "%s/f%d", work, i);
		c = fopen(f, "we");
		if (c)
			fprintf(c, "canary %d\n", i);
	}
	/*
	 * The files must be older than the session (born before its start):
	 * 20 ms is more than a filesystem's coarse clock tick.
	 */
	usleep(20000);
	{
		char *argv[] = { lgrun,
				 "--state-dir",
				 state,
				 "--config",
				 ini,
				 "--session",
				 "doctor-canary",
				 "--",
				 "/bin/sh",
				 "-c",
				 "cd \"$0\" && rm -f f1 f2 f3 f4 f5",
				 work,
				 NULL };

		rc = run(argv, log);
	}
	for (int i = 1; i <= 5; i++) {
		snprintf(f, sizeof(f), "%s/f%d", work, i);
		if (access(f, F_OK) < 0)
			gone++;
	}
	if (rc != 86 || gone != 2) {
		last_line(log, last, sizeof(last));
		say(d, MISSING, "canary session",
		    "a five-file delete loop under lgrun ended with status %d and %d file(s) removed, where lgrun stops it at the third (status 86, two removed): %s",
		    rc, gone, last);
		goto out;
	}
	{
		char *argv[] = { self,	    "--state-dir",   state,
				 "restore", "doctor-canary", NULL };

		rc = run(argv, log);
	}
	for (int i = 1; i <= 5; i++) {
		char want[32], got[32] = "";
		LG_AUTOFCLOSE FILE *c = NULL;

		snprintf(f, sizeof(f), "%s/f%d", work, i);
		snprintf(want, sizeof(want), "canary %d\n", i);
		c = fopen(f, "re");
		if (c && fgets(got, sizeof(got), c) && strcmp(got, want) == 0)
			back++;
	}
	if (rc != 0 || back != 5) {
		last_line(log, last, sizeof(last));
		say(d, MISSING, "canary session",
		    "the delete loop was stopped at the third file, but lgctl restore (status %d) left %d of the 5 files as they were: %s",
		    rc, back, last);
		goto out;
	}
	say(d, OK, "canary session",
	    "a five-file delete loop was stopped at the third file, and lgctl restore put the two removed back, byte for byte");
	ok = true;
out:
	nftw(tmpl, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	return ok;
}

/* What says this is a container, or NULL. */
static const char *in_container(void)
{
	char line[512];
	LG_AUTOFCLOSE FILE *f = NULL;

	if (access("/.dockerenv", F_OK) == 0)
		return "/.dockerenv";
	if (access("/run/.containerenv", F_OK) == 0)
		return "/run/.containerenv";
	f = fopen("/proc/1/cgroup", "re");
	while (f && fgets(line, sizeof(line), f))
		if (strstr(line, "/docker") || strstr(line, "/kubepods") ||
		    strstr(line, "/lxc"))
			return "/proc/1/cgroup";
	return NULL;
}

int lgctl_doctor(const char *dir, const struct lg_config *cfg, int argc,
		 char **argv)
{
	struct doctor d = { 0 };
	char shim[PATH_MAX];
	bool can = true, no_canary = false;
	const char *container;

	(void)cfg;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--no-canary") == 0)
			no_canary = true;
		else if (strcmp(argv[i], "--quiet") == 0 ||
			 strcmp(argv[i], "-q") == 0)
			d.quiet = true;
		else {
			fprintf(stderr,
				"lgctl: doctor takes --no-canary and --quiet, not '%s'\n",
				lgq_show(argv[i]));
			return 2;
		}
	}
	container = in_container();
	d.container = container != NULL;
	d.root = geteuid() == 0;
	if (!d.quiet)
		printf("lgctl doctor: what lgrun can do here (uid %u%s%s)\n",
		       (unsigned)geteuid(),
		       container ? ", in a container, says " : "",
		       container ? container : "");
	can &= check_seccomp(&d);
	can &= check_memory(&d);
	check_cgroup(&d);
	check_bpf(&d);
	check_namespaces(&d);
	if (lg_libdir_file("liblgshim.so", shim, sizeof(shim)))
		check_preload(&d, shim);
	else
		say(&d, DEGRADED, "LD_PRELOAD shim",
		    "no liblgshim.so next to lgrun: tool calls on pipes and loopback sockets are not seen. Fix: reinstall lgrun");
	check_proxies(&d);
	check_state_dir(&d, dir);
	if (getenv("LGRUN_SESSION") && getenv("LGRUN_SOCK"))
		say(&d, INFO, "canary session",
		    "not run: lgctl runs inside an lgrun session, whose guard would count the canary's deletes");
	else if (no_canary)
		say(&d, INFO, "canary session", "not run (--no-canary)");
	else if (can)
		can &= canary(&d);
	else
		say(&d, INFO, "canary session",
		    "not run: lgrun cannot start here");
	if (can && !d.missing)
		printf("verdict: lgrun protects here%s%s%s\n",
		       d.degraded ? " (degraded: " : "", d.lost,
		       d.degraded ? ")" : "");
	else
		printf("verdict: lgrun cannot protect here: %d layer(s) missing (see above)\n",
		       d.missing ? d.missing : 1);
	return can && !d.missing ? 0 : 1;
}
