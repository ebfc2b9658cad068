#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The bulk-cleanup profile lets a 500-file cleanup through, but still stops
# a loop on one target at #3.
source "$(dirname "$0")/lib.sh"

mkfiles "$T/old" 500
run_lg --profile bulk-cleanup -- rm -r "$T/old"
assert_rc 0 "$RC" "bulk cleanup of 500 files under the bulk-cleanup profile"
[ ! -e "$T/old" ] || fail "the cleanup did not finish"
assert_no_trip "bulk cleanup"

# Default profile: the same cleanup is stopped.
mkfiles "$T/old2" 20
run_lg -- rm -r "$T/old2" 2>/dev/null
assert_rc 86 "$RC" "the same cleanup without the profile"

mkdir -p "$T/d" "$T/keep"
echo x >"$T/keep/a"
ln "$T/keep/a" "$T/d/target"
(while :; do [ -e "$T/d/target" ] || ln "$T/keep/a" "$T/d/target" 2>/dev/null; sleep 0.005; done) &
helper=$!
trap 'kill $helper 2>/dev/null; lg_cleanup' EXIT
sleep 0.05
run_lg --profile bulk-cleanup -- bash -c '
	for i in $(seq 1 10); do rm -f "$0"; while [ ! -e "$0" ]; do sleep 0.005; done; done' "$T/d/target" 2>/dev/null
assert_rc 86 "$RC" "a loop on one target under bulk-cleanup"
grep -q '"reason":"loop_detected"' "$STATE/audit.jsonl" || fail "expected loop_detected"
pass
