#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tests/agents/bin.sh claude|codex|gemini: prints the path of that CLI's
# binary as `make agents` installed it (the pinned version, in
# ${LGRUN_AGENTS_DIR:-$HOME/.cache/lgrun/agents}); exit 1 when it is not there.
set -u
name=${1:-}
inst=$(dirname "$0")/install.sh
case $name in
claude | codex | gemini) ;;
*)
	echo "usage: $0 claude|codex|gemini" >&2
	exit 2
	;;
esac
# The pinned version is read from install.sh, so the two never disagree.
var=$(echo "$name" | tr '[:lower:]' '[:upper:]')_VERSION
ver=$(sed -n "s/.*\b$var=\([0-9][^ ]*\).*/\1/p" "$inst" | head -n 1)
[ -n "$ver" ] || {
	echo "$0: no $var in $inst" >&2
	exit 2
}
b=${LGRUN_AGENTS_DIR:-$HOME/.cache/lgrun/agents}/$name-$ver/node_modules/.bin/$name
[ -x "$b" ] || exit 1
echo "$b"
