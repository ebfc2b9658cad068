#!/bin/bash
# SPDX-License-Identifier: MIT
# Upgrading a package with pip must not trip the guard with the default
# config. pip uninstalls the old version by moving ("stashing") its files
# aside -- whole package directories to a `~`-prefixed sibling in
# site-packages, lone files (top-level modules, console scripts) into a
# `pip-uninstall-*` folder under $TMPDIR -- and then deleting the stash, so
# every file of the old version, born before the session, is removed.
source "$(dirname "$0")/lib.sh"
need_cmd python3

# The real interpreter, not a version-manager shim (pyenv shims are shell
# scripts with their own side effects).
PY=$(python3 -c 'import sys; print(sys.executable)') || skip "python3 does not run"
"$PY" -m venv "$T/venv" >"$T/venv.log" 2>&1 ||
	skip "python3 -m venv failed (no ensurepip / python3-venv?): $(tail -n1 "$T/venv.log")"
[ -x "$T/venv/bin/pip" ] || skip "the venv has no pip (no ensurepip?)"

# Nothing may touch the network or the user's pip cache/config; drop any
# PIP_* settings from the environment (e.g. a find-links dir) and the
# no-bytecode switch, so __pycache__ folders exist as on a usual machine.
for v in $(compgen -e | grep '^PIP_'); do unset "$v"; done
unset PYTHONDONTWRITEBYTECODE
export PIP_NO_INDEX=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1
export PIP_CACHE_DIR=$T/pipcache PIP_CONFIG_FILE=/dev/null
export TMPDIR=$T/tmp
mkdir -p "$TMPDIR"

# Build the two wheels by hand: a wheel is a zip with a dist-info folder,
# and this needs neither network nor setuptools/wheel. The package has a
# package directory with a submodule and a data file, a top-level module
# and a console script, so that pip's uninstall stashes both directories
# and lone files.
mkwheel() { # version outdir: tests/fixtures/mkwheel.py, run by the venv's python
	"$PY" "$FIXTURES/mkwheel.py" lgdemo "$1" "$2"
}
mkdir -p "$T/wheels"
W1=$(mkwheel 1.0 "$T/wheels") || fail "fixture: building wheel 1.0"
W2=$(mkwheel 2.0 "$T/wheels") || fail "fixture: building wheel 2.0"

"$T/venv/bin/pip" install -q "$W1" >"$T/pip1.log" 2>&1 ||
	fail "fixture: pip install 1.0: $(tail -n3 "$T/pip1.log")"
SITE=$("$T/venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
[ -f "$SITE/lgdemo/core.py" ] || fail "fixture: lgdemo 1.0 not in $SITE"
[ "$("$T/venv/bin/lgdemo")" = "answer from 1.0" ] || fail "fixture: console script 1.0"
"$T/venv/bin/python" -c 'import lgdemo, lgdemo_compat' || fail "fixture: import 1.0"
sleep 1 # birth times strictly older than the session start

run_lg -- "$T/venv/bin/pip" install -q --no-index --upgrade "$W2"
assert_no_trip "pip install --upgrade"
assert_rc 0 "$RC" "pip install --upgrade"

ver=$("$T/venv/bin/python" -c 'import importlib.metadata as m; print(m.version("lgdemo"))')
[ "$ver" = 2.0 ] || fail "installed version is '$ver', expected 2.0"
[ "$("$T/venv/bin/python" -c 'import lgdemo, lgdemo_compat; print(lgdemo.__version__, lgdemo_compat.VERSION)')" = "2.0 2.0" ] ||
	fail "modules not upgraded"
[ "$("$T/venv/bin/lgdemo")" = "answer from 2.0" ] || fail "console script not upgraded"
grep -qx "data 2.0" "$SITE/lgdemo/data.txt" || fail "data file not upgraded"
[ ! -e "$SITE/lgdemo-1.0.dist-info" ] || fail "old dist-info left behind"
stash=$(find "$SITE" "$TMPDIR" -maxdepth 1 \( -name '~*' -o -name 'pip-uninstall-*' \))
[ -z "$stash" ] || fail "pip left its uninstall stash: $stash"

pass
