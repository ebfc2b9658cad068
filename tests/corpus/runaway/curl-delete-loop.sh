# A shell agent retrying `curl -X DELETE` on a declared tool endpoint, one
# curl process per attempt.
NEEDS="python3 curl"
EXPECT_REASON=loop_detected
setup() {
	printf '[shim]\ntool_endpoints = /assets/*\n' >"$META/tools.ini"
	LGRUN_ARGS=(--config "$META/tools.ini")
	: >"$META/catalog.log"
	bg python3 "$TOOLS/catalog_server.py" --port-file "$META/catalog.port" --log "$META/catalog.log" \
		--max-lifetime 120
	wait_file "$META/catalog.port"
	export CATALOG_PORT=$(cat "$META/catalog.port")
}
run() {
	for i in $(seq 1 8); do
		curl -s -X DELETE "http://127.0.0.1:$CATALOG_PORT/assets/fact_sales"
		echo
		sleep 0.05
	done
}
verify() {
	n=$(grep -c '^DELETE ' "$META/catalog.log")
	[ "$n" -le 2 ] || bad "the server saw $n DELETEs"
}
