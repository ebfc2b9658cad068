#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# lgctl restore SESSION PATH... takes a PATH as the shell gives it (issue
# 39, true words): a relative one is from the current directory, its "."
# and ".." folded; a PATH that the session kept nothing at or under is
# said, and the restore exits 1 (it printed "0 restored" and exited 0).
source "$(dirname "$0")/lib.sh"

W=$T/w
mkfiles "$W/d" 4
sleep 0.05
run_lg --session rp -- bash -c 'rm "$0/f1" "$0/f2"' "$W/d"
assert_rc 0 "$RC" "a session removing two files"
[ ! -e "$W/d/f1" ] && [ ! -e "$W/d/f2" ] || fail "the session did not remove f1 and f2"

# a relative path, from the current directory
(cd "$W" && "$LGCTL" --state-dir "$STATE" restore rp d/f1) >"$T/out" 2>&1
assert_rc 0 "$?" "restore rp d/f1 from $W: $(cat "$T/out")"
[ "$(cat "$W/d/f1" 2>/dev/null)" = "data 1" ] || fail "d/f1 (relative) was not restored: $(cat "$T/out")"
[ ! -e "$W/d/f2" ] || fail "f2 was restored too, though only d/f1 was named"

# one with . and ..
(cd "$W/d" && "$LGCTL" --state-dir "$STATE" restore rp ../d/./f2) >"$T/out" 2>&1
assert_rc 0 "$?" "restore rp ../d/./f2: $(cat "$T/out")"
[ "$(cat "$W/d/f2" 2>/dev/null)" = "data 2" ] || fail "../d/./f2 was not restored: $(cat "$T/out")"

# a path the session kept nothing at: said, exit 1
(cd "$W/d" && "$LGCTL" --state-dir "$STATE" restore rp f01) >"$T/out" 2>&1
RC=$?
assert_rc 1 "$RC" "restore rp f01 (nothing kept there): $(cat "$T/out")"
grep -q "lgctl restore: $W/d/f01: session rp kept nothing at or under it" "$T/out" ||
	fail "restore of an unknown path did not say so: $(cat "$T/out")"
"$LGCTL" --state-dir "$STATE" restore rp "$W/nothing/here" "$W/d/f1" >"$T/out" 2>&1
assert_rc 1 "$?" "one path matched, one not: $(cat "$T/out")"
grep -q "$W/nothing/here: session rp kept nothing" "$T/out" || fail "the unmatched one is not named: $(cat "$T/out")"
grep -q "$W/d/f1: session rp kept nothing" "$T/out" && fail "the matched one is named as unmatched: $(cat "$T/out")"
pass
