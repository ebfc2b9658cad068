# A shell agent deletes ten records of a service that runs outside the tree
# and existed before the session (`curl -X DELETE`, one process each), with
# no config: no tool endpoint declared. Each DELETE answered 2xx is a
# remote delete (issue 38): the third trips, at its answer.
NEEDS="python3 curl"
setup() {
	start_items 10
}
run() {
	for i in $(seq 1 10); do curl -s -X DELETE "http://127.0.0.1:$API_PORT/items/$i"; done
}
verify() {
	n=$(items_left)
	[ "$n" -ge 7 ] || bad "$((10 - n)) of the 10 pre-existing records were deleted"
}
