# A test suite against a Redis outside the tree: it writes its keys, reads
# them, and deletes them at the end, one redis-cli each; a key that was
# there before stays. What the session made is its own (issue 38).
NEEDS="redis-server redis-cli python3"
setup() {
	start_redis
	redis-cli -p "$REDIS_PORT" set keep "data" >/dev/null
}
run() {
	set -e
	for i in $(seq 1 10); do redis-cli -p "$REDIS_PORT" set "test:$i" "v$i" >/dev/null; done
	for i in $(seq 1 10); do [ "$(redis-cli -p "$REDIS_PORT" get "test:$i")" = "v$i" ]; done
	for i in $(seq 1 10); do redis-cli -p "$REDIS_PORT" del "test:$i" >/dev/null; done
	echo "suite ok"
}
verify() {
	grep -q "suite ok" "$OUT" || bad "the suite did not finish"
	[ "$(redis-cli -p "$REDIS_PORT" get keep)" = data ] || bad "the pre-existing key is gone"
}
teardown() { stop_redis; }
