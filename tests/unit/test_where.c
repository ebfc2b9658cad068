// SPDX-License-Identifier: MIT
/*
 * Unit tests for where.c: a path resolved for a task (here this process,
 * as the notify thread does for a target) and the display path's cache.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "seccomp/where.h"

static char top[PATH_MAX];

static int setup(void **state)
{
	(void)state;
	snprintf(top, sizeof(top), "/tmp/lgwhere.XXXXXX");
	return mkdtemp(top) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[PATH_MAX + 16];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", top);
	return system(cmd) == 0 ? 0 : -1;
}

/* unlinkat(dirfd, name) as rm -r makes it: the display path of name. */
static void where_at(int dirfd, const char *name, char *out, size_t size)
{
	struct lg_where w;

	assert_int_equal(lg_where_resolve(getpid(), dirfd, name, false, &w), 0);
	assert_true(w.dirfd >= 0);
	snprintf(out, size, "%s", w.path);
	lg_where_done(&w);
}

static void sleep_ms(long ms)
{
	struct timespec t = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&t, NULL);
}

/*
 * Directories born in the last 50 ms are not remembered (where.c): the
 * tests that want the cache make theirs older.
 */
static void make_old_dir(const char *p)
{
	assert_int_equal(mkdir(p, 0755), 0);
	sleep_ms(60);
}

/* A rename the tree makes (seen: lg_where_moved) shows at once. */
static void test_rename_seen(void **state)
{
	char a[PATH_MAX + 8], b[PATH_MAX + 8], want[PATH_MAX + 16],
		got[PATH_MAX + 1];
	int fd;

	(void)state;
	snprintf(a, sizeof(a), "%s/a", top);
	snprintf(b, sizeof(b), "%s/b", top);
	make_old_dir(a);
	fd = open(a, O_PATH | O_DIRECTORY);
	assert_true(fd >= 0);
	snprintf(want, sizeof(want), "%s/f", a);
	where_at(fd, "f", got, sizeof(got));
	assert_string_equal(got, want);
	where_at(fd, "g", got, sizeof(got)); /* remembered: same answer */
	snprintf(want, sizeof(want), "%s/g", a);
	assert_string_equal(got, want);

	lg_where_moved();
	assert_int_equal(rename(a, b), 0);
	lg_where_moved();
	where_at(fd, "f", got, sizeof(got));
	snprintf(want, sizeof(want), "%s/f", b);
	assert_string_equal(got, want);
	close(fd);
	rmdir(b);
}

/*
 * A rename lgrun does not see (made by a process outside the tree) shows
 * within the cache's 100 ms, as a readlink a moment later would.
 */
static void test_rename_unseen(void **state)
{
	char a[PATH_MAX + 8], b[PATH_MAX + 8], want[PATH_MAX + 16],
		got[PATH_MAX + 1];
	int fd;

	(void)state;
	snprintf(a, sizeof(a), "%s/c", top);
	snprintf(b, sizeof(b), "%s/d", top);
	make_old_dir(a);
	fd = open(a, O_PATH | O_DIRECTORY);
	where_at(fd, "f", got, sizeof(got));
	assert_int_equal(rename(a, b), 0);
	/* remembered: the old path for now (the cache is used) */
	where_at(fd, "f", got, sizeof(got));
	snprintf(want, sizeof(want), "%s/f", a);
	assert_string_equal(got, want);
	sleep_ms(150);
	where_at(fd, "f", got, sizeof(got));
	snprintf(want, sizeof(want), "%s/f", b);
	assert_string_equal(got, want);
	close(fd);
	rmdir(b);
}

/*
 * A directory removed and another made: even when the filesystem gives the
 * new one the old one's inode number (ext4 often does), its birth time
 * differs and its own path is read.
 */
static void test_inode_reused(void **state)
{
	char a[PATH_MAX + 8], b[PATH_MAX + 8], want[PATH_MAX + 16],
		got[PATH_MAX + 1];

	(void)state;
	for (int i = 0; i < 25; i++) {
		int fd;

		snprintf(a, sizeof(a), "%s/x%d", top, i);
		snprintf(b, sizeof(b), "%s/y%d", top, i);
		if (i < 5)
			make_old_dir(a); /* remembered, then gone */
		else
			assert_int_equal(mkdir(a, 0755), 0); /* too young */
		fd = open(a, O_PATH | O_DIRECTORY);
		where_at(fd, "f", got, sizeof(got));
		close(fd);
		assert_int_equal(rmdir(a), 0);
		assert_int_equal(mkdir(b, 0755), 0);
		fd = open(b, O_PATH | O_DIRECTORY);
		where_at(fd, "f", got, sizeof(got));
		snprintf(want, sizeof(want), "%s/f", b);
		assert_string_equal(got, want);
		close(fd);
		rmdir(b);
	}
}

