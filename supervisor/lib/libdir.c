// SPDX-License-Identifier: MIT
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "libdir.h"

bool lg_libdir_file(const char *name, char *out, size_t size)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	char *slash;

	if (n <= 0)
		return false;
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	if (!slash)
		return false;
	*slash = '\0';
	snprintf(out, size, "%s/../lib/lgrun/%s", exe, name);
	if (access(out, R_OK) == 0)
		return true;
	snprintf(out, size, "%s/../lib/%s", exe, name);
	return access(out, R_OK) == 0;
}
