// SPDX-License-Identifier: MIT
/*
 * --watch-output: the command's output passed on and watched (on a
 * terminal through a pty of ours, else pipes), our terminal's keys relayed
 * to it.
 */
#include "run.h"

/* Our terminal back as it was (the command is gone or going). */
void restore_terminal(struct loop *l)
{
	if (!l->out.tty_raw)
		return;
	lg_tty_restore(STDIN_FILENO, &l->out.saved_tty);
	l->out.tty_raw = false;
	lg_log_crlf = false;
}

/* Of a large read of the command's output, the bytes that are watched. */
#define WATCH_SAMPLE 1024

static void output_line(void *ctx, const char *line, size_t n)
{
	struct loop *l = ctx;

	struct lg_event ev = { .kind = LG_EV_TEXT,
			       .source = LG_SRC_OUTPUT,
			       .text = line,
			       .text_len = n };

	lg_session_feed(l->s, &ev, NULL);
}

/*
 * The command's output, passed on byte for byte and watched. Returns false
 * at the end of that stream.
 */
static bool pass_output(struct loop *l, int which)
{
	char buf[65536];
	int fd = l->out.r[which], to = which ? STDERR_FILENO : STDOUT_FILENO;
	bool skipped = false;
	ssize_t n;

	/*
	 * Bulk output: all but the last WATCH_SAMPLE bytes waiting in the pipe
	 * go on without passing through user space (splice), the rest is
	 * read, watched and written. Where splice cannot write (a terminal,
	 * an O_APPEND file on some kernels) everything is read.
	 */
	if (!l->out.no_splice[which] && fd != l->out.pty_master) {
		int avail = 0;

		if (ioctl(fd, FIONREAD, &avail) == 0 &&
		    avail > 2 * WATCH_SAMPLE) {
			ssize_t m = splice(fd, NULL, to, NULL,
					   (size_t)avail - WATCH_SAMPLE, 0);

			if (m > 0)
				skipped = true;
			else if (m < 0 && errno != EAGAIN && errno != EINTR)
				l->out.no_splice[which] = true;
		}
	}
	n = read(fd, buf, sizeof(buf));

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return true;
	if (n <= 0) {
		lg_termtext_flush(&l->out.term[which], output_line, l);
		lg_sources_unwatch(&l->src, l->out.r[which]);
		close(l->out.r[which]);
		l->out.r[which] = -1;
		return false;
	}
	for (ssize_t off = 0; off < n;) {
		ssize_t w = write(to, buf + off, (size_t)(n - off));

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && errno == EAGAIN) {
			struct pollfd pfd = { to, POLLOUT, 0 };

			poll(&pfd, 1, 100);
			continue;
		}
		if (w <= 0)
			break; /* our own output is gone: the bytes cannot go on */
		off += w;
	}
	/*
	 * A bulk copy (a build log, `cat` of a big file) must not cost the
	 * check on every byte: of a large read only its tail is watched. A
	 * loop prints the same thing again and again, so it shows there.
	 */
	if ((size_t)n > WATCH_SAMPLE || skipped) {
		size_t k = (size_t)n > WATCH_SAMPLE ? WATCH_SAMPLE : (size_t)n;

		lg_termtext_reset(&l->out.term[which]);
		lg_termtext_feed(&l->out.term[which], buf + n - k, k,
				 output_line, l);
	} else {
		lg_termtext_feed(&l->out.term[which], buf, (size_t)n,
				 output_line, l);
	}
	return true;
}

/*
 * A key typed on our terminal goes to the command's pty. What the pty
 * cannot take now (a command that does not read) is dropped, never
 * waited for: the loop must stay free to act.
 */
static void relay_input(struct loop *l)
{
	char buf[4096];
	ssize_t n = read(STDIN_FILENO, buf, sizeof(buf));

	if (n <= 0) {
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		lg_sources_unwatch(&l->src, STDIN_FILENO);
		return;
	}
	if (write(l->out.pty_master, buf, (size_t)n) != n)
		lg_dbg("--watch-output: the command did not take %zd typed bytes",
		       n);
}

