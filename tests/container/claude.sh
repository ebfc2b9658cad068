#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# In the container: Claude Code (the pinned CLI, mounted at /agent) against
# the mock model (mounted at /llm, on the container's loopback) is told to
# remove five files one by one with its Bash tool; lgrun stops it at the
# third. --wrapped: `claude` as the devcontainer recipe installs it (npm's
# CLI behind lgrun's wrapper, first on PATH), not lgrun -- /agent/...
set -u
wrapped=0
[ "${1:-}" = --wrapped ] && wrapped=1
fail() { echo "FAIL: $*"; exit 1; }
base=${HOME:-/tmp}
[ -w "$base" ] || base=/tmp # a user with no home of its own (HOME=/)
export HOME=$base/claude-home-$(id -u)
mkdir -p "$HOME/work/d" && cd "$HOME/work" || fail "mkdir"
for i in 1 2 3 4 5; do echo "$i" >"d/f$i"; done
python3 /llm/mock_llm.py --port-file "$HOME/mock.port" --log "$HOME/mock.log" \
	--max-lifetime 120 --chunk-delay 0 --script shell_rm 5 --dir d &
for _ in $(seq 1 100); do [ -s "$HOME/mock.port" ] && break; sleep 0.05; done
[ -s "$HOME/mock.port" ] || fail "the mock model did not start"
export ANTHROPIC_BASE_URL=http://127.0.0.1:$(cat "$HOME/mock.port")
export ANTHROPIC_API_KEY=sk-ant-dummy-lgrun-fixture DISABLE_TELEMETRY=1 \
	DISABLE_AUTOUPDATER=1 DISABLE_ERROR_REPORTING=1 \
	CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1
s="claude-$(id -u)"
if [ $wrapped = 1 ]; then
	[ "$(command -v claude)" = /usr/local/lgrun/bin/claude ] || fail "claude on PATH is $(command -v claude)"
	timeout 90 claude -p "Remove the files in the directory d." \
		--max-turns 10 --allowedTools Bash >out 2>&1
	rc=$?
	s=$(lgctl status | awk '$1 ~ /^claude-/ {print $1}' | tail -n 1)
else
	lgrun --session "$s" -- timeout 90 /agent/node_modules/.bin/claude \
		-p "Remove the files in the directory d." --max-turns 10 --allowedTools Bash >out 2>&1
	rc=$?
fi
tail -n 8 out
[ $rc = 86 ] || fail "Claude Code's delete loop: exit status $rc, expected 86"
n=$(ls d | wc -l)
[ "$n" = 3 ] || fail "$n of the 5 files are left, expected 3"
grep -q "session_killed: volume_exceeded" out || fail "lgrun did not say why it stopped Claude Code"
lgctl status "$s" | grep -q killed || fail "the session is not marked killed"
echo "claude: ok"
