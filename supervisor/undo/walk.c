// SPDX-License-Identifier: MIT
/*
 * The undo's path walks: every path opened a component at a time
 * from a directory descriptor with openat2(RESOLVE_BENEATH |
 * RESOLVE_NO_SYMLINKS), never through a symlink nor above where it
 * starts, and only paths that are absolute and normal.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lib/cleanup.h"
#include "undo_int.h"

int rst_open2(int dfd, const char *name, int flags, mode_t mode)
{
	struct open_how how = {
		.flags = (uint64_t)(flags | O_CLOEXEC),
		.mode = (flags & O_CREAT) ? mode : 0,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
			   RESOLVE_NO_MAGICLINKS,
	};
	long fd = syscall(SYS_openat2, dfd, name, &how, sizeof(how));

	return fd < 0 ? -errno : (int)fd;
}

const char *rst_why_of(int err)
{
	if (err == -ELOOP || err == -EXDEV)
		return "a symlink in the way (never followed)";
	if (err == -ENOTDIR)
		return "a component is not a directory";
	return strerror(-err);
}

/* Absolute, no empty, "." or ".." component, no trailing '/'. */
bool lg_undo_path_normal(const char *p)
{
	const char *c = p;

	/* deeper than PATH_MAX is fine: it is walked a component at a time */
	if (p[0] != '/' || !p[1] || strlen(p) >= 16 * PATH_MAX)
		return false;
	while (*c) {
		const char *s = c + 1;
		size_t n = strcspn(s, "/");

		if (n == 0 || (n == 1 && s[0] == '.') ||
		    (n == 2 && s[0] == '.' && s[1] == '.'))
			return false;
		c = s + n;
	}
	return true;
}

/*
 * rel (a normal path without its leading '/') opened from at one component
 * at a time, never through a symlink nor above at; missing folders made
 * (0755, as whoever restores) when make. An O_PATH descriptor or -errno.
 */
int rst_walk(int at, const char *rel, bool make)
{
	LG_AUTOFREE char *copy = strdup(rel);
	LG_AUTOCLOSE int cur = fcntl(at, F_DUPFD_CLOEXEC, 3);
	char *save = NULL;

	if (!copy || cur < 0)
		return -ENOMEM;
	for (char *c = strtok_r(copy, "/", &save); c;
	     c = strtok_r(NULL, "/", &save)) {
		int fd = rst_open2(cur, c, O_PATH | O_DIRECTORY, 0);

		if (fd == -ENOENT && make) {
			if (mkdirat(cur, c, 0755) < 0 && errno != EEXIST)
				return -errno;
			fd = rst_open2(cur, c, O_PATH | O_DIRECTORY, 0);
		}
		if (fd < 0)
			return fd;
		close(cur);
		cur = fd;
	}
	return lg_steal_fd(&cur);
}

/* An absolute path walked from / as rst_walk does. */
int rst_walk_abs(const char *abs, bool make)
{
	LG_AUTOCLOSE int root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);

	if (root < 0)
		return -errno;
	return rst_walk(root, abs + 1, make);
}
