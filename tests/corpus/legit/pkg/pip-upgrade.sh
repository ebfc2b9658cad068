# pip install --upgrade over a version installed before the session: pip
# moves the old files (package, dist-info, console script) aside and
# deletes them, then installs the new ones.
NEEDS=python3
TIMEOUT=90
setup() {
	python3 -m venv .venv || skip "python3 -m venv does not work"
	mkdir wheels
	python3 "$FIXTURES/mkwheel.py" corpusa 1.0 wheels >/dev/null
	python3 "$FIXTURES/mkwheel.py" corpusa 2.0 wheels >/dev/null
	.venv/bin/pip install -q --no-index wheels/corpusa-1.0-py3-none-any.whl
}
run() {
	set -e
	.venv/bin/pip install -q --no-index --upgrade wheels/corpusa-2.0-py3-none-any.whl
	.venv/bin/pip install -q --no-index --force-reinstall wheels/corpusa-2.0-py3-none-any.whl
}
verify() {
	[ "$(.venv/bin/corpusa)" = "answer from 2.0" ] || bad "not upgraded: $(.venv/bin/corpusa)"
	[ -z "$(find .venv -name 'corpusa-1.0.dist-info')" ] || bad "old dist-info left"
}
