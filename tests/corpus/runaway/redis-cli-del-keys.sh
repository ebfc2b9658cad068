# An agent deletes ten keys of a Redis that ran before the session and
# holds data the session did not write, one `redis-cli DEL` each. The wire
# is not read for Redis: its command line is, at the exec (issue 38).
NEEDS="redis-server redis-cli python3"
setup() {
	REDIS_PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	export REDIS_PORT
	bg redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save "" --appendonly no
	for _ in $(seq 1 100); do redis-cli -p "$REDIS_PORT" ping 2>/dev/null | grep -q PONG && break; sleep 0.05; done
	for i in $(seq 1 10); do redis-cli -p "$REDIS_PORT" set "cart:$i" "items $i" >/dev/null; done
}
run() {
	for i in $(seq 1 10); do redis-cli -p "$REDIS_PORT" del "cart:$i"; done
}
verify() {
	n=$(redis-cli -p "$REDIS_PORT" --no-raw dbsize | tr -dc 0-9)
	[ "$n" -ge 7 ] || bad "$((10 - n)) of the 10 pre-existing keys were deleted"
}
teardown() { redis-cli -p "$REDIS_PORT" shutdown nosave >/dev/null 2>&1 || true; }
