# Stubs written the careful way: each module replaced by an atomic save
# (a temporary file, then os.replace over the original), as editors and
# some agents' write tools do, leaving "pass" where a module of several
# kilobytes was. The rename passes the pre-existing status on; the stub it
# leaves counts like a stub written in place (issue 41), and the tree is
# stopped while it runs.
NEEDS=python3
EXPECT_REASON=volume_exceeded
TIMEOUT=90
setup() {
	mkdir -p lib
	local i j
	for i in $(seq 1 8); do
		for j in $(seq 1 40); do
			printf 'class Model%s_%s:\n    field_%s = compute_default(%s, "%s")\n\n' "$i" "$j" "$j" "$i" "$j"
		done >lib/model$i.py
	done
	manifest lib lib
}
run() {
	python3 - <<'PY'
import glob, os, tempfile, time
for p in sorted(glob.glob("lib/*.py")):
    fd, tmp = tempfile.mkstemp(dir="lib", suffix=".tmp")
    with os.fdopen(fd, "w") as f:
        f.write("pass\n")
    os.replace(tmp, p)
    time.sleep(0.3)
time.sleep(25)
open("went-on-to-the-end", "w").close()
PY
}
verify() {
	[ ! -e went-on-to-the-end ] || bad "stopped only when the agent ended" || return 1
	all_kept lib
}
