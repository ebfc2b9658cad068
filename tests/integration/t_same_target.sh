#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A loop retrying the delete of one pre-existing target that keeps coming
# back (a helper outside the session links it back) trips at attempt #3 with
# loop_detected; the volumetric count alone would not, since the target came
# back each time (an overwrite, not a loss).
source "$(dirname "$0")/lib.sh"

mkdir -p "$T/d" "$T/keep"
echo precious >"$T/keep/asset"
ln "$T/keep/asset" "$T/d/fact_sales"
# Outside the session: put the name back whenever it is gone.
(while :; do [ -e "$T/d/fact_sales" ] || ln "$T/keep/asset" "$T/d/fact_sales" 2>/dev/null; sleep 0.005; done) &
helper=$!
trap 'kill $helper 2>/dev/null; lg_cleanup' EXIT
sleep 0.05

run_lg --session loop1 -- bash -c '
	for i in 1 2 3 4 5 6; do
		echo "attempt $i"; rm -f "$0"
		while [ ! -e "$0" ]; do sleep 0.005; done
	done' "$T/d/fact_sales" >"$T/out" 2>&1
assert_rc 86 "$RC" "a delete loop on one target"
grep -q "attempt 3" "$T/out" || fail "the loop did not reach attempt 3"
grep -q "attempt 4" "$T/out" && fail "attempt 4 happened: the loop was not stopped at #3"
grep -q '"reason":"loop_detected"' "$STATE/audit.jsonl" || fail "reason is not loop_detected"
grep -q "\"summary\":\"session_killed: loop_detected, 3 deletes on $T/d/fact_sales in " "$STATE/audit.jsonl" ||
	fail "summary does not name the target"
pass
