#!/bin/bash
# SPDX-License-Identifier: MIT
# Everyday git work must not trip the guard with the default config. git
# replaces tracked files on checkout/stash/rebase by unlinking them and
# writing new ones, and `git gc` deletes pre-existing loose objects after
# packing them, so a repo made before the session sees many removals of
# pre-existing files that destroy no data.
source "$(dirname "$0")/lib.sh"

git_repo

# Fixture: main and feature differ in the contents of the same 20 files;
# main also has a commit of its own (README) so that rebasing feature onto
# main is real and conflict-free.
for i in $(seq -w 1 20); do echo "main content $i" >"$R/f$i.txt"; done
echo "readme v1" >"$R/README"
G add -A
G commit -qm "initial"
G checkout -qb feature
for i in $(seq -w 1 10); do echo "feature content $i" >"$R/f$i.txt"; done
G commit -qam "feature: first half"
for i in $(seq -w 11 20); do echo "feature content $i" >"$R/f$i.txt"; done
G commit -qam "feature: second half"
G checkout -q main
echo "readme v2" >"$R/README"
G commit -qam "main: readme"
# Loose objects born before the session, for `git gc` to pack and remove.
n_loose=$(git -C "$R" count-objects | cut -d' ' -f1)
[ "$n_loose" -gt 0 ] || fail "fixture: expected loose objects, got $n_loose"

sleep 1 # birth times strictly older than the session start

run_lg -- bash -c '
set -e
cd "$1/repo"
for r in 1 2 3; do
	# Work on feature: edit, stash, hop branches, pop, commit.
	git checkout -q feature
	echo "feature wip $r" >>f0$r.txt
	echo "scratch $r" >>f1$r.txt
	git stash -q
	git checkout -q main
	git checkout -q feature
	git stash pop -q
	git add f0$r.txt f1$r.txt
	git commit -qm "feature: round $r"
	# Work on main in files feature does not touch.
	git checkout -q main
	echo "main round $r" >>README
	echo "new $r" >new$r.txt
	git add README new$r.txt
	git commit -qm "main: round $r"
done
git gc -q
git rebase -q main feature
for i in 1 2 3 4 5; do
	git checkout -q main
	git checkout -q feature
done
git checkout -q main
# A brand-new repo in the same session.
git -c init.defaultBranch=main init -q "$1/fresh"
cd "$1/fresh"
git config user.name "lgrun test"
git config user.email "lgrun-test@example.invalid"
echo hello >hello.txt
git add hello.txt
git commit -qm "fresh: first"
' git "$T"
assert_no_trip "git workload"
assert_rc 0 "$RC" "git workload"

# The last switch was to main: its content, not feature's, is on disk.
[ "$(cat "$R/f05.txt")" = "main content 05" ] || fail "main checkout: f05.txt is '$(cat "$R/f05.txt")'"
[ "$(head -n1 "$R/f01.txt")" = "main content 01" ] || fail "main checkout: f01.txt wrong"
[ -f "$R/new3.txt" ] || fail "main: new3.txt missing"
# feature's tip holds its own content, the stash-popped edits and, after
# the rebase, main's commits.
[ "$(git -C "$R" show feature:f05.txt)" = "feature content 05" ] || fail "feature: f05.txt wrong"
git -C "$R" show feature:f02.txt | grep -qx "feature wip 2" || fail "feature: stashed edit lost"
git -C "$R" merge-base --is-ancestor main feature || fail "rebase: main is not an ancestor of feature"
[ -z "$(git -C "$R" stash list)" ] || fail "stash not popped"
[ -z "$(git -C "$R" status --porcelain)" ] || fail "work tree not clean"
git -C "$R" fsck --no-dangling --no-progress || fail "fsck failed"
packs=$(git -C "$R" count-objects -v | sed -n 's/^packs: //p')
[ "$packs" -ge 1 ] || fail "gc: no pack"
[ "$(git -C "$T/fresh" log --format=%s)" = "fresh: first" ] || fail "fresh repo: no commit"

pass
