// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "lib/cleanup.h"
#include "tree/cgroup.h"
#include "nested.h"
#include "wiredec.h"

#define ANSWER_TIMEOUT_MS 10000

static bool filtered(void)
{
	char line[256];
	bool yes = false;
	FILE *f = fopen("/proc/self/status", "re");

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, "Seccomp:", 8) == 0 && atoi(line + 8) == 2)
			yes = true;
	fclose(f);
	return yes;
}

/* FLOW_NAME=value from a NUL-separated environment block. */
static bool env_get(const char *env, size_t n, const char *name, char *out,
		    size_t size)
{
	size_t len = strlen(name);

	for (size_t i = 0; i < n;) {
		const char *e = env + i;
		size_t el = strnlen(e, n - i);

		if (el > len && memcmp(e, name, len) == 0 && e[len] == '=') {
			snprintf(out, size, "%.*s", (int)(el - len - 1),
				 e + len + 1);
			return true;
		}
		i += el + 1;
	}
	return false;
}

static bool from_ancestors(char *sock, size_t ssz, char *flow, size_t fsz)
{
	static char env[65536];
	pid_t pid = getppid();

	for (int depth = 0; depth < 256 && pid > 1; depth++) {
		char p[64], state;
		ssize_t n;
		pid_t ppid;
		int fd;

		snprintf(p, sizeof(p), "/proc/%d/environ", pid);
		fd = open(p, O_RDONLY | O_CLOEXEC);
		n = fd >= 0 ? read(fd, env, sizeof(env)) : -1;
		if (fd >= 0)
			close(fd);
		if (n > 0 &&
		    env_get(env, (size_t)n, LG_WIRE_ENV_SOCK, sock, ssz)) {
			if (!env_get(env, (size_t)n, LG_WIRE_ENV_FLOW, flow,
				     fsz))
				flow[0] = '\0';
			return true;
		}
		if (lg_proc_stat(pid, &state, &ppid) < 0)
			break;
		pid = ppid;
	}
	return false;
}

/*
 * No environment names it: an ancestor running this same lgrun is the
 * supervisor, and the kernel lists the socket it listens on (PID.sock)
 * in /proc/net/unix. The flow id cannot be found that way.
 */
static bool from_supervisor(char *sock, size_t ssz)
{
	char self[PATH_MAX], exe[PATH_MAX], p[64], suffix[32];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	pid_t pid = getppid();

	if (n <= 0)
		return false;
	self[n] = '\0';
	for (int depth = 0; depth < 256 && pid > 1; depth++) {
		char state, line[PATH_MAX + 128];
		pid_t ppid;
		FILE *f;

		snprintf(p, sizeof(p), "/proc/%d/exe", pid);
		n = readlink(p, exe, sizeof(exe) - 1);
		if (n > 0 && (exe[n] = '\0', strcmp(exe, self) == 0) &&
		    (f = fopen("/proc/net/unix", "re"))) {
			bool found = false;

			snprintf(suffix, sizeof(suffix), "%d.sock", pid);
			while (!found && fgets(line, sizeof(line), f)) {
				char *path = strrchr(line, ' ');
				size_t pl, sl = strlen(suffix);

				if (!path || path[1] != '/')
					continue;
				path++;
				path[strcspn(path, "\n")] = '\0';
				pl = strlen(path);
				found = pl > sl + 1 &&
					strcmp(path + pl - sl, suffix) == 0 &&
					(path[pl - sl - 1] == '/' ||
					 path[pl - sl - 1] == '-');
				if (found)
					snprintf(sock, ssz, "%s", path);
			}
			fclose(f);
			if (found)
				return true;
		}
		if (lg_proc_stat(pid, &state, &ppid) < 0)
			break;
		pid = ppid;
	}
	return false;
}

bool lg_nested_find(char *sock, size_t sock_size, char *flow, size_t flow_size)
{
	const char *s = getenv(LG_WIRE_ENV_SOCK), *f = getenv(LG_WIRE_ENV_FLOW);

	if (!filtered())
		return false;
	if (s && *s) {
		snprintf(sock, sock_size, "%s", s);
		snprintf(flow, flow_size, "%s", f ? f : "");
		return true;
	}
	if (from_ancestors(sock, sock_size, flow, flow_size))
		return true;
	flow[0] = '\0';
	return from_supervisor(sock, sock_size);
}

int lg_nested_enter(const char *sock, const char *flow, const char *name,
		    struct lg_error *err)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	static char scratch[LG_WIRE_MAX];
	unsigned char buf[LG_WIRE_MAX];
	struct lg_wire_buf w;
	char exe[256];
	ssize_t n;
	LG_AUTOCLOSE int fd = -1;
	int r = -ETIMEDOUT;

	lg_error_clear(err);
	if (strlen(sock) >= sizeof(a.sun_path))
		return -ENAMETOOLONG;
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", sock);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0)
		return -errno;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = '\0';
	lg_wire_hello(&w, (uint32_t)getpid(), (uint32_t)getppid(), exe, 0);
	if (send(fd, w.b, w.n, MSG_NOSIGNAL) < 0)
		return -errno;
	lg_wire_start(&w, LG_W_ENTER, 1);
	if (flow && *flow)
		lg_wire_put_str(&w, LG_T_FLOW, flow);
	lg_wire_put_str(&w, LG_T_NAME, name);
	lg_wire_finish(&w);
	if (send(fd, w.b, w.n, MSG_NOSIGNAL) < 0)
		return -errno;
	for (;;) {
		struct pollfd pfd = { fd, POLLIN, 0 };
		struct lg_wire_msg m;

		if (poll(&pfd, 1, ANSWER_TIMEOUT_MS) <= 0)
			break;
		n = recv(fd, buf, sizeof(buf), 0);
		if (n <= 0) {
			r = -ECONNRESET;
			break;
		}
		if (lg_wire_decode(buf, (size_t)n, &m, scratch,
				   sizeof(scratch)) < 0 ||
		    m.type != LG_W_VERDICT || m.seq != 1)
			continue;
		lg_error_set(err, 0, "%s", m.preview);
		r = (int)m.verdict;
		break;
	}
	/*
	 * Refused: the connection stays open until this lgrun exits, so that
	 * the supervisor's kill waits for it to say why.
	 */
	if (r > 0)
		(void)lg_steal_fd(&fd);
	return r;
}
