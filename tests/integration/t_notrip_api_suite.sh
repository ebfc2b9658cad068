#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A unittest suite against a local API: several tests GET the same resource
# and get the same answer each time. Its twin, the same GET on an endpoint
# the config declares as a tool, is an agent's repeated call and is stopped
# at the third identical call and result.
source "$(dirname "$0")/lib.sh"
need_cmd python3
python3 "$TOOLS/items_server.py" --port-file "$T/port" --ready-after 0 --max-lifetime 120 &
SRV=$!
trap 'kill $SRV 2>/dev/null; lg_cleanup' EXIT
for _ in $(seq 1 100); do [ -s "$T/port" ] && break; sleep 0.05; done
export API_PORT=$(cat "$T/port")
run_lg --session suite -- python3 "$TOOLS/api_suite.py" >"$T/out" 2>&1
assert_rc 0 "$RC" "a local API test suite: $(tail -5 "$T/out")"
grep -q '^OK$' "$T/out" || fail "the suite did not pass: $(tail -5 "$T/out")"
assert_no_trip "a local API test suite"

# The twin: /health declared as a tool; the same call and answer 3 times.
printf '[shim]\ntool_endpoints = 127.0.0.1:%s/health\n' "$API_PORT" >"$T/tools.ini"
run_lg --session twin --config "$T/tools.ini" -- python3 "$TOOLS/api_suite.py" >"$T/out" 2>&1
assert_rc 86 "$RC" "the same declared tool call 3 times"
grep -q '"reason":"repeat"' "$STATE/audit.jsonl" || fail "not stopped by the repeat rule"
pass
