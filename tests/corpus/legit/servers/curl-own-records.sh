# A shell script's CRUD check against a service outside the tree, with
# curl: it creates five records (each answered 201 with its id), reads them,
# and deletes them; then a DELETE of one that is already gone (404). What
# the session made is its own, a 404 destroyed nothing (issue 38). The two
# records that were there before stay.
NEEDS="python3 curl"
setup() {
	start_items 2
}
run() {
	set -e
	ids=""
	for i in 1 2 3 4 5; do
		id=$(curl -sf -X POST -H 'Content-Type: application/json' -d "{\"name\": \"tmp$i\"}" \
			"http://127.0.0.1:$API_PORT/items" | python3 -c 'import json, sys; print(json.load(sys.stdin)["id"])')
		ids="$ids $id"
	done
	for id in $ids; do curl -sf "http://127.0.0.1:$API_PORT/items/$id" >/dev/null; done
	for id in $ids; do curl -sf -X DELETE "http://127.0.0.1:$API_PORT/items/$id"; done
	for id in $ids; do curl -s -o /dev/null -X DELETE "http://127.0.0.1:$API_PORT/items/$id"; done
	echo "crud ok"
}
verify() {
	grep -q "crud ok" "$OUT" || bad "the check did not finish"
	[ "$(items_left)" = 2 ] || bad "$(items_left) records left, expected the 2 from before"
}
