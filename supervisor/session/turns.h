/* SPDX-License-Identifier: MIT */
/*
 * The agent's turns (issue 40), pure: a turn is one response of the model
 * that carried tool calls, in the main conversation, numbered from 1 in
 * the order the proxy saw them. The main conversation is the first one
 * seen making calls: a subagent's or a side request's calls belong to
 * the turn that is current (the main conversation's that started them).
 */
#ifndef LG_TURNS_H
#define LG_TURNS_H

#include <stdbool.h>
#include <stdint.h>

/*
 * What the current turn recorded of an inode it found (session/fs.c's
 * turn_record): found unchanged at the turn's start, then its content
 * kept, its mode, its size before an append.
 */
enum {
	LG_TURN_FOUND = 1u << 0,
	LG_TURN_CONTENT = 1u << 1,
	LG_TURN_MODE = 1u << 2,
	LG_TURN_SIZE = 1u << 3,
};

#define LG_TURNS_SEEN 4096 /* inodes remembered per turn */

struct lg_turns_seen {
	uint64_t dev, ino;
	unsigned turn, flags;
};

struct lg_turns {
	unsigned turn; /* the current turn, 0 before the first */
	uint64_t main_conv; /* 0: none seen making calls yet */
	int64_t start_ns; /* when the current turn began */
	struct lg_turns_seen *seen; /* LG_TURNS_SEEN, made at first use */
};

/*
 * A tool call of a response in conversation conv (first: the response's
 * first call) at now_ns: true when it begins a turn (t->turn is its
 * number, t->start_ns now_ns).
 */
bool lg_turns_call(struct lg_turns *t, uint64_t conv, bool first,
		   int64_t now_ns);

/* The flags the current turn set for inode (dev, ino): 0 if none. */
unsigned lg_turns_seen(const struct lg_turns *t, uint64_t dev, uint64_t ino);
/*
 * Adds flags to what the current turn set for the inode. A full table
 * forgets: the next change of a forgotten inode is judged by its change
 * time alone.
 */
void lg_turns_mark(struct lg_turns *t, uint64_t dev, uint64_t ino,
		   unsigned flags);
void lg_turns_free(struct lg_turns *t);

#endif
