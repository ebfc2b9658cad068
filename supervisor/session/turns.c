// SPDX-License-Identifier: MIT
/* The agent's turns, numbered (turns.h). */
#include <stdlib.h>

#include "turns.h"

#define PROBE 8

bool lg_turns_call(struct lg_turns *t, uint64_t conv, bool first,
		   int64_t now_ns)
{
	if (!first)
		return false; /* the same response's next call */
	if (!t->main_conv)
		t->main_conv = conv;
	if (conv != t->main_conv)
		return false; /* a subagent's, a side request's */
	t->turn++;
	t->start_ns = now_ns;
	return true;
}

static size_t slot_of(uint64_t dev, uint64_t ino)
{
	uint64_t h = (ino * 0x9e3779b97f4a7c15ULL) ^
		     (dev * 0xff51afd7ed558ccdULL);

	return (size_t)(h >> 32) % LG_TURNS_SEEN;
}

unsigned lg_turns_seen(const struct lg_turns *t, uint64_t dev, uint64_t ino)
{
	size_t at = slot_of(dev, ino);

	for (size_t i = 0; t->seen && i < PROBE; i++) {
		const struct lg_turns_seen *e =
			&t->seen[(at + i) % LG_TURNS_SEEN];

		if (e->turn == t->turn && e->dev == dev && e->ino == ino)
			return e->flags;
	}
	return 0;
}

void lg_turns_mark(struct lg_turns *t, uint64_t dev, uint64_t ino,
		   unsigned flags)
{
	size_t at = slot_of(dev, ino);
	struct lg_turns_seen *free_slot = NULL;

	if (!t->seen && !(t->seen = calloc(LG_TURNS_SEEN, sizeof(*t->seen))))
		return;
	for (size_t i = 0; i < PROBE; i++) {
		struct lg_turns_seen *e = &t->seen[(at + i) % LG_TURNS_SEEN];

		if (e->turn == t->turn && e->dev == dev && e->ino == ino) {
			e->flags |= flags;
			return;
		}
		if (e->turn != t->turn && !free_slot)
			free_slot = e; /* an earlier turn's: free now */
	}
	if (free_slot)
		*free_slot = (struct lg_turns_seen){ dev, ino, t->turn, flags };
}

void lg_turns_free(struct lg_turns *t)
{
	free(t->seen);
	t->seen = NULL;
}
