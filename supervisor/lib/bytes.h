/* SPDX-License-Identifier: MIT */
#ifndef LG_LIB_BYTES_H
#define LG_LIB_BYTES_H

#include <stdint.h>

/* A big-endian 32-bit number read from bytes that need not be aligned
 * (git's index and pack indexes, SHA's message words). */
static inline uint32_t lg_be32(const void *bytes)
{
	const uint8_t *p = bytes;

	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

#endif
