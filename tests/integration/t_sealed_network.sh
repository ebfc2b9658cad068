#!/bin/bash
# SPDX-License-Identifier: MIT
# [network] egress = proxy-only (issue 13): the tree runs in a network
# namespace with loopback only, where lgrun's egress proxy is the one way
# out. Tools that honour the proxy variables work (plain HTTP, and HTTPS
# tunnelled with the origin's certificate); a process that ignores them
# cannot reach the network; the session record says the network was
# sealed. Without root it is refused with the reason, never silently off.
. "$(dirname "$0")/lib.sh"
need_root "a network namespace for the tree"
need_cmd curl
need_cmd openssl
cd "$T" || fail "cd"
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=localhost \
	-addext "subjectAltName=DNS:localhost" \
	-keyout origin.key -out origin.pem 2>/dev/null || fail "openssl req"
for kind in plain tls; do
	args=()
	[ $kind = tls ] && args=(--tls "$T/origin.pem" "$T/origin.key")
	python3 "$TOOLS/origin_server.py" --port-file "$T/$kind.port" "${args[@]}" &
	echo $! >>"$T/pids"
done
trap 'kill $(cat "$T/pids" 2>/dev/null) 2>/dev/null; lg_cleanup' EXIT
for _ in $(seq 1 100); do
	[ -s plain.port ] && [ -s tls.port ] && break
	sleep 0.05
done
HP=$(cat plain.port)
SP=$(cat tls.port)
printf '[network]\negress = proxy-only\n' >seal.ini

run_lg -c "$T/seal.ini" -s sealed -- sh -c "
	curl -sS --fail http://127.0.0.1:$HP/hello >'$T/plain.out' || exit 11
	curl -sS --fail --cacert '$T/origin.pem' https://localhost:$SP/hello >'$T/tls.out' || exit 12
	curl -sS --noproxy '*' --max-time 5 http://127.0.0.1:$HP/hello >/dev/null 2>&1 && exit 13
	python3 -c \"import socket; socket.create_connection(('127.0.0.1', $HP), timeout=5)\" 2>/dev/null && exit 14
	python3 -c \"import socket; socket.create_connection(('192.0.2.1', 443), timeout=5)\" 2>/dev/null && exit 14
	exit 0"
case $RC in
11 | 12) fail "a tool through the proxy failed in the sealed tree (exit $RC)" ;;
13 | 14) fail "a process that ignores the proxy reached the network (exit $RC)" ;;
esac
assert_rc 0 "$RC" "the sealed session"
grep -q "hello from the origin" plain.out && grep -q "hello from the origin" tls.out ||
	fail "the answers did not come through"
grep '"session":"sealed".*"event":"session_end"' "$STATE/audit.jsonl" | grep -q '"network":"proxy-only"' ||
	fail "the session record does not say the network was sealed"
grep -q '"session":"sealed".*"event":"egress","host":"localhost","port":'"$SP" "$STATE/audit.jsonl" ||
	fail "the tunnel is not audited"
# The one off this host is said (the observer sees the connect), as failing.
grep -q '"session":"sealed".*"reason":"direct_connection".*connects to 192.0.2.1:443 directly, not through lgrun.s egress proxy: it cannot' \
	"$STATE/audit.jsonl" || fail "the direct connection is not said: $(grep -c direct_connection "$STATE/audit.jsonl")"

# Without root: refused, with the reason.
need_cmd setpriv
# nobody's own state dir (one open to all is refused before the sealed check)
mkdir -p "$T/ustate" && chown nobody: "$T/ustate" && chmod 755 "$T"
chmod 644 seal.ini
setpriv --reuid=nobody --regid=nogroup --clear-groups \
	"$LGRUN" --state-dir "$T/ustate" -c "$T/seal.ini" -- true 2>"$T/user.err"
RC=$?
assert_rc 125 "$RC" "a sealed session without root"
grep -q "needs root" "$T/user.err" || fail "no reason given: $(cat "$T/user.err")"
pass
