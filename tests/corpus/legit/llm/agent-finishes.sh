# An agent's model loop through lgrun's LLM proxy (mock Anthropic API,
# streamed): it checks a job's status four times, the status changes each
# time, and the model then answers with text.
NEEDS=python3
setup() {
	start_mock_llm --script "finish_after 4"
}
run() {
	python3 "$LLM/llm_agent.py" --api anthropic --changing --turns 10
}
verify() {
	grep -q 'turn 5: text' "$OUT" || bad "the agent did not finish: $(tail -n 2 "$OUT")"
}
