// SPDX-License-Identifier: MIT
/*
 * What provenance's files share: a path's hash, a statx time, a target's
 * directory, a process's program.
 */
#include "prov_int.h"
#include "seccomp/pathres.h"

uint64_t prov_hash(const char *p)
{
	uint64_t h = 1469598103934665603ULL;

	for (; *p; p++)
		h = (h ^ (uint8_t)*p) * 1099511628211ULL;
	return h;
}

int64_t prov_ns(struct statx_timestamp t)
{
	return (int64_t)t.tv_sec * 1000000000LL + t.tv_nsec;
}

int lg_prov_target_dir(const struct lg_event *ev, int *own, const char **name)
{
	char dir[PATH_MAX];
	const char *slash;

	if (ev->at && ev->at_name && ev->at_name[0] && ev->at_dirfd >= 0) {
		*name = ev->at_name;
		return ev->at_dirfd;
	}
	slash = strrchr(ev->target, '/');
	if (!slash || (size_t)(slash - ev->target) >= sizeof(dir))
		return -1;
	memcpy(dir, ev->target, (size_t)(slash - ev->target));
	dir[slash - ev->target] = '\0';
	*own = open(dir[0] ? dir : "/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	*name = slash + 1;
	return *own;
}

void lg_prov_exe_name(pid_t pid, char *out, size_t size)
{
	char p[64], buf[PATH_MAX];
	ssize_t n;

	snprintf(p, sizeof(p), "/proc/%d/exe", pid);
	n = readlink(p, buf, sizeof(buf) - 1);
	if (n <= 0) {
		snprintf(out, size, "?");
		return;
	}
	buf[n] = '\0';
	lg_path_strip_deleted(buf);
	snprintf(out, size, "%s", lg_path_basename(buf));
}
