// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "termtext.h"

int lg_log_verbosity = LG_LOG_WARN;
const char *lg_log_prog = "lgrun";
bool lg_log_crlf;

void lg_log(enum lg_log_level level, const char *fmt, ...)
{
	char msg[2048], buf[4096];
	int saved = errno, n, m;
	va_list ap;

	if ((int)level > lg_log_verbosity)
		return;
	va_start(ap, fmt);
	m = vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (m < 0)
		m = 0;
	if (m >= (int)sizeof(msg))
		m = (int)sizeof(msg) - 1;
	n = snprintf(buf, sizeof(buf), "%s: ", lg_log_prog);
	/*
	 * File names and other text from the tree are in the message: no
	 * control character of theirs reaches the terminal (one cannot
	 * start a line of ours, or move the cursor, or set the title).
	 */
	n += (int)lg_term_escape(buf + n, sizeof(buf) - (size_t)n - 2, msg,
				 (size_t)m);
	if (lg_log_crlf)
		buf[n++] = '\r';
	buf[n++] = '\n';
	/* One write, so lines from the agent and from us do not interleave. */
	if (write(STDERR_FILENO, buf, (size_t)n) < 0) {
		/* nowhere left to report it */
	}
	errno = saved;
}
