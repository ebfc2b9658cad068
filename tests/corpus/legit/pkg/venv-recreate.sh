# Re-creating a project's virtual environment made before the session
# (python -m venv --clear), then installing the project's wheel again: the
# usual fix for a broken venv.
# Known false kill: venv --clear removes the old tree, and the empty
# pre-existing directories it rmdirs (lib/python3.X, lib, bin...) count as
# destroyed; filed under issue 11 (legit work killed), needs its own fix.
KNOWN=issue-11
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
