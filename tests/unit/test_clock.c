// SPDX-License-Identifier: MIT
/*
 * Unit tests for clock.c: a directory made right after the session's start
 * is stamped after it, on this machine's real filesystems (a regression:
 * make load killed a legit session that made a directory at once and then
 * removed it with two pre-existing files; its coarse birth time was 3.6 ms
 * before the fine start, so it counted as pre-existing).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include <setjmp.h>
#include <limits.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "lib/clock.h"

static int64_t born(const char *path)
{
	struct statx sx;

	if (statx(AT_FDCWD, path, 0, STATX_BTIME | STATX_CTIME, &sx) < 0)
		return -1;
	if (sx.stx_mask & STATX_BTIME)
		return (int64_t)sx.stx_btime.tv_sec * 1000000000LL +
		       sx.stx_btime.tv_nsec;
	return (int64_t)sx.stx_ctime.tv_sec * 1000000000LL +
	       sx.stx_ctime.tv_nsec;
}

/*
 * made at once after the start, n times: born before it never. Without a
 * directory of lgrun's own, by waiting for the coarse clock.
 */
static void made_after_start_is_newer(const char *base, bool own_dir, int n)
{
	char top[PATH_MAX], own[PATH_MAX + 8], run[PATH_MAX + 8];
	int early = 0, floor = 0;

	snprintf(top, sizeof(top), "%s/lgclock.XXXXXX", base);
	if (!mkdtemp(top)) {
		print_message("skip %s: %m\n", base);
		return;
	}
	snprintf(run, sizeof(run), "%s/run", top);
	assert_int_equal(mkdir(run, 0700), 0);
	for (int i = 0; i < n; i++) {
		int64_t start = lg_real_ns();

		floor += lg_real_start_after(own_dir ? run : NULL, start) == 0;
		snprintf(own, sizeof(own), "%s/own%d", top, i);
		assert_int_equal(mkdir(own, 0700), 0);
		early += born(own) < start;
		assert_int_equal(rmdir(own), 0);
		/* and what was made before a start stays older than it */
		assert_int_equal(mkdir(own, 0700), 0);
		usleep(100);
		assert_true(born(own) < lg_real_ns());
		assert_int_equal(rmdir(own), 0);
	}
	print_message("%s: %d of %d born before the start; the floor took %d\n",
		      base, early, n, floor);
	if (!own_dir)
		assert_int_equal(floor, 0);
	assert_int_equal(early, 0);
	assert_int_equal(rmdir(run), 0);
	assert_int_equal(rmdir(top), 0);
}

static void test_disk(void **state)
{
	(void)state;
	made_after_start_is_newer("/tmp", true, 200);
}

static void test_tmpfs(void **state)
{
	(void)state;
	made_after_start_is_newer("/dev/shm", true, 200);
}

/* an older kernel, or a state dir that is not ours: it waits a tick */
static void test_waits(void **state)
{
	(void)state;
	made_after_start_is_newer("/tmp", false, 40);
}

/* the monotonic clock in ms and ns is one clock; boot time includes it */
static void test_mono(void **state)
{
	uint64_t ns = lg_mono_ns(), ms = lg_mono_ms(), ns2 = lg_mono_ns();

	(void)state;
	assert_true(ns / 1000000 <= ms && ms <= ns2 / 1000000);
	assert_true(lg_boot_ns() >= ns2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mono),
		cmocka_unit_test(test_disk),
		cmocka_unit_test(test_tmpfs),
		cmocka_unit_test(test_waits),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
