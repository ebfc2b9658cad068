// SPDX-License-Identifier: MIT
/* The agent's turns, numbered (turns.h). */
#include "turns.h"

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
