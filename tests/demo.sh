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

say "Six assets exist before the session"
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
