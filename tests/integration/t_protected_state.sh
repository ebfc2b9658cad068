#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The agent cannot erase lgrun's record of it or lift its own block: removals
# in the state directory are refused, whatever the counts say, and so are
# renames of what is in it, or onto it.
source "$(dirname "$0")/lib.sh"

mkfiles "$T/data" 4
run_lg --session blocked -- bash -c 'rm "$0"/f*' "$T/data" 2>/dev/null
assert_rc 86 "$RC" "trip"
run_lg -- bash -c 'rm -f "$0/sessions/blocked.killed" "$0/audit.jsonl"; echo "rm=$?"' "$STATE" >"$T/out" 2>"$T/err"
assert_rc 0 "$RC" "a session trying to remove lgrun's state"
[ -e "$STATE/sessions/blocked.killed" ] || fail "the killed marker was removed from inside a session"
[ -e "$STATE/audit.jsonl" ] || fail "the audit log was removed from inside a session"
grep -q "state is protected" "$T/err" || fail "no message about the protected state"
# Nor move it away, or put something over it (rename family, issue 12).
run_lg -- bash -c 'mv -f "$0/sessions/blocked.killed" "$0/gone"; echo "mv1=$?"
	mv -f "$0/audit.jsonl" "$0/../audit.old"; echo "mv2=$?"
	echo "{}" >"$0/../fake"; mv -f "$0/../fake" "$0/audit.jsonl"; echo "mv3=$?"
	python3 -c "import os,sys; os.rename(sys.argv[1], sys.argv[2])" "$0/sessions" "$0/../s2"; echo "mv4=$?"' "$STATE" >"$T/out" 2>"$T/err"
assert_rc 0 "$RC" "a session trying to move lgrun's state"
for i in 1 2 3 4; do grep -q "mv$i=1" "$T/out" || fail "rename $i was not refused: $(cat "$T/out")"; done
[ -e "$STATE/sessions/blocked.killed" ] || fail "the killed marker was moved from inside a session"
grep -q '"event":"trip"' "$STATE/audit.jsonl" || fail "the audit log was replaced from inside a session"
grep -q "rename .* lgrun's state is protected" "$T/err" || fail "no message about the protected state on rename"
run_lg --session blocked -- true 2>/dev/null
assert_rc 87 "$RC" "the block holds"
pass
