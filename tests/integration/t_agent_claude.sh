#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A real agent CLI: Claude Code (pinned, `make agents`) against the mock
# model, through lgrun's LLM proxy (agent_shell_tests in lib.sh): bare, it
# runs the same `ls d` five times with its Bash tool, each call described in
# other words; under lgrun a benign session runs to its end, and the
# same-command loop is stopped (Claude Code prints lgrun's explanation as an
# API error). Then a tool Claude Code does not have (`loop`: get_status) gets
# the same tool error three times in a row: stopped after 3 model requests.
# Skips when the CLI is not installed.
source "$(dirname "$0")/lib.sh"
need_agent claude
agent_shell_tests claude Bash
grep -q "lgrun stopped this agent session (repeat)" "$T/loop.out" ||
	fail "Claude Code did not show lgrun's explanation: $(tail -3 "$T/loop.out")"

start_mock_llm --script loop
run_lg --session claude-tool-error -- timeout 60 "$AGENT_BIN" -p "check asset fact_sales" \
	--max-turns 10 >"$T/out" 2>&1
assert_rc 86 "$RC" "Claude Code calling a tool it lacks: $(tail -3 "$T/out")"
grep -q "lgrun stopped this agent session (repeat)" "$T/out" ||
	fail "Claude Code did not show lgrun's explanation: $(tail -3 "$T/out")"
n=$(grep -c . "$MOCK_LOG")
[ "$n" = 3 ] || fail "the model saw $n requests, expected 3"

# issue 28: a looping answer is ended where output_repeat trips; Claude Code
# takes it as complete (no retry, no API error) and prints what came.
kill $MOCK_PID
start_mock_llm --script text_repeat --chunk-delay 0.01
run_lg --session claude-cut -- timeout 60 "$AGENT_BIN" -p "check asset fact_sales" \
	--max-turns 3 >"$T/out" 2>&1
assert_rc 0 "$RC" "Claude Code, a looping answer cut: $(tail -3 "$T/out")"
n=$(grep -o "still pending, so I check it again" "$T/out" | wc -l)
[ "$n" -ge 3 ] && [ "$n" -le 10 ] || fail "Claude Code printed $n of the 40 sentences: $(tail -c 300 "$T/out")"
grep '"session":"claude-cut"' "$STATE/audit.jsonl" | grep '"reason":"output_repeat"' | grep -q '"cut":true' ||
	fail "Claude Code: the warning does not say the response was cut"
grep -q '"stream_cut": true' "$MOCK_LOG" || fail "Claude Code: the model's stream was read to its end"
grep -c '"reply"' "$MOCK_LOG" | grep -qx 1 || fail "Claude Code retried the cut answer: $(grep -c '"reply"' "$MOCK_LOG") requests"
pass
