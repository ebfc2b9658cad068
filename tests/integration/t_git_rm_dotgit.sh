#!/bin/bash
# SPDX-License-Identifier: MIT
# `rm -rf .git` destroys the object database itself: nothing in .git is
# ever "recoverable", and only git's own removals inside .git are ignored.
# Stopped at the third pre-existing file, at most two lost.
source "$(dirname "$0")/lib.sh"

git_repo

for i in 1 2 3; do echo "file $i" >"$R/f$i.txt"; done
G add -A
G commit -qm "one"
before=$(find "$R/.git" -type f | wc -l)

sleep 1

run_lg -- bash -c 'cd "$1" && rm -rf .git' rm "$R" 2>"$T/err"
assert_rc 86 "$RC" "rm -rf .git"
after=$(find "$R/.git" -type f | wc -l)
[ $((before - after)) -le 2 ] || fail "rm -rf .git: $((before - after)) files lost, at most 2 expected"
grep -q '"summary":"session_killed: volume_exceeded, 3 deletes of pre-existing files' "$STATE/audit.jsonl" ||
	fail "the trip summary does not say what counted"

pass
