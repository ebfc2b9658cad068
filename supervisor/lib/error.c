// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

#include "error.h"

int lg_error_set(struct lg_error *e, int err, const char *fmt, ...)
{
	int saved = errno;
	va_list ap;

	if (e) {
		va_start(ap, fmt);
		vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
		va_end(ap);
	}
	errno = saved;
	return -err;
}

void lg_error_clear(struct lg_error *e)
{
	if (e)
		e->msg[0] = '\0';
}
