#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Several agents of one session (subagents) talk to their models at once
# through the proxy: every conversation completes, nothing is mixed up, and
# every turn is counted.
source "$(dirname "$0")/lib.sh"
need_cmd python3
start_mock_llm --script "finish_after 3"

run_lg --session many -- bash -c '
	for api in anthropic openai-responses openai-chat gemini anthropic openai-chat; do
		python3 "$0" --api $api --changing >"$1.$api.$RANDOM" 2>&1 &
	done
	fail=0; for j in $(jobs -p); do wait $j || fail=1; done; exit $fail' \
	"$LLM/llm_agent.py" "$T/agent"
assert_rc 0 "$RC" "six concurrent conversations: $(cat "$T"/agent.* | grep -v '^\[agent\] turn' | head -5)"
[ "$(cat "$T"/agent.* | grep -c 'turn 4: text')" = 6 ] || fail "not every conversation ended: $(cat "$T"/agent.*)"
[ "$(session_field many model_turns)" = 24 ] || fail "model turns: $(tail -n1 "$STATE/sessions/many.json")"
[ "$(session_field many tool_calls)" = 18 ] || fail "tool calls: $(tail -n1 "$STATE/sessions/many.json")"
pass
