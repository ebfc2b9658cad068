// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "record/audit.h"
#include "cgroup.h"
#include "lib/clock.h"
#include "lib/json.h"
#include "lib/spill.h"
#include "store/state.h"
#include "watchdog.h"

enum { MSG_TREE = 'P', MSG_DONE = 'D' };

/* The processes in a cgroup (its own, not its children's). */
static int count_procs(const char *cgroup)
{
	char p[PATH_MAX + 16], buf[4096];
	ssize_t n;
	int fd, count = 0;

	snprintf(p, sizeof(p), "%s/cgroup.procs", cgroup);
	fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		for (ssize_t i = 0; i < n; i++)
			count += buf[i] == '\n';
	close(fd);
	return count;
}

/*
 * Kills what is left of the tree and removes its cgroup once empty.
 * The number of processes killed in the leaf, or -1 with no way to tell.
 */
static int kill_rest(const char *cgroup, pid_t pgid, const char **how)
{
	struct lg_cgroup cg = { .ok = true, .dirfd = -1 };
	int n = -1;

	*how = "nothing left to kill";
	/* a path from a state line: only one of lgrun's leaves */
	if (cgroup && strstr(cgroup, "/lgrun-") &&
	    snprintf(cg.path, sizeof(cg.path), "%s", cgroup) <
		    (int)sizeof(cg.path) &&
	    access(cg.path, F_OK) == 0) {
		n = count_procs(cg.path);
		if (lg_cgroup_populated(&cg)) {
			const char *m;

			lg_tree_kill(&cg, 1000, &m);
			*how = m;
		}
		lg_cgroup_destroy(&cg);
	} else if (pgid > 1 && kill(-pgid, SIGKILL) == 0) {
		*how = "SIGKILL to its process group";
	}
	return n;
}

int lg_session_lost(const char *state_dir, const char *id, const char *cgroup,
		    pid_t pgid, const char *by, char *summary, size_t size)
{
	char line[8192], state[32], agent[128], lpid[16], started[40];
	char cg[PATH_MAX], audit[PATH_MAX], t[40];
	struct lg_json j = { 0 };
	const char *how;
	int n, r;

	summary[0] = '\0';
	lg_state_last(state_dir, id, line, sizeof(line));
	lg_json_field(line, "state", state, sizeof(state));
	lg_json_field(line, "agent", agent, sizeof(agent));
	lg_json_field(line, "lgrun_pid", lpid, sizeof(lpid));
	lg_json_field(line, "started", started, sizeof(started));
	lg_json_field(line, "cgroup", cg, sizeof(cg));
	lg_json_field(line, "audit", audit, sizeof(audit));
	if (!cgroup || !cgroup[0])
		cgroup = cg;
	n = kill_rest(cgroup, pgid, &how);
	if (strcmp(state, "running") != 0)
		return 0;
	r = lg_state_claim_lost(state_dir, id, by);
	if (r <= 0)
		return r;
	if (n > 0)
		snprintf(
			summary, size,
			"lgrun (pid %s) died without ending the session (killed, or crashed); %s noticed and killed the %d process(es) left in its tree (%s)",
			lpid[0] ? lpid : "?", by, n, how);
	else
		snprintf(
			summary, size,
			"lgrun (pid %s) died without ending the session (killed, or crashed); %s noticed; nothing of its tree was left",
			lpid[0] ? lpid : "?", by);

	lg_json_begin(&j);
	lg_json_str(&j, "session", id);
	if (agent[0])
		lg_json_str(&j, "agent", agent);
	lg_json_str(&j, "state", "supervisor_lost");
	if (lpid[0])
		lg_json_int(&j, "lgrun_pid", atoll(lpid));
	if (started[0])
		lg_json_str(&j, "started", started);
	lg_time_iso(lg_real_ns(), t, sizeof(t));
	lg_json_str(&j, "updated", t);
	lg_json_str(&j, "noticed_by", by);
	lg_json_str(&j, "summary", summary);
	lg_state_write_session(state_dir, id, lg_json_end(&j));
	lg_json_free(&j);

	lg_audit_begin(&j, lg_real_ns(), id, NULL, NULL, 0);
	lg_json_str(&j, "event", "session_end");
	if (agent[0])
		lg_json_str(&j, "agent", agent);
	lg_json_str(&j, "end", "supervisor_lost");
	lg_json_str(&j, "summary", summary);
	lg_json_str(&j, "noticed_by", by);
	if (n >= 0)
		lg_json_int(&j, "killed_processes", n);
	lg_audit_falco(&j, id, agent[0] ? agent : NULL, "session_end",
		       &(struct lg_falco){ .priority = "Error",
					   .output = summary });
	if (!audit[0])
		snprintf(audit, sizeof(audit), "%s/audit.jsonl", state_dir);
	lg_audit_append(audit, lg_json_end(&j), true);
	lg_json_free(&j);
	return 1;
}

