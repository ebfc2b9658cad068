/* SPDX-License-Identifier: MIT */
/*
 * The one error object. A function that can fail returns 0 or -errno; when
 * its caller needs more than the errno to say what went wrong, it takes a
 * struct lg_error and fills its message (HACKING.md, "Errors and cleanup").
 * The caller may pass NULL: the message is dropped, the errno is not.
 */
#ifndef LG_ERROR_H
#define LG_ERROR_H

#include <limits.h>

/* Room for a whole path and the words around it. */
#define LG_ERROR_MAX (PATH_MAX + 256)

struct lg_error {
	char msg[LG_ERROR_MAX]; /* a string; "" when nothing was said */
};

/*
 * e's message from fmt (cut to fit), errno left as it was; returns -err,
 * so `return lg_error_set(e, EINVAL, "...")` fails with it (0 where there
 * is no errno to give). No argument may be e->msg.
 */
int lg_error_set(struct lg_error *e, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* e's message made empty (e may be NULL). */
void lg_error_clear(struct lg_error *e);

#endif
