# A script an agent wrote deletes ten records of a service outside the tree
# that existed before the session, through urllib on one connection each,
# with no config (issue 38).
NEEDS="python3 curl"
setup() {
	start_items 10
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
	n=$(items_left)
	[ "$n" -ge 7 ] || bad "$((10 - n)) of the 10 pre-existing records were deleted"
}
