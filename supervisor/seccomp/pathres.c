// SPDX-License-Identifier: MIT
#include <errno.h>
#include <string.h>

#include "pathres.h"

int lg_path_resolve(const char *base, const char *path, char *out, size_t size)
{
	size_t len = 0;
	const char *parts[2];
	int nparts = 0;

	if (!path || !size)
		return -EINVAL;
	if (path[0] != '/') {
		if (!base || base[0] != '/')
			return -EINVAL;
		parts[nparts++] = base;
	}
	parts[nparts++] = path;
	if (size < 2)
		return -ENAMETOOLONG; /* not even room for "/" */

	out[len++] = '/';
	for (int i = 0; i < nparts; i++) {
		const char *c = parts[i];

		while (*c) {
			const char *e;
			size_t n;

			while (*c == '/')
				c++;
			if (!*c)
				break;
			e = strchr(c, '/');
			n = e ? (size_t)(e - c) : strlen(c);
			if (n == 1 && c[0] == '.') {
				/* nothing */
			} else if (n == 2 && c[0] == '.' && c[1] == '.') {
				while (len > 1 && out[len - 1] != '/')
					len--;
				if (len > 1)
					len--; /* the '/' before it */
			} else {
				if (len > 1) {
					if (len + 1 >= size)
						return -ENAMETOOLONG;
					out[len++] = '/';
				}
				if (len + n >= size)
					return -ENAMETOOLONG;
				memcpy(out + len, c, n);
				len += n;
			}
			c += n;
		}
	}
	out[len] = '\0';
	return (int)len;
}

int lg_path_strip_deleted(char *path)
{
	static const char sfx[] = " (deleted)";
	size_t n = strlen(path), s = sizeof(sfx) - 1;

	if (n > s && strcmp(path + n - s, sfx) == 0) {
		path[n - s] = '\0';
		return 1;
	}
	return 0;
}

const char *lg_path_basename(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}
