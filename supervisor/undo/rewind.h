/* SPDX-License-Identifier: MIT */
/*
 * A rewind to the agent's turn K (issue 40), pure: of a session's index
 * entries (index.h), those that undo turns K and later, each at the name
 * it had when turn K began, for the restore to put back.
 */
#ifndef LG_UNDO_REWIND_H
#define LG_UNDO_REWIND_H

#include "quarantine/index.h"

/*
 * turn 0, the whole session (a restore): every entry but the session's
 * own versions ("own", kept for a rewind to a later turn). turn >= 1: the
 * entries of turns >= turn (1: and of none, what came before the first),
 * not a restore's set-asides (its "set_aside" lines); a rename's entry goes
 * back to the name it had at that rename (its moved_from: renames are
 * undone newest first, one step each), any other's path is its name when
 * its change ran, taken back through the renames of turns >= turn that
 * came before it. until (0: none): an earlier rewind undid turns until
 * and later already; only the turns before it are left. The entries left
 * out are freed. 0, or -ENOMEM.
 */
int lgq_select_turns(struct lgq_index *x, long long turn, long long until);

#endif