/* The command's output is ready, or a key was typed on our terminal. */
static void output_handle(void *ctx, int fd, uint32_t events)
{
	struct loop *l = ctx;

	(void)events;
	if (fd != STDIN_FILENO)
		pass_output(l, fd == l->out.r[1]);
	else if (l->out.tty_raw)
		relay_input(l);
}

static const struct lg_loop_source output_source = { "output", output_handle,
						     NULL, NULL, NULL };

void output_ends_close(struct output_ends *e)
{
	lg_closep(&e->out[1]);
	lg_closep(&e->err[1]);
	lg_closep(&e->pty_slave);
}

/*
 * --watch-output: on a terminal the command still gets one (a pty we
 * read), else pipes. 0, or an exit status.
 */
int output_ends(struct loop *l, struct output_ends *e)
{
	bool err_tty = false;
	int r;

	if (isatty(STDOUT_FILENO)) {
		r = lg_pty_open(
			isatty(STDIN_FILENO) ? STDIN_FILENO : STDOUT_FILENO,
			STDOUT_FILENO, &l->out.pty_master, &e->pty_slave);
		if (r < 0)
			lg_warn("--watch-output: no pseudo-terminal (%s): the command's output goes through pipes",
				strerror(-r));
	}
	if (e->pty_slave >= 0) {
		/* a background lgrun leaves the keyboard alone */
		l->out.relay_in = isatty(STDIN_FILENO) &&
				  tcgetpgrp(STDIN_FILENO) == getpgrp();
		err_tty = isatty(STDERR_FILENO);
		lg_launch_set_pty(e->pty_slave, l->out.relay_in, err_tty);
	}
	if ((e->pty_slave < 0 && pipe2(e->out, O_CLOEXEC) < 0) ||
	    (!err_tty && pipe2(e->err, O_CLOEXEC) < 0)) {
		lg_err("--watch-output: cannot make pipes: %s",
		       strerror(errno));
		return LG_EXIT_ERROR;
	}
	lg_launch_set_stdio(e->out[1], e->err[1]);
	return 0;
}

void output_watch(struct loop *l, const struct output_ends *e, bool started)
{
	l->out.r[0] = e->pty_slave >= 0 ? l->out.pty_master : e->out[0];
	l->out.r[1] = e->err[0];
	for (int i = 0; i < 2; i++) {
		if (l->out.r[i] < 0)
			continue;
		/* bigger pipes: fewer wake-ups for bulk output */
		if (l->out.r[i] != l->out.pty_master)
			fcntl(l->out.r[i], F_SETPIPE_SZ, 1 << 20);
		fcntl(l->out.r[i], F_SETFL, O_NONBLOCK);
		lg_sources_watch(&l->src, l->out.r[i], EPOLLIN, &output_source,
				 l);
	}
	if (started && l->out.relay_in &&
	    lg_tty_raw(STDIN_FILENO, &l->out.saved_tty) == 0) {
		l->out.tty_raw = true;
		lg_log_crlf = isatty(STDERR_FILENO);
		fcntl(l->out.pty_master, F_SETFL, O_NONBLOCK);
		lg_sources_watch(&l->src, STDIN_FILENO, EPOLLIN, &output_source,
				 l);
	}
}

/* Before lgrun exits: every byte the command wrote is passed on. */
void drain_output(struct loop *l)
{
	for (int i = 0; i < 2; i++) {
		/*
		 * The writers are gone: read to the end. A survivor still
		 * holding the other end must not hold lgrun: 200 ms of
		 * silence ends it.
		 */
		while (l->out.r[i] >= 0) {
			struct pollfd pfd = { l->out.r[i], POLLIN, 0 };

			if (poll(&pfd, 1, 200) <= 0 || !pass_output(l, i))
				break;
		}
	}
}
