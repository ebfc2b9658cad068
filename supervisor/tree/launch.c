// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/sched.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <net/if.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "cgroup.h"
#include "lib/cleanup.h"
#include "lib/fdpass.h"
#include "lib/procmem.h"
#include "seccomp/filter.h"
#include "launch.h"
#include "lib/log.h"

/* One notification received and answered: the launch's own exec goes on. */
static void continue_one(int fd)
{
	struct seccomp_notif_sizes sz = { 0 };
	union {
		struct seccomp_notif n;
		char room[512];
	} req;
	union {
		struct seccomp_notif_resp r;
		char room[512];
	} resp;

	if (syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sz) == 0 &&
	    (sz.seccomp_notif > sizeof(req) ||
	     sz.seccomp_notif_resp > sizeof(resp)))
		return;
	memset(&req, 0, sizeof(req));
	if (ioctl(fd, SECCOMP_IOCTL_NOTIF_RECV, &req) < 0)
		return;
	memset(&resp, 0, sizeof(resp));
	resp.r.id = req.n.id;
	if (lg_filter_classify(req.n.data.arch, req.n.data.nr) ==
		    LG_SYS_EXECVE ||
	    lg_filter_classify(req.n.data.arch, req.n.data.nr) ==
		    LG_SYS_EXECVEAT)
		resp.r.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
	else /* never let anything else through unjudged */
		resp.r.error = -EPERM;
	ioctl(fd, SECCOMP_IOCTL_NOTIF_SEND, &resp);
}

static int recv_fd(int sock, int *fd, char *tag)
{
	ssize_t r;

	do
		r = lg_recv_fd(sock, tag, 1, fd, 0);
	while (r == -EINTR);
	if (r <= 0)
		return r < 0 ? (int)r : -EPIPE;
	return *fd >= 0 ? 0 : -EPROTO;
}

/* Child side, between fork and exec: async-signal-safe calls only. */
/* The fd limit lgrun was started with, which the command gets back. */
static struct rlimit orig_nofile;
static bool nofile_raised;
static int stdio_w[2] = { -1, -1 }; /* --watch-output: pipes for 1 and 2 */

/* --watch-output on a terminal: the pty's slave, and what it stands for */
static const char *protect_paths[4]; /* lgrun's state, read-only inside */
static size_t nprotect;
static bool isolation; /* lg_launch_isolate() */
static uint16_t seal_port; /* lg_launch_seal() */
static const char *cgroup_mnt, *cgroup_leaf; /* the leaf bound over mnt */
static int pty_slave = -1;
static bool pty_in, pty_err;

void lg_launch_set_stdio(int out_w, int err_w)
{
	stdio_w[0] = out_w;
	stdio_w[1] = err_w;
}

void lg_launch_set_pty(int slave, bool in, bool err)
{
	pty_slave = slave;
	pty_in = in;
	pty_err = err;
}

void lg_launch_raise_nofile(void)
{
	struct rlimit r;

	/* one connection per shimmed process: many processes, many fds */
	if (getrlimit(RLIMIT_NOFILE, &orig_nofile) < 0)
		return;
	r = orig_nofile;
	r.rlim_cur = r.rlim_max < 65536 ? r.rlim_max : 65536;
	if (r.rlim_cur > orig_nofile.rlim_cur &&
	    setrlimit(RLIMIT_NOFILE, &r) == 0)
		nofile_raised = true;
}

void lg_launch_seal(uint16_t port)
{
	seal_port = port;
}

/*
 * In the child: a network namespace of its own, loopback up, and the
 * proxy's listening socket there. The fd, or -errno.
 */
static int seal(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_port = htons(seal_port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct ifreq ifr;

	if (unshare(CLONE_NEWNET) < 0)
		return -errno;
	{
		LG_AUTOCLOSE int s =
			socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

		if (s < 0)
			return -errno;
		memset(&ifr, 0, sizeof(ifr));
		strcpy(ifr.ifr_name, "lo");
		if (ioctl(s, SIOCGIFFLAGS, &ifr) < 0)
			return -errno;
		ifr.ifr_flags |= IFF_UP;
		if (ioctl(s, SIOCSIFFLAGS, &ifr) < 0)
			return -errno;
	}
	LG_AUTOCLOSE int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -errno;
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    listen(fd, 128) < 0)
		return -errno;
	return lg_steal_fd(&fd);
}

void lg_launch_isolate(bool on)
{
	isolation = on;
}

void lg_launch_protect(const char *path)
{
	if (path && path[0] == '/' &&
	    nprotect < sizeof(protect_paths) / sizeof(protect_paths[0]))
		protect_paths[nprotect++] = path;
}

