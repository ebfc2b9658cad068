#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What the proxy reads feeds the other detectors: a token budget warns at
# its reserve and then stops the session; the model repeating its streamed
# text is reported (output repeat, warn by default); a greeting right after
# tool use is reported (context lost, warn).
source "$(dirname "$0")/lib.sh"
need_cmd python3

start_mock_llm --script "finish_after 40"
# Each turn of the mock reads a few hundred tokens: a budget of 1500 is
# reached within a few turns, with the warning at 80% first.
printf '[budget]\nmax_tokens = 1500\nreserve = 0.2\n' >"$T/budget.ini"
run_lg --session tokens --config "$T/budget.ini" -- python3 "$LLM/llm_agent.py" \
	--api anthropic --changing --turns 12 >"$T/out" 2>&1
assert_rc 86 "$RC" "token budget: $(tail -2 "$T/out")"
w=$(grep -n '"session":"tokens".*"event":"warn".*"reason":"tokens_reserve"' "$STATE/audit.jsonl" | cut -d: -f1)
t=$(grep -n '"session":"tokens".*"event":"trip".*"reason":"max_tokens"' "$STATE/audit.jsonl" | cut -d: -f1)
[ -n "$w" ] && [ -n "$t" ] && [ "$w" -lt "$t" ] || fail "expected a tokens_reserve warning, then a max_tokens trip"
grep -q "model error 400: lgrun stopped this agent session (max_tokens)" "$T/out" ||
	fail "the agent was not told: $(tail -2 "$T/out")"

# A step budget: completed tool calls.
printf '[budget]\nmax_tool_calls = 3\n' >"$T/steps.ini"
run_lg --session steps --config "$T/steps.ini" -- python3 "$LLM/llm_agent.py" \
	--api openai-responses --changing --turns 12 >"$T/out" 2>&1
assert_rc 86 "$RC" "step budget: $(tail -2 "$T/out")"
grep -q '"session":"steps".*"event":"trip".*"reason":"max_tool_calls"' "$STATE/audit.jsonl" || fail "no step trip"

# A cost budget: the config prices the model, each turn costs dollars.
printf '[budget]\nmax_cost = 0.02\n[llm]\nprices = claude-*=3/15\n' >"$T/cost.ini"
run_lg --session cost --config "$T/cost.ini" -- python3 "$LLM/llm_agent.py" \
	--api anthropic --changing --turns 30 >"$T/out" 2>&1
assert_rc 86 "$RC" "cost budget: $(tail -2 "$T/out")"
grep -q '"session":"cost".*"reason":"cost_reserve"' "$STATE/audit.jsonl" || fail "no cost warning"
grep -q '"session":"cost".*"event":"trip".*"reason":"max_cost"' "$STATE/audit.jsonl" || fail "no cost trip"
printf '[llm]\nprices = claude=3\n' >"$T/badprice.ini"
run_lg --config "$T/badprice.ini" -- true 2>"$T/err"
assert_rc 125 "$RC" "a malformed price table"
grep -q "llm.prices: cannot read the entry 'claude=3'" "$T/err" || fail "price error: $(cat "$T/err")"

kill $MOCK_PID
start_mock_llm --script text_repeat
run_lg --session text -- python3 "$LLM/llm_agent.py" --api openai-chat --follow-up "go on" >"$T/out" 2>&1
assert_rc 0 "$RC" "repeated text warns, it does not stop the agent"
grep -q '"session":"text".*"event":"warn".*"reason":"output_repeat"' "$STATE/audit.jsonl" ||
	fail "no output_repeat warning"
# seed 004: the correction goes into the next request (issue 28)
steered() { # SESSION RULE WORDS: a steer record with WORDS, and the mock saw it
	grep "\"session\":\"$1\"" "$STATE/audit.jsonl" | grep '"event":"steer"' |
		grep "\"rule\":\"$2\"" | grep -q "$3" ||
		fail "$1: no $2 note saying '$3': $(grep "\"session\":\"$1\"" "$STATE/audit.jsonl" | cut -c1-200)"
	python3 -c '
import json, sys
assert any(json.loads(l).get("lgrun_notes") for l in open(sys.argv[1]) if l.strip())
' "$MOCK_LOG" || fail "$1: the model request after it did not carry the note"
}
steered text output_repeat "repeated itself in a loop"
# --observe: recorded as what it would have added; the model gets nothing
kill $MOCK_PID
start_mock_llm --script text_repeat
run_lg --session textobs --observe -- python3 "$LLM/llm_agent.py" --api openai-chat --follow-up "go on" >"$T/out" 2>&1
assert_rc 0 "$RC" "observe: repeated text"
grep '"session":"textobs"' "$STATE/audit.jsonl" | grep '"event":"steer"' | grep -q '"observe":true' ||
	fail "observe: no steer record of what would have been added"
