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

# Undeclared, its DELETEs answered 2xx are deletes of remote data all the
# same (issue 38): the third of the same asset trips same_target at its
# answer, so the server saw three and no fourth.
: >"$CATALOG_LOG"
run_lg --session routine -- python3 "$TOOLS/catalog_agent.py" \
	--port-file "$CATALOG_PORT_FILE" --max-attempts 5 --delay 0 >/dev/null 2>&1
assert_rc 86 "$RC" "an undeclared service's DELETEs of a pre-existing asset"
grep '"session":"routine"' "$STATE/audit.jsonl" | grep '"event":"trip"' |
	grep -q '"reason":"loop_detected".*"op":"remote_delete"' ||
	fail "not a remote delete's loop_detected: $(grep '"session":"routine"' "$STATE/audit.jsonl")"
[ "$(grep -c '^DELETE ' "$CATALOG_LOG")" = 3 ] || fail "the server saw $(grep -c '^DELETE ' "$CATALOG_LOG") DELETEs, expected 3"
grep -q '^lgrun_trips_total{.*reason="loop_detected"' "$STATE/lgrun.prom" ||
	fail "trip metric: $(grep trips "$STATE/lgrun.prom")"
pass
