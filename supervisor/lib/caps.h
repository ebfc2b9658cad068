/* SPDX-License-Identifier: MIT */
/* The capabilities lgrun runs with, as far as its choices depend on them. */
#ifndef LG_CAPS_H
#define LG_CAPS_H

#include <stdbool.h>

/*
 * Whether this process may load BPF programs: CAP_SYS_ADMIN, or CAP_BPF
 * with CAP_PERFMON, in its effective set (/proc/self/status). Root in a
 * default container has neither.
 */
bool lg_may_load_bpf(void);

#endif
