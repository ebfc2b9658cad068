# A Python package with a C helper, in git: its build outputs from before
# the session are all ignored (.gitignore: objects, the helper program, a
# benchmark build of it, its library, __pycache__, dist/). Under lgrun
# `git clean -fdX` removes the ignored files only (-X), leaving untracked
# notes and the sources.
NEEDS="git cc python3"
setup() {
	mkdir -p proj/pkg proj/csrc proj/dist
	printf 'def add(a, b):\n    return a + b\n' >proj/pkg/__init__.py
	printf 'from . import add\n\ndef twice(x):\n    return add(x, x)\n' >proj/pkg/ops.py
	printf '[project]\nname = "pkg"\nversion = "0.1"\n' >proj/pyproject.toml
	printf 'int h1(void) { return 1; }\n' >proj/csrc/h1.c
	printf 'int h2(void) { return 2; }\n' >proj/csrc/h2.c
	printf '#include <stdio.h>\nint h1(void); int h2(void);\nint main(void) { printf("%%d\\n", h1() + h2()); return 0; }\n' >proj/csrc/main.c
	printf '*.o\n*.so\n/helper\n/bench\n__pycache__/\ndist/\n' >proj/.gitignore
	git -C proj init -q
	git -C proj add -A && git -C proj commit -qm init
	(cd proj && for f in csrc/*.c; do cc -fPIC -c -o "${f%.c}.o" "$f"; done &&
		cc -o helper csrc/*.o && cc -O2 -o bench csrc/*.o && cc -shared -o libh.so csrc/h1.o csrc/h2.o &&
		python3 -c 'import pkg.ops' && python3 -m compileall -q pkg)
	(cd proj && python3 - <<'PY'
import zipfile
with zipfile.ZipFile("dist/pkg-0.1-py3-none-any.whl", "w") as z:
    z.write("pkg/__init__.py"); z.write("pkg/ops.py")
PY
	)
	mkfiles proj/notes 3 n .txt
	manifest src proj/pkg/*.py proj/csrc/*.c proj/pyproject.toml proj/.gitignore proj/notes
}
run() {
	set -e
	cd proj
	git clean -fdXq
	test ! -e helper && test ! -e pkg/__pycache__
}
verify() {
	[ -e proj/notes/n1.txt ] || bad "git clean -X removed untracked notes"
	none_lost src
}
