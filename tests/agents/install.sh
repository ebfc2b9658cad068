#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# make agents: installs pinned versions of the real agent CLIs from the npm
# registry into a cache outside the clone, one prefix per CLI and version:
#
#   ${LGRUN_AGENTS_DIR:-$HOME/.cache/lgrun/agents}/NAME-VERSION
#
# Idempotent: a prefix with a .lgrun-installed stamp is not installed again.
# A failed install prints why and goes on; the tests that need that CLI then
# skip. --strict: exit 1 when one failed. tests/agents/bin.sh NAME prints
# where a CLI's binary is.
#
#   tests/agents/install.sh [--strict] [claude] [codex] [gemini]
set -u

# Pinned: bump deliberately (npm view PKG version), then run the agent tests.
CLAUDE_PKG=@anthropic-ai/claude-code CLAUDE_VERSION=2.1.330
CODEX_PKG=@openai/codex CODEX_VERSION=0.169.0
GEMINI_PKG=@google/gemini-cli GEMINI_VERSION=0.61.0

AGENTS_DIR=${LGRUN_AGENTS_DIR:-$HOME/.cache/lgrun/agents}
HERE=$(cd "$(dirname "$0")" && pwd)

strict=0
names=()
for a in "$@"; do
	case $a in
	--strict) strict=1 ;;
	claude | codex | gemini) names+=("$a") ;;
	-h | --help)
		sed -n '3,13p' "$0" | sed 's/^# \{0,1\}//'
		exit 0
		;;
	*)
		echo "agents: unknown argument '$a' (claude, codex, gemini, --strict)" >&2
		exit 2
		;;
	esac
done
[ ${#names[@]} -gt 0 ] || names=(claude codex gemini)

if ! command -v npm >/dev/null 2>&1; then
	echo "agents: npm is not installed; the agent tests will skip"
	[ $strict = 1 ] && exit 1
	exit 0
fi

# pkg NAME -> "PACKAGE VERSION"
pkg() {
	case $1 in
	claude) echo "$CLAUDE_PKG $CLAUDE_VERSION" ;;
	codex) echo "$CODEX_PKG $CODEX_VERSION" ;;
	gemini) echo "$GEMINI_PKG $GEMINI_VERSION" ;;
	esac
}

# A quick check that the installed CLI starts: its --version, with a private
# HOME so nothing of the user's is read or written.
smoke() { # name bin
	local h out
	h=$(mktemp -d "${TMPDIR:-/tmp}/lgagents.XXXXXX")
	out=$(HOME=$h CODEX_HOME=$h/.codex DISABLE_AUTOUPDATER=1 DISABLE_TELEMETRY=1 \
		GEMINI_CLI_NO_RELAUNCH=1 timeout 60 "$2" --version 2>&1 </dev/null)
	local rc=$?
	rm -rf "$h"
	echo "$out" | tail -n 1
	return $rc
}

failed=0
mkdir -p "$AGENTS_DIR" || {
	echo "agents: cannot create $AGENTS_DIR"
	[ $strict = 1 ] && exit 1
	exit 0
}
for name in "${names[@]}"; do
	read -r p v <<<"$(pkg "$name")"
	dir=$AGENTS_DIR/$name-$v
	if [ -f "$dir/.lgrun-installed" ] && bin=$("$HERE/bin.sh" "$name" 2>/dev/null); then
		echo "agents: $name $v already installed: $bin"
		continue
	fi
	echo "agents: installing $p@$v into $dir"
	rm -rf "$dir"
	mkdir -p "$dir"
	start=$(date +%s)
	# --include=optional: the CLIs' native binaries come in optional
	# platform packages (codex, claude), which an npm configured to omit
	# optional dependencies would leave out.
	if ! log=$(npm install --prefix "$dir" --no-audit --no-fund --no-update-notifier \
		--include=optional --loglevel=error "$p@$v" 2>&1); then
		echo "agents: FAILED to install $p@$v; the $name tests will skip:"
		# npm's own lines, without its stack trace
		{
			echo "$log" | grep -v '^npm error  \|^npm error *}\?$' | head -n 5
			echo "$log" | grep 'complete log' | tail -n 1
		} | sed 's/^/    /'
		rm -rf "$dir"
		failed=1
		continue
	fi
	if ! bin=$("$HERE/bin.sh" "$name"); then
		echo "agents: FAILED: $p@$v installed but no $name binary in $dir/node_modules/.bin"
		rm -rf "$dir"
		failed=1
		continue
	fi
	if ! ver=$(smoke "$name" "$bin"); then
		echo "agents: FAILED: $bin --version does not run: $ver"
		echo "    (left in $dir, without a stamp: the next run installs again)"
		failed=1
		continue
	fi
	echo "$p@$v" >"$dir/.lgrun-installed"
	echo "agents: $name $v installed in $(($(date +%s) - start))s: $bin ($ver)"
done
if [ $failed = 1 ]; then
	echo "agents: some CLIs are missing; their tests will skip"
	[ $strict = 1 ] && exit 1
fi
exit 0
