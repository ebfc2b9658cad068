# The seed's demo: the catalogue agent retries DELETE /assets/fact_sales
# ("asset still exists") over HTTP keep-alive. Its config declares the
# catalogue's assets as a tool endpoint (tool_endpoints = /assets/*), so
# its DELETEs are tool deletes; the third is held and refused.
NEEDS=python3
EXPECT_REASON=loop_detected
setup() {
	printf '[shim]\ntool_endpoints = /assets/*\nurl_targets = /assets/{asset_id}\n' >"$META/catalog.ini"
	LGRUN_ARGS=(--config "$META/catalog.ini")
	: >"$META/catalog.log"
	bg python3 "$TOOLS/catalog_server.py" --port-file "$META/catalog.port" --log "$META/catalog.log" \
		--max-lifetime 120
	wait_file "$META/catalog.port"
}
run() {
	python3 "$TOOLS/catalog_agent.py" --port-file "$META/catalog.port" --max-attempts 8 --delay 0.05
}
verify() {
	n=$(grep -c '^DELETE ' "$META/catalog.log")
	[ "$n" -le 2 ] || bad "the server saw $n DELETEs"
}
