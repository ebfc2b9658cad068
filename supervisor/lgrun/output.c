// SPDX-License-Identifier: MIT
#include "run.h"

/* Our terminal back as it was (the command is gone or going). */
void restore_terminal(struct loop *l)
{
	if (!l->tty_raw)
		return;
	lg_tty_restore(STDIN_FILENO, &l->saved_tty);
	l->tty_raw = false;
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
bool pass_output(struct loop *l, int which)
{
	char buf[65536];
	int fd = l->out_r[which], to = which ? STDERR_FILENO : STDOUT_FILENO;
	bool skipped = false;
	ssize_t n;

	/*
	 * Bulk output: all but the last WATCH_SAMPLE bytes waiting in the pipe
	 * go on without passing through user space (splice), the rest is
	 * read, watched and written. Where splice cannot write (a terminal,
	 * an O_APPEND file on some kernels) everything is read.
	 */
	if (!l->no_splice[which] && fd != l->pty_master) {
		int avail = 0;

		if (ioctl(fd, FIONREAD, &avail) == 0 &&
		    avail > 2 * WATCH_SAMPLE) {
			ssize_t m = splice(fd, NULL, to, NULL,
					   (size_t)avail - WATCH_SAMPLE, 0);

			if (m > 0)
				skipped = true;
			else if (m < 0 && errno != EAGAIN && errno != EINTR)
				l->no_splice[which] = true;
		}
	}
	n = read(fd, buf, sizeof(buf));

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return true;
	if (n <= 0) {
		lg_termtext_flush(&l->term[which], output_line, l);
		lg_sources_unwatch(&l->src, l->out_r[which]);
		close(l->out_r[which]);
		l->out_r[which] = -1;
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

		lg_termtext_reset(&l->term[which]);
		lg_termtext_feed(&l->term[which], buf + n - k, k, output_line,
				 l);
	} else {
		lg_termtext_feed(&l->term[which], buf, (size_t)n, output_line,
				 l);
	}
	return true;
}

/*
 * A key typed on our terminal goes to the command's pty. What the pty
 * cannot take now (a command that does not read) is dropped, never
 * waited for: the loop must stay free to act.
 */
void relay_input(struct loop *l)
{
	char buf[4096];
	ssize_t n = read(STDIN_FILENO, buf, sizeof(buf));

	if (n <= 0) {
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		lg_sources_unwatch(&l->src, STDIN_FILENO);
		return;
	}
	if (write(l->pty_master, buf, (size_t)n) != n)
		lg_dbg("--watch-output: the command did not take %zd typed bytes",
		       n);
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
		while (l->out_r[i] >= 0) {
			struct pollfd pfd = { l->out_r[i], POLLIN, 0 };

			if (poll(&pfd, 1, 200) <= 0 || !pass_output(l, i))
				break;
		}
	}
}