/* Absolute paths, through a symlinked directory: the real path. */
static void test_absolute_symlink(void **state)
{
	char real[PATH_MAX + 8], link[PATH_MAX + 8], arg[PATH_MAX + 16],
		want[PATH_MAX + 16], got[PATH_MAX + 1];

	(void)state;
	snprintf(real, sizeof(real), "%s/real", top);
	snprintf(link, sizeof(link), "%s/link", top);
	make_old_dir(real);
	assert_int_equal(symlink(real, link), 0);
	snprintf(arg, sizeof(arg), "%s/f", link);
	snprintf(want, sizeof(want), "%s/f", real);
	for (int i = 0; i < 3; i++) {
		where_at(AT_FDCWD, arg, got, sizeof(got));
		assert_string_equal(got, want);
	}
	lg_where_forget();
	where_at(AT_FDCWD, arg, got, sizeof(got));
	assert_string_equal(got, want);
}

/*
 * Magic links as another task names them (issue 29, item 5): /dev/fd/N
 * and /dev/stdin are that task's descriptors, not ours; /proc/PID/cwd,
 * /proc/PID/root and /proc/PID/fd/N lead to the directories they name.
 */
static void test_magic_links(void **state)
{
	char cwd[PATH_MAX + 8], open_dir[PATH_MAX + 8], ours[PATH_MAX + 8],
		arg[PATH_MAX + 64], want[PATH_MAX + 16], got[PATH_MAX + 1];
	int ready[2], fd;
	pid_t child;
	char c;

	(void)state;
	snprintf(cwd, sizeof(cwd), "%s/cwd", top);
	snprintf(open_dir, sizeof(open_dir), "%s/opened", top);
	snprintf(ours, sizeof(ours), "%s/ours", top);
	make_old_dir(cwd);
	make_old_dir(open_dir);
	make_old_dir(ours);
	snprintf(arg, sizeof(arg), "%s/sub", cwd);
	assert_int_equal(mkdir(arg, 0755), 0);
	assert_int_equal(pipe(ready), 0);
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		fd = open(open_dir, O_RDONLY | O_DIRECTORY);
		if (fd < 0 || dup2(fd, 7) < 0 || dup2(fd, 0) < 0 ||
		    chdir(cwd) < 0)
			_exit(1);
		if (write(ready[1], "r", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	assert_int_equal(read(ready[0], &c, 1), 1);
	/* our own fd 7 names another directory */
	fd = open(ours, O_RDONLY | O_DIRECTORY);
	assert_true(fd >= 0);
	assert_true(dup2(fd, 7) == 7);
	{
		const struct {
			const char *fmt, *dir;
		} cases[] = {
			{ "/dev/fd/7/f", open_dir },
			{ "/dev/stdin/f", open_dir },
			{ "/proc/self/fd/7/f", open_dir },
			{ "/proc/%d/fd/7/f", open_dir },
			{ "/proc/%d/cwd/f", cwd },
			{ "/proc/%d/task/%d/cwd/f", cwd },
			{ "/proc/self/cwd/sub/../f", cwd },
		};

		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
			struct lg_where w;

			snprintf(arg, sizeof(arg), cases[i].fmt, child, child);
			snprintf(want, sizeof(want), "%s/f", cases[i].dir);
			assert_int_equal(lg_where_resolve(child, AT_FDCWD, arg,
							  false, &w),
					 0);
			assert_true(w.dirfd >= 0);
			snprintf(got, sizeof(got), "%s", w.path);
			lg_where_done(&w);
			assert_string_equal(got, want);
		}
		/* the root: the path from it */
		snprintf(arg, sizeof(arg), "/proc/%d/root%s/f", child, cwd);
		snprintf(want, sizeof(want), "%s/f", cwd);
		{
			struct lg_where w;

			assert_int_equal(lg_where_resolve(child, AT_FDCWD, arg,
							  false, &w),
					 0);
			assert_true(w.dirfd >= 0);
			assert_string_equal(w.path, want);
			lg_where_done(&w);
		}
	}
	close(7);
	close(fd);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	close(ready[0]);
	close(ready[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rename_seen),
		cmocka_unit_test(test_rename_unseen),
		cmocka_unit_test(test_inode_reused),
		cmocka_unit_test(test_absolute_symlink),
		cmocka_unit_test(test_magic_links),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
