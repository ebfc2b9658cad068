#!/bin/bash
# SPDX-License-Identifier: MIT
# A branch switch that removes committed files which existed before the
# session destroys nothing: every byte is in the repository's object
# database. Four such files (two in a directory git then removes) are
# recoverable, and a symlink holds no data (its class is no_data, decided
# before git's object database is asked): none counted, no trip, and -vv
# says so. The same
# for `git stash` over uncommitted changes, which it saves as objects first.
source "$(dirname "$0")/lib.sh"

git_repo

mkdir -p "$R/docs"
echo "kept" >"$R/README"
for i in 1 2; do echo "main only $i" >"$R/m$i.txt"; done
for i in 1 2; do echo "doc $i" >"$R/docs/d$i.md"; done
ln -s m1.txt "$R/m1.link"
G add -A
G commit -qm "main"
# slim: main without the five files; made from main, so they exist on disk.
G checkout -qb slim
G rm -q m1.txt m2.txt m1.link docs/d1.md docs/d2.md
G commit -qm "slim"
G checkout -q main
for f in m1.txt m2.txt m1.link docs/d1.md docs/d2.md; do
	[ -e "$R/$f" ] || [ -L "$R/$f" ] || fail "fixture: $f missing on main"
done

sleep 1 # birth times strictly older than the session start

run_lg -vv -- git -C "$R" checkout -q slim 2>"$T/err"
assert_rc 0 "$RC" "git checkout slim"
assert_no_trip "branch switch"
for f in m1.txt m2.txt m1.link docs/d1.md docs/d2.md; do
	[ -e "$R/$f" ] || [ -L "$R/$f" ] && fail "$f is still there: the switch did not happen"
	class=recoverable
	[ "$f" = m1.link ] && class=no_data
	grep -q "unlink $R/$f ($class) by git\[" "$T/err" ||
		fail "$f was not reported as $class: $(grep -F "$R/$f" "$T/err")"
done
grep -q "rmdir $R/docs (recoverable) by git\[" "$T/err" ||
	fail "the emptied directory was not reported as recoverable"
grep -q "(destroy)" "$T/err" && fail "something counted: $(grep "(destroy)" "$T/err")"
grep '"event":"session_end"' "$STATE/audit.jsonl" | tail -1 | grep -q '"recoverable":5' ||
	fail "the end record does not count 5 recoverable removals: $(tail -1 "$STATE/audit.jsonl")"
[ "$(cat "$R/README")" = kept ] || fail "README changed"

# Everything comes back: the content was in the object database.
git -C "$R" checkout -q main || fail "switching back"
[ "$(cat "$R/docs/d2.md")" = "doc 2" ] || fail "docs/d2.md did not come back"
[ "$(readlink "$R/m1.link")" = m1.txt ] || fail "m1.link did not come back"

# git stash writes the changes into the object database before it puts
# the committed content back: its removals are recoverable too.
for f in m1.txt m2.txt docs/d1.md docs/d2.md; do echo "wip" >>"$R/$f"; done
sleep 1
run_lg -vv -- git -C "$R" stash -q 2>"$T/err2"
assert_rc 0 "$RC" "git stash"
assert_no_trip "stash"
[ "$(grep -c "(recoverable) by git\[" "$T/err2")" -ge 4 ] ||
	fail "stash: removals not reported as recoverable: $(grep unlink "$T/err2")"
git -C "$R" stash pop -q || fail "stash pop"
grep -q wip "$R/docs/d2.md" || fail "stash: the change did not come back"

pass
