// SPDX-License-Identifier: MIT
/*
 * The observer's costly parts, and when to pay for them: sys_enter and
 * sys_exit are attached only once a process of the session runs without
 * the shim (obs_watch_syscalls, the exec checks); what the session wrote
 * comes from the threads' write accounting instead of traced writes.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "observer_int.h"

/* From now on the session's syscalls are traced (once; why is said). */
void obs_watch_syscalls(struct lg_observer *o, const char *why)
{
	int r;

	if (o->watching & LGB_WATCH_SYSCALLS)
		return;
	r = o->ops->syscalls(o->bo);
	if (r < 0) {
		if (strcmp(o->tracing, "off") == 0)
			lg_warn("the eBPF observer cannot trace syscalls (%s): %s; results of programs without the shim are not seen",
				why, strerror(-r));
		snprintf(o->tracing, sizeof(o->tracing), "failed: %s",
			 strerror(-r));
		return;
	}
	o->watching |= LGB_WATCH_SYSCALLS;
	snprintf(o->tracing, sizeof(o->tracing), "on at %.3fs: %s",
		 (double)(lg_mono_ms() - o->start_ms) / 1000.0, why);
	lg_info("the eBPF observer traces syscalls from now on: %s", why);
}

/*
 * pid exec'd at exec_ns (0: before the observer): a hello is due within
 * EXEC_WAIT_MS; late: it has ended, HELLO_WAIT_MS more for it to be read.
 * False when NCHECKS checks wait already: none is added.
 */
bool obs_check_later(struct lg_observer *o, pid_t pid, uint64_t exec_ns,
		     bool late)
{
	struct hello_check *c;

	if (o->watching & LGB_WATCH_SYSCALLS)
		return true;
	if (o->cn == NCHECKS)
		return false;
	c = &o->checks[(o->chead + o->cn++) % NCHECKS];
	c->pid = pid;
	c->late = late;
	c->exec_ns = exec_ns;
	c->due_ms = lg_mono_ms() + (late ? HELLO_WAIT_MS : EXEC_WAIT_MS);
	return true;
}

/*
 * Is the shim mapped in pid? 1 yes, 0 no, -1 pid is gone (or its maps
 * cannot be read). A loaded shim says hello: it only may not have yet.
 */
static int shim_mapped(pid_t pid)
{
	char path[40], line[512];
	LG_AUTOFCLOSE FILE *f = NULL;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "/liblgshim.so"))
			return 1;
	return 0;
}

/*
 * A check that is due: has pid's shim said hello since its exec? A hello
 * late on a loaded machine is not taken for its absence: the shim mapped
 * in the process is a yes; a process that has ended gets HELLO_WAIT_MS
 * more for its hello to be read.
 */
void obs_check_now(struct lg_observer *o, const struct hello_check *c)
{
	struct proc *p = obs_proc_get(o, c->pid, false);
	char why[160];
	int mapped;

	if (p && p->hello_ns && p->hello_ns >= c->exec_ns)
		return;
	mapped = shim_mapped(c->pid);
	if (mapped == 1)
		return;
	/* c's slot was freed to check it: there is room to wait again */
	if (mapped < 0 && !c->late &&
	    obs_check_later(o, c->pid, c->exec_ns, true))
		return;
	snprintf(why, sizeof(why), "pid %d (%s) runs without the shim",
		 (int)c->pid, obs_exe_of(o, c->pid, "?"));
	obs_watch_syscalls(o, why);
}

/*
 * What the session's threads have written (wchar, the bytes passed to
 * write and its kin): those that exited, counted by the kernel side at
 * their exit, and the live ones' /proc/PID/io. A thread that ended in a
 * process still alive is in both: it can only make a question answer
 * "worked" once more, never hide work. -1 when /proc/PID/io is missing
 * (no task I/O accounting in this kernel).
 */
static int64_t written(struct lg_observer *o)
{
	static pid_t pids[4096];
	uint64_t c[LGB_C_MAX] = { 0 }, total;
	int n;

	if (access("/proc/self/io", R_OK) != 0)
		return -1;
	n = lg_descendants(pids, 4096);
	o->ops->counters(o->bo, c);
	total = c[LGB_C_EXITED_WCHAR];
	for (int i = 0; i < n; i++) {
		char path[40], line[128];
		LG_AUTOFCLOSE FILE *f = NULL;

		snprintf(path, sizeof(path), "/proc/%d/io", (int)pids[i]);
		f = fopen(path, "re");
		while (f && fgets(line, sizeof(line), f))
			if (strncmp(line, "wchar:", 6) == 0)
				total += strtoull(line + 6, NULL, 10);
	}
	return (int64_t)total;
}

bool lg_observer_worked(struct lg_observer *o)
{
	int64_t w;
	bool worked;

	if (!o || !o->attached)
		return false;
	w = written(o);
	if (w < 0) { /* no accounting: the traced writes, if any */
		uint64_t c[LGB_C_MAX] = { 0 };

		o->ops->counters(o->bo, c);
		w = (int64_t)c[LGB_C_BYTES_WRITTEN];
	}
	worked = (uint64_t)w > o->wchar_seen;
	o->wchar_seen = (uint64_t)w;
	return worked;
}