python3 -c '
import json, sys
assert not any(json.loads(l).get("lgrun_notes") for l in open(sys.argv[1]) if l.strip())
' "$MOCK_LOG" || fail "observe: a note reached the model"

# issue 28: a looping response is ended where output_repeat trips, in the
# API's own framing: the agent takes the text so far as a complete answer
# (its parser insists on message_stop, [DONE], response.completed or a
# finishReason), the model's stream is not read further (the mock sees its
# client go), the session goes on, and the correction is in the next request.
said() { # FILE MAX: every answer a normal stop, 3 to MAX repeats of the sentence
	python3 -c '
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
assert len(rows) == 2, rows
for r in rows:
    n = r["text"].count("The asset fact_sales is still pending, so I check it again. ")
    assert 3 <= n <= int(sys.argv[2]), (n, r["stop"])
    assert r["stop"] in ("end_turn", "stop", "completed", "STOP"), r["stop"]
' "$1" "$2"
}
# (openai-responses-ws: Responses over a websocket, as Codex speaks it; the
# connection goes on, so the rest of the cut response is dropped by lgrun,
# not left unread by the model)
for api in anthropic openai-chat openai-responses openai-responses-ws gemini; do
	kill $MOCK_PID
	start_mock_llm --script text_repeat --chunk-delay 0.01
	rm -f "$T/said"
	how=(--api "$api")
	[ "$api" = openai-responses-ws ] && how=(--api openai-responses --ws)
	run_lg --session "cut_$api" -- python3 "$LLM/llm_agent.py" "${how[@]}" \
		--follow-up "go on" --text-out "$T/said" >"$T/out" 2>&1
	assert_rc 0 "$RC" "$api: a looping response ended: $(tail -2 "$T/out")"
	said "$T/said" 10 || fail "$api: the agent's answers: $(cat "$T/said")"
	grep "\"session\":\"cut_$api\"" "$STATE/audit.jsonl" | grep '"event":"warn"' |
		grep '"reason":"output_repeat"' | grep -q '"cut":true' ||
		fail "$api: the warning does not say the response was cut"
	grep "\"session\":\"cut_$api\"" "$STATE/audit.jsonl" | grep '"event":"session_end"' |
		grep -q '"responses_cut":2' || fail "$api: the end record does not count 2 cuts"
	grep "\"session\":\"cut_$api\"" "$STATE/audit.jsonl" | grep -q '"event":"trip"' &&
		fail "$api: the session was stopped"
	[ "$api" = openai-responses-ws ] || python3 -c '
import json, sys
cut = [e for e in map(json.loads, open(sys.argv[1])) if e.get("stream_cut")]
assert len(cut) == 2 and all(e["sent"] < e["of"] for e in cut), cut
' "$MOCK_LOG" || fail "$api: the model's stream was read to its end: $(grep stream_cut "$MOCK_LOG")"
	steered "cut_$api" output_repeat "repeated itself in a loop"
done
# [output_repeat] cut = false: warned and steered, the response relayed whole
kill $MOCK_PID
start_mock_llm --script text_repeat --chunk-delay 0.01
rm -f "$T/said"
printf '[output_repeat]\ncut = false\n' >"$T/nocut.ini"
run_lg --session nocut --config "$T/nocut.ini" -- python3 "$LLM/llm_agent.py" --api anthropic \
	--follow-up "go on" --text-out "$T/said" >"$T/out" 2>&1
assert_rc 0 "$RC" "cut = false: $(tail -2 "$T/out")"
python3 -c '
import json, sys
assert all(json.loads(l)["text"].count("still pending") == 40 for l in open(sys.argv[1]))
' "$T/said" || fail "cut = false: the answers were not relayed whole"
grep '"session":"nocut"' "$STATE/audit.jsonl" | grep '"reason":"output_repeat"' | grep -q '"cut"' &&
	fail "cut = false: the warning says cut"
grep -q stream_cut "$MOCK_LOG" && fail "cut = false: the model's stream was not read to its end"
steered nocut output_repeat "repeated itself in a loop"

kill $MOCK_PID
start_mock_llm --script "greeting_after 2"
run_lg --session hello -- python3 "$LLM/llm_agent.py" --api gemini --follow-up "go on" >"$T/out" 2>&1
assert_rc 0 "$RC" "a greeting after tools"
grep -q '"session":"hello".*"event":"warn".*"reason":"context_lost"' "$STATE/audit.jsonl" ||
	fail "no greeting warning"
