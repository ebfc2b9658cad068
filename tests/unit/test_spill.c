// SPDX-License-Identifier: MIT
/*
 * Unit tests for lib/spill.c: lines and held records reach their file in
 * the order they came, in batches; what the writer left when it died is
 * written by the child that shares the mapping (lg_spill_salvage), the
 * records made into lines with the writer's own function.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include <setjmp.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <unistd.h>
#include <cmocka.h>

#include "lib/spill.h"

/* A record is a string; its line is "rec:" and the string. */
static char *line_of(const void *rec, size_t len, size_t *n)
{
	char *l = malloc(len + 6);

	*n = (size_t)snprintf(l, len + 6, "rec:%.*s\n", (int)len,
			      (const char *)rec);
	return l;
}

static char path[64];

static int open_file(void **state)
{
	int fd;

	(void)state;
	snprintf(path, sizeof(path), "/tmp/test_spill.XXXXXX");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	return 0;
}

static int remove_file(void **state)
{
	(void)state;
	unlink(path);
	return 0;
}

static char *slurp(void)
{
	static char buf[8192];
	int fd = open(path, O_RDONLY);
	ssize_t n = read(fd, buf, sizeof(buf) - 1);

	close(fd);
	buf[n < 0 ? 0 : n] = '\0';
	return buf;
}

static void test_order_and_batches(void **state)
{
	struct lg_spill *sp = lg_spill_new(64, line_of);
	int fd = open(path, O_WRONLY | O_APPEND);

	(void)state;
	assert_non_null(sp);
	assert_int_equal(lg_spill_add(sp, fd, path, "a\n", 2), 0);
	assert_int_equal(lg_spill_hold(sp, path, "b", 1), 0);
	assert_true(lg_spill_since(sp) > 0);
	assert_string_equal(slurp(), ""); /* nothing written yet */
	assert_int_equal(lg_spill_settle(sp, fd), 0);
	assert_string_equal(slurp(), ""); /* a line now, not yet written */
	assert_int_equal(lg_spill_hold(sp, path, "c", 1), 0);
	assert_int_equal(lg_spill_flush(sp, fd), 0);
	assert_string_equal(slurp(), "a\nrec:b\nrec:c\n");
	assert_int_equal(lg_spill_since(sp), 0);
	/* more than the room: written at once, in order */
	for (int i = 0; i < 20; i++)
		assert_int_equal(lg_spill_add(sp, fd, path, "0123456789\n", 11),
				 0);
	assert_int_equal(lg_spill_flush(sp, fd), 0);
	assert_int_equal(strlen(slurp()), 14 + 20 * 11);
	/* records past the room: -ENOSPC, the caller settles first */
	{
		char big[40];
		int r = 0, k;

		memset(big, 'x', sizeof(big));
		for (k = 0; k < 10 && r >= 0; k++)
			r = lg_spill_hold(sp, path, big, sizeof(big));
		assert_int_equal(r, -ENOSPC);
		assert_true(k > 1);
	}
	close(fd);
	lg_spill_free(sp);
}

/*
 * Past half the records' room, one hold says a settle is wanted (1),
 * once, until a settle is done.
 */
static void test_wanted(void **state)
{
	struct lg_spill *sp = lg_spill_new(256, line_of);
	int fd = open(path, O_WRONLY | O_APPEND), ones = 0, r = 0;

	(void)state;
	assert_false(lg_spill_wanted(sp));
	for (int i = 0; i < 8 && r >= 0; i++) {
		r = lg_spill_hold(sp, path, "0123456789abcdef", 16);
		ones += r == 1;
	}
	assert_int_equal(ones, 1);
	assert_true(lg_spill_wanted(sp));
	assert_int_equal(lg_spill_settle(sp, fd), 0);
	assert_false(lg_spill_wanted(sp));
	assert_int_equal(lg_spill_hold(sp, path, "x", 1), 0);
	assert_int_equal(lg_spill_flush(sp, fd), 0);
	close(fd);
	lg_spill_free(sp);
}

/*
 * One thread holds records (and settles itself when the room is full),
 * another settles and flushes meanwhile, as lgrun's main thread does:
 * every record reaches the file once, in the order it was held.
 */
struct holder {
	struct lg_spill *sp;
	int fd, n;
	atomic_bool done;
};

static void *hold_many(void *arg)
{
	struct holder *h = arg;
	char rec[16];

	for (int i = 0; i < h->n; i++) {
		int len = snprintf(rec, sizeof(rec), "%d", i), r;

		while ((r = lg_spill_hold(h->sp, path, rec, (size_t)len)) ==
		       -ENOSPC)
			assert_int_equal(lg_spill_settle(h->sp, h->fd), 0);
		assert_true(r >= 0);
	}
	atomic_store(&h->done, true);
	return NULL;
}

static void test_settle_beside_holder(void **state)
{
	struct holder h = { lg_spill_new(512, line_of), -1, 100000, false };
	pthread_t t;
	FILE *f;
	char line[64];
	int next = 0;

	(void)state;
	h.fd = open(path, O_WRONLY | O_APPEND | O_TRUNC);
	assert_int_equal(pthread_create(&t, NULL, hold_many, &h), 0);
	while (!atomic_load(&h.done))
		assert_int_equal(lg_spill_flush(h.sp, h.fd), 0);
	pthread_join(t, NULL);
	assert_int_equal(lg_spill_flush(h.sp, h.fd), 0);
	assert_int_equal(lg_spill_since(h.sp), 0);
	f = fopen(path, "r");
	while (fgets(line, sizeof(line), f)) {
		char want[32];

		snprintf(want, sizeof(want), "rec:%d\n", next++);
		assert_string_equal(line, want);
	}
	fclose(f);
	assert_int_equal(next, h.n);
	close(h.fd);
	lg_spill_free(h.sp);
}

/*
 * The writer dies with a line and a record waiting: the child forked
 * before it wrote them (as the watchdog is) writes both when the pipe
 * only the writer holds ends.
 */
static void test_salvage_by_child(void **state)
{
	struct lg_spill *sp = lg_spill_new(4096, line_of);
	int p[2], st;
	pid_t child, writer;

	(void)state;
	assert_non_null(sp);
	assert_int_equal(pipe(p), 0);
	child = fork();
	if (child == 0) {
		char c;

		close(p[1]);
		while (read(p[0], &c, 1) > 0)
			;
		_exit(lg_spill_salvage(sp) == 7 + 11 ? 0 : 1);
	}
	close(p[0]);
	writer = fork();
	if (writer == 0) {
		int fd = open(path, O_WRONLY | O_APPEND);

		lg_spill_add(sp, fd, path, "kept 1\n", 7);
		lg_spill_flush(sp, fd);
		lg_spill_add(sp, fd, path, "kept 2\n", 7);
		lg_spill_hold(sp, path, "kept 3", 6);
		_exit(0); /* dies with them waiting */
	}
	close(p[1]); /* the writer's end is the last */
	assert_int_equal(waitpid(writer, &st, 0), writer);
	assert_int_equal(waitpid(child, &st, 0), child);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	assert_string_equal(slurp(), "kept 1\nkept 2\nrec:kept 3\n");
	lg_spill_free(sp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_order_and_batches,
						open_file, remove_file),
		cmocka_unit_test_setup_teardown(test_wanted, open_file,
						remove_file),
		cmocka_unit_test_setup_teardown(test_settle_beside_holder,
						open_file, remove_file),
		cmocka_unit_test_setup_teardown(test_salvage_by_child,
						open_file, remove_file),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
