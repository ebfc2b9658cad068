# A pytest-style runner made of plain Python: discovers test_* functions,
# gives each a fresh tmp_path (removed afterwards), keeps a last-failed
# cache in .pytest_cache (from an earlier run, before the session) and
# rewrites it; run three times as an agent iterating does.
NEEDS=python3
setup() {
	mkdir -p proj/tests
	cat >proj/runtests.py <<'PY'
import importlib.util, inspect, json, os, pathlib, shutil, sys, tempfile, traceback
root = pathlib.Path(__file__).parent
cache = root / ".pytest_cache" / "v" / "cache"
cache.mkdir(parents=True, exist_ok=True)
failed, passed = [], 0
base = pathlib.Path(tempfile.mkdtemp(prefix="pytest-of-agent-"))
for f in sorted((root / "tests").glob("test_*.py")):
    spec = importlib.util.spec_from_file_location(f.stem, f)
    mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod)
    for name, fn in inspect.getmembers(mod, inspect.isfunction):
        if not name.startswith("test_"):
            continue
        kw = {}
        if "tmp_path" in inspect.signature(fn).parameters:
            kw["tmp_path"] = base / f"{f.stem}-{name}"
            kw["tmp_path"].mkdir()
        try:
            fn(**kw); passed += 1
        except Exception:
            failed.append(f"{f.name}::{name}"); traceback.print_exc()
        finally:
            if "tmp_path" in kw:
                shutil.rmtree(kw["tmp_path"])
shutil.rmtree(base)
for key, val in (("lastfailed", {k: True for k in failed}), ("stepwise", []), ("nodeids", [])):
    p = cache / key
    if p.exists():
        p.unlink()
    p.write_text(json.dumps(val))
print(f"{passed} passed, {len(failed)} failed")
sys.exit(1 if failed else 0)
PY
	local i
	for i in 1 2 3 4; do
		cat >proj/tests/test_mod$i.py <<PY
def test_write_$i(tmp_path):
    for k in range(10):
        (tmp_path / f"f{k}.txt").write_text(str(k))
    assert len(list(tmp_path.iterdir())) == 10

def test_math_$i():
    assert sum(range($i + 1)) == $i * ($i + 1) // 2
PY
	done
	(cd proj && python3 runtests.py >/dev/null)
	manifest src proj/tests proj/runtests.py
}
run() {
	set -e
	cd proj
	for r in 1 2 3; do python3 runtests.py; done
}
verify() {
	[ "$(grep -c '^8 passed, 0 failed' "$OUT")" = 3 ] || bad "the suite did not pass three times"
	none_lost src
}
