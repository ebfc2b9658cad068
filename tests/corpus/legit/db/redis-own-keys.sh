# A test suite against a Redis outside the tree: it writes its keys, reads
# them, and deletes them at the end, one redis-cli each; a key that was
# there before stays. What the session made is its own (issue 38).
NEEDS="redis-server redis-cli python3"
setup() {
	REDIS_PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	export REDIS_PORT
	bg redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save "" --appendonly no
	for _ in $(seq 1 100); do redis-cli -p "$REDIS_PORT" ping 2>/dev/null | grep -q PONG && break; sleep 0.05; done
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
teardown() { redis-cli -p "$REDIS_PORT" shutdown nosave >/dev/null 2>&1 || true; }
