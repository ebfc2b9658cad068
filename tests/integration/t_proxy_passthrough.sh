#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The proxy changes nothing it forwards: a 5 MB streamed response arrives
# byte for byte (checksums), a request it does not understand is forwarded
# unchanged, request headers and bodies reach the upstream intact, and an
# upstream that is down gives a clear error at once instead of a hang.
source "$(dirname "$0")/lib.sh"
need_cmd python3

cat >"$T/upstream.py" <<'PY'
import hashlib, http.server, json, os, sys
body = os.urandom(5 << 20)
open(sys.argv[2], "w").write(hashlib.sha256(body).hexdigest())
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *a): pass
    def do_POST(self):
        n = int(self.headers.get("Content-Length", 0)); got = self.rfile.read(n)
        if self.path == "/v1/messages":   # a streamed reply, sent in pieces
            self.send_response(200); self.send_header("Content-Type", "text/event-stream")
            self.send_header("Content-Length", str(len(body))); self.end_headers()
            for i in range(0, len(body), 65536): self.wfile.write(body[i:i + 65536])
        else:                              # echo what arrived, and how
            out = json.dumps({"path": self.path, "sha": hashlib.sha256(got).hexdigest(),
                              "x-custom": self.headers.get("X-Custom"),
                              "api-key": self.headers.get("x-api-key") is not None}).encode()
            self.send_response(201); self.send_header("Content-Type", "application/json")
            self.send_header("X-Upstream", "yes")
            self.send_header("Content-Length", str(len(out))); self.end_headers(); self.wfile.write(out)
s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
open(sys.argv[1], "w").write(str(s.server_address[1]))
s.serve_forever()
PY
python3 "$T/upstream.py" "$T/port" "$T/sha" &
up=$!
trap 'kill $up 2>/dev/null; lg_cleanup' EXIT
for _ in $(seq 1 100); do [ -s "$T/port" ] && [ -s "$T/sha" ] && break; sleep 0.05; done
export ANTHROPIC_BASE_URL=http://127.0.0.1:$(cat "$T/port")

run_lg --session pass -- python3 - "$T/sha" <<'PY'
import hashlib, http.client, json, os, sys, urllib.parse
u = urllib.parse.urlparse(os.environ["ANTHROPIC_BASE_URL"])
assert u.hostname == "127.0.0.1" and u.path.endswith("/anthropic"), u   # lgrun's proxy, not the upstream
c = http.client.HTTPConnection(u.hostname, u.port, timeout=20)
c.request("POST", u.path + "/v1/messages", body=b'{"stream":true}', headers={"x-api-key": "k"})
r = c.getresponse(); h = hashlib.sha256()
while True:
    b = r.read(100000)
    if not b: break
    h.update(b)
assert r.status == 200, r.status
assert h.hexdigest() == open(sys.argv[1]).read(), "the stream was changed"
payload = os.urandom(300000)
c.request("POST", u.path + "/v1/unknown/thing?x=1", body=payload, headers={"X-Custom": "kept", "x-api-key": "k"})
r = c.getresponse(); j = json.loads(r.read())
assert r.status == 201 and r.getheader("X-Upstream") == "yes", r.status
assert j["path"] == "/v1/unknown/thing?x=1", j
assert j["sha"] == hashlib.sha256(payload).hexdigest(), "the request body was changed"
assert j["x-custom"] == "kept" and j["api-key"], j
print("ok")
PY
assert_rc 0 "$RC" "byte-exact passthrough"

kill $up
export ANTHROPIC_BASE_URL=http://127.0.0.1:1
start=$SECONDS
run_lg --session down -- python3 - <<'PY'
import http.client, json, os, urllib.parse
u = urllib.parse.urlparse(os.environ["ANTHROPIC_BASE_URL"])
c = http.client.HTTPConnection(u.hostname, u.port, timeout=20)
c.request("POST", u.path + "/v1/messages", body=b'{"model":"m","messages":[]}')
r = c.getresponse(); j = json.loads(r.read())
assert r.status == 502, r.status
assert "unreachable" in j["error"]["message"], j
PY
assert_rc 0 "$RC" "upstream down"
[ $((SECONDS - start)) -lt 10 ] || fail "a dead upstream took too long to report"
pass
