# node --test over a small library: tests write fixtures into temp dirs
# (fs.mkdtempSync) and remove them (fs.rmSync) in after hooks; run twice,
# the second time with a filter, as an agent rerunning a failing test does.
NEEDS=node
setup() {
	mkdir -p proj/lib proj/test
	cat >proj/lib/csv.js <<'JS'
const fs = require("node:fs");
exports.write = (p, rows) => fs.writeFileSync(p, rows.map((r) => r.join(",")).join("\n"));
exports.read = (p) => fs.readFileSync(p, "utf8").split("\n").map((l) => l.split(","));
JS
	local i
	for i in 1 2 3; do
		cat >proj/test/csv$i.test.js <<JS
const { test, before, after } = require("node:test");
const assert = require("node:assert");
const fs = require("node:fs"), os = require("node:os"), path = require("node:path");
const csv = require("../lib/csv.js");
let dir;
before(() => { dir = fs.mkdtempSync(path.join(os.tmpdir(), "csv$i-")); });
after(() => fs.rmSync(dir, { recursive: true, force: true }));
for (let k = 0; k < 15; k++) {
  test("roundtrip $i." + k, () => {
    const p = path.join(dir, "t" + k + ".csv");
    csv.write(p, [["a", String(k)], ["b", "$i"]]);
    assert.deepStrictEqual(csv.read(p), [["a", String(k)], ["b", "$i"]]);
    fs.unlinkSync(p);
  });
}
JS
	done
	manifest src proj
}
run() {
	set -e
	cd proj
	node --test test/ | tail -n 8
	node --test --test-name-pattern="roundtrip 2" test/ | grep -q '^# pass 15'
}
verify() {
	grep -q '^# pass 45' "$OUT" || bad "not every test passed"
	none_lost src
}
