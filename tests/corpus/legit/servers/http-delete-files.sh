# A REST file service declared as the agent's tool ([shim] tool_endpoints)
# runs in the session (the agent starts it), and the agent removes two stale
# files with curl -X DELETE: each DELETE is one decision, seen as the tool
# delete and as the server's own unlink (issue 29, item 3: counted once).
# Two tool deletes are two of volumetric's three: one step short, noted.
EXPECT_NOTES="volumetric/volume_near"
NEEDS="python3 curl"
setup() {
	printf '[shim]\ntool_endpoints = /files/*\n' >"$META/tools.ini"
	LGRUN_ARGS=(--config "$META/tools.ini")
	mkfiles share 5 doc .txt
	echo stale >share/old-a.log
	echo stale >share/old-b.log
	manifest keep share/doc*
}
run() {
	set -e
	python3 "$TOOLS/files_server.py" --root "$WORK/share" --port-file "$META/port" \
		--log "$META/files.log" --max-lifetime 30 &
	srv=$!
	for i in $(seq 50); do [ -s "$META/port" ] && break; sleep 0.1; done
	port=$(cat "$META/port")
	curl -sf "http://127.0.0.1:$port/files/doc1.txt" >/dev/null
	curl -sf -X DELETE "http://127.0.0.1:$port/files/old-a.log"
	echo
	curl -sf -X DELETE "http://127.0.0.1:$port/files/old-b.log"
	echo
	kill $srv
	wait $srv || true
	echo "two deleted"
}
verify() {
	grep -q 'two deleted' "$OUT" || bad "the agent did not finish"
	[ ! -e share/old-a.log ] && [ ! -e share/old-b.log ] || bad "not deleted"
	none_lost keep
}
