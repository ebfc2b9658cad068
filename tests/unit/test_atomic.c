// SPDX-License-Identifier: MIT
/*
 * Unit tests for lib/atomic.c: a file written all or nothing
 * (lg_write_atomic), in a temporary folder of its own.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "lib/atomic.h"

static char dir[64];

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/lgatomic.XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static size_t read_all(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "r");
	size_t n;

	assert_non_null(f);
	n = fread(buf, 1, size - 1, f);
	buf[n] = '\0';
	fclose(f);
	return n;
}

/* Only path itself is left in the folder: no temporary file. */
static void only(const char *name)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)))
		if (e->d_name[0] != '.') {
			assert_string_equal(e->d_name, name);
			n++;
		}
	closedir(d);
	assert_int_equal(n, 1);
}

static void test_bytes(void **state)
{
	char path[128], buf[64];
	struct stat st;
	mode_t old = umask(077);

	(void)state;
	snprintf(path, sizeof(path), "%s/state", dir);
	assert_int_equal(
		lg_write_atomic_bytes(path, 0640, true, "one", 3, true), 0);
	assert_int_equal(read_all(path, buf, sizeof(buf)), 4);
	assert_string_equal(buf, "one\n");
	/* the mode asked for, whatever the umask */
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0640);
	/* replaced whole */
	assert_int_equal(
		lg_write_atomic_bytes(path, 0600, false, "two", 3, false), 0);
	read_all(path, buf, sizeof(buf));
	assert_string_equal(buf, "two");
	only("state");
	umask(old);
}

static int fail_after(int fd, void *ctx)
{
	(void)ctx;
	assert_int_equal(lg_write_all(fd, "partial", 7), 0);
	return -ENOSPC;
}

static void test_failure_leaves_old(void **state)
{
	char path[128], buf[64];

	(void)state;
	snprintf(path, sizeof(path), "%s/state", dir);
	assert_int_equal(
		lg_write_atomic_bytes(path, 0640, false, "kept", 4, false), 0);
	assert_int_equal(lg_write_atomic(path, 0640, false, fail_after, NULL),
			 -ENOSPC);
	read_all(path, buf, sizeof(buf));
	assert_string_equal(buf, "kept");
	only("state");
}

static void test_symlink_at_tmp(void **state)
{
	char path[128], tmp[160], target[128], buf[64];

	(void)state;
	/* a link planted at the temporary name is removed, not followed */
	snprintf(path, sizeof(path), "%s/f", dir);
	snprintf(target, sizeof(target), "%s/target", dir);
	snprintf(tmp, sizeof(tmp), "%s.%d.tmp", path, getpid());
	assert_int_equal(symlink(target, tmp), 0);
	assert_int_equal(
		lg_write_atomic_bytes(path, 0600, false, "x", 1, false), 0);
	assert_int_equal(access(target, F_OK), -1);
	read_all(path, buf, sizeof(buf));
	assert_string_equal(buf, "x");
	/* a folder that is not there: the error, nothing made */
	snprintf(path, sizeof(path), "%s/none/f", dir);
	assert_int_equal(lg_write_atomic_bytes(path, 0600, false, "x", 1,
					       false),
			 -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_bytes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_failure_leaves_old, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_symlink_at_tmp, setup,
						teardown),
	};

	return cmocka_run_group_tests_name("atomic", tests, NULL, NULL);
}
