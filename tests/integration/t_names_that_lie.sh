#!/bin/bash
# SPDX-License-Identifier: MIT
# Names that lie (issue 12): a file really named "x (deleted)", a binary
# that calls itself git, and an ignored path that is a symlink to data that
# is not. Each time three destructive steps on pre-existing data stop the
# tree.
. "$(dirname "$0")/lib.sh"
need_cmd git
cd "$T" || fail "cd"

tripped() { # session
	grep -q "\"session\":\"$1\".*\"event\":\"trip\"" "$STATE/audit.jsonl"
}

# 1. Files named "... (deleted)": the kernel prints that suffix for an
#    unlinked file's fd, but these are linked and hold data.
mkdir -p named
for n in a b c d; do echo "precious $n" >"named/$n (deleted)"; done
run_lg -s named -- python3 -c "
import os
for n in 'abcd':
    fd = os.open('$T/named/%s (deleted)' % n, os.O_RDWR)
    os.ftruncate(fd, 0)
    os.close(fd)
"
assert_rc 86 "$RC" "ftruncate of files named '(deleted)'"
tripped named || fail "no trip for files named '(deleted)'"
[ -s "named/c (deleted)" ] && [ -s "named/d (deleted)" ] ||
	fail "files named '(deleted)': lost more than two"
# A file that really is unlinked still costs nothing.
run_lg -s unlinked -- python3 -c "
import os
for i in range(5):
    p = '$T/named/tmp%d' % i
    fd = os.open(p, os.O_RDWR | os.O_CREAT)
    os.write(fd, b'x' * 100)
    os.unlink(p)
    os.ftruncate(fd, 0)
"
assert_rc 0 "$RC" "ftruncate of unlinked files"

# 2. A binary named git that is not the git installed on PATH does not get
#    git's rules (removing .git/ is routine only for git itself).
for r in repo repo2; do
	git init -q $r
	(cd $r && echo hello >a && git add a && git -c user.email=t@t -c user.name=t commit -qm one) ||
		fail "git commit"
done
mkdir -p fake
cp "$FIXBIN/rmloop" fake/git
objs=$(find repo/.git/objects -type f | head -4)
[ "$(echo "$objs" | wc -l)" -ge 3 ] || fail "too few objects to test with"
run_lg -s fakegit -- "$T/fake/git" $objs
assert_rc 86 "$RC" "a fake git removing .git/objects"
tripped fakegit || fail "no trip for a fake git in .git"
# The real git still does it freely.
run_lg -s realgit -- sh -c "cd '$T/repo2' && git gc -q --prune=now && git count-objects >/dev/null"
assert_rc 0 "$RC" "git gc"
tripped realgit && fail "the real git's gc tripped"

# 2b. An npm install: PATH's codex is a launcher script that runs the
#     package's native binary, installed beside it in node_modules. That
#     binary, there before the session, is codex (Codex clearing the
#     sandbox scratch a killed Codex left is its routine); one named codex
#     elsewhere, or put into node_modules during the session, is not.
mkdir -p npm/bin npm/node_modules/@x/codex/bin npm/node_modules/@x/codex-native/bin fakec
printf '#!/bin/sh\nexit 0\n' >npm/node_modules/@x/codex/bin/codex.js
chmod +x npm/node_modules/@x/codex/bin/codex.js
ln -s ../node_modules/@x/codex/bin/codex.js npm/bin/codex
cp "$FIXBIN/rmloop" npm/node_modules/@x/codex-native/bin/codex
cp "$FIXBIN/rmloop" fakec/codex
scratch() {
	rm -rf cx
	for i in 1 2 3 4; do
		mkdir -p cx/codex-bwrap-synthetic-mount-targets-0/h$i
		echo "$i" >cx/codex-bwrap-synthetic-mount-targets-0/h$i/pid
	done
	sleep 0.05
}
npm_run() { # session binary: under lgrun with the npm launcher on PATH
	PATH="$T/npm/bin:$PATH" "$LGRUN" --state-dir "$STATE" -s "$1" -- "$2" \
		cx/codex-bwrap-synthetic-mount-targets-0/h*/pid
	RC=$?
}
scratch
npm_run npmcodex "$T/npm/node_modules/@x/codex-native/bin/codex"
assert_rc 0 "$RC" "npm's codex clearing its sandbox scratch"
scratch
npm_run fakecodex "$T/fakec/codex"
assert_rc 86 "$RC" "a binary named codex outside npm's tree"
scratch
mkdir -p npm/node_modules/@x/late
PATH="$T/npm/bin:$PATH" "$LGRUN" --state-dir "$STATE" -s latecodex -- sh -c '
cp "$0" "$1" && exec "$1" cx/codex-bwrap-synthetic-mount-targets-0/h*/pid' \
	"$FIXBIN/rmloop" "$T/npm/node_modules/@x/late/codex"
