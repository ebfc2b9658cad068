#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# TLS bytes are reported as opaque traffic, never as nothing; the session's
# counters reach the Prometheus textfile.
source "$(dirname "$0")/lib.sh"
need_cmd python3

run_lg --session tls -- python3 - <<'PY'
import socket, threading
srv = socket.socket(); srv.bind(("127.0.0.1", 0)); srv.listen(1)
def serve():
    c, _ = srv.accept(); c.recv(100); c.close()
t = threading.Thread(target=serve); t.start()
cli = socket.create_connection(srv.getsockname())
# what every TLS client sends first: a handshake record, TLS 1.0-1.3
cli.sendall(bytes([22, 3, 1, 0, 5]) + b"hello")
t.join()
PY
assert_rc 0 "$RC" "a TLS client"
[ "$(session_field tls tls_channels)" = 1 ] || fail "TLS traffic was not reported: $(cat "$STATE/sessions/tls.json")"

start_catalog
run_lg --session m --config "$TOOLS/catalog.ini" -- python3 "$TOOLS/catalog_agent.py" --port-file "$CATALOG_PORT_FILE" \
	--max-attempts 5 --delay 0 >/dev/null 2>&1
assert_rc 86 "$RC" "catalogue loop"
prom=$STATE/lgrun.prom
grep -q '^lgrun_trips_total{agent="python3",reason="loop_detected"} 1$' "$prom" || fail "trip counter: $(cat "$prom")"
grep -q '^lgrun_gated_calls_total [3-9]' "$prom" || fail "gated calls counter"
grep -q '^lgrun_events_total{source="shim"} [1-9]' "$prom" || fail "events by source"
grep -q '^# TYPE lgrun_shim_refused_connections_total counter$' "$prom" || fail "refused counter missing"
pass
