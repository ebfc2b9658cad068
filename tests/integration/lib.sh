# SPDX-License-Identifier: MIT
# Shared helpers for integration tests. Each test is a bash script t_*.sh that
# sources this file, runs real processes under lgrun and exits 0 (pass),
# 1 (fail) or 77 (skip, with the reason on stdout).
set -u

LG_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# B is the build folder the Makefile used (build, or build-san with SANITIZE=1).
LGRUN=${LGRUN:-$LG_ROOT/${B:-build}/bin/lgrun}
LGCTL=${LGCTL:-$LG_ROOT/${B:-build}/bin/lgctl}
FIXTURES=$LG_ROOT/tests/fixtures
FIXBIN=$LG_ROOT/build/fixtures
# In the sanitizer build, a nested (ASan) lgrun starts with the shim already
# preloaded: tell ASan that is fine.
[ "${B:-build}" = build-san ] && export ASAN_OPTIONS=${ASAN_OPTIONS:-verify_asan_link_order=0}

# A private scratch dir and state dir per test, removed on exit.
T=$(mktemp -d "${TMPDIR:-/tmp}/lgtest.XXXXXX")
STATE=$T/state
mkdir -p "$STATE"
export LGRUN_STATE_DIR=$STATE
trap 'lg_cleanup' EXIT
lg_cleanup() {
	chmod -R u+w "$T" 2>/dev/null
	rm -rf "$T"
}

fail() {
	echo "FAIL: $*"
	if [ -f "$STATE/audit.jsonl" ]; then
		echo "--- audit.jsonl"
		tail -n 5 "$STATE/audit.jsonl"
	fi
	exit 1
}
skip() {
	echo "SKIP: $*"
	exit 77
}
pass() {
	echo "PASS: ${*:-$(basename "$0")}"
	exit 0
}
need_root() {
	[ "$(id -u)" = 0 ] || skip "needs root ($1)"
}
need_cmd() {
	command -v "$1" >/dev/null 2>&1 || skip "needs the '$1' command (make deps installs it)"
}

# Files created before lgrun starts are pre-existing: their birth time is
# earlier than the session's start.
mkfiles() { # dir n
	mkdir -p "$1"
	local i
	for i in $(seq 1 "$2"); do echo "data $i" >"$1/f$i"; done
}

# Run lgrun with the test's state dir; sets RC.
run_lg() {
	"$LGRUN" --state-dir "$STATE" "$@"
	RC=$?
}

# Count audit records whose JSON has "event":"$1".
audit_count() {
	[ -f "$STATE/audit.jsonl" ] || { echo 0; return; }
	grep -c "\"event\":\"$1\"" "$STATE/audit.jsonl"
}
assert_no_trip() {
	local n
	n=$(audit_count trip)
	[ "$n" = 0 ] || fail "$1: the guard tripped ($n trip records)"
}
assert_rc() { # expected actual what
	[ "$1" = "$2" ] || fail "$3: exit status $2, expected $1"
}

TOOLS=$LG_ROOT/tests/fixtures/tools

# Starts the mock catalogue server on an ephemeral loopback port; sets
# CATALOG_PID, CATALOG_PORT_FILE and CATALOG_LOG, and stops it on exit.
start_catalog() {
	CATALOG_PORT_FILE=$T/catalog.port
	CATALOG_LOG=$T/catalog.log
	: >"$CATALOG_LOG"
	python3 "$TOOLS/catalog_server.py" --port-file "$CATALOG_PORT_FILE" \
		--log "$CATALOG_LOG" --max-lifetime 120 "$@" &
	CATALOG_PID=$!
	trap 'kill $CATALOG_PID 2>/dev/null; lg_cleanup' EXIT
	for _ in $(seq 1 100); do
		[ -s "$CATALOG_PORT_FILE" ] && return 0
		sleep 0.05
	done
	fail "the catalogue server did not start"
}

# A numeric field of the session's record, e.g. session_field ID shim_refused
session_field() { # the session's current record is the file's last line
	tail -n 1 "$STATE/sessions/$1.json" | grep -o "\"$2\":[0-9]*" | head -1 | cut -d: -f2
}

LLM=$LG_ROOT/tests/fixtures/llm

# Starts the mock model API (all providers) with a script; sets MOCK_PORT and
# MOCK_LOG, and points the provider variables lgrun reads at it (lgrun makes
# them its upstreams and gives the agent its own proxy instead).
start_mock_llm() {
	MOCK_LOG=$T/mock.log
	: >"$MOCK_LOG"
	rm -f "$T/mock.port"
	python3 "$LLM/mock_llm.py" --port-file "$T/mock.port" --log "$MOCK_LOG" \
		--max-lifetime 120 --chunk-delay 0 "$@" &
	MOCK_PID=$!
	trap 'kill $MOCK_PID 2>/dev/null; lg_cleanup' EXIT
	for _ in $(seq 1 100); do
		[ -s "$T/mock.port" ] && break
		sleep 0.05
	done
	[ -s "$T/mock.port" ] || fail "the mock model API did not start"
	MOCK_PORT=$(cat "$T/mock.port")
	export ANTHROPIC_BASE_URL=http://127.0.0.1:$MOCK_PORT
	export OPENAI_BASE_URL=http://127.0.0.1:$MOCK_PORT/v1
	export GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:$MOCK_PORT
}
