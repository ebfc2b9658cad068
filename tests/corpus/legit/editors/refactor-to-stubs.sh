# A refactor that moves code and leaves stubs: "move every handler into
# core.py and leave the old modules re-exporting it". The agent writes
# core.py with the bodies of five modules, then replaces each module with
# a one-line re-export, as its write tool does (open "w"). Each module is
# cut from kilobytes to a stub (issue 41), but its body lives on in
# core.py, a file the session wrote: not lost, nothing may trip.
NEEDS=python3
TIMEOUT=90
setup() {
	mkdir -p app
	local i j
	for i in $(seq 1 5); do
		for j in $(seq 1 40); do
			printf 'def handle_%s_%s(req):\n    return respond(req, code=%s, where="mod%s")\n\n' "$i" "$j" "$j" "$i"
		done >app/mod$i.py
	done
}
run() {
	python3 - <<'PY'
import glob, time
mods = sorted(glob.glob("app/mod*.py"))
with open("app/core.py", "w") as core:
    for m in mods:
        core.write(open(m).read())
for m in mods:
    with open(m, "w") as f:
        f.write("from .core import *  # noqa: F401,F403\n")
    time.sleep(0.2)
time.sleep(12)  # the agent goes on; the quiet time passes
print("refactored")
PY
}
verify() {
	grep -q "refactored" "$OUT" || bad "the refactor did not finish" || return 1
	grep -q 'def handle_5_40' app/core.py || bad "core.py does not hold the code" || return 1
}
