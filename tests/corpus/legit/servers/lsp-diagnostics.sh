# An LSP-style client: JSON-RPC with Content-Length framing over a language
# server's stdio, asking for the same document's diagnostics again and
# again, as editors and agents' language tools poll.
NEEDS=python3
setup() {
	cat >lsp.py <<'PY'
import json, subprocess, sys
SERVER = r'''
import json, sys
def read():
    h = {}
    while True:
        line = sys.stdin.buffer.readline()
        if not line: sys.exit(0)
        if line in (b"\r\n", b"\n"): break
        k, v = line.decode().split(":", 1); h[k.lower()] = v.strip()
    return json.loads(sys.stdin.buffer.read(int(h["content-length"])))
def send(o):
    b = json.dumps(o).encode()
    sys.stdout.buffer.write(b"Content-Length: %d\r\n\r\n" % len(b) + b); sys.stdout.buffer.flush()
while True:
    m = read()
    if "id" not in m: continue
    if m["method"] == "initialize": send({"jsonrpc": "2.0", "id": m["id"], "result": {"capabilities": {}}})
    elif m["method"] == "textDocument/diagnostic":
        send({"jsonrpc": "2.0", "id": m["id"], "result": {"kind": "full", "items": [
            {"range": {"start": {"line": 3, "character": 0}, "end": {"line": 3, "character": 4}},
             "severity": 1, "message": "undefined name 'foo'"}]}})
    elif m["method"] == "shutdown": send({"jsonrpc": "2.0", "id": m["id"], "result": None})
'''
p = subprocess.Popen([sys.executable, "-c", SERVER], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
def send(o):
    b = json.dumps(o).encode()
    p.stdin.write(b"Content-Length: %d\r\n\r\n" % len(b) + b); p.stdin.flush()
def read():
    n = 0
    while True:
        line = p.stdout.readline()
        if line in (b"\r\n", b"\n"): break
        if line.lower().startswith(b"content-length:"): n = int(line.split(b":")[1])
    return json.loads(p.stdout.read(n))
send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"rootUri": None}}); read()
send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
doc = {"textDocument": {"uri": "file:///work/main.py"}}
for i in range(6):
    send({"jsonrpc": "2.0", "id": 10 + i, "method": "textDocument/diagnostic", "params": doc})
    assert read()["result"]["items"][0]["message"] == "undefined name 'foo'"
send({"jsonrpc": "2.0", "id": 99, "method": "shutdown"}); read()
p.stdin.close(); p.wait()
print("diagnostics polled 6 times")
PY
}
run() {
	python3 lsp.py
}
verify() {
	grep -q 'polled 6 times' "$OUT" || bad "the client did not finish"
}
