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
	# with whatever else the test started ($T/pids): one trap for all
	echo "$MOCK_PID" >>"$T/pids"
	trap 'kill $(cat "$T/pids" 2>/dev/null) 2>/dev/null; lg_cleanup' EXIT
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

# ---------------------------------------------------------------------------
# Real agent CLIs (Claude Code, Codex, gemini-cli), pinned and installed by
# `make agents` (tests/agents/install.sh) into a cache outside the clone, run
# headless against the mock model with a private HOME, telemetry and update
# checks off, and dummy keys.
LG_AGENTS_DIR=${LGRUN_AGENTS_DIR:-$HOME/.cache/lgrun/agents}

# agent_bin claude|codex|gemini: prints the cached CLI's path; nonzero if it
# is not installed.
agent_bin() {
	LGRUN_AGENTS_DIR=$LG_AGENTS_DIR bash "$LG_ROOT/tests/agents/bin.sh" "$1"
}

# need_agent NAME: sets AGENT_BIN, or skips the test.
need_agent() {
	AGENT_BIN=$(agent_bin "$1") ||
		skip "needs the $1 CLI (pinned, from npm): run make agents"
}

# agent_setup NAME: the CLI's private HOME ($T/home) and settings, dummy
# credentials, and $T/work as the current directory. Call after
# start_mock_llm, which points the provider variables at the mock (lgrun
# makes them its upstreams).
agent_setup() {
	export HOME=$T/home
	mkdir -p "$HOME" "$T/work"
	case $1 in
	claude)
		export ANTHROPIC_API_KEY=sk-ant-dummy-lgrun-fixture DISABLE_TELEMETRY=1 \
			DISABLE_AUTOUPDATER=1 DISABLE_ERROR_REPORTING=1 \
			CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1
		;;
	gemini)
		# gemini-api-key: with GOOGLE_GEMINI_BASE_URL alone gemini-cli would
		# pick the "gateway" auth type, which -p refuses. Trusting the
		# workspace keeps --yolo (an untrusted folder falls back to asking).
		mkdir -p "$HOME/.gemini"
		cat >"$HOME/.gemini/settings.json" <<-'JSON'
			{"security": {"auth": {"selectedType": "gemini-api-key"},
			              "folderTrust": {"enabled": false}},
			 "general": {"enableAutoUpdate": false, "enableAutoUpdateNotification": false},
			 "privacy": {"usageStatisticsEnabled": false},
			 "telemetry": {"enabled": false}}
		JSON
		export GEMINI_API_KEY=dummy-lgrun-fixture GEMINI_CLI_TRUST_WORKSPACE=true
		;;
	codex)
		# Codex ignores OPENAI_BASE_URL: a provider of our own (its
		# base_url agent_cmd sets), in the fixture's config.toml.
		export CODEX_HOME=$HOME/.codex OPENAI_API_KEY=sk-dummy-lgrun-fixture
		mkdir -p "$CODEX_HOME" "$T/tmp"
		cp "$LLM/codex-config.toml" "$CODEX_HOME/config.toml"
		# Codex makes its sandbox helper (codex-linux-sandbox, a link to
		# itself) under CODEX_HOME, and refuses to when CODEX_HOME is under
		# the temporary directory: then every sandboxed command fails.
		export TMPDIR=$T/tmp
		;;
	esac
	cd "$T/work" || fail "no work dir"
}

# agent_cmd NAME PROMPT [MAX_TURNS]: sets AGENT_CMD, the headless command line
# of the CLI (run it under lgrun, or bare against the mock). The CLIs run
# their shell tool unprompted: Claude Code --allowedTools Bash, gemini-cli
# --yolo, Codex exec (approval never) in its workspace-write sandbox.
agent_cmd() {
	local turns=${3:-10}
	case $1 in
	claude) AGENT_CMD=("$AGENT_BIN" -p "$2" --max-turns "$turns" --allowedTools Bash) ;;
	gemini) AGENT_CMD=("$AGENT_BIN" -p "$2" --yolo) ;;
	codex)
		# gpt-5.5 has Codex's exec_command as a plain function tool (the
		# default gpt-6.x models call tools from JavaScript, "code mode").
		# shellcheck disable=SC2016 # expanded by sh -c, inside lgrun
		AGENT_CMD=(sh -c 'exec "$0" exec --skip-git-repo-check --ephemeral \
			-s workspace-write -m gpt-5.5 \
			-c "model_providers.lgmock.base_url=\"$OPENAI_BASE_URL\"" "$1" </dev/null' \
			"$AGENT_BIN" "$2")
		;;
	esac
}

