#!/bin/bash
# SPDX-License-Identifier: MIT
# `git reset --hard` and `git checkout -- PATH` over uncommitted changes
# destroy those changes: the current content is not in the object
# database. git replaces each file by unlink then create, which must not
# pass for an overwrite (the committed content comes back, not the lost
# one). Five modified pre-existing files each time: stopped, at most two
# lost.
source "$(dirname "$0")/lib.sh"

git_repo

mkdir -p "$R/a" "$R/b"
for i in 1 2 3 4 5; do
	echo "committed a$i" >"$R/a/f$i.txt"
	echo "committed b$i" >"$R/b/f$i.txt"
done
G add -A
G commit -qm "one"
# Uncommitted work in all ten files, made before the session.
for i in 1 2 3 4 5; do
	echo "precious a$i" >>"$R/a/f$i.txt"
	echo "precious b$i" >>"$R/b/f$i.txt"
done

sleep 1

kept() { # dir: how many files still hold their uncommitted work
	grep -l "precious" "$R/$1"/f*.txt 2>/dev/null | wc -l
}

run_lg -vv -- git -C "$R" reset -q --hard 2>"$T/err1"
assert_rc 86 "$RC" "git reset --hard"
[ "$(kept a)" -ge 3 ] || fail "reset --hard: only $(kept a) of 5 changes left in a/"
[ "$(kept b)" = 5 ] || fail "reset --hard: b/ lost changes before a/ was done?"
grep -q "(recoverable)" "$T/err1" && fail "reset --hard: modified content reported as recoverable"
grep -q '"summary":"session_killed: volume_exceeded, 3 deletes of pre-existing files' "$STATE/audit.jsonl" ||
	fail "reset --hard: the trip summary does not say what counted"
# The counted removals were recreated by git with committed content: they
# were still counted, not taken for overwrites.
grep -q "committed a1" "$R/a/f1.txt" || fail "fixture: git did not recreate a/f1.txt"

# The killed git left its index lock behind, as a killed git does.
rm -f "$R/.git/index.lock"
run_lg -- git -C "$R" checkout -q -- b 2>"$T/err2"
assert_rc 86 "$RC" "git checkout -- b"
[ "$(kept b)" -ge 3 ] || fail "checkout --: only $(kept b) of 5 changes left in b/"
[ "$(audit_count trip)" = 2 ] || fail "expected two trip records"

pass