/* The watchdog's life: reads until lgrun says done or is gone. */
static void (*after)(void);

void lg_watchdog_after(void (*fn)(void))
{
	after = fn;
}

static _Noreturn void watch(int fd, const struct lg_cgroup *cg,
			    const char *state_dir, const char *id,
			    struct lg_spill *index, struct lg_spill *record)
{
	unsigned char msg[64];
	size_t have = 0;
	pid_t pgid = 0;
	char summary[600];
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);

	prctl(PR_SET_NAME, "lgrun-watchdog");
	/* lgrun's descriptors are not ours to hold (a pipe its caller reads
	 * to the end, the terminal): the pipe, and stderr for one line */
	if (null >= 0) {
		dup2(null, STDIN_FILENO);
		dup2(null, STDOUT_FILENO);
	}
	if (dup2(fd, 3) != 3)
		_exit(1);
	close_range(4, ~0U, 0);
	/* lgrun's blocked signals stay blocked: a Ctrl-C is lgrun's to handle */
	for (;;) {
		ssize_t n = read(3, msg + have, sizeof(msg) - have);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		have += (size_t)n;
		while (have) {
			size_t used = 1;

			if (msg[0] == MSG_DONE)
				_exit(0);
			if (msg[0] == MSG_TREE) {
				if (have < 1 + sizeof(pgid))
					break;
				memcpy(&pgid, msg + 1, sizeof(pgid));
				used += sizeof(pgid);
			}
			memmove(msg, msg + used, have - used);
			have -= used;
		}
	}
	/* what lgrun had kept but not yet written in its index */
	{
		long w = lg_spill_salvage(index);

		if (w < 0)
			fprintf(stderr,
				"lgrun: session %s: the quarantine index's last lines could not be written: %s\n",
				id, strerror((int)-w));
		/* and the events it had recorded but not yet written */
		w = lg_spill_salvage(record);
		if (w < 0)
			fprintf(stderr,
				"lgrun: session %s: the recording's last events could not be written: %s\n",
				id, strerror((int)-w));
	}
	if (lg_session_lost(state_dir, id, cg->ok ? cg->path : NULL, pgid,
			    "lgrun's watchdog", summary, sizeof(summary)) > 0)
		fprintf(stderr, "lgrun: session %s: %s\n", id, summary);
	if (after) /* the tree is gone: what lgrun would do at its end */
		after();
	_exit(0);
}

int lg_watchdog_start(struct lg_watchdog *w, const struct lg_cgroup *cg,
		      const char *state_dir, const char *id,
		      struct lg_spill *index, struct lg_spill *record)
{
	int p[2];
	pid_t pid;

	w->pid = 0;
	w->fd = -1;
	w->pidfd = -1;
	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	pid = fork();
	if (pid < 0) {
		int e = errno;

		close(p[0]);
		close(p[1]);
		return -e;
	}
	if (pid == 0) {
		close(p[1]);
		watch(p[0], cg, state_dir, id, index, record);
	}
	close(p[0]);
	w->pid = pid;
	w->fd = p[1];
	/* not reaped yet, so the pid is still this child's (close-on-exec) */
	w->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	lg_descendants_skip(pid);
	return 0;
}

void lg_watchdog_tree(struct lg_watchdog *w, pid_t pgid)
{
	unsigned char msg[1 + sizeof(pgid)] = { MSG_TREE };

	if (w->fd < 0)
		return;
	memcpy(msg + 1, &pgid, sizeof(pgid));
	if (write(w->fd, msg, sizeof(msg)) != (ssize_t)sizeof(msg)) {
		/* the watchdog is gone: lgrun goes on without one */
	}
}

void lg_watchdog_done(struct lg_watchdog *w)
{
	unsigned char done = MSG_DONE;

	if (w->fd < 0)
		return;
	if (write(w->fd, &done, 1) != 1) {
		/* gone already */
	}
	close(w->fd);
	w->fd = -1;
	/*
	 * It leaves at once (tens of microseconds): reaped here, so that no
	 * zombie is left to an init that does not reap (a container's).
	 * Its pidfd is readable the moment it has left, so the wait is that
	 * long (a sleep in a loop cost 100 to 200 us at every session's end).
	 * Bounded: a loop that reaped it already made its pid anyone's.
	 */
	if (w->pidfd >= 0) {
		struct pollfd p = { .fd = w->pidfd, .events = POLLIN };
		siginfo_t si;

		if (poll(&p, 1, 50) == 1)
			waitid(P_PIDFD, (id_t)w->pidfd, &si, WEXITED | WNOHANG);
		close(w->pidfd);
		w->pidfd = -1;
	} else {
		for (int i = 0; i < 500; i++) {
			pid_t r = waitpid(w->pid, NULL, WNOHANG);

			if (r != 0)
				break;
			usleep(100);
		}
	}
	w->pid = 0;
}
