#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The agent cannot erase lgrun's record of it or lift its own block: removals
# in the state directory are refused, whatever the counts say.
source "$(dirname "$0")/lib.sh"

mkfiles "$T/data" 4
run_lg --session blocked -- bash -c 'rm "$0"/f*' "$T/data" 2>/dev/null
assert_rc 86 "$RC" "trip"
run_lg -- bash -c 'rm -f "$0/sessions/blocked.killed" "$0/audit.jsonl"; echo "rm=$?"' "$STATE" >"$T/out" 2>"$T/err"
assert_rc 0 "$RC" "a session trying to remove lgrun's state"
[ -e "$STATE/sessions/blocked.killed" ] || fail "the killed marker was removed from inside a session"
[ -e "$STATE/audit.jsonl" ] || fail "the audit log was removed from inside a session"
grep -q "state is protected" "$T/err" || fail "no message about the protected state"
run_lg --session blocked -- true 2>/dev/null
assert_rc 87 "$RC" "the block holds"
pass
