#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A killed session refuses to start (87) until lgctl reset; status shows it.
source "$(dirname "$0")/lib.sh"

mkfiles "$T/data" 5
run_lg --session s-42 -- bash -c 'rm "$0"/f*' "$T/data" 2>/dev/null
assert_rc 86 "$RC" "first run trips"

touch "$T/marker"
run_lg --session s-42 -- touch "$T/ran" 2>"$T/err"
assert_rc 87 "$RC" "a killed session"
[ ! -e "$T/ran" ] || fail "the command ran in a killed session"
grep -q session_killed_loop_guard "$T/err" || fail "message does not name session_killed_loop_guard"
grep -q "lgctl reset s-42" "$T/err" || fail "message does not give the reset command"

"$LGCTL" --state-dir "$STATE" status >"$T/status" || fail "lgctl status failed"
grep -q "^s-42 *killed" "$T/status" || fail "status does not list s-42 as killed: $(cat "$T/status")"
"$LGCTL" --state-dir "$STATE" status s-42 | grep -q volume_exceeded || fail "status ID lacks the reason"

"$LGCTL" --state-dir "$STATE" reset s-42 >/dev/null || fail "lgctl reset failed"
[ "$(audit_count reset)" = 1 ] || fail "the reset is not audited"
"$LGCTL" --state-dir "$STATE" reset s-42 >/dev/null 2>&1
[ $? = 1 ] || fail "a second reset should say the session is not killed (exit 1)"

run_lg --session s-42 -- touch "$T/ran"
assert_rc 0 "$RC" "after reset"
[ -e "$T/ran" ] || fail "the command did not run after reset"
"$LGCTL" --state-dir "$STATE" status s-42 | grep -q "exited" || fail "status after the clean run"
# Other sessions are not affected by one session's block.
run_lg --session other -- true
assert_rc 0 "$RC" "another session"
pass
