#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A readiness poll, as scripts do after starting a service: the script
# starts a local server inside the session, GETs /health until it answers
# ready (the same request and the same "starting" answer many times), then
# reads /items a few times. A program's routine, not an agent's decision:
# observed, never judged, under the default config.
source "$(dirname "$0")/lib.sh"
need_cmd python3
cat >"$T/poll.py" <<'PY'
import http.client, json, subprocess, sys, time, os
port_file = sys.argv[2]
srv = subprocess.Popen([sys.executable, sys.argv[1], "--port-file", port_file,
                        "--ready-after", "6"])
while not os.path.exists(port_file):
    time.sleep(0.02)
c = http.client.HTTPConnection("127.0.0.1", int(open(port_file).read()), timeout=5)
polls = 0
while True:
    c.request("GET", "/health"); r = c.getresponse(); body = json.loads(r.read())
    polls += 1
    if r.status == 200:
        break
    time.sleep(0.02)
for _ in range(5):
    c.request("GET", "/items"); r = c.getresponse(); r.read()
    assert r.status == 200
srv.terminate(); srv.wait()
print(f"ready after {polls} polls")
PY
run_lg --session poll -- python3 "$T/poll.py" "$TOOLS/items_server.py" "$T/port" >"$T/out" 2>"$T/err"
assert_rc 0 "$RC" "a readiness poll loop: $(cat "$T/err")"
grep -q 'ready after 7 polls' "$T/out" || fail "the poll did not run: $(cat "$T/out")"
assert_no_trip "a readiness poll loop"
n=$(grep '"event":"session_end"' "$STATE/audit.jsonl" | grep -o '"observed_calls":[0-9]*' | cut -d: -f2)
[ "${n:-0}" -ge 12 ] || fail "the requests were not observed ($n): $(tail -1 "$STATE/audit.jsonl")"
pass
