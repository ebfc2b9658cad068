# A project's broken virtual environment thrown away and made again the
# other usual way: rm -rf .venv && python3 -m venv .venv, then pip install
# of the project's wheel; and a second venv (venv/, made with --upgrade-deps
# off) removed by a Python script (shutil.rmtree) and recreated
# (issue 29, item 2: a venv is regenerable).
NEEDS=python3
TIMEOUT=90
setup() {
	python3 -m venv .venv || skip "python3 -m venv does not work"
	python3 -m venv --without-pip venv
	mkdir wheels src
	python3 "$FIXTURES/mkwheel.py" corpusa 1.0 wheels >/dev/null
	.venv/bin/pip install -q --no-index wheels/corpusa-1.0-py3-none-any.whl
	mkfiles src 5 mod .py
	manifest src src
}
run() {
	set -e
	rm -rf .venv
	python3 -m venv .venv
	.venv/bin/pip install -q --no-index wheels/corpusa-1.0-py3-none-any.whl
	python3 -c 'import shutil; shutil.rmtree("venv")'
	python3 -m venv --without-pip venv
}
verify() {
	[ "$(.venv/bin/corpusa)" = "answer from 1.0" ] || bad "the venv does not work"
	[ -x venv/bin/python ] || bad "venv/ not made again"
	none_lost src
}
