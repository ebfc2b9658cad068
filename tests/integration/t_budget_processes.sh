#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# budget.max_processes: a tree that keeps growing (a fork loop) is warned
# about at the reserve and stopped past the limit; a normal tree is not.
source "$(dirname "$0")/lib.sh"

printf '[budget]\nmax_processes = 20\nreserve = 0.25\n' >"$T/p.ini"
run_lg --session forks --config "$T/p.ini" -- bash -c '
	for i in $(seq 1 60); do sleep 31.234 & sleep 0.06; done; wait' 2>"$T/err"
assert_rc 86 "$RC" "a growing tree"
grep -q '"session":"forks".*"reason":"processes_reserve"' "$STATE/audit.jsonl" || fail "no reserve warning"
grep -q '"session":"forks".*"event":"trip".*"reason":"max_processes"' "$STATE/audit.jsonl" || fail "no trip"
pgrep -fx "sleep 31.234" >/dev/null && fail "the tree was not killed"

run_lg --session few --config "$T/p.ini" -- bash -c 'for i in 1 2 3 4 5; do sleep 0.3 & done; wait'
assert_rc 0 "$RC" "a small tree"
pass
