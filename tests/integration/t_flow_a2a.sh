#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A2A calls seen by the shim are calls of the flow: each message/send waits
# for the supervisor, its response is the return, and the flow's rules
# refuse the call that breaks them (the server never gets it). Python
# (headers and body in one write) and Node fetch (separate writes).
source "$(dirname "$0")/lib.sh"
need_cmd python3
A2A_PORT_FILE=$T/a2a.port
A2A_LOG=$T/a2a.log
: >"$A2A_LOG"
python3 "$TOOLS/a2a_server.py" --port-file "$A2A_PORT_FILE" --log "$A2A_LOG" &
A2A_PID=$!
trap 'kill $A2A_PID 2>/dev/null; lg_cleanup' EXIT
for _ in $(seq 1 100); do [ -s "$A2A_PORT_FILE" ] && break; sleep 0.05; done
port=$(cat "$A2A_PORT_FILE")

cat >"$T/agent.py" <<'PY'
import http.client, json, sys
port, n, method = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
for i in range(n):
    body = json.dumps({"jsonrpc": "2.0", "id": i, "method": method,
        "params": {"message": {"role": "user", "messageId": "u%d" % i,
                               "parts": [{"kind": "text", "text": "step %d" % i}]}}})
    try:
        c.request("POST", "/", body, {"Content-Type": "application/json"})
        r = c.getresponse().read()
    except OSError as e:
        print("refused at call %d: %s" % (i + 1, e), flush=True)
        sys.exit(3)
    with open(sys.argv[4], "a") as f:  # some work between calls
        f.write("%d\n" % i)
print("done", flush=True)
PY
cat >"$T/agent.mjs" <<'JS'
const [port, n] = process.argv.slice(2).map(Number);
for (let i = 0; i < n; i++) {
  const body = JSON.stringify({jsonrpc: "2.0", id: i, method: "message/send",
    params: {message: {role: "user", messageId: "u" + i, parts: [{kind: "text", text: "step " + i}]}}});
  try {
    const r = await fetch(`http://127.0.0.1:${port}/agents/echo`, {method: "POST",
      headers: {"content-type": "application/json"}, body});
    await r.text();
  } catch (e) { console.log(`refused at call ${i + 1}: ${e.cause ? e.cause.code : e}`); process.exit(3); }
}
console.log("done");
JS
cat >"$T/flow.ini" <<'INI'
[flow]
max_rate = 5
INI

# Five calls are fine; each is a call and its response the return.
run_lg -c "$T/flow.ini" -- python3 "$T/agent.py" "$port" 5 message/send "$T/work" >"$T/out" 2>"$T/err"
assert_rc 0 "$RC" "five A2A calls"
grep -q done "$T/out" || fail "the agent did not finish"
[ "$(grep -c '^message/send' "$A2A_LOG")" = 5 ] || fail "the server saw $(grep -c . "$A2A_LOG") calls, expected 5"
grep '"event":"session_end"' "$STATE/audit.jsonl" | grep -q '"agent_calls":5,' || fail "five calls not counted"
grep '"event":"session_end"' "$STATE/audit.jsonl" | grep -q '"longest_chain":2' || fail "the chain should be python3 -> a2a endpoint"

# The sixth within a minute is refused before it leaves, and the flow dies.
: >"$A2A_LOG"
run_lg -c "$T/flow.ini" -- python3 "$T/agent.py" "$port" 8 message/send "$T/work" >"$T/out" 2>"$T/err"
assert_rc 86 "$RC" "six A2A calls"
[ "$(grep -c '^message/send' "$A2A_LOG")" = 5 ] || fail "the server saw $(grep -c . "$A2A_LOG") calls, expected 5"
grep -q "call rate limit exceeded (max 5/minute)" "$T/err" || { cat "$T/err"; fail "no rate message"; }
grep -q '"target":"a2a:127.0.0.1:'"$port"'/"' "$STATE/audit.jsonl" || fail "the trip should name the endpoint"

# Streaming calls count too.
: >"$A2A_LOG"
run_lg -c "$T/flow.ini" -- python3 "$T/agent.py" "$port" 8 message/stream "$T/work" >"$T/out" 2>"$T/err"
assert_rc 86 "$RC" "six A2A stream calls"
[ "$(grep -c '^message/stream' "$A2A_LOG")" = 5 ] || fail "stream: the server saw $(grep -c . "$A2A_LOG") calls"

# Node's fetch writes the body after the headers: the body's write waits.
if command -v node >/dev/null; then
	: >"$A2A_LOG"
	run_lg -c "$T/flow.ini" -- node "$T/agent.mjs" "$port" 8 >"$T/out" 2>"$T/err"
	assert_rc 86 "$RC" "node: six A2A calls"
	[ "$(grep -c '^message/send /agents/echo' "$A2A_LOG")" = 5 ] || fail "node: the server saw $(grep -c . "$A2A_LOG") calls"
	grep -q '"target":"a2a:127.0.0.1:'"$port"'/agents/echo"' "$STATE/audit.jsonl" || fail "node: the trip should name the endpoint"
fi
pass