# mock_max_results: the most tool results any model request carried (each
# request carries the whole conversation).
mock_max_results() {
	python3 -c '
import json, sys
print(max([len(json.loads(l).get("tool_results", [])) for l in open(sys.argv[1]) if l.strip()] or [0]))
' "$MOCK_LOG"
}

# stop_mock_llm: stops the mock started by start_mock_llm (to start another).
stop_mock_llm() {
	kill "$MOCK_PID" 2>/dev/null
	wait "$MOCK_PID" 2>/dev/null
}

# proxy_view FILE: what lgrun -vv's proxy saw in FILE (its model turns, the
# tool calls with their results, the trip), for a failure message.
proxy_view() {
	grep -E '^lgrun: (model turn|tool |session_killed|warning: repeat)' "$1" |
		cut -c1-220 | tail -n 16 | sed 's/^/    /'
	grep -q '^lgrun: tool ' "$1" ||
		echo "    (no tool call was paired with its result: the repeat detector saw none)"
}

# agent_shell_tests NAME TOOL: the real CLI NAME (after need_agent) with its
# shell tool TOOL, against the mock model:
#  1. bare, `shell_loop 5` makes it run `ls d` five times with its own shell
#     tool, the model describing each call in other words (the premise);
#  2. under lgrun, a benign session (`shell_benign 4`: ls, pwd, head, echo)
#     runs to its end: exit 0, no trip, all 4 results seen;
#  3. under lgrun, the same-command loop is stopped: exit 86, a repeat trip
#     naming TOOL in the audit, and the model saw at most 3 results of it (the
#     request carrying the third identical call and result is refused).
# A failure shows what lgrun's proxy saw (-vv).
agent_shell_tests() {
	local name=$1 tool=$2 n rc
	mkdir -p "$T/work/d"
	echo one >"$T/work/d/one.txt"
	echo two >"$T/work/d/two.txt"
	agent_setup "$name"

	start_mock_llm --script shell_loop 5 --dir d
	agent_cmd "$name" "List the files in the directory d."
	timeout 60 "${AGENT_CMD[@]}" >"$T/bare.out" 2>&1
	rc=$?
	assert_rc 0 "$rc" "$name bare against the mock: $(tail -3 "$T/bare.out")"
	n=$(mock_max_results)
	[ "$n" = 5 ] || fail "bare, $name sent $n results of the 5 calls back"
	stop_mock_llm

	start_mock_llm --script shell_benign 4
	agent_cmd "$name" "Check that the workspace is in order."
	run_lg --session "$name-benign" -vv -- timeout 60 "${AGENT_CMD[@]}" >"$T/benign.out" 2>&1
	[ "$RC" = 0 ] || fail "a benign $name session: exit status $RC, expected 0; $(tail -3 "$T/benign.out")
  the proxy saw:
$(proxy_view "$T/benign.out")"
	assert_no_trip "a benign $name session"
	n=$(mock_max_results)
	[ "$n" = 4 ] || fail "a benign $name session ran $n of its 4 commands"
	grep -q "all checks are done" "$T/benign.out" ||
		fail "$name did not print the model's answer: $(tail -3 "$T/benign.out")"
	stop_mock_llm

	start_mock_llm --script shell_loop 5 --dir d
	agent_cmd "$name" "List the files in the directory d."
	run_lg --session "$name-loop" -vv -- timeout 60 "${AGENT_CMD[@]}" >"$T/loop.out" 2>&1
	n=$(mock_max_results)
	[ "$RC" = 86 ] || fail "$name running the same ls 5 times: exit status $RC, expected 86; the model saw $n results
  the proxy saw:
$(proxy_view "$T/loop.out")"
	grep '"event":"trip"' "$STATE/audit.jsonl" | grep -q "\"rule\":\"repeat\".*$tool" ||
		fail "no repeat trip naming $tool in the audit"
	[ "$n" -le 3 ] || fail "the model saw $n results of the same ls, expected at most 3"
	stop_mock_llm
}

# A private git repository at $R for a test: the developer's own git config
# (hooks, gc settings, signing) kept out, branch main, an author set. G runs
# git in it and fails the test's fixture when git fails.
git_repo() {
	need_cmd git
	export GIT_CONFIG_NOSYSTEM=1
	export GIT_CONFIG_GLOBAL=$T/gitconfig
	: >"$GIT_CONFIG_GLOBAL"
	export GIT_TERMINAL_PROMPT=0
	R=$T/repo
	git -c init.defaultBranch=main init -q "$R" || fail "fixture: git init"
	G config user.name "lgrun test"
	G config user.email "lgrun-test@example.invalid"
	G config commit.gpgsign false
}
G() { git -C "$R" "$@" || fail "fixture: git $*"; }
