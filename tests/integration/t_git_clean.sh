#!/bin/bash
# SPDX-License-Identifier: MIT
# `git clean -fdx` removes untracked files: not in the object database, so
# they are destroyed data like any other. Ten pre-existing untracked files:
# stopped at the third, at most two lost.
source "$(dirname "$0")/lib.sh"

git_repo

echo "tracked" >"$R/tracked.txt"
G add tracked.txt
G commit -qm "one"
mkdir -p "$R/notes"
for i in $(seq 1 10); do echo "untracked work $i" >"$R/notes/n$i.txt"; done

sleep 1

run_lg -- git -C "$R" clean -fdxq 2>"$T/err"
assert_rc 86 "$RC" "git clean -fdx"
left=$(find "$R/notes" -type f | wc -l)
[ "$left" -ge 8 ] || fail "only $left of 10 untracked files left: more than two lost"
[ "$(audit_count trip)" = 1 ] || fail "expected one trip record"
grep -q '"summary":"session_killed: volume_exceeded, 3 deletes of pre-existing files' "$STATE/audit.jsonl" ||
	fail "the trip summary does not say what counted"
[ "$(cat "$R/tracked.txt")" = tracked ] || fail "tracked.txt changed"

pass
