/* SPDX-License-Identifier: MIT */
/* SHA-1, SHA-256 and HMAC-SHA256 (lib/sha.c): no libcrypto. */
#ifndef LG_SHA_H
#define LG_SHA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct lg_sha {
	bool sha256;
	uint32_t h[8];
	uint64_t len;
	uint8_t buf[64];
	size_t n;
};

void lg_sha_init(struct lg_sha *x, bool sha256);
void lg_sha_update(struct lg_sha *x, const void *data, size_t len);
/* Writes 20 (SHA-1) or 32 (SHA-256) bytes; returns how many. */
size_t lg_sha_final(struct lg_sha *x, uint8_t *out);
/* The CPU's SHA instructions, when it has them (on by default). */
void lg_sha_accel(bool on);
/* len bytes as 2 * len lowercase hex digits and a NUL into hex. */
void lg_hex(const uint8_t *id, size_t len, char *hex);
/* RFC 2104's HMAC with SHA-256. */
void lg_hmac_sha256(const void *key, size_t klen, const void *msg, size_t n,
		    uint8_t out[32]);

#endif
