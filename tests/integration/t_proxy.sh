#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The LLM proxy, for each provider format, streamed and not: the same tool
# call with the same result three times in a row trips `repeat`; the request
# carrying the third identical result is answered with an error in that
# provider's format (the agent ends its turn with lgrun's explanation), it
# never reaches the model, and then the tree is killed. Changing results do
# not trip; a finished conversation passes untouched; credentials pass
# through and never reach the audit log.
source "$(dirname "$0")/lib.sh"
need_cmd python3
start_mock_llm --script loop

for api in anthropic openai-responses openai-chat gemini; do
	for mode in --stream --no-stream; do
		: >"$MOCK_LOG"
		s="p-$api$mode"
		run_lg --session "$s" -- python3 "$LLM/llm_agent.py" --api $api $mode \
			--turns 8 >"$T/out" 2>"$T/err"
		assert_rc 86 "$RC" "$api $mode: looping tool calls ($(tail -2 "$T/out"))"
		grep -q "model error 400: lgrun stopped this agent session (repeat)" "$T/out" ||
			fail "$api $mode: the agent did not get lgrun's explanation: $(tail -3 "$T/out")"
		n=$(grep -c . "$MOCK_LOG")
		[ "$n" = 3 ] || fail "$api $mode: the model saw $n requests, expected 3"
		grep -q "\"session\":\"$s\".*\"reason\":\"repeat\".*get_status" "$STATE/audit.jsonl" ||
			fail "$api $mode: no repeat trip naming the tool"
	done
done
# zstd-compressed request bodies (Codex's HTTPS requests): read all the
# same, forwarded as they came (the mock decompresses them itself).
need_cmd zstd
: >"$MOCK_LOG"
run_lg --session p-zstd -- python3 "$LLM/llm_agent.py" --api openai-responses --zstd \
	--turns 8 >"$T/out" 2>"$T/err"
assert_rc 86 "$RC" "zstd request bodies: looping tool calls ($(tail -2 "$T/out"))"
n=$(grep -c . "$MOCK_LOG")
[ "$n" = 3 ] || fail "zstd request bodies: the model saw $n requests, expected 3"
grep -q '"session":"p-zstd".*"reason":"repeat".*get_status' "$STATE/audit.jsonl" ||
	fail "zstd request bodies: no repeat trip (the results in the bodies were not read)"
grep -q '"auth": true' "$MOCK_LOG" || fail "credentials did not reach the model"
grep -rqE 'dummy-lgrun-fixture|AIzaDummy' "$STATE" && fail "a credential reached lgrun's state or audit log"

# action deny: model calls are refused from then on, nothing is killed and
# the session is not blocked; the agent ends on its own with the reason.
printf '[repeat]\naction = deny\n' >"$T/deny.ini"
: >"$MOCK_LOG"
run_lg --session deny --config "$T/deny.ini" -- python3 "$LLM/llm_agent.py" --api anthropic --turns 8 >"$T/out" 2>&1
assert_rc 4 "$RC" "repeat with action deny: the agent ends with the model error"
grep -q "lgrun refuses further model calls" "$T/out" || fail "deny message: $(tail -2 "$T/out")"
[ ! -e "$STATE/sessions/deny.killed" ] || fail "deny must not block the session"
[ "$(grep -c . "$MOCK_LOG")" = 3 ] || fail "deny: the model saw more than 3 requests"

# A variable the config names gets its own route, its value the upstream.
printf '[llm]\nvariables = MY_MODEL_URL:anthropic\n' >"$T/vars.ini"
: >"$MOCK_LOG"
MY_MODEL_URL=http://127.0.0.1:$MOCK_PORT run_lg --session vars --config "$T/vars.ini" -- \
	bash -c 'case $MY_MODEL_URL in */my_model_url) ;; *) echo "not routed: $MY_MODEL_URL"; exit 9;; esac
		ANTHROPIC_BASE_URL=$MY_MODEL_URL exec python3 "$0" --api anthropic --turns 8' \
	"$LLM/llm_agent.py" >"$T/out" 2>&1
assert_rc 86 "$RC" "a configured variable's route: $(tail -2 "$T/out")"
[ "$(grep -c . "$MOCK_LOG")" = 3 ] || fail "the configured route did not reach the upstream"
printf '[llm]\nvariables = MY_MODEL_URL:bard\n' >"$T/badvars.ini"
run_lg --config "$T/badvars.ini" -- true 2>"$T/err"
assert_rc 125 "$RC" "an unknown format"
grep -q "llm.variables: cannot read 'MY_MODEL_URL:bard'" "$T/err" || fail "message: $(cat "$T/err")"

run_lg --session changing -- python3 "$LLM/llm_agent.py" --api anthropic --changing --turns 6 >"$T/out" 2>&1
assert_rc 5 "$RC" "changing results run until the agent's own turn limit"

kill $MOCK_PID
start_mock_llm --script finish_after 2
run_lg --session done -- python3 "$LLM/llm_agent.py" --api openai-chat >"$T/out" 2>&1
assert_rc 0 "$RC" "a conversation that ends"
[ "$(session_field done model_turns)" = 3 ] || fail "model turns: $(cat "$STATE/sessions/done.json")"
[ "$(session_field done tool_calls)" = 2 ] || fail "tool calls counted"
[ "$(session_field done tokens_in)" -gt 0 ] || fail "tokens counted"
pass
