# A dependency installed from git with its .git inside node_modules, whose
# tree runs 1500 directories deep, there before the session and removed
# with rm -rf: node_modules/ is ignored, so nothing counts, but every
# removal (its path holds "/.git/") is first matched against the shipped
# "**/.git/*.lock" patterns. Those took 0.7 s each per removal at 1000
# levels before the glob fix (found by fuzz_path): this timed out.
TIMEOUT=60
setup() {
	mkfiles keep 3
	manifest keep keep
	python3 - <<'PY'
import os
os.makedirs("node_modules/dep/.git/objects", exist_ok=True)
os.chdir("node_modules/dep/.git/objects")
for i in range(1500):
    os.mkdir("a")
    os.chdir("a")
    open("index.js", "w").write("x")
PY
}
run() {
	rm -rf node_modules
}
verify() {
	[ ! -e node_modules ] || bad "rm -rf left the tree"
	none_lost keep
}
