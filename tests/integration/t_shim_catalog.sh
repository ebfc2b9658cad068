#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The seed's demo: a catalogue whose DELETE answers "asset still exists" and
# an agent that retries. The shim holds each DELETE for a verdict: the third
# is refused before it leaves the process, so the server sees exactly two.
source "$(dirname "$0")/lib.sh"
need_cmd python3

start_catalog
run_lg --session cat1 --config "$TOOLS/catalog.ini" -- python3 "$TOOLS/catalog_agent.py" --port-file "$CATALOG_PORT_FILE" \
	--max-attempts 8 --delay 0.05 >"$T/out" 2>"$T/err"
assert_rc 86 "$RC" "the retrying agent"
n=$(grep -c '^DELETE ' "$CATALOG_LOG")
[ "$n" = 2 ] || fail "the server saw $n DELETEs, expected exactly 2: $(cat "$CATALOG_LOG")"
grep -q '"reason":"loop_detected"' "$STATE/audit.jsonl" || fail "reason is not loop_detected"
grep -q '"summary":"session_killed: loop_detected, 3 tool deletes on asset_id=fact_sales in ' "$STATE/audit.jsonl" ||
	fail "summary: $(grep -o '"summary":"[^"]*"' "$STATE/audit.jsonl")"
[ "$(session_field cat1 gated_calls)" -ge 3 ] || fail "the gates were not counted"

# Chunked request bodies and keep-alive through the shim: same outcome.
: >"$CATALOG_LOG"
printf '[shim]\ntool_endpoints = /assets\n' >"$T/endpoints.ini"
run_lg --session cat2 --config "$T/endpoints.ini" -- python3 "$TOOLS/catalog_agent.py" --port-file "$CATALOG_PORT_FILE" \
	--max-attempts 8 --delay 0.05 --chunked >"$T/out" 2>"$T/err"
assert_rc 86 "$RC" "the retrying agent with chunked bodies"
# without the URL template the target is the URL path
grep -q '"summary":"session_killed: loop_detected, 3 tool deletes on /assets/fact_sales in ' "$STATE/audit.jsonl" ||
	fail "default target should be the URL path"
[ "$(grep -c '^DELETE ' "$CATALOG_LOG")" = 2 ] || fail "chunked: $(cat "$CATALOG_LOG")"
[ "$(awk '{print $3}' "$CATALOG_LOG" | sort -u | wc -l)" = 1 ] || fail "keep-alive was not kept"
pass
