// SPDX-License-Identifier: MIT
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>

#include "clock.h"

uint64_t lg_mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static int64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

uint64_t lg_mono_ns(void)
{
	return (uint64_t)clock_ns(CLOCK_MONOTONIC);
}

uint64_t lg_boot_ns(void)
{
	return (uint64_t)clock_ns(CLOCK_BOOTTIME);
}

int64_t lg_real_ns(void)
{
	return clock_ns(CLOCK_REALTIME);
}

/*
 * Files are stamped from the kernel's coarse clock, a tick (4 ms at
 * HZ=250) behind the fine one: a directory the tree makes right after
 * the start would look older than the session, and its removal would
 * count as destroying pre-existing data. Since 6.13 every stamp is at
 * least the multigrain floor, the last fine-grained stamp handed out. A
 * change to an inode whose ctime was just read in the same tick gets a
 * fine stamp and raises the floor past start: a statx and a chmod to
 * the same mode (twice if a tick passed in between). Where that does not
 * take (an older kernel, a directory that is not ours), wait for the
 * coarse clock to pass start instead: at most one tick.
 */
int lg_real_start_after(const char *dir, int64_t start_ns)
{
	for (int i = 0; dir && i < 3; i++) {
		struct statx sx;
		int64_t c;

		if (statx(AT_FDCWD, dir, 0, STATX_CTIME | STATX_MODE, &sx) < 0)
			break;
		c = (int64_t)sx.stx_ctime.tv_sec * 1000000000LL +
		    sx.stx_ctime.tv_nsec;
		if (c >= start_ns)
			return 0;
		if (chmod(dir, sx.stx_mode & 07777) < 0)
			break;
	}
	for (int i = 0; i < 100 && clock_ns(CLOCK_REALTIME_COARSE) < start_ns;
	     i++) {
		struct timespec ms = { 0, 500000 };

		nanosleep(&ms, NULL);
	}
	return 1;
}
