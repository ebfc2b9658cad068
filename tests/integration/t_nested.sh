#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# lgrun inside a session runs its command under the enclosing supervisor
# (a second notify listener is impossible: the kernel says EBUSY), and the
# enclosing guard still counts and stops the loop.
source "$(dirname "$0")/lib.sh"

mkfiles "$T/data" 5
run_lg --session outer -- "$LGRUN" --session inner -- bash -c 'for i in 1 2 3 4 5; do rm "$0/f$i"; done' "$T/data" 2>"$T/err"
assert_rc 86 "$RC" "nested lgrun delete loop"
[ -e "$T/data/f3" ] || fail "f3 was deleted"
grep -q '"session":"outer"' "$STATE/audit.jsonl" || fail "the enclosing session should record the trip"
run_lg -- "$LGRUN" -- bash -c 'exit 5'
assert_rc 5 "$RC" "nested exit status"
pass
