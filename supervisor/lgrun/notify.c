// SPDX-License-Identifier: MIT
#include "run.h"
#include "seccomp/where.h"

static void on_usr1(int sig)
{
	(void)sig; /* only interrupts the notify thread's blocking receive */
}

/* One notify thread: the loop, and the notifier it reads with. */
struct reader {
	struct loop *l;
	struct lg_notifier *nt;
};

static void *notify_thread(void *arg)
{
	struct reader *rd = arg;
	struct loop *l = rd->l;
	struct lg_notifier *nt = rd->nt;
	bool told = false;
	sigset_t usr1;

	free(rd);
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	pthread_sigmask(SIG_UNBLOCK, &usr1, NULL);
	for (;;) {
		int r;
		bool trip;

		/* Abandoned: its one read done, another thread reads on. */
		if (lg_notifier_abandoned(nt) || atomic_load(&l->stop))
			break;
		r = lg_notifier_recv(nt);
		if (r == -EINTR)
			continue;
		if (r == -ENOENT) {
			/*
			 * A target went away, or none is left: then RECV fails
			 * at once forever. Wait for the next one or the hang-up.
			 */
			struct pollfd pfd = { lg_notifier_fd(nt), POLLIN, 0 };

			if (poll(&pfd, 1, -1) > 0 && (pfd.revents & POLLHUP) &&
			    !(pfd.revents & POLLIN))
				break; /* no filtered task is left */
			continue;
		}
		if (r < 0) {
			lg_dbg("notify: receive: %s", strerror(-r));
			break;
		}
		r = lg_notifier_answer(nt, l->s);
		trip = lg_session_kill_pending(l->s);
		if (r < 0)
			lg_dbg("notify: answer: %s", strerror(-r));
		if (trip && !told) {
			uint64_t one = 1;

			told = true;
			if (write(l->efd, &one, sizeof(one)) < 0)
				lg_err("cannot wake the main loop: %s",
				       strerror(errno));
		}
	}
	if (lg_notifier_abandoned(nt))
		lg_notifier_free(nt); /* the main thread has its spare */
	lg_where_forget();
	atomic_fetch_sub(&l->readers, 1);
	return NULL;
}

int start_notify_thread(struct loop *l, struct lg_notifier *nt)
{
	struct sigaction sa = { .sa_handler = on_usr1 }; /* no SA_RESTART */
	struct reader *rd = malloc(sizeof(*rd));
	int r;

	if (!rd)
		return -ENOMEM;
	*rd = (struct reader){ l, nt };
	sigaction(SIGUSR1, &sa, NULL);
	atomic_fetch_add(&l->readers, 1);
	r = pthread_create(&l->thread, NULL, notify_thread, rd);
	if (r) {
		atomic_fetch_sub(&l->readers, 1);
		free(rd);
		return -r;
	}
	l->thread_started = true;
	return 0;
}

/*
 * Stops the notify threads. A read of a target's memory cannot be
 * interrupted (a userfaultfd page served from outside the tree): after a
 * while, a thread still reading is left to our exit. True when none is
 * left, so that the session may be freed.
 */
bool stop_notify_thread(struct loop *l)
{
	uint64_t until = lg_mono_ms() + STOP_READERS_MS;

	atomic_store(&l->stop, true);
	if (l->thread_started) {
		pthread_kill(l->thread, SIGUSR1);
		pthread_detach(l->thread);
		l->thread_started = false;
	}
	while (atomic_load(&l->readers) > 0) {
		if (lg_mono_ms() >= until) {
			lg_dbg("%d notify thread(s) still reading a target: left to exit",
			       (int)atomic_load(&l->readers));
			return false;
		}
		usleep(2000);
	}
	return true;
}

/*
 * The notify thread has been reading one target's memory for too long: a
 * page that is served late or never (userfaultfd). The kernel would wait
 * as long for it, so that op waits too; but the rest of the tree must not:
 * leave the thread to its read (it answers that op and ends when the read
 * returns) and read the other notifications with a new one. A tree that
 * strands reader after reader is stopped.
 */
void watch_reader(struct loop *l)
{
	struct lg_notifier *spare;
	struct lg_busy b;

	if (!l->thread_started || !lg_notifier_busy(l->nt, &b) ||
	    b.id == l->watched_id ||
	    lg_mono_ms() < b.since_ms + READ_DEADLINE_MS)
		return;
	l->watched_id = b.id;
	spare = atomic_load(&l->readers) <= MAX_STUCK_READERS ?
			lg_notifier_spare(l->nt) :
			NULL;
	if (!spare) {
		char msg[200];

		snprintf(
			msg, sizeof(msg),
			"%d reads of syscall arguments in the tree never finished (memory nobody serves, such as a userfaultfd page)",
			(int)atomic_load(&l->readers));
		lg_session_notice(l->s, LG_EV_STOP,
				  &(struct lg_notice){ .rule = "supervisor",
						       .reason = "unreadable",
						       .summary = msg });
		return; /* the kill ends the reads */
	}
	{
		char msg[200];

		snprintf(
			msg, sizeof(msg),
			"the %s arguments of pid %d have not been readable for %d s (a userfaultfd page?): that call waits for them, the tree's other calls are answered meanwhile",
			lg_op_name((enum lg_op)b.op), b.pid,
			READ_DEADLINE_MS / 1000);
		lg_session_notice(l->s, LG_EV_WARN,
				  &(struct lg_notice){ .rule = "supervisor",
						       .reason = "stuck_read",
						       .pid = b.pid,
						       .exe = "",
						       .summary = msg });
	}
	lg_notifier_abandon(l->nt);
	pthread_detach(l->thread);
	l->thread_started = false;
	l->nt = spare;
	if (start_notify_thread(l, spare) < 0) {
		lg_notifier_free(spare);
		l->nt = NULL;
		lg_err("cannot start a new notify thread: stopping the session");
		lg_session_notice(
			l->s, LG_EV_STOP,
			&(struct lg_notice){
				.rule = "supervisor",
				.reason = "unreadable",
				.summary =
					"no notify thread was left to answer the tree's syscalls" });
	}
}

/*
 * Until when the tree waits for the agent to hear why (0: it does not): a
 * grace from the proxy's answer (wake_main), or, before that answer is
 * out, from the decision itself (the main loop may turn in between: an
 * observer event, the timer).
 */
uint64_t trip_grace(struct loop *l)
{
	uint64_t g = atomic_load(&l->grace_until), d;

	if (g)
		return g;
	{
		struct lg_session_view v;

		lg_session_view(l->s, &v);
		d = v.kill_deferred_ms;
	}
	return d ? d + PROXY_TRIP_GRACE_MS : 0;
}

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
			l->main_exited = true;
			l->status = st;
		}
	}
}

void on_signal(struct loop *l)
{
	struct signalfd_siginfo si;

	while (read(l->sfd, &si, sizeof(si)) == sizeof(si)) {
		int sig = (int)si.ssi_signo;

		if (sig == SIGCHLD) {
			reap_children(l);
			continue;
		}
		if (sig == SIGWINCH) { /* our terminal's size: the pty's */
			if (l->pty_master >= 0)
				lg_pty_resize(l->pty_master, STDOUT_FILENO);
			continue;
		}
		/* A second signal does not wait for the grace period. */
		if (l->got_signal) {
			l->kill_at = lg_mono_ms();
			continue;
		}
		l->got_signal = sig;
		lg_info("forwarding %s to the session's processes",
			strsignal(sig));
		lg_tree_signal(l->cg, sig);
		l->kill_at = lg_mono_ms() + l->cfg->kill_grace_ms;
	}
}
