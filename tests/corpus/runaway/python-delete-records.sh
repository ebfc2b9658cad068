# A script an agent wrote deletes ten records of a service outside the tree
# that existed before the session, through urllib on one connection each,
# with no config (issue 38).
NEEDS=python3
KNOWN=issue-38
setup() {
	bg python3 "$TOOLS/items_server.py" --port-file "$META/port" --ready-after 0 --max-lifetime 120
	wait_file "$META/port"
	export API_PORT=$(cat "$META/port")
	for i in $(seq 1 10); do
		python3 -c 'import json, os, sys, urllib.request
r = urllib.request.Request("http://127.0.0.1:%s/items" % os.environ["API_PORT"],
    data=json.dumps({"name": sys.argv[1]}).encode(), headers={"Content-Type": "application/json"})
urllib.request.urlopen(r, timeout=5).read()' "rec$i"
	done
	cat >purge.py <<'PY'
import os, urllib.request
for i in range(1, 11):
    r = urllib.request.Request("http://127.0.0.1:%s/items/%d" % (os.environ["API_PORT"], i), method="DELETE")
    urllib.request.urlopen(r, timeout=5).read()
print("purged")
PY
}
run() {
	python3 purge.py
}
verify() {
	n=$(python3 -c 'import json, os, urllib.request
print(len(json.load(urllib.request.urlopen("http://127.0.0.1:%s/items" % os.environ["API_PORT"], timeout=5))))')
	[ "$n" -ge 7 ] || bad "$((10 - n)) of the 10 pre-existing records were deleted"
}
