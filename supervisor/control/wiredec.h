/* SPDX-License-Identifier: MIT */
/* Decoding and validating shim frames (preload/wire.h). Pure. */
#ifndef LG_WIREDEC_H
#define LG_WIREDEC_H

#include <stddef.h>
#include <stdint.h>

#include "../../preload/wire.h"

struct lg_wire_msg {
	uint8_t type;
	uint32_t seq;
	uint32_t present; /* bit (1 << tag) for each field seen */
	uint32_t pid, ppid, op, result, proto, status, verdict, decision;
	uint64_t chan, digest, count, args_digest, time_ns, endpoint;
	/* NUL-terminated, in the caller's scratch buffer; "" when absent */
	const char *exe, *path, *tool, *target, *preview, *flow, *name,
		*call_to, *system, *made;
	const unsigned char *args; /* points into the frame */
	size_t args_len;
};

/*
 * Checks and decodes one frame. 0, or -EBADMSG (malformed), -EMSGSIZE
 * (over LG_WIRE_MAX), -EPROTO (bad magic, version or type). scratch must
 * hold at least LG_WIRE_MAX bytes.
 */
int lg_wire_decode(const void *frame, size_t n, struct lg_wire_msg *m,
		   char *scratch, size_t scratch_size);

#define LG_WIRE_HAS(m, tag) (((m)->present >> (tag)) & 1u)

#endif
