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

struct lg_turns {
	unsigned turn; /* the current turn, 0 before the first */
	uint64_t main_conv; /* 0: none seen making calls yet */
	int64_t start_ns; /* when the current turn began */
};

/*
 * A tool call of a response in conversation conv (first: the response's
 * first call) at now_ns: true when it begins a turn (t->turn is its
 * number, t->start_ns now_ns).
 */
bool lg_turns_call(struct lg_turns *t, uint64_t conv, bool first,
		   int64_t now_ns);

#endif
