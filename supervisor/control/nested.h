/* SPDX-License-Identifier: MIT */
/*
 * An lgrun started inside a session: it finds the enclosing supervisor and
 * asks to start as a child session of the same flow, then execs.
 */
#ifndef LG_NESTED_H
#define LG_NESTED_H

#include <stdbool.h>
#include <stddef.h>

#include "lib/error.h"

/*
 * Inside a session: a seccomp filter is on us and a supervisor's control
 * socket is named in our environment, or (a cleared environment) in the
 * first ancestor's that names one. The flow id comes from the same place
 * ("" if it has none).
 */
bool lg_nested_find(char *sock, size_t sock_size, char *flow, size_t flow_size);

/*
 * Registers as the child session `name`: 0 when it may start, a positive
 * errno when the supervisor refused it (err says why), -errno when the
 * supervisor could not be asked. After a refusal the connection stays open
 * (the kill of the flow waits for it): exit soon.
 */
int lg_nested_enter(const char *sock, const char *flow, const char *name,
		    struct lg_error *err);

#endif
