// SPDX-License-Identifier: MIT
/*
 * Unit tests for the agent's turns (session/turns.c: which responses begin
 * one) and the rewind's choice of entries (undo/rewind.c: which
 * undo turns K and later, and at what name), issue 40.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "undo/rewind.h"
#include "session/turns.h"

#define MAIN 0x1111
#define SIDE 0x2222
#define SUB 0x3333

static void test_turns_main_conversation(void **state)
{
	struct lg_turns t = { 0 };

	(void)state;
	/* a side request's answer carries no call: nothing is asked */
	assert_true(lg_turns_call(&t, MAIN, true, 100));
	assert_int_equal(t.turn, 1);
	assert_int_equal(t.start_ns, 100);
	/* the same response's second and third calls: the same turn */
	assert_false(lg_turns_call(&t, MAIN, false, 110));
	assert_false(lg_turns_call(&t, MAIN, false, 120));
	assert_int_equal(t.turn, 1);
	assert_int_equal(t.start_ns, 100);
	/* a subagent's responses belong to the turn that started it */
	assert_false(lg_turns_call(&t, SUB, true, 130));
	assert_false(lg_turns_call(&t, SUB, true, 140));
	assert_int_equal(t.turn, 1);
	/* the main conversation's next response: turn 2 */
	assert_true(lg_turns_call(&t, MAIN, true, 200));
	assert_int_equal(t.turn, 2);
	assert_int_equal(t.start_ns, 200);
	assert_false(lg_turns_call(&t, SIDE, true, 210));
	assert_true(lg_turns_call(&t, MAIN, true, 300));
	assert_int_equal(t.turn, 3);
}

static void test_turns_none_before_calls(void **state)
{
	struct lg_turns t = { 0 };

	(void)state;
	/* only a first call begins a turn: a stray second one does not */
	assert_false(lg_turns_call(&t, MAIN, false, 50));
	assert_int_equal(t.turn, 0);
	assert_int_equal(t.main_conv, 0);
}

static void test_turns_seen_per_turn(void **state)
{
	struct lg_turns t = { 0 };

	(void)state;
	assert_true(lg_turns_call(&t, MAIN, true, 100));
	assert_int_equal(lg_turns_seen(&t, 1, 42), 0);
	lg_turns_mark(&t, 1, 42, LG_TURN_FOUND);
	lg_turns_mark(&t, 1, 42, LG_TURN_MODE);
	assert_int_equal(lg_turns_seen(&t, 1, 42),
			 LG_TURN_FOUND | LG_TURN_MODE);
	/* another device's inode 42 is another inode */
	assert_int_equal(lg_turns_seen(&t, 2, 42), 0);
	/* many inodes: each keeps its own flags */
	for (uint64_t i = 100; i < 1100; i++)
		lg_turns_mark(&t, 1, i, LG_TURN_FOUND | LG_TURN_CONTENT);
	for (uint64_t i = 100; i < 1100; i++)
		assert_int_equal(lg_turns_seen(&t, 1, i),
				 LG_TURN_FOUND | LG_TURN_CONTENT);
	assert_int_equal(lg_turns_seen(&t, 1, 42),
			 LG_TURN_FOUND | LG_TURN_MODE);
	/* the next turn found nothing yet: what this one saw is gone */
	assert_true(lg_turns_call(&t, MAIN, true, 200));
	assert_int_equal(lg_turns_seen(&t, 1, 42), 0);
	assert_int_equal(lg_turns_seen(&t, 1, 500), 0);
	lg_turns_mark(&t, 1, 500, LG_TURN_SIZE);
	assert_int_equal(lg_turns_seen(&t, 1, 500), LG_TURN_SIZE);
	lg_turns_free(&t);
}

/* An entry as lgctl's index reader makes it (quarantine/index.c). */
static void add(struct lgq_index *x, long long n, long long turn, bool own,
		const char *kind, const char *op, const char *path,
		const char *from, const char *to, const char *at)
{
	struct lgq_entry *e;

	x->e = realloc(x->e, (x->n + 1) * sizeof(*x->e));
	assert_non_null(x->e);
	e = &x->e[x->n++];
	memset(e, 0, sizeof(*e));
	e->n = n;
	e->turn = turn;
	e->own = own;
	snprintf(e->op, sizeof(e->op), "%s", op);
	e->path = strdup(path);
	e->moved = strcmp(kind, "moved") == 0;
	e->made_new = strcmp(kind, "made") == 0;
	if (strcmp(kind, "file") == 0)
		e->kept = strdup("/q/kept");
	e->moved_from = from ? strdup(from) : NULL;
	e->moved_to = to ? strdup(to) : NULL;
	e->at_path = at ? strdup(at) : NULL;
	if (turn > x->max_turn)
		x->max_turn = turn;
}

