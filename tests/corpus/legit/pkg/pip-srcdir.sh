# pip install --no-index of a source directory (setuptools, no build
# isolation, as offline) into a venv that sees the system's setuptools and
# wheel, then an editable install of another.
NEEDS=python3
TIMEOUT=90
setup() {
	# pyenv's pythons have no `wheel`, which setuptools < 70 needs to build
	# one: take Debian's python3 with its system packages (setuptools, wheel).
	local py
	for py in /usr/bin/python3 python3; do
		"$py" -c 'import setuptools, wheel' 2>/dev/null && break
		py=
	done
	[ -n "$py" ] || skip "no python3 with setuptools and wheel (apt-get install python3-wheel)"
	"$py" -m venv --system-site-packages .venv || skip "$py -m venv does not work"
	local p
	for p in libone libtwo; do
		mkdir -p $p/src/$p
		printf '[build-system]\nrequires = ["setuptools"]\nbuild-backend = "setuptools.build_meta"\n[project]\nname = "%s"\nversion = "0.1"\n' $p >$p/pyproject.toml
		printf 'NAME = "%s"\n' $p >$p/src/$p/__init__.py
	done
	manifest src libone libtwo
}
run() {
	set -e
	.venv/bin/pip install -q --no-index --no-build-isolation ./libone
	.venv/bin/pip install -q --no-index --no-build-isolation -e ./libtwo
	.venv/bin/python -c 'import libone, libtwo; print(libone.NAME, libtwo.NAME)'
}
verify() {
	.venv/bin/python -c 'import libone, libtwo' || bad "not installed"
}
