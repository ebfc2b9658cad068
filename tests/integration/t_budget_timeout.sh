#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The wall-clock budget stops a session that runs too long (with a warning
# at the reserve first), and the per-session destructive-op cap.
source "$(dirname "$0")/lib.sh"

start=$SECONDS
run_lg --timeout 2s -- sleep 30 2>"$T/err"
assert_rc 86 "$RC" "timeout"
[ $((SECONDS - start)) -lt 10 ] || fail "the timeout did not stop the command in time"
grep -q '"event":"warn".*"reason":"timeout_reserve"' "$STATE/audit.jsonl" || fail "no reserve warning"
grep -q '"event":"trip".*"reason":"timeout"' "$STATE/audit.jsonl" || fail "no timeout trip"

cat >"$T/cap.ini" <<'INI'
[volumetric]
max_ops = 0
[same_target]
max = 0
[budget]
max_destructive_ops = 5
reserve = 0.2
INI
mkfiles "$T/data" 8
run_lg --config "$T/cap.ini" -- bash -c 'for i in 1 2 3 4 5 6 7 8; do rm "$0/f$i" || exit 9; done' "$T/data" 2>/dev/null
assert_rc 86 "$RC" "destructive-op budget"
[ "$(ls "$T/data" | wc -l)" = 3 ] || fail "expected 5 deletes then a refusal, left: $(ls "$T/data")"
grep -q '"reason":"budget_reserve"' "$STATE/audit.jsonl" || fail "no budget reserve warning"
grep -q '"reason":"budget_exceeded"' "$STATE/audit.jsonl" || fail "no budget_exceeded trip"
pass
