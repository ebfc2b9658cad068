// SPDX-License-Identifier: MIT
/*
 * What the undo says, handed to its asker one line at a time (undo.h:
 * ask->say); below every file of the engine.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "undo_int.h"

static void say(const struct restore *r, bool problem, const char *fmt,
		va_list ap)
{
	char *line;
	int n;

	if (!r->ask || !r->ask->say)
		return;
	n = vasprintf(&line, fmt, ap);
	if (n < 0)
		return;
	if (n > 0 && line[n - 1] == '\n')
		line[n - 1] = '\0';
	r->ask->say(r->ask->ctx, problem, line);
	free(line);
}

void rst_say(const struct restore *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say(r, false, fmt, ap);
	va_end(ap);
}

void rst_problem(const struct restore *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say(r, true, fmt, ap);
	va_end(ap);
}
