/* SPDX-License-Identifier: MIT */
/*
 * A request body sent with Content-Encoding: zstd (Codex's HTTPS requests):
 * decompressed for reading only; the bytes forwarded stay as they came.
 * In liblgproxy.so (libzstd), fuzzed by fuzz_zbody.
 */
#ifndef LG_ZBODY_H
#define LG_ZBODY_H

#include <stddef.h>

/*
 * Decompresses in[0..n) (one or more zstd frames) into a new buffer of at
 * most max bytes, NUL-terminated. 0 with *out (free it) and *out_len, or
 * -EINVAL (not zstd, damaged, cut short) or -E2BIG (more than max).
 */
int lg_zbody_decode(const char *in, size_t n, size_t max, char **out,
		    size_t *out_len);

#endif
