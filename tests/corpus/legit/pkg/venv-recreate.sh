# Re-creating a project's virtual environment made before the session
# (python -m venv --clear), then installing the project's wheel again: the
# usual fix for a broken venv.
# It was killed (issue 11): venv --clear removes the old tree, and the
# pre-existing directories it rmdirs (lib/python3.X, lib, bin...) counted as
# destroyed. A venv's own layout is regenerable (issue 29, item 2).
NEEDS=python3
TIMEOUT=90
setup() {
	python3 -m venv .venv || skip "python3 -m venv does not work"
	mkdir wheels
	python3 "$FIXTURES/mkwheel.py" corpusa 1.0 wheels >/dev/null
	.venv/bin/pip install -q --no-index wheels/corpusa-1.0-py3-none-any.whl
}
run() {
	set -e
	python3 -m venv --clear .venv
	.venv/bin/pip install -q --no-index wheels/corpusa-1.0-py3-none-any.whl
}
verify() {
	[ "$(.venv/bin/corpusa)" = "answer from 1.0" ] || bad "the venv does not work"
}
