#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# In the container: a delete loop of five pre-existing files is stopped at
# the third (status 86, two removed), and lgctl restore puts the two back.
set -u
fail() { echo "FAIL: $*"; exit 1; }
# a user with no home of its own (HOME=/) works in /tmp
W=$HOME
[ -w "$W" ] || W=/tmp/w-$(id -u)
mkdir -p "$W" && cd "$W" || fail "no folder to work in"
mkdir -p data && for i in 1 2 3 4 5; do echo "record $i" >"data/f$i"; done
sleep 0.05
s="loop-$(id -u)"
lgrun --session "$s" -- sh -c 'for f in data/f*; do rm "$f"; done' >out 2>&1
rc=$?
cat out
[ $rc = 86 ] || fail "the delete loop: exit status $rc, expected 86"
n=$(ls data | wc -l)
[ "$n" = 3 ] || fail "$n of the 5 files are left, expected 3"
grep -q "cannot read its arguments" out && fail "lgrun could not read the arguments"
lgctl restore "$s" || fail "lgctl restore failed"
for i in 1 2 3 4 5; do
	[ "$(cat "data/f$i" 2>/dev/null)" = "record $i" ] || fail "data/f$i is not back as it was"
done
echo "loop: ok"
