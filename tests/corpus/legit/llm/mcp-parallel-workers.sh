# One process, three worker threads, each with an MCP server of its own,
# polling the same job in turns: call 1 of every worker, then call 2...
# Each worker's answers change (pending (check N)), but three workers in a
# row get the same answer to the same call. Parallel workers asking the same
# thing once each are not a loop: "in a row" is per process and server.
# (Found by t_flood, where four such threads tripped the repeat rule about
# one run in five.)
NEEDS=python3
setup() { :; }
run() {
	python3 "$TOOLS/mcp_agent.py" --threads 3 --lockstep --changing --tool get_status --args '{"asset_id": "fact_sales"}' --times 4
}
verify() {
	[ "$(grep -c 'call [0-9]* -> ' "$OUT")" = 12 ] || bad "not every call was answered"
}