/*
 * The tree's own view, when we may make one (root): lgrun's state
 * read-only in a mount namespace of its own (no rename, truncation,
 * append, chattr or link there, by root either), and a cgroup namespace
 * whose cgroup2 mount is rooted at the session's leaf, so no process can
 * name a cgroup outside it to move to.
 * Mounts made outside still reach the tree (a slave of ours). Best effort:
 * what took effect is reported in bits (1 mounts, 2 cgroup).
 */
static int isolate(bool born_in_leaf)
{
	bool cgns = born_in_leaf && cgroup_mnt && cgroup_leaf &&
		    unshare(CLONE_NEWCGROUP) == 0;
	int done = 0;

	if (unshare(CLONE_NEWNS) < 0)
		return 0;
	if (mount(NULL, "/", NULL, MS_SLAVE | MS_REC, NULL) < 0)
		return 0;
	/*
	 * Without nsdelegate the namespace alone does not stop a move: the
	 * cgroup tree the tree sees must be rooted at the leaf. A fresh
	 * cgroup2 mount would be, but the kernel refuses one over its own
	 * superblock; the leaf bound over the mount point is the same view.
	 */
	if (cgns && mount(cgroup_leaf, cgroup_mnt, NULL, MS_BIND, NULL) == 0)
		done |= 2;
	for (size_t i = 0; i < nprotect; i++) {
		struct mount_attr attr = { .attr_set = MOUNT_ATTR_RDONLY };

		if (mount(protect_paths[i], protect_paths[i], NULL,
			  MS_BIND | MS_REC, NULL) < 0)
			return done;
		if (mount_setattr(AT_FDCWD, protect_paths[i], AT_RECURSIVE,
				  &attr, sizeof(attr)) < 0 &&
		    mount(NULL, protect_paths[i], NULL,
			  MS_BIND | MS_REMOUNT | MS_RDONLY, NULL) < 0)
			return done;
	}
	return done | 1;
}

/* Between fork and exec: the parent hears why the launch failed (e). */
static void __attribute__((noreturn)) child_fail(int sock, int e)
{
	char tag = 'E';
	struct iovec iov[2] = { { &tag, 1 }, { &e, sizeof(e) } };
	struct msghdr msg = { .msg_iov = iov, .msg_iovlen = 2 };

	if (!e)
		e = EINVAL;
	if (sendmsg(sock, &msg, MSG_NOSIGNAL) < 0) {
		/* nothing left to try */
	}
	_exit(125);
}

static void __attribute__((noreturn))
child(int sock, pid_t parent, char *const argv[], char *const envp[],
      const char *file, const struct lg_bpf *filter, bool born_in_leaf)
{
	sigset_t none;
	char go;
	int nfd, e, iso, sfd = -1;

	/* Die with the supervisor; if it is already gone, do not run. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(125);
	if (pty_slave >= 0) {
		/* a session of its own, the pty its controlling terminal */
		if (setsid() < 0 || ioctl(pty_slave, TIOCSCTTY, 0) < 0 ||
		    dup2(pty_slave, STDOUT_FILENO) < 0 ||
		    (pty_in && dup2(pty_slave, STDIN_FILENO) < 0) ||
		    (pty_err && dup2(pty_slave, STDERR_FILENO) < 0))
			_exit(125);
	} else {
		setpgid(0, 0);
	}
	if (nofile_raised) /* the command sees the limit its caller set */
		setrlimit(RLIMIT_NOFILE, &orig_nofile);
	if (stdio_w[0] >= 0 && pty_slave < 0 &&
	    dup2(stdio_w[0], STDOUT_FILENO) < 0)
		_exit(125);
	if (stdio_w[1] >= 0 && !(pty_slave >= 0 && pty_err) &&
	    dup2(stdio_w[1], STDERR_FILENO) < 0)
		_exit(125);
	/*
	 * Signals blocked for the parent's signalfd must not stay blocked.
	 * Handlers need no reset: exec does it; what lgrun's caller ignored
	 * stays ignored, as a shell would leave it.
	 */
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);

	iso = isolation && geteuid() == 0 ? isolate(born_in_leaf) : 0;
	if (seal_port) {
		sfd = seal();
		if (sfd < 0)
			child_fail(sock, -sfd);
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		child_fail(sock, errno);
	nfd = lg_filter_load(filter);
	if (nfd < 0)
		child_fail(sock, -nfd);
	if (lg_send_fd(sock, nfd, "F", 1) < 0 ||
	    write(sock, &iso, sizeof(iso)) != sizeof(iso) ||
	    (sfd >= 0 && lg_send_fd(sock, sfd, "F", 1) < 0))
		child_fail(sock, errno);
	if (sfd >= 0)
		close(sfd);
	close(nfd);
	/* Wait until the parent holds the listener and has set us up. */
	if (read(sock, &go, 1) != 1 || go != 'G')
		_exit(125);
	/* the file found before the fork; what fails there, execvpe decides */
	if (file)
		execve(file, argv, envp);
	execvpe(argv[0], argv, envp);
	e = errno;
	if (write(sock, &e, sizeof(e)) < 0) {
		/* the parent sees EOF and reports a generic failure */
	}
	_exit(e == ENOENT ? 127 : 126);
}

