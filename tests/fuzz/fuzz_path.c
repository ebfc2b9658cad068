// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for the path resolver (supervisor/pathres.c) and the
 * path globs (supervisor/glob.c): any path a traced process passes, any
 * pattern a config holds. The input is base NUL path NUL pattern.
 * A resolved path is absolute, has no empty, "." or ".." component,
 * resolves to itself again, and never overruns its buffer.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/glob.h"
#include "seccomp/pathres.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_resolved(const char *out, int len)
{
	char again[4096];

	if (len < 1 || (size_t)len != strlen(out) || out[0] != '/')
		__builtin_trap();
	if (len > 1 && out[len - 1] == '/')
		__builtin_trap();
	for (const char *c = out + 1; *c;) {
		const char *e = strchr(c, '/');
		size_t n = e ? (size_t)(e - c) : strlen(c);

		if (n == 0 || (n == 1 && c[0] == '.') ||
		    (n == 2 && c[0] == '.' && c[1] == '.'))
			__builtin_trap();
		c += n + (e != NULL);
	}
	/* what it made is a fixed point */
	if (lg_path_resolve("/", out, again, sizeof(again)) != len ||
	    strcmp(again, out) != 0)
		__builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size + 3), *base, *path, *pat, out[4096] = "",
	     small[16] = "", lit[256];
	int len;

	if (!buf)
		return 0;
	memcpy(buf, data, size);
	buf[size] = buf[size + 1] = buf[size + 2] = '\0';
	base = buf;
	path = base + strlen(base) + 1;
	pat = path + strlen(path) + 1;

	len = lg_path_resolve(base, path, out, sizeof(out));
	if (len >= 0)
		check_resolved(out, len);
	else if (path[0] == '/' || base[0] == '/')
		if (len != -22 /* EINVAL */ && len != -36 /* ENAMETOOLONG */)
			__builtin_trap();
	/* a small buffer: refused or whole, never overrun (ASan) */
	len = lg_path_resolve(base, path, small, sizeof(small));
	if (len >= 0)
		check_resolved(small, len);

	lg_path_basename(path);
	{
		char *copy = strdup(path);

		if (copy) {
			size_t n = strlen(copy);

			if (lg_path_strip_deleted(copy) &&
			    strlen(copy) != n - 10)
				__builtin_trap();
			free(copy);
		}
	}
	/* any pattern against any path: an answer, no crash, no hang */
	lg_glob_match_path(pat, path);
	lg_glob_match_path(pat, out);
	lg_glob_match_path(path, pat);
	lg_glob_literal(pat, lit, sizeof(lit));
	if (strlen(lit) >= sizeof(lit))
		__builtin_trap();
	free(buf);
	return 0;
}
