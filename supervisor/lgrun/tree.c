// SPDX-License-Identifier: MIT
/*
 * The command's tree as the main thread follows it: the signals lgrun
 * takes (SIGCHLD reaps, SIGWINCH resizes the pty, the others are forwarded
 * to the tree), its end (the command exits, what it left behind is
 * stopped, a grace runs out), and its process count.
 */
#include "run.h"

bool tree_alive(struct loop *l)
{
	pid_t p[1];

	if (l->cg->ok && l->child.in_cgroup)
		return lg_cgroup_populated(l->cg);
	return lg_descendants(p, 1) > 0;
}

void reap_children(struct loop *l)
{
	int st;
	pid_t p;

	while ((p = waitpid(-1, &st, WNOHANG)) > 0) {
		if (p == l->child.pid) {
			l->tree.main_exited = true;
			l->tree.status = st;
		}
	}
}

/*
 * The command exited, or a grace ran out: true when the session is over
 * (the tree is gone, or was killed after the command's exit).
 */
bool tree_over(struct loop *l)
{
	struct run_tree *t = &l->tree;

	if (t->main_exited && !t->draining) {
		if (!tree_alive(l))
			return true;
		if (l->cfg->kill_leftovers) {
			lg_info("the command exited; stopping the processes it left behind");
			lg_tree_signal(l->cg, SIGTERM);
			t->kill_at = lg_mono_ms() + l->cfg->kill_grace_ms;
		}
		t->draining = true;
	}
	if (t->draining && !tree_alive(l))
		return true;
	if (t->kill_at && lg_mono_ms() >= t->kill_at) {
		const char *method;

		lg_tree_kill(l->cg, KILL_WAIT_MS, &method);
		t->kill_at = 0;
		reap_children(l);
		if (t->main_exited)
			return true;
	}
	return false;
}

/*
 * When tree_over has something to do: a forwarded signal's or a drain's
 * grace runs out, the drain's poll.
 */
static uint64_t tree_deadline(void *ctx)
{
	struct loop *l = ctx;
	uint64_t k = l->tree.kill_at;
	uint64_t d = l->tree.draining ? lg_mono_ms() + 20 : 0;

	return !k ? d : !d ? k : k < d ? k : d;
}

const struct lg_loop_source tree_source = { "tree", NULL, tree_deadline, NULL,
					    NULL };

/* Signals: forwarded to the tree, or its end. */
static void on_signal(void *ctx, int fd, uint32_t events)
{
	struct loop *l = ctx;
	struct signalfd_siginfo si;

	(void)events;
	while (read(fd, &si, sizeof(si)) == sizeof(si)) {
		int sig = (int)si.ssi_signo;

		if (sig == SIGCHLD) {
			reap_children(l);
			continue;
		}
		if (sig == SIGWINCH) { /* our terminal's size: the pty's */
			if (l->out.pty_master >= 0)
				lg_pty_resize(l->out.pty_master, STDOUT_FILENO);
			continue;
		}
		/* A second signal does not wait for the grace period. */
		if (l->tree.got_signal) {
			l->tree.kill_at = lg_mono_ms();
			continue;
		}
		l->tree.got_signal = sig;
		lg_info("forwarding %s to the session's processes",
			strsignal(sig));
		lg_tree_signal(l->cg, sig);
		l->tree.kill_at = lg_mono_ms() + l->cfg->kill_grace_ms;
	}
}

static const struct lg_loop_source signals_source = { "signals", on_signal,
						      NULL, NULL, NULL };

/* The tree's process count (budget.max_processes). */
static void count_processes(struct loop *l)
{
	unsigned n = 0;

	if (l->cg->ok && l->child.in_cgroup) {
		char p[PATH_MAX + 32];
		int pid;

		snprintf(p, sizeof(p), "%s/cgroup.procs", l->cg->path);
		LG_AUTOFCLOSE FILE *f = fopen(p, "re");

		while (f && fscanf(f, "%d", &pid) == 1)
			n++;
	} else {
		static pid_t pids[8192];
		int k = lg_descendants(pids,
				       (int)(sizeof(pids) / sizeof(pids[0])));

		n = k > 0 ? (unsigned)k : 0;
	}
	lg_session_feed(l->s,
			&(struct lg_event){ .kind = LG_EV_PROCESSES,
					    .source = LG_SRC_TIMER,
					    .processes = n },
			NULL);
	l->tree.procs_at = lg_mono_ms() + PROCS_TICK_MS;
}

static uint64_t procs_deadline(void *ctx)
{
	return ((struct loop *)ctx)->tree.procs_at;
}

static void procs_tick(void *ctx, uint64_t now)
{
	(void)now;
	count_processes(ctx);
}

const struct lg_loop_source procs_source = { "processes", NULL, procs_deadline,
					     procs_tick, NULL };

void tree_start(struct loop *l)
{
	unsigned max = l->cfg->guard.budget.max_processes;

	lg_sources_watch(&l->src, l->tree.sfd, EPOLLIN, &signals_source, l);
	if (!max)
		return;
	l->tree.procs_at = lg_mono_ms() + PROCS_TICK_MS;
	if (l->cg->ok) {
		char pm[PATH_MAX + 32];

		snprintf(pm, sizeof(pm), "%s/pids.max", l->cg->path);
		LG_AUTOFCLOSE FILE *f = fopen(pm, "we");

		/* the pids controller is on: the kernel enforces */
		if (f)
			fprintf(f, "%u\n", max + 1);
	}
}
