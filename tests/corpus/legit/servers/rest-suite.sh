# A unittest suite against a local REST service started before the
# session: several tests GET the same resource and get the same answer.
NEEDS=python3
setup() {
	bg python3 "$TOOLS/items_server.py" --port-file "$META/port" --ready-after 0 --max-lifetime 120
	wait_file "$META/port"
	export API_PORT=$(cat "$META/port")
	cat >test_api.py <<'PY'
import http.client, json, os, unittest
PORT = int(os.environ["API_PORT"])
def get(path):
    c = http.client.HTTPConnection("127.0.0.1", PORT, timeout=5)
    c.request("GET", path); r = c.getresponse()
    return r.status, json.loads(r.read())
class ApiTest(unittest.TestCase):
    def test_health(self): self.assertEqual(get("/health"), (200, {"status": "ok"}))
    def test_health_again(self): self.assertEqual(get("/health")[0], 200)
    def test_health_json(self): self.assertEqual(get("/health")[1]["status"], "ok")
    def test_items_empty(self): self.assertEqual(get("/items"), (200, []))
    def test_items_list(self): self.assertIsInstance(get("/items")[1], list)
    def test_items_twice(self): self.assertEqual(get("/items"), get("/items"))
    def test_missing(self): self.assertEqual(get("/items/99")[0], 404)
    def test_missing_again(self): self.assertEqual(get("/items/99")[0], 404)
if __name__ == "__main__":
    unittest.main()
PY
}
run() {
	python3 test_api.py
}
verify() {
	grep -q '^OK$' "$ERR" || bad "the suite did not pass"
}
