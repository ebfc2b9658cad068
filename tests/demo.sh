#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# make demo: an agent looping on deletes is stopped at attempt #3.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
LGRUN=$root/build/bin/lgrun
LGCTL=$root/build/bin/lgctl
work=$(mktemp -d /tmp/lgrun-demo.XXXXXX)
trap 'rm -rf "$work"' EXIT
state=$work/state
session=demo-$$
bold= plain=
if [ -t 1 ]; then
	bold=$(tput bold 2>/dev/null || true)
	plain=$(tput sgr0 2>/dev/null || true)
fi
say() { printf '\n%s== %s%s\n' "$bold" "$*" "$plain"; }

mkdir -p "$work/assets"
for a in fact_sales dim_customer dim_product fact_orders fact_returns dim_store; do
	echo "rows of $a" >"$work/assets/$a.parquet"
done
sleep 0.05 # the assets are older than the session

say "Part 1: an agent deleting files. Six assets exist before the session"
ls "$work/assets"

say "The agent's clean-up task, under lgrun (session $session)"
echo "\$ lgrun --session $session --agent cleanup-bot -- python3 agent_cleanup.py assets/"
"$LGRUN" --state-dir "$state" --session "$session" --agent cleanup-bot -- \
	python3 "$root/tests/fixtures/agent_cleanup.py" "$work/assets" 0.3
rc=$?
echo "(lgrun exit status: $rc; 86 = stopped by the guard)"

say "What is left: assets #3 to #6 survived"
ls "$work/assets"

say "The audit record (state dir: $state)"
grep '"event":"trip"' "$state/audit.jsonl" | python3 -c '
import json, sys
r = json.loads(sys.stdin.readline())
print(r["summary"])
print("  rule=%s reason=%s killed by %s in %.1f ms; recent events:" % (r["rule"], r["reason"], r["kill_method"], r["kill_ms"]))
for e in r["recent"]:
    print("    +%.3fs %s %s (%s) by %s -> %s" % (e["t"], e["op"], e["target"], e["class"], e["exe"], e["verdict"]))'

say "Restarting the same session is refused until an operator resets it"
"$LGRUN" --state-dir "$state" --session "$session" -- echo "this must not run"
echo "(lgrun exit status: $?; 87 = session blocked)"

say "Operator: lgctl status, then lgctl reset"
"$LGCTL" --state-dir "$state" status
"$LGCTL" --state-dir "$state" reset "$session"

say "After the reset the session may run again"
"$LGRUN" --state-dir "$state" --session "$session" -- echo "the session runs again"
echo "(lgrun exit status: $?)"
[ $rc = 86 ] || { echo "demo: expected the guard to stop the agent (exit 86), got $rc"; exit 1; }

say "Undo: what the agent removed before the trip was kept; the operator puts it back"
echo "\$ lgctl restore $session"
"$LGCTL" --state-dir "$state" restore "$session"
ls "$work/assets"
[ "$(ls "$work/assets" | wc -l)" = 6 ] || { echo "demo: the six assets are not all back"; exit 1; }

# Part 2: the same loop one level up, at the tool call. A catalogue service
# answers every DELETE with "asset still exists"; the agent retries.
tools=$root/tests/fixtures/tools
cat_session=demo-catalog-$$
python3 "$tools/catalog_server.py" --port-file "$work/port" --log "$work/server.log" \
	--max-lifetime 60 &
server=$!
trap 'kill $server 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 1 100); do [ -s "$work/port" ] && break; sleep 0.05; done

say "Part 2: an agent retrying a DELETE on a catalogue service (session $cat_session)"
echo "\$ lgrun --session $cat_session --config catalog.ini -- python3 catalog_agent.py"
"$LGRUN" --state-dir "$state" --session "$cat_session" --config "$tools/catalog.ini" -- \
	python3 "$tools/catalog_agent.py" --port-file "$work/port" --delay 0.3
crc=$?
echo "(lgrun exit status: $crc)"

say "The server's log: the third DELETE never arrived"
cat "$work/server.log"

say "The audit line"
grep '"event":"trip"' "$state/audit.jsonl" | grep "\"session\":\"$cat_session\"" |
	python3 -c 'import json, sys; print(json.loads(sys.stdin.readline())["summary"])'

say "Refused restart, reset, and a successful restart"
"$LGRUN" --state-dir "$state" --session "$cat_session" -- true
echo "(lgrun exit status: $?)"
"$LGCTL" --state-dir "$state" reset "$cat_session"
"$LGRUN" --state-dir "$state" --session "$cat_session" --config "$tools/catalog.ini" -- \
	python3 "$tools/catalog_agent.py" --port-file "$work/port" --delay 0.1 --max-attempts 2
echo "(lgrun exit status: $?; the agent gave up after 2 attempts on its own)"
[ $crc = 86 ] || { echo "demo: expected the guard to stop the catalogue agent (exit 86), got $crc"; exit 1; }
[ "$(grep -c '^DELETE ' "$work/server.log")" = 4 ] || { echo "demo: unexpected DELETE count"; exit 1; }
