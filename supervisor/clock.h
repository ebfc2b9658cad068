/* SPDX-License-Identifier: MIT */
/* The process's clocks: monotonic for windows and deadlines, real for records. */
#ifndef LG_CLOCK_H
#define LG_CLOCK_H

#include <stdint.h>

uint64_t lg_mono_ms(void);
int64_t lg_real_ns(void);

#endif
