// SPDX-License-Identifier: MIT
/*
 * The observer's process table: each process of the session it has seen,
 * by pid, with its parent, its name and when it exec'd and said hello.
 * Below the rest of the observer: observer.c -> watch.c -> here.
 */
#include <stdio.h>
#include <string.h>

#include "observer_int.h"

struct proc *obs_proc_get(struct lg_observer *o, pid_t pid, bool add)
{
	unsigned h = ((unsigned)pid * 2654435761u) & (NPROC - 1);

	for (unsigned i = 0; i < NPROC; i++) {
		struct proc *p = &o->procs[(h + i) & (NPROC - 1)];

		if (p->pid == pid)
			return p;
		if (!p->pid) {
			if (!add)
				return NULL;
			if (o->nprocs >= NPROC * 3 / 4) {
				/* full enough: forget the processes that ended */
				for (unsigned k = 0; k < NPROC; k++)
					if (o->procs[k].exited) {
						memset(&o->procs[k], 0,
						       sizeof(o->procs[k]));
						o->nprocs--;
					}
				if (o->nprocs >= NPROC * 3 / 4)
					return NULL;
				return obs_proc_get(o, pid, true);
			}
			memset(p, 0, sizeof(*p));
			p->pid = pid;
			o->nprocs++;
			return p;
		}
	}
	return NULL;
}

/* The process's name: from its exec, else /proc, else the event's comm. */
const char *obs_exe_of(struct lg_observer *o, pid_t pid, const char *comm)
{
	struct proc *p = obs_proc_get(o, pid, true);

	if (!p)
		return comm;
	if (!p->exe[0]) {
		char path[64], buf[32];
		FILE *f;

		snprintf(path, sizeof(path), "/proc/%d/comm", pid);
		f = fopen(path, "re");
		if (f && fgets(buf, sizeof(buf), f)) {
			buf[strcspn(buf, "\n")] = '\0';
			snprintf(p->exe, sizeof(p->exe), "%s", buf);
		} else {
			snprintf(p->exe, sizeof(p->exe), "%s", comm);
		}
		if (f)
			fclose(f);
	}
	return p->exe;
}

/* An op's path made absolute while the process is (probably) alive. */