/*
 * A session: before turn 1 the agent's own file (n 1); turn 2 overwrote
 * notes (pre-existing, kept); turn 3 renamed old -> new; turn 4 removed
 * new (kept, named old before the session, removed as new), renamed the
 * pre-existing folder d to e, overwrote e/x again (own: what turn 2 left);
 * turn 5 made e/y; a restore set one aside (no turn).
 */
static void load(struct lgq_index *x)
{
	memset(x, 0, sizeof(*x));
	add(x, 1, 0, false, "made", "make", "/p/agent.lock", NULL, NULL, NULL);
	add(x, 2, 2, false, "file", "open_trunc", "/p/notes", NULL, NULL, NULL);
	add(x, 3, 3, false, "moved", "rename", "/p/old", "/p/old", "/p/new",
	    NULL);
	add(x, 4, 4, false, "file", "unlink", "/p/old", NULL, NULL, "/p/new");
	add(x, 5, 4, false, "moved", "rename", "/p/d", "/p/d", "/p/e", NULL);
	add(x, 6, 4, true, "file", "open_trunc", "/p/e/x", NULL, NULL, NULL);
	add(x, 7, 5, false, "made", "make", "/p/e/y", NULL, NULL, NULL);
	add(x, 8, 0, false, "file", "set_aside", "/p/e/y", NULL, NULL, NULL);
}

static void drop(struct lgq_index *x)
{
	for (size_t i = 0; i < x->n; i++)
		lgq_entry_free(&x->e[i]);
	free(x->e);
}

static const struct lgq_entry *by_n(const struct lgq_index *x, long long n)
{
	for (size_t i = 0; i < x->n; i++)
		if (x->e[i].n == n)
			return &x->e[i];
	return NULL;
}

static void test_restore_leaves_own(void **state)
{
	struct lgq_index x;

	(void)state;
	load(&x);
	assert_int_equal(x.n, 8);
	assert_int_equal(lgq_select_turns(&x, 0, 0), 0);
	/* the whole session: all but the session's own version */
	assert_int_equal(x.n, 7);
	assert_null(by_n(&x, 6));
	/* names as the index says them: from before the session */
	assert_string_equal(by_n(&x, 4)->path, "/p/old");
	assert_string_equal(by_n(&x, 3)->path, "/p/old");
	drop(&x);
}

static void test_rewind_turn_4(void **state)
{
	struct lgq_index x;

	(void)state;
	load(&x);
	assert_int_equal(lgq_select_turns(&x, 4, 0), 0);
	/* turns 4 and 5, no restore's set-aside */
	assert_int_equal(x.n, 4);
	assert_null(by_n(&x, 1));
	assert_null(by_n(&x, 2));
	assert_null(by_n(&x, 3));
	assert_null(by_n(&x, 8));
	/* removed as new, which it was called when turn 4 began */
	assert_string_equal(by_n(&x, 4)->path, "/p/new");
	/* the folder's rename goes one step back */
	assert_string_equal(by_n(&x, 5)->path, "/p/d");
	/* changed at e/x after d became e: d/x when turn 4 began */
	assert_string_equal(by_n(&x, 6)->path, "/p/d/x");
	/* made below e after the rename: d/y once e is d again */
	assert_string_equal(by_n(&x, 7)->path, "/p/d/y");
	drop(&x);
}

static void test_rewind_turn_3_and_1(void **state)
{
	struct lgq_index x;

	(void)state;
	load(&x);
	assert_int_equal(lgq_select_turns(&x, 3, 0), 0);
	assert_int_equal(x.n, 5);
	/* the rename of turn 3 is undone too: the removal goes back to old */
	assert_string_equal(by_n(&x, 4)->path, "/p/old");
	assert_string_equal(by_n(&x, 3)->path, "/p/old");
	drop(&x);

	load(&x);
	assert_int_equal(lgq_select_turns(&x, 1, 0), 0);
	/* --turn 1: the whole session, what came before turn 1 too */
	assert_int_equal(x.n, 7);
	assert_non_null(by_n(&x, 1));
	assert_null(by_n(&x, 8));
	drop(&x);
}

static void test_rewind_after_rewind(void **state)
{
	struct lgq_index x;

	(void)state;
	load(&x);
	/* rewound to 4 already: only turns 2 and 3 are left */
	assert_int_equal(lgq_select_turns(&x, 2, 4), 0);
	assert_int_equal(x.n, 2);
	assert_non_null(by_n(&x, 2));
	assert_non_null(by_n(&x, 3));
	drop(&x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_turns_main_conversation),
		cmocka_unit_test(test_turns_none_before_calls),
		cmocka_unit_test(test_turns_seen_per_turn),
		cmocka_unit_test(test_restore_leaves_own),
		cmocka_unit_test(test_rewind_turn_4),
		cmocka_unit_test(test_rewind_turn_3_and_1),
		cmocka_unit_test(test_rewind_after_rewind),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
