# A project's unittest suite: every test makes temp files and directories
# (tempfile, setUp/tearDown, addCleanup) and removes them; some tests write
# next to the code and clean up after themselves.
NEEDS=python3
setup() {
	mkdir -p proj/pkg proj/tests
	cat >proj/pkg/__init__.py <<'PY'
import json, os
def save(path, obj):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(obj, f)
    os.replace(tmp, path)
def load(path):
    with open(path) as f:
        return json.load(f)
PY
	cat >proj/tests/test_store.py <<'PY'
import os, shutil, tempfile, unittest
import pkg

class StoreTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.dir)

    def test_roundtrip(self):
        for i in range(20):
            p = os.path.join(self.dir, f"obj{i}.json")
            pkg.save(p, {"i": i})
            self.assertEqual(pkg.load(p), {"i": i})

    def test_overwrite(self):
        p = os.path.join(self.dir, "same.json")
        for i in range(30):
            pkg.save(p, [i])
        self.assertEqual(pkg.load(p), [29])

    def test_named_temp(self):
        for i in range(50):
            with tempfile.NamedTemporaryFile("w", suffix=".json") as f:
                f.write("{}"); f.flush()
                self.assertEqual(pkg.load(f.name), {})

class LocalFilesTest(unittest.TestCase):
    fixture = os.path.join(os.path.dirname(__file__), "fixture_out.json")
    def tearDown(self):
        if os.path.exists(self.fixture):
            os.unlink(self.fixture)
    def test_writes_next_to_code(self):
        pkg.save(self.fixture, {"ok": True})
        self.assertTrue(pkg.load(self.fixture)["ok"])
    def test_again(self):
        pkg.save(self.fixture, {"ok": 2})
        self.assertEqual(pkg.load(self.fixture)["ok"], 2)
PY
	: >proj/tests/__init__.py
	manifest src proj
}
run() {
	cd proj
	python3 -m unittest discover -s tests -t . 2>&1 | tail -n 3
	python3 -m unittest -q tests.test_store
}
verify() {
	grep -q '^OK' "$OUT" || bad "the suite did not pass"
	none_lost src
}
