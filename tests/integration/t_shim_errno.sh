#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Every hook leaves errno exactly as the real call did, failing or not,
# while the shim is active and reporting.
source "$(dirname "$0")/lib.sh"

mkdir -p "$T/w"
run_lg -- "$FIXBIN/shim_errno" "$T/w" >"$T/out" 2>&1
assert_rc 0 "$RC" "errno checks: $(grep FAIL "$T/out")"
grep -q "0 failure(s)" "$T/out" || fail "the probe did not finish: $(tail -3 "$T/out")"
# The shim really was there: failed writes were reported to the supervisor.
grep -q '"shim_connections":[1-9]' "$STATE"/sessions/*.json || fail "the shim never connected"
pass
