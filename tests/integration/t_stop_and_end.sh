#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Every session ends with exactly one terminal record (session_end): how it
# ended and its exit status. lgctl stop cancels a running session.
source "$(dirname "$0")/lib.sh"

ends() { grep "\"session\":\"$1\"" "$STATE/audit.jsonl" | grep -c '"event":"session_end"'; }
end_of() { grep "\"session\":\"$1\"" "$STATE/audit.jsonl" | grep '"event":"session_end"' | grep -o '"end":"[a-z_]*"'; }

run_lg --session ok -- true
[ "$(ends ok)" = 1 ] && [ "$(end_of ok)" = '"end":"completed"' ] || fail "completed: $(end_of ok)"

mkfiles "$T/d" 4
run_lg --session trip -- bash -c 'rm "$0"/f*' "$T/d" 2>/dev/null
[ "$(ends trip)" = 1 ] && [ "$(end_of trip)" = '"end":"tripped"' ] || fail "tripped: $(end_of trip)"

run_lg --session slow --timeout 1s -- sleep 20 2>/dev/null
[ "$(ends slow)" = 1 ] && [ "$(end_of slow)" = '"end":"timed_out"' ] || fail "timed out: $(end_of slow)"

"$LGRUN" --state-dir "$STATE" --session long -- bash -c 'trap "exit 3" TERM; : >"$0"; sleep 30 & wait' "$T/ready" &
lg=$!
# running, and its trap set (a loaded machine starts bash slowly)
for _ in $(seq 1 200); do
	[ -e "$T/ready" ] && tail -n 1 "$STATE/sessions/long.json" 2>/dev/null | grep -q running && break
	sleep 0.05
done
"$LGCTL" --state-dir "$STATE" stop long >"$T/out" 2>&1 || fail "lgctl stop: $(cat "$T/out")"
wait $lg
RC=$?
assert_rc 3 "$RC" "the command saw SIGTERM and exited its way"
[ "$(ends long)" = 1 ] && [ "$(end_of long)" = '"end":"cancelled"' ] || fail "cancelled: $(end_of long)"
"$LGCTL" --state-dir "$STATE" stop long >/dev/null 2>&1
[ $? = 1 ] || fail "stopping a session that is not running should say so (exit 1)"
pass
