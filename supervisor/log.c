// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "log.h"

int lg_log_verbosity = LG_LOG_WARN;
const char *lg_log_prog = "lgrun";
bool lg_log_crlf;

void lg_log(enum lg_log_level level, const char *fmt, ...)
{
	char buf[2048];
	int saved = errno, n;
	va_list ap;

	if ((int)level > lg_log_verbosity)
		return;
	n = snprintf(buf, sizeof(buf), "%s: ", lg_log_prog);
	va_start(ap, fmt);
	n += vsnprintf(buf + n, sizeof(buf) - (size_t)n - 1, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(buf) - 3)
		n = (int)sizeof(buf) - 3;
	if (lg_log_crlf)
		buf[n++] = '\r';
	buf[n++] = '\n';
	/* One write, so lines from the agent and from us do not interleave. */
	if (write(STDERR_FILENO, buf, (size_t)n) < 0) {
		/* nowhere left to report it */
	}
	errno = saved;
}
