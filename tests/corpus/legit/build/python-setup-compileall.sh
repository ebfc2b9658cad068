# A Python package: `setup.py build` (setuptools), byte-compile the tree
# with compileall (forced, over the __pycache__ of an earlier run), run it,
# then `setup.py clean --all`.
NEEDS=python3
setup() {
	python3 -c 'import setuptools' 2>/dev/null || skip "python3 has no setuptools"
	mkdir -p proj/corpuspkg/sub
	cat >proj/setup.py <<'PY'
from setuptools import setup, find_packages
setup(name="corpuspkg", version="1.0", packages=find_packages())
PY
	local i
	for i in 1 2 3 4 5 6 7 8; do
		printf 'def f%d(x):\n    return x * %d\n' "$i" "$i" >proj/corpuspkg/mod$i.py
		printf 'VALUE = %d\n' "$i" >proj/corpuspkg/sub/c$i.py
	done
	echo 'from .mod2 import f2' >proj/corpuspkg/__init__.py
	: >proj/corpuspkg/sub/__init__.py
	python3 -m compileall -q proj/corpuspkg
	manifest src proj/setup.py $(find proj/corpuspkg -name '*.py')
}
run() {
	set -e
	cd proj
	python3 setup.py -q build
	python3 -m compileall -q -f corpuspkg
	python3 -c 'import corpuspkg, corpuspkg.sub.c8 as c; assert corpuspkg.f2(c.VALUE) == 16'
	python3 setup.py -q clean --all
	python3 -m compileall -q -f build 2>/dev/null || true
}
verify() {
	ls proj/corpuspkg/__pycache__/ | grep -q '^mod1\.' || bad "not byte-compiled"
	none_lost src
}
