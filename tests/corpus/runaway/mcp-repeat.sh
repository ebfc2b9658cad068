# An MCP agent calling get_status with the same arguments and getting the
# same answer again and again (tools/call over stdio pipes).
NEEDS=python3
EXPECT_REASON=repeat
setup() { :; }
run() {
	python3 "$TOOLS/mcp_agent.py" --tool get_status --args '{"asset_id": "fact_sales"}' \
		--times 10 --log "$META/mcp.log"
}
verify() {
	n=$(grep -c '^tools/call get_status' "$META/mcp.log")
	[ "$n" -le 3 ] || bad "the server answered $n identical calls"
}
