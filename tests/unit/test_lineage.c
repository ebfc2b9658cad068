// SPDX-License-Identifier: MIT
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "provenance/lineage.h"

static void test_marks(void **state)
{
	struct lg_lineage *l = lg_lineage_new(0);
	struct lg_inode_key a = { 8, 100, 5 }, b = { 8, 100, 6 };

	(void)state;
	assert_int_equal(lg_lineage_get(l, &a), 0);
	assert_int_equal(lg_lineage_mark(l, &a, LG_INODE_INHERITED, 0), 0);
	assert_int_equal(lg_lineage_get(l, &a), LG_INODE_INHERITED);
	/* the same number born later is another file */
	assert_int_equal(lg_lineage_get(l, &b), 0);
	assert_int_equal(lg_lineage_mark(l, &a, LG_INODE_REWRITTEN,
					 LG_INODE_INHERITED),
			 0);
	assert_int_equal(lg_lineage_get(l, &a), LG_INODE_REWRITTEN);
	/* clearing what is not there adds nothing */
	assert_int_equal(lg_lineage_mark(l, &b, 0, LG_INODE_REWRITTEN), 0);
	assert_int_equal(lg_lineage_get(l, &b), 0);
	lg_lineage_free(l);
}

/* Many inodes: the table grows; at its bound new marks are dropped, counted. */
static void test_grows_and_bounds(void **state)
{
	struct lg_lineage *l = lg_lineage_new(5000);

	(void)state;
	for (uint64_t i = 1; i <= 5000; i++) {
		struct lg_inode_key k = { 1, i, (int64_t)i * 7 };

		assert_int_equal(lg_lineage_mark(l, &k, LG_INODE_INHERITED, 0),
				 0);
	}
	for (uint64_t i = 1; i <= 5000; i++) {
		struct lg_inode_key k = { 1, i, (int64_t)i * 7 };

		assert_int_equal(lg_lineage_get(l, &k), LG_INODE_INHERITED);
	}
	struct lg_inode_key more = { 1, 99999, 1 };

	assert_int_equal(lg_lineage_mark(l, &more, LG_INODE_INHERITED, 0),
			 -ENOSPC);
	assert_int_equal(lg_lineage_dropped(l), 1);
	/* known ones can still change */
	struct lg_inode_key k1 = { 1, 1, 7 };

	assert_int_equal(lg_lineage_mark(l, &k1, LG_INODE_REWRITTEN, 0), 0);
	lg_lineage_free(l);
}

static void test_moves(void **state)
{
	struct lg_lineage *l = lg_lineage_new(0);
	char out[64];

	(void)state;
	assert_int_equal(
		lg_lineage_moved_to(l, "/a/b", 0, 1000, out, sizeof(out)), 0);
	lg_lineage_move(l, "/data/tree", "/mnt/other/tree", 10);
	assert_int_equal(lg_lineage_moved_to(l, "/data/tree/x/y", 20, 1000, out,
					     sizeof(out)),
			 1);
	assert_string_equal(out, "/mnt/other/tree/x/y");
	assert_int_equal(lg_lineage_moved_to(l, "/data/tree", 20, 1000, out,
					     sizeof(out)),
			 1);
	assert_string_equal(out, "/mnt/other/tree");
	/* a sibling whose name starts the same is not below it */
	assert_int_equal(lg_lineage_moved_to(l, "/data/treehouse", 20, 1000,
					     out, sizeof(out)),
			 0);
	/* the newest move of a path wins */
	lg_lineage_move(l, "/data/tree", "/mnt/third/tree", 30);
	assert_int_equal(lg_lineage_moved_to(l, "/data/tree/x", 40, 1000, out,
					     sizeof(out)),
			 1);
	assert_string_equal(out, "/mnt/third/tree/x");
	/* too long for out */
	assert_int_equal(lg_lineage_moved_to(l, "/data/tree/a-long-name-here",
					     40, 1000, out, 20),
			 -ENAMETOOLONG);
	/* old moves are forgotten */
	assert_int_equal(lg_lineage_moved_to(l, "/data/tree/x", 5000, 1000, out,
					     sizeof(out)),
			 0);
	/* more moves than the ring holds: the oldest go */
	for (int i = 0; i < 100; i++) {
		char src[32];

		snprintf(src, sizeof(src), "/s/%d", i);
		lg_lineage_move(l, src, "/d", 6000);
	}
	assert_int_equal(lg_lineage_moved_to(l, "/s/99", 6001, 1000, out,
					     sizeof(out)),
			 1);
	assert_int_equal(lg_lineage_moved_to(l, "/s/0", 6001, 1000, out,
					     sizeof(out)),
			 0);
	lg_lineage_free(l);
}

/* Issue 39: the name before the session, through renames and links. */
static void test_names_before(void **state)
{
	struct lg_lineage *l = lg_lineage_new(0);
	struct lg_inode_key a = { 1, 10, 100 }, b = { 1, 11, 100 };
	char out[256];

	(void)state;
	/* an inode with no mark has no origin to keep */
	lg_lineage_set_origin(l, &a, "/p/f");
	assert_null(lg_lineage_origin(l, &a));
	assert_int_equal(lg_lineage_mark(l, &a, LG_INODE_MOVED_AWAY, 0), 0);
	lg_lineage_set_origin(l, &a, "/p/f");
	lg_lineage_set_origin(l, &a, "/p/f.o"); /* renamed again: the first */
	assert_string_equal(lg_lineage_origin(l, &a), "/p/f");
	assert_int_equal(
		lg_lineage_name_before(l, &a, "/p/x", out, sizeof(out)), 1);
	assert_string_equal(out, "/p/f");
	assert_int_equal(
		lg_lineage_name_before(l, &a, "/p/f", out, sizeof(out)), 0);
	/* a directory renamed twice; what lies below keeps its name */
	assert_int_equal(lg_lineage_name_before(l, &b, "/p/build/g", out,
						sizeof(out)),
			 0);
	assert_int_equal(lg_lineage_dir_moved(l, "/p/data", "/p/build"), 0);
	assert_int_equal(lg_lineage_dir_moved(l, "/p/data", "/p/x/y"), 0);
	assert_int_equal(
		lg_lineage_name_before(l, &b, "/p/x/y/g", out, sizeof(out)), 1);
	assert_string_equal(out, "/p/data/g");
	assert_int_equal(lg_lineage_name_before(l, &b, "/p/build/g", out,
						sizeof(out)),
			 1);
	assert_string_equal(out, "/p/data/g");
	/* not below: /p/buildx is another name */
	assert_int_equal(lg_lineage_name_before(l, NULL, "/p/buildx/g", out,
						sizeof(out)),
			 0);
	/* the inode's own origin wins over its directory's */
	assert_int_equal(
		lg_lineage_name_before(l, &a, "/p/x/y/f", out, sizeof(out)), 1);
	assert_string_equal(out, "/p/f");
	lg_lineage_free(l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_marks),
		cmocka_unit_test(test_grows_and_bounds),
		cmocka_unit_test(test_moves),
		cmocka_unit_test(test_names_before),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
