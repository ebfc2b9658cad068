// SPDX-License-Identifier: MIT
/*
 * The floor of the rm-heavy row: notify_null CMD [ARGS...]
 *
 * Runs CMD under a seccomp user-notification filter on the syscalls lgrun
 * supervises (unlink, unlinkat, rmdir, truncate, ftruncate; x86_64 only) and
 * answers every notification with CONTINUE at once: no path read, no stat,
 * no decision. What lgrun costs beyond this is lgrun's own work per event;
 * this much is the mechanism (two context switches per syscall).
 * Like lgrun, a thread blocks in SECCOMP_IOCTL_NOTIF_RECV with
 * SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP set when the kernel has it.
 *
 * notify_null --read CMD...: the least any guard of removals must do before
 * it answers, and nothing more: the path argument read from the task
 * (process_vm_readv), the directory it is relative to taken from the task
 * (pidfd_getfd through a pidfd kept for the last pid; /proc/PID/cwd), the
 * notification checked still valid where no pidfd vouches for the reads,
 * and one statx of the target. No guard, no records, no display path.
 * notify_null --keep DIR CMD...: that, and the target's undo: a regular
 * file linked into DIR (on the target's file system) before the answer.
 * What lgrun costs beyond these is what it does besides the least.
 * Exit status: CMD's (128+N for a signal), 125 on a setup error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS SECCOMP_IOW(4, __u64)
#endif
#ifndef SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
#define SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (1UL << 0)
#endif

static atomic_bool done;
static int listener = -1;
static bool read_args; /* --read or --keep */
static int keep_dir = -1; /* --keep */
static unsigned long kept;

/*
 * The least a guard does: read the path, take its directory from the task,
 * stat the target; with keep_dir, link a regular file there. Mirrors
 * lgrun's cheapest way for each step, so what lgrun adds is what it
 * decides and records.
 */
static void least(const struct seccomp_notif *req)
{
	static pid_t last_pid;
	static int pidfd = -1;
	char path[4096], name[32];
	struct iovec local = { path, sizeof(path) - 1 }, remote;
	uint64_t addr;
	int dirarg = AT_FDCWD, dirfd = AT_FDCWD, owned = -1;
	bool vouched = false;
	struct statx st;
	ssize_t n;

	switch (req->data.nr) {
	case __NR_unlinkat:
		dirarg = (int)req->data.args[0];
		addr = req->data.args[1];
		break;
	case __NR_unlink:
	case __NR_rmdir:
	case __NR_truncate:
		addr = req->data.args[0];
		break;
	default:
		return; /* ftruncate: not in the rows that use this */
	}
	/* up to the end of the path's page, as lgrun's first read */
	remote.iov_base = (void *)(uintptr_t)addr;
	remote.iov_len = 4096 - (addr & 4095);
	if (remote.iov_len > sizeof(path) - 1)
		remote.iov_len = sizeof(path) - 1;
	local.iov_len = remote.iov_len;
	n = process_vm_readv((pid_t)req->pid, &local, 1, &remote, 1, 0);
	if (n <= 0)
		return;
	path[n] = '\0';
	if (path[0] != '/' && dirarg != AT_FDCWD) {
		if (last_pid != (pid_t)req->pid) {
			if (pidfd >= 0)
				close(pidfd);
			pidfd = (int)syscall(SYS_pidfd_open, req->pid, 0);
			last_pid = (pid_t)req->pid;
		} else {
			vouched = pidfd >= 0;
		}
		owned = (int)syscall(SYS_pidfd_getfd, pidfd, dirarg, 0);
		dirfd = owned;
	} else if (path[0] != '/') {
		char cwd[64];

		snprintf(cwd, sizeof(cwd), "/proc/%d/cwd", (int)req->pid);
		owned = open(cwd, O_PATH | O_DIRECTORY | O_CLOEXEC);
		dirfd = owned;
	}
	if (dirfd < 0 && dirfd != AT_FDCWD)
		return;
	if (!vouched)
		ioctl(listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &req->id);
	if (statx(dirfd, path, AT_SYMLINK_NOFOLLOW,
		  STATX_BASIC_STATS | STATX_BTIME, &st) == 0 &&
	    keep_dir >= 0 && S_ISREG(st.stx_mode)) {
		/* "k" and the count in hex, by hand: no printf on this path */
		unsigned long v = kept++;
		size_t i = sizeof(name) - 1;

		name[i] = '\0';
		do
			name[--i] = "0123456789abcdef"[v & 15];
		while ((v >>= 4) && i > 1);
		name[--i] = 'k';
		linkat(dirfd, path, keep_dir, name + i, 0);
	}
	if (owned >= 0)
		close(owned);
}

