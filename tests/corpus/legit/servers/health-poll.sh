# A script starts a local service (python http.server based) inside the
# session and polls GET /health until it is ready (the same request and the
# same "starting" answer many times), then reads /items a few times.
NEEDS=python3
setup() {
	cat >poll.py <<'PY'
import http.client, json, os, subprocess, sys, time
srv = subprocess.Popen([sys.executable, sys.argv[1], "--port-file", "port", "--ready-after", "8",
                        "--max-lifetime", "60"])
while not os.path.exists("port"):
    time.sleep(0.02)
c = http.client.HTTPConnection("127.0.0.1", int(open("port").read()), timeout=5)
polls = 0
while True:
    c.request("GET", "/health"); r = c.getresponse(); json.loads(r.read())
    polls += 1
    if r.status == 200:
        break
    time.sleep(0.02)
for _ in range(5):
    c.request("GET", "/items"); r = c.getresponse(); r.read(); assert r.status == 200
srv.terminate(); srv.wait()
print(f"ready after {polls} polls")
PY
}
run() {
	python3 poll.py "$TOOLS/items_server.py"
}
verify() {
	grep -q 'ready after 9 polls' "$OUT" || bad "the poll did not finish"
}
