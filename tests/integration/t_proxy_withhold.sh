#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# repeat.include_result = off (seed 003's signature: the call alone): the
# proxy holds each streamed tool-call block until it is complete and judged,
# passing everything else through as it streams. The third identical call
# never reaches the agent: its response ends with an error event in the
# provider's format instead, and the session stops.
source "$(dirname "$0")/lib.sh"
need_cmd python3
start_mock_llm --script loop --preamble "Let me check that asset."
printf '[repeat]\ninclude_result = false\n' >"$T/off.ini"

for api in anthropic openai-responses openai-chat gemini; do
	: >"$MOCK_LOG"
	run_lg --session "w-$api" --config "$T/off.ini" -- python3 "$LLM/llm_agent.py" \
		--api $api --stream --changing --turns 8 >"$T/out" 2>"$T/err"
	assert_rc 86 "$RC" "$api: the third identical call ($(tail -2 "$T/out"))"
	calls=$(grep -c "tool get_status" "$T/out")
	[ "$calls" = 2 ] || fail "$api: the agent ran the tool $calls times, expected 2: $(cat "$T/out")"
	grep -Eq "model error in stream: (.*: )?lgrun stopped this agent session \(repeat\)" "$T/out" ||
		fail "$api: the agent did not get the reason: $(tail -3 "$T/out")"
	[ "$(grep -c . "$MOCK_LOG")" = 3 ] || fail "$api: the model saw $(grep -c . "$MOCK_LOG") requests"
done
pass
