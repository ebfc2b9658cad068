# pip install --no-index of local wheels into a project venv (made before
# the session), an uninstall, and an install from a wheelhouse with
# --find-links, as an offline CI step does.
NEEDS=python3
TIMEOUT=90
setup() {
	python3 -m venv .venv || skip "python3 -m venv does not work"
	mkdir wheels
	python3 "$FIXTURES/mkwheel.py" corpusa 1.0 wheels >/dev/null
	python3 "$FIXTURES/mkwheel.py" corpusb 0.3 wheels >/dev/null
	manifest venv .venv/bin .venv/pyvenv.cfg
}
run() {
	set -e
	.venv/bin/pip install -q --no-index wheels/corpusa-1.0-py3-none-any.whl
	.venv/bin/corpusa | grep -qx "answer from 1.0"
	.venv/bin/pip uninstall -q -y corpusa
	.venv/bin/pip install -q --no-index --find-links wheels corpusa corpusb
	.venv/bin/python -c 'import corpusa, corpusb_compat; print(corpusa.answer())'
}
verify() {
	[ "$(.venv/bin/corpusb)" = "answer from 0.3" ] || bad "corpusb not installed"
	none_lost venv
}
