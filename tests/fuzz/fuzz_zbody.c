// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for zstd request bodies: any bytes as a body sent with
 * Content-Encoding: zstd are decoded within the bound or refused, and what
 * comes out is read by the model API parsers without a crash.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "llm/llm.h"
#include "proxy/zbody.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void on_result(void *ctx, const struct lg_llm_result *r)
{
	(void)ctx;
	(void)r;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *out = NULL, model[64];
	size_t n = 0;

	if (lg_zbody_decode((const char *)data, size, 1 << 20, &out, &n) == 0) {
		if (n > (1 << 20) || out[n] != '\0')
			__builtin_trap();
		lg_llm_request_last_results(LG_LLM_OPENAI_RESPONSES, out, n,
					    on_result, NULL, model,
					    sizeof(model));
		free(out);
	} else if (out) {
		__builtin_trap();
	}
	return 0;
}
