# An MCP session of varied calls: echo with different arguments, each once,
# over Content-Length framing; the agent never repeats itself.
NEEDS=python3
setup() { :; }
run() {
	python3 - "$TOOLS" <<'PY'
import json, subprocess, sys
srv = subprocess.Popen([sys.executable, sys.argv[1] + "/mcp_server.py"], stdin=subprocess.PIPE,
                       stdout=subprocess.PIPE)
def call(i, method, params):
    srv.stdin.write((json.dumps({"jsonrpc": "2.0", "id": i, "method": method, "params": params}) + "\n").encode())
    srv.stdin.flush()
    return json.loads(srv.stdout.readline())
call(1, "initialize", {"protocolVersion": "2025-03-26", "capabilities": {}, "clientInfo": {"name": "corpus"}})
srv.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n'); srv.stdin.flush()
call(2, "tools/list", {})
for i in range(12):
    r = call(10 + i, "tools/call", {"name": "echo", "arguments": {"text": f"step {i}"}})
    assert r["result"]["content"][0]["text"] == f"step {i}", r
    call(100 + i, "tools/call", {"name": "get_status", "arguments": {"asset_id": f"table_{i}"}})
srv.stdin.close(); srv.wait()
print("24 calls")
PY
}
verify() {
	grep -q '24 calls' "$OUT" || bad "the session did not finish"
}
