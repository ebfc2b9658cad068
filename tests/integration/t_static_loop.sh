#!/bin/bash
# SPDX-License-Identifier: MIT
# A statically linked rm loop never loads a preload library, so only the
# seccomp filter can stop it: the 3rd removal of pre-existing files trips.
source "$(dirname "$0")/lib.sh"

[ -x "$LGRUN" ] || fail "lgrun not built: $LGRUN"
[ -x "$FIXBIN/rmloop-static" ] || fail "fixture not built: $FIXBIN/rmloop-static"

D=$T/data
mkfiles "$D" 6
run_lg -- "$FIXBIN/rmloop-static" "$D"/f{1..6}
assert_rc 86 "$RC" "rmloop-static over 6 pre-existing files"
# The first two removals are allowed: proves the probe really ran.
for i in 1 2; do
	[ ! -e "$D/f$i" ] || fail "f$i survived: the probe did not run under lgrun"
done
for i in 3 4 5 6; do
	[ -e "$D/f$i" ] || fail "f$i was deleted after the guard should have tripped"
done
[ "$(audit_count trip)" -ge 1 ] || fail "no trip record in the audit log"
pass
