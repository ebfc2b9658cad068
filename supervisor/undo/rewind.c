// SPDX-License-Identifier: MIT
/* Which entries undo turns K and later, and where they go (rewind.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rewind.h"

/* p is at or below dir: the length of dir, else 0. */
static size_t at_or_below(const char *p, const char *dir)
{
	size_t n = strlen(dir);

	return strncmp(p, dir, n) == 0 && (p[n] == '/' || p[n] == '\0') ? n : 0;
}

/*
 * A rename of the session's file to a new name is two lines: the rename
 * ("moved", own) and the new name ("made", its inode): undone one step
 * back, it is not set aside at the new name too.
 */
static void drop_renamed_made(struct lgq_index *x)
{
	size_t k = 0;

	for (size_t i = 0; i < x->n; i++) {
		struct lgq_entry *e = &x->e[i];
		bool renamed = false;

		for (size_t j = 0;
		     e->made_new && e->ino && j < x->n && !renamed; j++) {
			const struct lgq_entry *m = &x->e[j];

			renamed = m->moved && m->ino == e->ino && m->n < e->n &&
				  m->moved_to &&
				  strcmp(m->moved_to, e->path) == 0;
		}
		if (renamed)
			lgq_entry_free(e);
		else
			x->e[k++] = *e;
	}
	x->n = k;
}

static int by_n_newest(const void *a, const void *b)
{
	const struct lgq_entry *x = *(struct lgq_entry *const *)a;
	const struct lgq_entry *y = *(struct lgq_entry *const *)b;

	return x->n > y->n ? -1 : x->n < y->n;
}

/*
 * e's path taken back through the renames (newest first) that ran before
 * it: what was renamed from A to B had its name, or what lay below it,
 * under A. 0 or -ENOMEM.
 */
static int name_back(struct lgq_entry *e, struct lgq_entry **mv, size_t nmv)
{
	for (size_t i = 0; i < nmv; i++) {
		const struct lgq_entry *m = mv[i];
		size_t k;
		char *p;

		if (m->n >= e->n || !m->moved_to || !m->moved_from)
			continue;
		k = at_or_below(e->path, m->moved_to);
		if (!k)
			continue;
		p = malloc(strlen(m->moved_from) + strlen(e->path + k) + 1);
		if (!p)
			return -ENOMEM;
		strcpy(p, m->moved_from);
		strcat(p, e->path + k);
		free(e->path);
		e->path = p;
	}
	return 0;
}

int lgq_select_turns(struct lgq_index *x, long long turn, long long until)
{
	struct lgq_entry **mv;
	size_t k = 0, nmv = 0;
	int err = 0;

	for (size_t i = 0; i < x->n; i++) {
		struct lgq_entry *e = &x->e[i];
		/* --turn 1: the whole session, what came before turn 1 too */
		bool want = !turn ? !e->own :
				    strcmp(e->op, "set_aside") != 0 &&
					    e->turn >= (turn == 1 ? 0 : turn);

		if (until > 0 && e->turn >= until)
			want = false; /* undone by that rewind */

		if (want)
			x->e[k++] = *e;
		else
			lgq_entry_free(e);
	}
	x->n = k;
	if (!turn)
		return 0;
	drop_renamed_made(x);
	/* a rename goes back one step: to its name at that rename */
	mv = calloc(x->n + 1, sizeof(*mv));
	if (!mv)
		return -ENOMEM;
	for (size_t i = 0; i < x->n; i++) {
		struct lgq_entry *e = &x->e[i];

		if (!e->moved || !e->moved_from)
			continue;
		mv[nmv++] = e;
	}
	qsort(mv, nmv, sizeof(*mv), by_n_newest);
	for (size_t i = 0; i < x->n && !err; i++) {
		struct lgq_entry *e = &x->e[i];

		if (e->moved) {
			if (e->moved_from) {
				char *p = strdup(e->moved_from);

				if (!p) {
					err = -ENOMEM;
					break;
				}
				free(e->path);
				e->path = p;
			}
			continue;
		}
		/* its name when its change ran, then back to turn K's */
		if (e->at_path) {
			free(e->path);
			e->path = e->at_path;
			e->at_path = NULL;
		}
		err = name_back(e, mv, nmv);
	}
	free(mv);
	return err;
}