static int install_filter(void)
{
#define NOTIFY_IF(nr)                                    \
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1), \
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF)
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, nr)),
		NOTIFY_IF(__NR_unlink),
		NOTIFY_IF(__NR_unlinkat),
		NOTIFY_IF(__NR_rmdir),
		NOTIFY_IF(__NR_truncate),
		NOTIFY_IF(__NR_ftruncate),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof(f) / sizeof(f[0]), f };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -1;
	return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
			    SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
}

static int send_fd(int sock, int fd)
{
	char c = 'F';
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	struct iovec iov = { &c, 1 };
	struct msghdr m = { .msg_iov = &iov,
			    .msg_iovlen = 1,
			    .msg_control = cbuf,
			    .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm = CMSG_FIRSTHDR(&m);

	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	return sendmsg(sock, &m, 0) == 1 ? 0 : -1;
}

static int recv_fd(int sock)
{
	char c;
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	struct iovec iov = { &c, 1 };
	struct msghdr m = { .msg_iov = &iov,
			    .msg_iovlen = 1,
			    .msg_control = cbuf,
			    .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm;
	int fd;

	if (recvmsg(sock, &m, 0) != 1)
		return -1;
	cm = CMSG_FIRSTHDR(&m);
	if (!cm || cm->cmsg_type != SCM_RIGHTS)
		return -1;
	memcpy(&fd, CMSG_DATA(cm), sizeof(int));
	return fd;
}

static void *answer_loop(void *arg)
{
	struct seccomp_notif req;
	struct seccomp_notif_resp resp;

	(void)arg;
	for (;;) {
		memset(&req, 0, sizeof(req));
		if (ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, &req) < 0) {
			struct pollfd p = { listener, POLLIN, 0 };

			/*
			 * ENOENT: a target died before we read its request, or
			 * no filtered task is left (the fd then polls HUP and
			 * RECV fails at once forever: stop, do not spin).
			 */
			if (atomic_load(&done) ||
			    (poll(&p, 1, 0) == 1 && (p.revents & POLLHUP)))
				break;
			continue;
		}
		if (read_args)
			least(&req);
		memset(&resp, 0, sizeof(resp));
		resp.id = req.id;
		resp.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
		ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &resp);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int sv[2], st;
	pthread_t th;
	pid_t pid;

	for (; argc > 1 && argv[1][0] == '-' && argv[1][1] == '-';
	     argc--, argv++) {
		if (!strcmp(argv[1], "--read")) {
			read_args = true;
		} else if (!strcmp(argv[1], "--keep") && argc > 2) {
			read_args = true;
			keep_dir =
				open(argv[2], O_PATH | O_DIRECTORY | O_CLOEXEC);
			if (keep_dir < 0) {
				perror("notify_null: --keep");
				return 125;
			}
			argc--, argv++;
		} else {
			break;
		}
	}
	if (argc < 2) {
		fprintf(stderr,
			"usage: notify_null [--read | --keep DIR] CMD [ARGS...]\n");
		return 125;
	}
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return 125;
	pid = fork();
	if (pid < 0)
		return 125;
	if (pid == 0) {
		char go;
		int fd = install_filter();

		close(sv[0]);
		if (fd < 0 || send_fd(sv[1], fd) < 0) {
			perror("notify_null: seccomp");
			_exit(125);
		}
		close(fd);
		/* Wait until the supervisor holds the listener. */
		if (read(sv[1], &go, 1) != 1)
			_exit(125);
		execvp(argv[1], argv + 1);
		perror("notify_null: exec");
		_exit(127);
	}
	close(sv[1]);
	listener = recv_fd(sv[0]);
	if (listener < 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return 125;
	}
	/* EINVAL on kernels without it: the loop works either way. */
	ioctl(listener, SECCOMP_IOCTL_NOTIF_SET_FLAGS,
	      SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP, 0);
	if (pthread_create(&th, NULL, answer_loop, NULL) != 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return 125;
	}
	if (write(sv[0], "G", 1) != 1) {
		kill(pid, SIGKILL);
	}
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	/* The child is reaped: its filter has no user, RECV returns ENOENT. */
	atomic_store(&done, true);
	pthread_join(th, NULL);
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return WEXITSTATUS(st);
}
