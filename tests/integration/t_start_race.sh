#!/bin/bash
# SPDX-License-Identifier: MIT
# A program that makes its own scratch directory as its first act, then
# removes two pre-existing files and its directory, is not killed. Found by
# make load: files are stamped from the kernel's coarse clock, up to a tick
# behind the fine one lgrun reads as its start, so the directory looked
# older than the session and its rmdir was the 3rd pre-existing delete
# (5 of 40 runs tripped before the fix; the unit test test_clock checks
# the stamp itself). 40 runs, each must pass, and a 3rd pre-existing file
# must still trip.
source "$(dirname "$0")/lib.sh"

[ -x "$FIXBIN/rmloop" ] || fail "fixture not built: $FIXBIN/rmloop"

D=$T/data
for i in $(seq 40); do
	rm -rf "$D"
	mkfiles "$D" 2
	run_lg -- "$FIXBIN/rmloop" -m "$D/own" "$D/f1" "$D/f2" >"$T/out" 2>"$T/err"
	[ "$RC" = 0 ] || fail "run $i: exit $RC, the session's own directory counted as pre-existing: $(head -3 "$T/err")"
	[ ! -e "$D/own" ] && [ ! -e "$D/f1" ] || fail "run $i: the program did not run"
done
[ "$(audit_count trip)" = 0 ] || fail "a trip record after 40 clean runs"

# the rule is still there: the same with a 3rd pre-existing file trips
rm -rf "$D"
mkfiles "$D" 3
run_lg -- "$FIXBIN/rmloop" -m "$D/own" "$D/f1" "$D/f2" "$D/f3" >"$T/out" 2>"$T/err"
assert_rc 86 "$RC" "three pre-existing files and its own directory"
[ -e "$D/f3" ] || fail "f3 was removed: the 3rd pre-existing delete was let through"
pass
