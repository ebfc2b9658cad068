#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# MCP over HTTP (the streamable HTTP transport): a tools/call in a POST body
# is an agent's tool call like one on a pipe. It waits for the supervisor,
# and the same call with the same result is stopped at the third, whether
# the server answers in JSON or in an SSE event, and although each answer
# carries its own request id and duration. Different calls pass.
source "$(dirname "$0")/lib.sh"
need_cmd python3
cat >"$T/server.py" <<'PY'
import json, os, sys, threading, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
log = open(sys.argv[2], "a", buffering=1)
n = [0]
class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *a): pass
    def do_POST(self):
        m = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        n[0] += 1
        if m.get("method") == "tools/call":
            log.write(f"tools/call {m['params']['name']}\n")
            text = f"asset {m['params']['arguments'].get('asset_id')}: pending"
            res = {"content": [{"type": "text", "text": text}],
                   "meta": {"request_id": f"req_{os.urandom(6).hex()}", "elapsed_ms": n[0] * 7}}
        else:
            res = {"protocolVersion": "2025-03-26", "capabilities": {"tools": {}}}
        body = json.dumps({"jsonrpc": "2.0", "id": m.get("id"), "result": res})
        if self.headers.get("Accept", "").startswith("text/event-stream"):
            data = f"event: message\ndata: {body}\n\n".encode()
            ctype = "text/event-stream"
        else:
            data, ctype = body.encode(), "application/json"
        self.send_response(200)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
srv = ThreadingHTTPServer(("127.0.0.1", 0), H)
open(sys.argv[1] + ".tmp", "w").write(str(srv.server_address[1]))
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
t = threading.Timer(120, lambda: os._exit(0)); t.daemon = True; t.start()
srv.serve_forever()
PY
cat >"$T/client.py" <<'PY'
import http.client, json, sys
port, accept, mode = int(sys.argv[1]), sys.argv[2], sys.argv[3]
c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
def rpc(i, method, params):
    c.request("POST", "/mcp", body=json.dumps({"jsonrpc": "2.0", "id": i, "method": method, "params": params}),
              headers={"Content-Type": "application/json", "Accept": accept})
    r = c.getresponse(); return r.read()
rpc(1, "initialize", {"protocolVersion": "2025-03-26", "capabilities": {}})
for i in range(6):
    asset = "fact_sales" if mode == "loop" else f"asset_{i}"
    rpc(10 + i, "tools/call", {"name": "get_status", "arguments": {"asset_id": asset}})
    print("call", i + 1, flush=True)
PY
python3 "$T/server.py" "$T/port" "$T/log" &
SRV=$!
trap 'kill $SRV 2>/dev/null; lg_cleanup' EXIT
for _ in $(seq 1 100); do [ -s "$T/port" ] && break; sleep 0.05; done
port=$(cat "$T/port")

for accept in "application/json, text/event-stream" "text/event-stream, application/json"; do
	: >"$T/log"
	run_lg --session "loop-${accept%%/*}" -- python3 "$T/client.py" "$port" "$accept" loop >"$T/out" 2>&1
	assert_rc 86 "$RC" "an MCP-over-HTTP loop ($accept)"
	n=$(grep -c 'tools/call' "$T/log")
	[ "$n" = 3 ] || fail "the server saw $n tools/call, expected 3 ($accept)"
done
grep -q '"reason":"repeat"' "$STATE/audit.jsonl" || fail "not stopped by the repeat rule"
grep -q 'get_status({\\"asset_id\\":\\"fact_sales\\"})' "$STATE/audit.jsonl" ||
	fail "the trip does not name the call: $(grep -o '"summary":"[^"]*"' "$STATE/audit.jsonl" | tail -1)"

: >"$T/log"
run_lg --session benign -- python3 "$T/client.py" "$port" "application/json" benign >"$T/out" 2>&1
assert_rc 0 "$RC" "different MCP calls over HTTP: $(cat "$T/out")"
[ "$(grep -c 'tools/call' "$T/log")" = 6 ] || fail "a benign call was held back"
grep '"session":"benign"' "$STATE/audit.jsonl" | grep -q '"tool_calls":6' ||
	fail "the calls were not counted as tool calls: $(grep '"session":"benign"' "$STATE/audit.jsonl")"
pass
