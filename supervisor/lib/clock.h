/* SPDX-License-Identifier: MIT */
/* The process's clocks: monotonic for windows and deadlines, real for records. */
#ifndef LG_CLOCK_H
#define LG_CLOCK_H

#include <stdint.h>

uint64_t lg_mono_ms(void);
uint64_t lg_mono_ns(void);
/* CLOCK_BOOTTIME: the monotonic clock plus the time the machine slept */
uint64_t lg_boot_ns(void);
int64_t lg_real_ns(void);

/*
 * Makes every file stamped from now on (on this machine) newer than
 * start_ns, read from lg_real_ns() just before; dir is a directory of
 * lgrun's own. 0 when the kernel's timestamp floor took it, 1 when it
 * waited for the coarse clock instead (at most a tick).
 */
int lg_real_start_after(const char *dir, int64_t start_ns);

#endif