steered hello greeting "Resume the task where you left off"
# [steer] per rule: a text of one's own goes after "[lgrun] "; off sends none
printf '[steer]\ngreeting = Carry on with the files, please.\n' >"$T/own.ini"
run_lg --session hello_own --config "$T/own.ini" -- python3 "$LLM/llm_agent.py" --api gemini --follow-up "go on" >"$T/out" 2>&1
assert_rc 0 "$RC" "a greeting after tools, a note of one's own"
steered hello_own greeting '"text":"\[lgrun\] Carry on with the files, please."'
kill $MOCK_PID
start_mock_llm --script "greeting_after 2"
# (two identical calls before the greeting: repeat's note off too)
printf '[steer]\ngreeting = off\nrepeat = off\n' >"$T/off.ini"
run_lg --session hello_off --config "$T/off.ini" -- python3 "$LLM/llm_agent.py" --api gemini --follow-up "go on" >"$T/out" 2>&1
assert_rc 0 "$RC" "a greeting after tools, its note off"
grep -q '"session":"hello_off".*"event":"warn".*"reason":"context_lost"' "$STATE/audit.jsonl" ||
	fail "greeting = off: no warning"
grep '"session":"hello_off"' "$STATE/audit.jsonl" | grep -q '"event":"steer"' && fail "greeting = off: a steer record"
python3 -c '
import json, sys
assert not any(json.loads(l).get("lgrun_notes") for l in open(sys.argv[1]) if l.strip())
' "$MOCK_LOG" || fail "greeting = off: a note reached the model"

# A note says what the rule does as configured, never assumed: with
# [repeat] action = deny, the next identical call is refused, nothing stops.
kill $MOCK_PID
start_mock_llm --script "greeting_after 2"
printf '[steer]\ngreeting = off\n[repeat]\naction = deny\n' >"$T/deny.ini"
run_lg --session rep_deny --config "$T/deny.ini" -- python3 "$LLM/llm_agent.py" --api gemini --follow-up "go on" >"$T/out" 2>&1
steered rep_deny repeat "at 3, lgrun refuses the operation. Next: at the next identical call with the same result, lgrun refuses it\\."
grep '"session":"rep_deny"' "$STATE/audit.jsonl" | grep '"event":"steer"' | grep -q "stops this whole session" &&
	fail "a deny rule's note says the session stops"

# seed 004's failures: the 4th failed write of one path, then the model is
# told to write the whole file again
kill $MOCK_PID
start_mock_llm --script "finish_after 1"
run_lg --session fails -- sh -c 'for i in 1 2 3 4; do echo x >"$0/no/such/dir/f" 2>/dev/null; done
	exec python3 "$1" --api anthropic' "$T" "$LLM/llm_agent.py" >"$T/out" 2>&1
assert_rc 0 "$RC" "failed writes, then an agent"
steered fails failures "write it again in one go"
# with warn, the note at the 4th says nothing of what comes next
grep '"session":"fails"' "$STATE/audit.jsonl" | grep '"event":"steer"' | grep -q 'Next:' &&
	fail "fails: a warn's note tells of a next step"

# The ladder (issue 28): with action = kill, the model is told to rewrite
# the file at the 3rd failure, in a request before the kill at the 4th.
kill $MOCK_PID
start_mock_llm --script "finish_after 1"
printf '[failures]\naction = kill\n' >"$T/fkill.ini"
run_lg --session fails_kill --config "$T/fkill.ini" -- sh -c 'for i in 1 2 3; do echo x >"$0/no/such/dir/f" 2>/dev/null; done
	python3 "$1" --api anthropic || exit 9
	echo x >"$0/no/such/dir/f" 2>/dev/null; sleep 10' "$T" "$LLM/llm_agent.py" >"$T/out" 2>&1
assert_rc 86 "$RC" "failures with action kill, after the note: $(tail -2 "$T/out")"
steered fails_kill failures "3 failed writes on .*write it again in one go. Next: at the next failed write of that file, lgrun stops this whole session\\."
s=$(grep -n '"session":"fails_kill".*"event":"steer".*"reason":"write_failures_near"' "$STATE/audit.jsonl" | head -1 | cut -d: -f1)
t=$(grep -n '"session":"fails_kill".*"event":"trip".*"reason":"write_failures"' "$STATE/audit.jsonl" | head -1 | cut -d: -f1)
[ -n "$s" ] && [ -n "$t" ] && [ "$s" -lt "$t" ] ||
	fail "fails_kill: expected the note (write_failures_near), then the kill: $(grep '"session":"fails_kill"' "$STATE/audit.jsonl" | cut -c1-200)"
[ "$(grep '"session":"fails_kill"' "$STATE/audit.jsonl" | grep -c '"event":"steer"')" = 1 ] ||
	fail "fails_kill: the kill gave a note of its own"

kill $MOCK_PID
start_mock_llm --script greeting
run_lg --session hello0 -- python3 "$LLM/llm_agent.py" --api gemini >"$T/out" 2>&1
assert_rc 0 "$RC" "a greeting as the first answer"
grep -q '"session":"hello0".*context_lost' "$STATE/audit.jsonl" && fail "a first greeting is no lost context"
pass
