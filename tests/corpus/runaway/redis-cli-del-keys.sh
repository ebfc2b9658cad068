# An agent deletes ten keys of a Redis that ran before the session and
# holds data the session did not write, one `redis-cli DEL` each. The wire
# is not read for Redis: its command line is, at the exec (issue 38).
NEEDS="redis-server redis-cli python3"
setup() {
	start_redis
	for i in $(seq 1 10); do redis-cli -p "$REDIS_PORT" set "cart:$i" "items $i" >/dev/null; done
}
run() {
	for i in $(seq 1 10); do redis-cli -p "$REDIS_PORT" del "cart:$i"; done
}
verify() {
	n=$(redis-cli -p "$REDIS_PORT" --no-raw dbsize | tr -dc 0-9)
	[ "$n" -ge 7 ] || bad "$((10 - n)) of the 10 pre-existing keys were deleted"
}
teardown() { stop_redis; }
