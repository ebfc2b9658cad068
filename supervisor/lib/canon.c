// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fnmatch.h>
#include <jansson.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "canon.h"
#include "cleanup.h"

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

/* Long strings cut, written compact with sorted keys. */
static int dump(json_t *root, char *out, size_t size)
{
	const size_t flags = JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY;
	int r = cut_strings(root);
	size_t n;

	if (r < 0)
		return r;
	n = json_dumpb(root, out, size, flags);
	if (!n)
		return -ENOMEM;
	if (n >= size || n > INT_MAX)
		return -ENOSPC;
	out[n] = '\0';
	return (int)n;
}

int lg_canon_args(const char *json, size_t len, char *out, size_t size)
{
	LG_AUTOJSON json_t *root = NULL;
	int r = 0;

	if (!json)
		return -EINVAL;
	root = parse(json, len, &r);
	return root ? dump(root, out, size) : r;
}

/*
 * Noise a model varies between two calls that do the same thing: runs of
 * white space (one space, none at the ends) and, in a shell command, a
 * trailing comment ("ls dir  # try 3"). Quotes are followed, so a '#'
 * inside them stays.
 */
static size_t denoise(char *s, size_t n, bool shell)
{
	size_t o = 0;
	char q = 0;

	for (size_t i = 0; i < n; i++) {
		char c = s[i];

		if (shell && !q && c == '#' && (o == 0 || s[o - 1] == ' ')) {
			while (i < n && s[i] != '\n')
				i++;
			if (i == n)
				break;
			c = '\n';
		}
		if (shell && (c == '\'' || c == '"') && (!q || q == c))
			q = q ? 0 : c;
		if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
			if (!q && (o == 0 || s[o - 1] == ' '))
				continue;
			if (!q)
				c = ' ';
		}
		s[o++] = c;
	}
	while (o && s[o - 1] == ' ')
		o--;
	return o;
}

static bool shell_key(const char *key)
{
	return key && (strcmp(key, "command") == 0 || strcmp(key, "cmd") == 0 ||
		       strcmp(key, "script") == 0);
}

static int denoise_all(json_t *v, const char *key)
{
	const char *k;
	json_t *child;
	size_t i;

	switch (json_typeof(v)) {
	case JSON_OBJECT:
		json_object_foreach(v, k, child) if (denoise_all(child, k) <
						     0) return -ENOMEM;
		return 0;
	case JSON_ARRAY: /* ["bash", "-lc", "ls dir"] keeps its key */
		json_array_foreach(v, i, child) if (denoise_all(child, key) <
						    0) return -ENOMEM;
		return 0;
	case JSON_STRING: {
		size_t len = json_string_length(v);
		char *t = malloc(len + 1);
		int r;

		if (!t)
			return -ENOMEM;
		memcpy(t, json_string_value(v), len);
		len = denoise(t, len, shell_key(key));
		r = json_string_setn_nocheck(v, t, len);
		free(t);
		return r < 0 ? -ENOMEM : 0;
	}
	default:
		return 0;
	}
}

/* One "TOOL:KEY" of a list, split; false at the end. */
static bool next_rule(const char **list, char *tool, size_t tn, char *key,
		      size_t kn, bool *ok)
{
	const char *p = *list, *colon;
	size_t n;

	p += strspn(p, ", \t");
	n = strcspn(p, ", \t");
	*list = p + n;
	if (!n)
		return false;
	colon = memchr(p, ':', n);
	*ok = colon && colon > p && colon < p + n - 1 &&
	      !memchr(colon + 1, ':', (size_t)(p + n - colon - 1)) &&
	      (size_t)(colon - p) < tn && (size_t)(p + n - colon - 1) < kn;
	if (*ok) {
		snprintf(tool, tn, "%.*s", (int)(colon - p), p);
		snprintf(key, kn, "%.*s", (int)(p + n - colon - 1), colon + 1);
	} else {
		snprintf(tool, tn, "%.*s", (int)(n < tn - 1 ? n : tn - 1), p);
	}
	return true;
}

bool lg_canon_ignore_valid(const char *rules, char *bad, size_t size)
{
	char tool[128], key[128];
	bool ok;

	while (rules &&
	       next_rule(&rules, tool, sizeof(tool), key, sizeof(key), &ok))
		if (!ok) {
			snprintf(bad, size, "%s", tool);
			return false;
		}
	return true;
}

int lg_canon_call(const char *tool, const char *json, size_t len,
		  const char *ignore, char *out, size_t size)
{
	char rt[128], rk[128];
	LG_AUTOJSON json_t *root = NULL;
	bool ok;
	int r = 0;

	if (!json)
		return -EINVAL;
	root = parse(json, len, &r);
	if (!root)
		return r;
	while (json_is_object(root) && ignore &&
	       next_rule(&ignore, rt, sizeof(rt), rk, sizeof(rk), &ok))
		if (ok && fnmatch(rt, tool ? tool : "", 0) == 0)
			json_object_del(root, rk);
	r = denoise_all(root, NULL);
	if (r < 0)
		return r;
	return dump(root, out, size);
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

/* n bytes of s appended at *o, cut at a whole character when out is full. */
static void put_cut(char *out, size_t size, size_t *o, const char *s, size_t n)
{
	if (*o + 1 >= size)
		return;
	if (n > size - 1 - *o) {
		n = size - 1 - *o;
		/* not into a character: back to its first byte */
		while (n && ((unsigned char)s[n] & 0xc0) == 0x80)
			n--;
	}
	memcpy(out + *o, s, n);
	*o += n;
	out[*o] = '\0';
}

/* A -c flag of a shell (-c, -lc, -ec, -xc): its next word is the script. */
static bool shell_c_flag(const char *w)
{
	size_t n = w ? strlen(w) : 0;

	return n >= 2 && n <= 4 && w[0] == '-' && w[1] != '-' &&
	       w[n - 1] == 'c';
}

int lg_canon_command(const char *json, size_t len, char *out, size_t size)
{
	static const char *const keys[] = { "command", "cmd", "script" };
	LG_AUTOJSON json_t *root = NULL;
	json_t *v = NULL, *w;
	size_t o = 0, i;

	if (!size)
		return 0;
	out[0] = '\0';
	if (!json || !(root = json_loadb(json, len, 0, NULL)) ||
	    !json_is_object(root))
		return 0;
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]) && !v; i++)
		v = json_object_get(root, keys[i]);
	if (json_is_string(v)) {
		put_cut(out, size, &o, json_string_value(v),
			json_string_length(v));
		return (int)o;
	}
	if (!json_is_array(v) || !json_array_size(v))
		return 0;
	json_array_foreach(v, i, w)
	{
		if (!json_is_string(w))
			return 0;
		if (i + 1 < json_array_size(v) &&
		    shell_c_flag(json_string_value(w)) &&
		    json_is_string(json_array_get(v, i + 1))) {
			w = json_array_get(v, i + 1);
			o = 0;
			out[0] = '\0';
			put_cut(out, size, &o, json_string_value(w),
				json_string_length(w));
			return (int)o;
		}
	}
	json_array_foreach(v, i, w)
	{
		if (i)
			put_cut(out, size, &o, " ", 1);
		put_cut(out, size, &o, json_string_value(w),
			json_string_length(w));
	}
	return (int)o;
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
