# The write tool inside the agent's own process (an agent CLI writes files
# with its runtime's writeFile, in its own process): ten pre-existing
# files written with empty content, one call every half second, and the
# agent process runs on, waiting for its model. Issue 41: a file left
# empty with no writer for ten seconds counts while the tree runs; the
# agent process itself is killed, its files kept.
NEEDS=python3
EXPECT_REASON=volume_exceeded
TIMEOUT=90
setup() {
	mkdir -p notes
	local i
	for i in $(seq 1 10); do seq 1 300 | sed "s/^/note $i line /" >notes/n$i.md; done
	manifest notes notes
}
run() {
	python3 - <<'PY'
import glob, time
for p in sorted(glob.glob("notes/*.md")):
    with open(p, "w") as f:
        f.write("")
    time.sleep(0.5)
time.sleep(25)  # the agent waits for its model, and goes on
open("went-on-to-the-end", "w").close()
PY
}
verify() {
	[ ! -e went-on-to-the-end ] || bad "stopped only when the agent ended" || return 1
	all_kept notes
}
