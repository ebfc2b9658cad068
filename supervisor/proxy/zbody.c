// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "zbody.h"

int lg_zbody_decode(const char *in, size_t n, size_t max, char **out,
		    size_t *out_len)
{
	ZSTD_DStream *ds = ZSTD_createDStream();
	ZSTD_inBuffer src = { in, n, 0 };
	size_t cap = n * 4 + 4096, len = 0, r = 1;
	char *buf = NULL;
	int rc = 0;

	*out = NULL;
	*out_len = 0;
	if (!ds)
		return -ENOMEM;
	if (cap > max + 1)
		cap = max + 1;
	buf = malloc(cap);
	if (!buf) {
		ZSTD_freeDStream(ds);
		return -ENOMEM;
	}
	while (src.pos < src.size || r != 0) {
		ZSTD_outBuffer dst = { buf + len, cap - len - 1, 0 };
		size_t before = src.pos;

		if (cap - len - 1 == 0) {
			size_t ncap = cap * 2;
			char *b;

			if (cap > max) {
				rc = -E2BIG;
				break;
			}
			if (ncap > max + 1)
				ncap = max + 1;
			b = realloc(buf, ncap);
			if (!b) {
				rc = -ENOMEM;
				break;
			}
			buf = b;
			cap = ncap;
			continue;
		}
		r = ZSTD_decompressStream(ds, &dst, &src);
		if (ZSTD_isError(r)) {
			rc = -EINVAL;
			break;
		}
		len += dst.pos;
		if (len > max) {
			rc = -E2BIG;
			break;
		}
		if (!dst.pos && src.pos == before && src.pos == src.size &&
		    r != 0) {
			rc = -EINVAL; /* the input ends inside a frame */
			break;
		}
	}
	ZSTD_freeDStream(ds);
	if (rc) {
		free(buf);
		return rc;
	}
	buf[len] = '\0';
	*out = buf;
	*out_len = len;
	return 0;
}
