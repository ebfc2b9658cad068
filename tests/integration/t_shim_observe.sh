#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# --observe holds no call back: every DELETE reaches the server, the trip
# that would have happened is on record.
source "$(dirname "$0")/lib.sh"
need_cmd python3
start_catalog
run_lg --observe --session obs --config "$TOOLS/catalog.ini" -- python3 "$TOOLS/catalog_agent.py" \
	--port-file "$CATALOG_PORT_FILE" --max-attempts 5 --delay 0 >/dev/null 2>&1
assert_rc 1 "$RC" "the agent gives up on its own in observe mode"
[ "$(grep -c '^DELETE ' "$CATALOG_LOG")" = 5 ] || fail "observe mode held a DELETE back"
[ "$(audit_count would_trip)" -ge 1 ] || fail "no would_trip record"
[ ! -e "$STATE/sessions/obs.killed" ] || fail "observe mode blocked the session"

# Undeclared, the same service's traffic is a program's routine: observed,
# counted, and judged by no rule (a CRUD test suite deletes all the time).
: >"$CATALOG_LOG"
run_lg --session routine -- python3 "$TOOLS/catalog_agent.py" \
	--port-file "$CATALOG_PORT_FILE" --max-attempts 5 --delay 0 >/dev/null 2>&1
assert_rc 1 "$RC" "an undeclared service's DELETEs are not judged"
[ "$(grep -c '^DELETE ' "$CATALOG_LOG")" = 5 ] || fail "an undeclared DELETE was held back"
grep '"session":"routine"' "$STATE/audit.jsonl" | grep -q '"observed_calls":10' ||
	fail "the 10 requests were not counted as observed: $(grep '"session":"routine"' "$STATE/audit.jsonl")"
grep -q '^lgrun_observed_calls_total{proto="http"} 10$' "$STATE/lgrun.prom" ||
	fail "observed metric: $(grep observed "$STATE/lgrun.prom")"
pass
