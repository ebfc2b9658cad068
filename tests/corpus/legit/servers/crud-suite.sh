# A CRUD test suite against a local service: create an item, read it,
# delete it, five times (HTTP DELETEs of what the run itself created, to a
# service no config declares as a tool).
NEEDS=python3
setup() {
	bg python3 "$TOOLS/items_server.py" --port-file "$META/port" --ready-after 0 --max-lifetime 120
	wait_file "$META/port"
	export API_PORT=$(cat "$META/port")
	cat >crud.py <<'PY'
import http.client, json, os
c = http.client.HTTPConnection("127.0.0.1", int(os.environ["API_PORT"]), timeout=5)
def call(m, p, body=None):
    c.request(m, p, body=json.dumps(body) if body is not None else None,
              headers={"Content-Type": "application/json"})
    r = c.getresponse(); d = r.read()
    return r.status, (json.loads(d) if d else None)
for i in range(5):
    st, it = call("POST", "/items", {"name": f"item{i}"}); assert st == 201
    assert call("GET", f"/items/{it['id']}")[0] == 200
    assert call("DELETE", f"/items/{it['id']}")[0] == 204
    assert call("GET", f"/items/{it['id']}")[0] == 404
assert call("GET", "/items") == (200, [])
print("crud ok")
PY
}
run() {
	python3 crud.py
}
verify() {
	grep -q 'crud ok' "$OUT" || bad "the suite did not pass"
}
