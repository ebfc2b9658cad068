#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# MCP over stdio pipes (a real server process, both ends shimmed, each call
# counted once at its sender): the same tools/call with the same result three
# times in a row trips `repeat`; a changing result does not; delete_* calls
# are gated (the server sees two); both framings; a multi-threaded agent.
source "$(dirname "$0")/lib.sh"
need_cmd python3
args='{"asset_id":"fact_sales"}'

for framing in newline content-length; do
	run_lg --session "rep-$framing" -- python3 "$TOOLS/mcp_agent.py" --framing $framing \
		--tool get_status --args "$args" --times 6 --log "$T/$framing.log" >"$T/out" 2>"$T/err"
	assert_rc 86 "$RC" "identical calls ($framing)"
	n=$(grep -c '^tools/call get_status' "$T/$framing.log")
	[ "$n" = 3 ] || fail "$framing: the server answered $n calls, expected 3 (the trip comes with the 3rd result)"
	grep -q '"reason":"repeat"' "$STATE/audit.jsonl" || fail "$framing: reason is not repeat"
	grep -q 'repeat, get_status({\\"asset_id\\":\\"fact_sales\\"}) -> ' "$STATE/audit.jsonl" ||
		fail "$framing: the summary does not name the call"
done

run_lg --session changing -- python3 "$TOOLS/mcp_agent.py" --changing --tool get_status \
	--args "$args" --times 6 >"$T/out" 2>&1
assert_rc 0 "$RC" "a changing result"

# Same arguments spelled differently are the same call.
run_lg --session spelled -- python3 - "$TOOLS" <<'PY'
import json, subprocess, sys
srv = subprocess.Popen([sys.executable, sys.argv[1] + "/mcp_server.py"], stdin=subprocess.PIPE,
                       stdout=subprocess.PIPE, close_fds=True)
def call(i, raw):
    srv.stdin.write(('{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"get_status","arguments":%s}}\n' % (i, raw)).encode())
    srv.stdin.flush(); return srv.stdout.readline()
for i, raw in enumerate(['{"asset_id":"a","v":1}', '{ "v": 1, "asset_id": "a" }', '{"v":1,"asset_id":"a"}', '{"asset_id":"a","v":1}']):
    call(i + 1, raw)
PY
assert_rc 86 "$RC" "differently spelled identical arguments"

run_lg --session mcpdel -- python3 "$TOOLS/mcp_agent.py" --tool delete_asset --args "$args" \
	--times 6 --log "$T/del.log" >"$T/out" 2>&1
assert_rc 86 "$RC" "repeated delete_asset"
n=$(grep -c '^tools/call delete_asset' "$T/del.log")
[ "$n" = 2 ] || fail "the server saw $n delete_asset calls, expected 2"
grep -q '3 tool deletes on asset_id=fact_sales' "$STATE/audit.jsonl" || fail "delete target"

run_lg --session threads -- python3 "$TOOLS/mcp_agent.py" --threads 3 --changing --tool get_status \
	--args "$args" --times 4 >"$T/out" 2>&1
assert_rc 0 "$RC" "three threads with changing results: $(tail -3 "$T/out")"
[ "$(grep -c 'call [0-9]* -> ' "$T/out")" = 12 ] || fail "threads: not all calls made"
pass
