// SPDX-License-Identifier: MIT
#include <errno.h>
#include <jansson.h>
#include <limits.h>

#include "canon.h"

/*
 * Cuts long string values, in place. jansson has checked the UTF-8, so a
 * code point starts at every byte that is not a continuation byte.
 */
static int cut_strings(json_t *v)
{
	const char *key;
	json_t *child;
	size_t i;

	switch (json_typeof(v)) {
	case JSON_OBJECT:
		json_object_foreach(v, key, child) if (cut_strings(child) <
						       0) return -ENOMEM;
		return 0;
	case JSON_ARRAY:
		json_array_foreach(v, i, child) if (cut_strings(child) <
						    0) return -ENOMEM;
		return 0;
	case JSON_STRING: {
		const char *s = json_string_value(v);
		size_t len = json_string_length(v), chars = 0;

		for (i = 0; i < len; i++) {
			if (((unsigned char)s[i] & 0xc0) == 0x80)
				continue;
			if (++chars > LG_CANON_MAX_STRING)
				return json_string_setn_nocheck(v, s, i) < 0 ?
					       -ENOMEM :
					       0;
		}
		return 0;
	}
	default:
		return 0;
	}
}

static json_t *parse(const char *json, size_t len, int *r)
{
	const size_t flags = JSON_DECODE_ANY | JSON_ALLOW_NUL;
	json_error_t e;
	json_t *root;

	root = json_loadb(json, len, flags, &e);
	/* Valid JSON that jansson cannot hold as an integer: read as reals. */
	if (!root && json_error_code(&e) == json_error_numeric_overflow)
		root = json_loadb(json, len, flags | JSON_DECODE_INT_AS_REAL,
				  &e);
	if (!root)
		*r = json_error_code(&e) == json_error_out_of_memory ? -ENOMEM :
								       -EINVAL;
	return root;
}

int lg_canon_args(const char *json, size_t len, char *out, size_t size)
{
	const size_t flags = JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY;
	json_t *root;
	size_t n;
	int r = 0;

	if (!json)
		return -EINVAL;
	root = parse(json, len, &r);
	if (!root)
		return r;
	r = cut_strings(root);
	if (r < 0)
		goto out;
	n = json_dumpb(root, out, size, flags);
	if (!n) {
		r = -ENOMEM;
		goto out;
	}
	if (n >= size || n > INT_MAX) {
		r = -ENOSPC;
		goto out;
	}
	out[n] = '\0';
	r = (int)n;
out:
	json_decref(root);
	return r;
}
