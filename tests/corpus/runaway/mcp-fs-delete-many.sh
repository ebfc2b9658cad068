# An agent emptying a project file by file through an MCP filesystem
# server's delete_file: each call is counted once (the tool delete and the
# server's unlink are one decision), and the third is stopped
# (issue 29, item 3: counted once, still stopped).
NEEDS=python3
EXPECT_REASON=volume_exceeded
setup() {
	mkfiles project 12 src .py
	manifest project project
}
run() {
	python3 - "$TOOLS" "$META/fs.log" "$WORK/project" <<'PY'
import json, os, subprocess, sys
tools, log, root = sys.argv[1:4]
srv = subprocess.Popen([sys.executable, tools + "/mcp_fs_server.py", "--root", root, "--log", log],
                       stdin=subprocess.PIPE, stdout=subprocess.PIPE)
def call(i, method, params):
    srv.stdin.write((json.dumps({"jsonrpc": "2.0", "id": i, "method": method, "params": params}) + "\n").encode())
    srv.stdin.flush()
    return srv.stdout.readline()
call(1, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "corpus"}})
for i, n in enumerate(sorted(os.listdir(root))):
    print("deleting", n, flush=True)
    call(10 + i, "tools/call", {"name": "delete_file", "arguments": {"path": n}})
PY
}
verify() {
	n=$(grep -c '^tools/call delete_file' "$META/fs.log")
	[ "$n" -eq 2 ] || {
		bad "the server saw $n delete_file calls (2 expected: stopped at the 3rd, counted once each)"
		return 1
	}
	at_most_lost 2 project
}