assert_rc 86 "$RC" "a codex put into npm's tree during the session"
# 2c. The same install run by its path, no codex on PATH (npx, a project's
#     node_modules/.bin, an install in a cache folder): a tree with
#     node_modules/.bin/codex, there before the session, installs codex,
#     and its binary named codex is the program (issue 41). Without
#     .bin/codex, or put there during the session, it is not.
mkdir -p npm/node_modules/.bin npm2/node_modules/@x/codex-native/bin
ln -s ../@x/codex/bin/codex.js npm/node_modules/.bin/codex
cp "$FIXBIN/rmloop" npm2/node_modules/@x/codex-native/bin/codex
bare_run() { # session binary: run by its path, nothing of it on PATH
	"$LGRUN" --state-dir "$STATE" -s "$1" -- "$2" \
		cx/codex-bwrap-synthetic-mount-targets-0/h*/pid
	RC=$?
}
scratch
bare_run barecodex "$T/npm/node_modules/@x/codex-native/bin/codex"
assert_rc 0 "$RC" "npm's codex run by its path, clearing its sandbox scratch"
scratch
bare_run nobincodex "$T/npm2/node_modules/@x/codex-native/bin/codex"
assert_rc 86 "$RC" "a codex in a node_modules tree that installs no codex"
scratch
mkdir -p npm/node_modules/@x/late2
"$LGRUN" --state-dir "$STATE" -s barelate -- sh -c '
cp "$0" "$1" && exec "$1" cx/codex-bwrap-synthetic-mount-targets-0/h*/pid' \
	"$FIXBIN/rmloop" "$T/npm/node_modules/@x/late2/codex"
assert_rc 86 "$RC" "a codex put into npm's tree during the session, run by its path"

# 3. An ignore glob is judged on where a path really leads.
mkfiles precious 5
mkdir -p scratch
ln -s "$T/precious" scratch/lnk
for i in 1 2 3 4; do ln -s "$T/precious/f$i" "scratch/t$i"; done
printf '[ignore]\npath = %s/scratch/**\n' "$T" >lie.ini
run_lg -c "$T/lie.ini" -s viadir -- sh -c "for i in 1 2 3 4; do rm '$T/scratch/lnk/f'\$i || exit 1; done"
assert_rc 86 "$RC" "deletes through a symlinked directory in an ignored path"
[ -e precious/f3 ] && [ -e precious/f4 ] ||
	fail "deletes through an ignored symlink: lost more than two"
"$LGCTL" --state-dir "$STATE" reset viadir >/dev/null
mkfiles precious 5
run_lg -c "$T/lie.ini" -s viafile -- sh -c "for i in 1 2 3 4; do truncate -s 0 '$T/scratch/t'\$i || exit 1; done"
assert_rc 86 "$RC" "truncations through an ignored symlink"
[ -s precious/f3 ] && [ -s precious/f4 ] ||
	fail "truncations through an ignored symlink: lost more than two"
# A symlink named like an ignored folder (the shipped build/) hides nothing.
mkfiles precious2 5
mkdir -p proj
ln -s "$T/precious2" proj/build
run_lg -s buildlink -- sh -c "cd '$T/proj' && for i in 1 2 3 4; do rm build/f\$i || exit 1; done"
assert_rc 86 "$RC" "deletes through build -> data"
[ -e precious2/f3 ] && [ -e precious2/f4 ] ||
	fail "deletes through build -> data: lost more than two"
# Removing the ignored links themselves is fine.
run_lg -c "$T/lie.ini" -s links -- sh -c "rm '$T'/scratch/t*"
assert_rc 0 "$RC" "removing ignored symlinks"
pass
