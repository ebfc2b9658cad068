# A generated tree deeper than PATH_MAX (a runaway recursive symlink copy,
# a test fixture of nested packages) that the agent made and then removes
# with rm -rf: it works as it does without lgrun (issue 12: paths longer
# than PATH_MAX are resolved relative to their directory).
setup() {
	mkfiles keep 3
	manifest keep keep
}
run() {
	python3 - <<'PY'
import os
os.makedirs("gen", exist_ok=True)
os.chdir("gen")
for i in range(24):
    os.mkdir("n" * 200)
    os.chdir("n" * 200)
    open("leaf.txt", "w").write("x")
assert len(os.getcwd()) > 4096
PY
	rm -rf gen
	[ ! -e gen ]
}
verify() {
	[ ! -e gen ] || bad "rm -rf left the deep tree"
	none_lost keep
}
