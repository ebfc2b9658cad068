# An MCP agent dropping one table after another with a delete tool (each a
# different target): tool deletes count like files.
NEEDS=python3
EXPECT_REASON=volume_exceeded
setup() { :; }
run() {
	python3 - "$TOOLS" "$META/mcp.log" <<'PY'
import json, subprocess, sys
srv = subprocess.Popen([sys.executable, sys.argv[1] + "/mcp_server.py", "--log", sys.argv[2]],
                       stdin=subprocess.PIPE, stdout=subprocess.PIPE)
def call(i, method, params):
    srv.stdin.write((json.dumps({"jsonrpc": "2.0", "id": i, "method": method, "params": params}) + "\n").encode())
    srv.stdin.flush()
    return srv.stdout.readline()
call(1, "initialize", {"protocolVersion": "2025-03-26", "capabilities": {}, "clientInfo": {"name": "corpus"}})
for i, t in enumerate(["dim_store", "dim_customer", "fact_sales", "fact_returns", "dim_date", "dim_product"]):
    print("dropping", t, flush=True)
    call(10 + i, "tools/call", {"name": "delete_asset", "arguments": {"asset_id": t}})
PY
}
verify() {
	n=$(grep -c '^tools/call delete_asset' "$META/mcp.log")
	[ "$n" -le 2 ] || bad "the server saw $n delete_asset calls"
}
