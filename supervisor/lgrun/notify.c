// SPDX-License-Identifier: MIT
/*
 * The notify threads: one reads the seccomp listener and answers; the
 * main thread watches its reads (a read of a target's memory that does not
 * return leaves its thread behind, and a new one reads on).
 */
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
	bool told = false, asked = false;
	sigset_t usr1;

	free(rd);
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	pthread_sigmask(SIG_UNBLOCK, &usr1, NULL);
	for (;;) {
		int r;
		unsigned st;

		/* Abandoned: its one read done, another thread reads on. */
		if (lg_notifier_abandoned(nt) || atomic_load(&l->notify.stop))
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
		r = lg_notifier_answer(nt);
		/* answered: a kill to start, the index's lines to make */
		st = lg_session_settle(l->s);
		if (r < 0)
			lg_dbg("notify: answer: %s", strerror(-r));
		if (((st & LG_SETTLE_TRIP) && !told) ||
		    ((st & LG_SETTLE_FLUSH) && !asked)) {
			uint64_t one = 1;

			told |= st & LG_SETTLE_TRIP;
			if (write(l->efd, &one, sizeof(one)) < 0)
				lg_err("cannot wake the main loop: %s",
				       strerror(errno));
		}
		asked = st & LG_SETTLE_FLUSH; /* once until it is done */
	}
	if (lg_notifier_abandoned(nt))
		lg_notifier_free(nt); /* the main thread has its spare */
	lg_where_forget();
	atomic_fetch_sub(&l->notify.readers, 1);
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
	atomic_fetch_add(&l->notify.readers, 1);
	r = pthread_create(&l->notify.thread, NULL, notify_thread, rd);
	if (r) {
		atomic_fetch_sub(&l->notify.readers, 1);
		free(rd);
		return -r;
	}
	l->notify.thread_started = true;
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

	atomic_store(&l->notify.stop, true);
	if (l->notify.thread_started) {
		pthread_kill(l->notify.thread, SIGUSR1);
		pthread_detach(l->notify.thread);
		l->notify.thread_started = false;
	}
	while (atomic_load(&l->notify.readers) > 0) {
		if (lg_mono_ms() >= until) {
			lg_dbg("%d notify thread(s) still reading a target: left to exit",
			       (int)atomic_load(&l->notify.readers));
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
static void watch_reader(struct loop *l)
{
	struct lg_notifier *spare;
	struct lg_busy b;

	if (!l->notify.thread_started || !lg_notifier_busy(l->notify.nt, &b) ||
	    b.id == l->notify.watched_id ||
	    lg_mono_ms() < b.since_ms + READ_DEADLINE_MS)
		return;
	l->notify.watched_id = b.id;
	spare = atomic_load(&l->notify.readers) <= MAX_STUCK_READERS ?
			lg_notifier_spare(l->notify.nt) :
			NULL;
	if (!spare) {
		char msg[200];

		snprintf(
			msg, sizeof(msg),
			"%d reads of syscall arguments in the tree never finished (memory nobody serves, such as a userfaultfd page)",
			(int)atomic_load(&l->notify.readers));
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
	lg_notifier_abandon(l->notify.nt);
	pthread_detach(l->notify.thread);
	l->notify.thread_started = false;
	l->notify.nt = spare;
	if (start_notify_thread(l, spare) < 0) {
		lg_notifier_free(spare);
		l->notify.nt = NULL;
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

/* The notify thread's reads, watched (watch_reader). */
static uint64_t notify_deadline(void *ctx)
{
	struct loop *l = ctx;
	struct lg_busy b;

	if (!l->notify.thread_started)
		return 0;
	return lg_notifier_busy(l->notify.nt, &b) ?
		       b.since_ms + READ_DEADLINE_MS :
		       (lg_mono_ms() / 1000 + 1) * 1000;
}

static void notify_tick(void *ctx, uint64_t now)
{
	(void)now;
	watch_reader(ctx);
}

const struct lg_loop_source notify_source = { "notify", NULL, notify_deadline,
					      notify_tick, NULL };
