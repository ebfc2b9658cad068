# A shell agent deletes ten records of a service that runs outside the tree
# and existed before the session (`curl -X DELETE`, one process each), with
# no config: no tool endpoint declared (issue 38: the default config sees
# nothing off this host today).
NEEDS="python3 curl"
KNOWN=issue-38
setup() {
	bg python3 "$TOOLS/items_server.py" --port-file "$META/port" --ready-after 0 --max-lifetime 120
	wait_file "$META/port"
	export API_PORT=$(cat "$META/port")
	for i in $(seq 1 10); do
		curl -sf -X POST -H 'Content-Type: application/json' -d "{\"name\": \"rec$i\"}" \
			"http://127.0.0.1:$API_PORT/items" >/dev/null
	done
}
run() {
	for i in $(seq 1 10); do curl -s -X DELETE "http://127.0.0.1:$API_PORT/items/$i"; done
}
verify() {
	n=$(curl -s "http://127.0.0.1:$API_PORT/items" | python3 -c 'import json, sys; print(len(json.load(sys.stdin)))')
	[ "$n" -ge 7 ] || bad "$((10 - n)) of the 10 pre-existing records were deleted"
}