static pid_t spawn(struct lg_cgroup *cg, bool *in_cgroup)
{
	pid_t pid;

	*in_cgroup = false;
	if (cg && cg->ok) {
		/* No window outside the cgroup: the child is born inside. */
		struct clone_args args = { 0 };

		args.flags = CLONE_INTO_CGROUP;
		args.exit_signal = SIGCHLD;
		args.cgroup = (uint64_t)cg->dirfd;
		pid = (pid_t)syscall(SYS_clone3, &args, sizeof(args));
		if (pid >= 0) {
			*in_cgroup = true;
			return pid;
		}
		lg_dbg("clone3(CLONE_INTO_CGROUP): %s; using fork",
		       strerror(errno));
	}
	pid = fork();
	if (pid > 0 && cg && cg->ok)
		*in_cgroup = lg_cgroup_add(cg, pid) == 0;
	return pid;
}

/*
 * What the child sends once set up: the seccomp listener, whether it
 * isolated itself, the sealed network's listener (with seal_port). On a
 * failure, said, the child is killed and reaped.
 */
static int receive_setup(struct lg_child *c, int ours)
{
	char tag = 0;
	int r, e;

	r = recv_fd(ours, &c->notify_fd, &tag);
	if (r < 0 || tag != 'F') {
		/* The child could not set up; it sent an errno after 'E'. */
		if (tag == 'E' && read(ours, &e, sizeof(e)) == sizeof(e))
			r = -e;
		else if (r >= 0)
			r = -EPROTO;
		lg_err("cannot set up the seccomp filter%s in the child: %s%s",
		       seal_port ? " or seal its network" : "", strerror(-r),
		       r == -EINVAL || r == -EACCES ?
			       " (the kernel needs CONFIG_SECCOMP_FILTER and user notification, Linux 5.5 or later)" :
			       "");
		kill(c->pid, SIGKILL);
		waitpid(c->pid, NULL, 0);
		return r;
	}
	if (read(ours, &c->isolated, sizeof(c->isolated)) !=
	    sizeof(c->isolated))
		c->isolated = 0;
	if (seal_port &&
	    (recv_fd(ours, &c->sealed_fd, &tag) < 0 || tag != 'F')) {
		lg_err("cannot seal the network: the tree's listener did not come");
		kill(c->pid, SIGKILL);
		waitpid(c->pid, NULL, 0);
		return -EPROTO;
	}
	return 0;
}

/* Interactive agents keep the terminal: their group gets it. */
static void hand_terminal(struct lg_child *c)
{
	struct sigaction ign = { .sa_handler = SIG_IGN }, old;

	if ((pty_slave >= 0 && pty_in) || !isatty(STDIN_FILENO) ||
	    tcgetpgrp(STDIN_FILENO) != getpgrp())
		return;
	sigaction(SIGTTOU, &ign, &old);
	if (tcsetpgrp(STDIN_FILENO, c->pid) == 0) {
		c->tty_fd = STDIN_FILENO;
		c->our_pgrp = getpgrp();
	}
	sigaction(SIGTTOU, &old, NULL);
}

/* A file we may execute: what execve would not refuse for its kind. */
static bool executable(const char *file)
{
	struct stat st;

	return stat(file, &st) == 0 && S_ISREG(st.st_mode) &&
	       faccessat(AT_FDCWD, file, X_OK, AT_EACCESS) == 0;
}

int lg_launch_which(const char *cmd, char *out, size_t size)
{
	const char *path = getenv("PATH");

	if (!*cmd)
		return -ENOENT;
	if (strchr(cmd, '/'))
		return snprintf(out, size, "%s", cmd) < (int)size ?
			       0 :
			       -ENAMETOOLONG;
	for (const char *p = path; p;) {
		const char *e = strchr(p, ':');
		size_t n = e ? (size_t)(e - p) : strlen(p);

		/* an empty entry is the current directory, as for execvp */
		if (snprintf(out, size, "%.*s%s%s", (int)n, p, n ? "/" : "",
			     cmd) < (int)size &&
		    executable(out))
			return 0;
		p = e ? e + 1 : NULL;
	}
	return -ENOENT;
}

