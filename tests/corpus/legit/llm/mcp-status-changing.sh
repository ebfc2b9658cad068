# An MCP client polling a job's status through tools/call: the same call,
# but the answer changes each time (pending (check N)), so it is progress,
# not a loop; three threads, each with its own server.
NEEDS=python3
setup() { :; }
run() {
	python3 "$TOOLS/mcp_agent.py" --changing --tool get_status --args '{"asset_id": "fact_sales"}' --times 6
	python3 "$TOOLS/mcp_agent.py" --threads 3 --changing --tool get_status --args '{"asset_id": "dim_store"}' --times 4
}
verify() {
	[ "$(grep -c 'call [0-9]* -> ' "$OUT")" = 18 ] || bad "not every call was answered"
}
