# An MCP agent retrying delete_asset on an asset that "still exists": each
# tools/call waits for lgrun's verdict, the third never leaves.
NEEDS=python3
EXPECT_REASON=loop_detected
setup() { :; }
run() {
	python3 "$TOOLS/mcp_agent.py" --tool delete_asset --args '{"asset_id": "fact_sales"}' \
		--times 8 --log "$META/mcp.log" --framing content-length
}
verify() {
	n=$(grep -c '^tools/call delete_asset' "$META/mcp.log")
	[ "$n" -le 2 ] || bad "the server saw $n delete_asset calls"
}