/*
 * EOF: exec succeeded (close-on-exec), false. An int: exec's errno, into
 * err, true. The exec itself may leave the kernel (LG_SC_EXEC) before
 * the notify thread runs: it is let through here, or both would wait
 * forever.
 */
static bool exec_failed(struct lg_child *c, int ours, int *err)
{
	ssize_t n;

	do {
		struct pollfd pf[2] = { { ours, POLLIN, 0 },
					{ c->notify_fd, POLLIN, 0 } };

		n = -1;
		errno = EINTR;
		if (poll(pf, 2, -1) < 0)
			continue;
		/*
		 * The status first: once the exec is done (EOF) every
		 * notification is the new program's, the notify thread's to
		 * judge. Before it, the only one can be the exec itself.
		 */
		if (!(pf[0].revents & (POLLIN | POLLHUP)) &&
		    (pf[1].revents & POLLIN)) {
			continue_one(c->notify_fd);
			continue;
		}
		n = read(ours, err, sizeof(*err));
	} while (n < 0 && errno == EINTR);
	return n == sizeof(*err);
}

/* Bytes the child, a fork of ours, holds at the same address. */
static const char probe_bytes[] = "lgrun: can the tree's memory be read?";

/*
 * How the tree's syscall arguments will be read (lg_procmem_probe), tried
 * on the child before it runs anything of the command. Neither way: the
 * launch fails, said once, since every write of the tree would be refused.
 */
static int probe_memory(struct lg_child *c)
{
	struct lg_procmem_probe why;

	c->args_way = lg_procmem_probe(c->pid, probe_bytes, sizeof(probe_bytes),
				       &why);
	c->args_vm_err = why.vm_err;
	if (c->args_way != LG_PROCMEM_NONE)
		return 0;
	lg_err("cannot read the memory of the processes it supervises (process_vm_readv: %s; /proc/PID/mem: %s), so every file write and removal of the command would be refused: not starting. %s",
	       strerror(-why.vm_err), strerror(-why.file_err),
	       lg_procmem_hint(&why));
	kill(c->pid, SIGKILL);
	waitpid(c->pid, NULL, 0);
	return -EPERM;
}

int lg_launch(struct lg_child *c, char *const argv[], char *const envp[],
	      const struct lg_bpf *filter, struct lg_cgroup *cg,
	      int *exec_errno)
{
	pid_t parent = getpid();
	int sv[2], r, e;
	LG_AUTOCLOSE int ours = -1; /* our end of the hand-off */
	char found[PATH_MAX];
	const char *file = NULL;

	/*
	 * A name on PATH is found here, by stat: execvpe tries an exec per
	 * entry, and with execs trapped (LG_SC_EXEC) each miss would be a
	 * notification before the command even starts.
	 */
	if (!strchr(argv[0], '/') &&
	    lg_launch_which(argv[0], found, sizeof(found)) == 0)
		file = found;
	memset(c, 0, sizeof(*c));
	c->notify_fd = -1;
	c->sealed_fd = -1;
	c->tty_fd = -1;
	*exec_errno = 0;
	/* Made before the fork, so the hand-off never needs a notified call. */
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return -errno;
	cgroup_mnt = cg && cg->ok && cg->mnt[0] ? cg->mnt : NULL;
	cgroup_leaf = cg && cg->ok ? cg->path : NULL;
	c->pid = spawn(cg, &c->in_cgroup);
	if (c->pid == 0) {
		close(sv[0]);
		child(sv[1], parent, argv, envp, file, filter, c->in_cgroup);
	}
	r = -errno;
	ours = sv[0];
	close(sv[1]);
	if (c->pid < 0)
		return r;
	if (pty_slave < 0)
		setpgid(c->pid, c->pid); /* both sides: no race with exec */
	r = receive_setup(c, ours);
	if (r < 0)
		return r;
	r = probe_memory(c);
	if (r < 0)
		return r;
	hand_terminal(c);
	if (write(ours, "G", 1) != 1)
		return -errno;
	if (exec_failed(c, ours, &e)) {
		*exec_errno = e;
		waitpid(c->pid, NULL, 0);
		lg_launch_restore_tty(c);
		return -e;
	}
	return 0;
}

void lg_launch_restore_tty(struct lg_child *c)
{
	struct sigaction ign = { .sa_handler = SIG_IGN }, old;

	if (c->tty_fd < 0)
		return;
	sigaction(SIGTTOU, &ign, &old);
	tcsetpgrp(c->tty_fd, c->our_pgrp);
	sigaction(SIGTTOU, &old, NULL);
	c->tty_fd = -1;
}
