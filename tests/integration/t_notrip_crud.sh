#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A CRUD test suite: create an item, read it, delete it, five times. The
# HTTP DELETEs remove what the run itself created and go to a service no
# config declares: they are not tool deletes, and nothing is said about
# "pre-existing files". The twin declares the service: its DELETE loop on
# one item is stopped, and the record says "tool deletes".
source "$(dirname "$0")/lib.sh"
need_cmd python3
python3 "$TOOLS/items_server.py" --port-file "$T/port" --ready-after 0 --max-lifetime 120 &
SRV=$!
trap 'kill $SRV 2>/dev/null; lg_cleanup' EXIT
for _ in $(seq 1 100); do [ -s "$T/port" ] && break; sleep 0.05; done
cat >"$T/crud.py" <<'PY'
import http.client, json, sys
c = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]), timeout=5)
def call(m, p, body=None):
    c.request(m, p, body=json.dumps(body) if body is not None else None,
              headers={"Content-Type": "application/json"})
    r = c.getresponse(); d = r.read()
    return r.status, (json.loads(d) if d else None)
mode = sys.argv[2]
for i in range(5):
    if mode == "crud":
        st, it = call("POST", "/items", {"name": f"item{i}"}); assert st == 201
        assert call("GET", f"/items/{it['id']}")[0] == 200
        assert call("DELETE", f"/items/{it['id']}")[0] == 204
    else:  # a careless agent deleting the same item again and again
        call("DELETE", "/items/1")
print("done", mode)
PY
port=$(cat "$T/port")
run_lg --session crud -- python3 "$T/crud.py" "$port" crud >"$T/out" 2>&1
assert_rc 0 "$RC" "a CRUD suite: $(cat "$T/out")"
assert_no_trip "a CRUD suite"
! grep -q 'pre-existing' "$STATE/audit.jsonl" || fail "HTTP deletes called pre-existing files"

printf '[shim]\ntool_endpoints = /items\n' >"$T/tools.ini"
run_lg --session twin --config "$T/tools.ini" -- python3 "$T/crud.py" "$port" loop >"$T/out" 2>&1
assert_rc 86 "$RC" "a declared service's DELETE loop"
grep -q '"summary":"session_killed: loop_detected, 3 tool deletes on /items/1 in ' "$STATE/audit.jsonl" ||
	fail "summary: $(grep -o '"summary":"[^"]*"' "$STATE/audit.jsonl" | tail -1)"
pass
