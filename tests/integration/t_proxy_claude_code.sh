#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A real agent CLI: Claude Code (from the npm registry) against the mock
# model, which keeps asking for a tool Claude Code does not have. Claude
# Code answers each time with the same tool error; lgrun's proxy sees the
# same call and result three times in a row, answers the next model request
# with its explanation (Claude Code prints it as an API error) and stops the
# session. Skips when the CLI is not installed.
source "$(dirname "$0")/lib.sh"
command -v claude >/dev/null 2>&1 ||
	skip "needs the Claude Code CLI: npm install -g @anthropic-ai/claude-code"
start_mock_llm --script loop
export ANTHROPIC_API_KEY=sk-ant-dummy-lgrun-fixture DISABLE_TELEMETRY=1 DISABLE_AUTOUPDATER=1 \
	CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 DISABLE_ERROR_REPORTING=1
export HOME=$T/home
mkdir -p "$HOME" "$T/work"
cd "$T/work" || fail "no work dir"
run_lg --session claude -- timeout 120 claude -p "check asset fact_sales" --max-turns 10 >"$T/out" 2>&1
assert_rc 86 "$RC" "Claude Code in a tool loop: $(tail -3 "$T/out")"
grep -q "lgrun stopped this agent session (repeat)" "$T/out" ||
	fail "Claude Code did not show lgrun's explanation: $(tail -3 "$T/out")"
n=$(grep -c . "$MOCK_LOG")
[ "$n" = 3 ] || fail "the model saw $n requests, expected 3"
pass
