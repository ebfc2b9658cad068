// SPDX-License-Identifier: MIT
/* libFuzzer target for the shim frame decoder: it must never crash. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "control/wiredec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char scratch[LG_WIRE_MAX];
	struct lg_wire_msg m;

	if (lg_wire_decode(data, size, &m, scratch, sizeof(scratch)) == 0) {
		/* Every string the decoder hands out is terminated. */
		if (strlen(m.exe) + strlen(m.path) + strlen(m.tool) +
			    strlen(m.target) + strlen(m.preview) >
		    sizeof(scratch))
			__builtin_trap();
		if (m.args && m.args_len > size)
			__builtin_trap();
	}
	return 0;
}
