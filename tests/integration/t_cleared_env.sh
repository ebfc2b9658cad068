#!/bin/bash
# SPDX-License-Identifier: MIT
# "env -i" drops every variable (LD_PRELOAD included). The seccomp filter is
# inherited across exec regardless of the environment, so the loop still
# trips at the 3rd removal.
source "$(dirname "$0")/lib.sh"

[ -x "$LGRUN" ] || fail "lgrun not built: $LGRUN"
[ -x "$FIXBIN/rmloop" ] || fail "fixture not built: $FIXBIN/rmloop"
need_cmd env

D=$T/data
mkfiles "$D" 4
run_lg -- env -i "$FIXBIN/rmloop" "$D"/f{1..4}
assert_rc 86 "$RC" "env -i rmloop over 4 pre-existing files"
for i in 1 2; do
	[ ! -e "$D/f$i" ] || fail "f$i survived: the probe did not run under lgrun"
done
for i in 3 4; do
	[ -e "$D/f$i" ] || fail "f$i was deleted with a cleared environment"
done
[ "$(audit_count trip)" -ge 1 ] || fail "no trip record in the audit log"
pass
