// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for text lgrun does not choose: the egress proxy's
 * request head parser (any bytes a client sends), and what lgrun writes
 * from names:
 * the audit JSON writer and reader, and the terminal escaper. The JSON is
 * always UTF-8 with no raw control character, reads back to the input
 * when that was UTF-8, and the _b64 field carries the exact bytes;
 * terminal text never holds a control byte.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "egress/egress.h"
#include "lib/json.h"
#include "lib/termtext.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool utf8(const unsigned char *s, size_t n)
{
	for (size_t i = 0; i < n;) {
		size_t k = lg_utf8_len(s + i, n - i, NULL);

		if (!k)
			return false;
		i += k;
	}
	return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char in[1024], out[1024 * 6 + 1], back[1024 * 4 + 1];
	struct lg_json j = { 0 };
	const char *text;
	size_t n = size < sizeof(in) - 1 ? size : sizeof(in) - 1, len;
	bool valid;

	{
		/* a request head from any client: parsed or refused, sanely */
		struct lg_egress_req r;
		const char *why = NULL;

		if (lg_egress_parse_head((const char *)data, size, &r, &why) ==
		    0) {
			if (!r.host[0] || !r.port || !r.headers ||
			    r.headers + r.headers_len !=
				    (const char *)data + size)
				__builtin_trap();
			if (r.kind == LG_EGRESS_HTTP &&
			    (!r.path || !r.path_len ||
			     (r.path[0] != '/' && r.path[0] != '?' &&
			      strcmp(r.path, "/") != 0)))
				__builtin_trap();
		} else if (!why) {
			__builtin_trap();
		}
	}
	memcpy(in, data, n);
	in[n] = '\0';
	n = strlen(in); /* a C string ends at its NUL */
	valid = utf8((const unsigned char *)in, n);

	lg_json_begin(&j);
	lg_json_str(&j, "t", in);
	text = lg_json_end(&j);
	len = strlen(text);
	if (!utf8((const unsigned char *)text, len))
		__builtin_trap();
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)text[i] < 0x20)
			__builtin_trap();
	if ((strstr(text, "\"t_b64\":") != NULL) == valid)
		__builtin_trap(); /* the exact bytes exactly when needed */
	lg_json_field(text, "t", back, sizeof(back));
	if (valid && strcmp(back, in) != 0)
		__builtin_trap();
	if (!utf8((const unsigned char *)back, strlen(back)))
		__builtin_trap();
	lg_json_free(&j);

	len = lg_term_escape(out, sizeof(out), in, n);
	if (len != strlen(out) || !utf8((const unsigned char *)out, len))
		__builtin_trap();
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)out[i];

		if ((c < 0x20 && c != '\t') || c == 0x7f)
			__builtin_trap();
		if (c == 0xc2 && i + 1 < len &&
		    (unsigned char)out[i + 1] >= 0x80 &&
		    (unsigned char)out[i + 1] < 0xa0)
			__builtin_trap(); /* a C1 control */
	}
	return 0;
}
