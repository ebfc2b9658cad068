// SPDX-License-Identifier: MIT
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

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

int lg_canon_target(const char *json, size_t len, const char *keys, char *out,
		    size_t size)
{
	json_t *root = json_loadb(json, len, JSON_DECODE_ANY, NULL);
	int r = 0;

	if (!root)
		return 0;
	while (json_is_object(root) && keys && *keys && !r) {
		char key[128];
		size_t n;
		json_t *v;

		keys += strspn(keys, ", \t");
		n = strcspn(keys, ", \t");
		if (!n)
			break;
		if (n < sizeof(key)) {
			memcpy(key, keys, n);
			key[n] = '\0';
			v = json_object_get(root, key);
			if (json_is_string(v))
				r = snprintf(out, size, "%s=%s", key,
					     json_string_value(v));
			else if (json_is_integer(v))
				r = snprintf(out, size, "%s=%lld", key,
					     (long long)json_integer_value(v));
			if (r >= (int)size)
				r = -ENOSPC;
		}
		keys += n;
	}
	json_decref(root);
	return r;
}

/* Does one template (t, tn bytes) match path (pn bytes)? */
static int url_match(const char *t, size_t tn, const char *path, size_t pn,
		     char *out, size_t size)
{
	const char *te = t + tn, *pe = path + pn;
	int r = 0;

	while (t < te && path < pe) {
		const char *ts = t, *ps = path;
		size_t tl, pl;

		if (*t != '/' || *path != '/')
			return 0;
		ts++;
		ps++;
		tl = strcspn(ts, "/");
		if (ts + tl > te)
			tl = (size_t)(te - ts);
		pl = strcspn(ps, "/");
		if (ps + pl > pe)
			pl = (size_t)(pe - ps);
		if (tl > 2 && ts[0] == '{' && ts[tl - 1] == '}') {
			if (!pl)
				return 0;
			r = snprintf(out, size, "%.*s=%.*s", (int)(tl - 2),
				     ts + 1, (int)pl, ps);
			if (r >= (int)size)
				return -ENOSPC;
		} else if (tl != pl || memcmp(ts, ps, tl) != 0) {
			return 0;
		}
		t = ts + tl;
		path = ps + pl;
	}
	return t == te && path == pe ? r : 0;
}

int lg_url_target(const char *url, const char *templates, char *out,
		  size_t size)
{
	size_t pn = strcspn(url, "?#");

	while (templates && *templates) {
		size_t n;
		int r;

		templates += strspn(templates, ", \t");
		n = strcspn(templates, ", \t");
		if (!n)
			break;
		r = url_match(templates, n, url, pn, out, size);
		if (r != 0)
			return r;
		templates += n;
	}
	return 0;
}
