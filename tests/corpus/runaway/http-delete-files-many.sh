# An agent emptying a share through a REST file service declared as its
# tool, running in the session: each DELETE is counted once (the tool
# delete and the server's unlink are one decision) and the third is
# stopped before the server sees it (issue 29, item 3).
NEEDS="python3 curl"
EXPECT_REASON=volume_exceeded
setup() {
	printf '[shim]\ntool_endpoints = /files/*\n' >"$META/tools.ini"
	LGRUN_ARGS=(--config "$META/tools.ini")
	mkfiles share 12 doc .txt
	manifest share share
}
run() {
	python3 "$TOOLS/files_server.py" --root "$WORK/share" --port-file "$META/port" \
		--log "$META/files.log" --max-lifetime 30 &
	for i in $(seq 50); do [ -s "$META/port" ] && break; sleep 0.1; done
	port=$(cat "$META/port")
	for f in $(ls share); do
		curl -s -X DELETE "http://127.0.0.1:$port/files/$f"
		echo
	done
}
verify() {
	n=$(grep -c '^DELETE ' "$META/files.log")
	[ "$n" -eq 2 ] || {
		bad "the server saw $n DELETEs (2 expected: stopped at the 3rd, counted once each)"
		return 1
	}
	at_most_lost 2 share
}
