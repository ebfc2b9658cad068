#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# --observe never denies or kills; it audits what would have tripped.
source "$(dirname "$0")/lib.sh"

mkfiles "$T/data" 6
run_lg --observe --session obs -- bash -c 'rm "$0"/f*; echo survived' "$T/data" >"$T/out" 2>"$T/err"
assert_rc 0 "$RC" "observe mode"
grep -q survived "$T/out" || fail "the command was stopped"
[ -z "$(ls "$T/data")" ] || fail "observe mode refused a delete"
[ "$(audit_count would_trip)" -ge 1 ] || fail "no would_trip record"
[ "$(audit_count trip)" = 0 ] || fail "observe mode wrote a trip"
[ ! -e "$STATE/sessions/obs.killed" ] || fail "observe mode marked the session killed"
grep -q "would have tripped" "$T/err" || fail "no observe summary on stderr"
pass
