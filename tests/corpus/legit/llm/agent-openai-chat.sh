# The same through the OpenAI Chat Completions format, not streamed, with
# the model saying something before each tool call.
NEEDS=python3
setup() {
	start_mock_llm --script "finish_after 3" --preamble "Let me check the job again."
}
run() {
	python3 "$LLM/llm_agent.py" --api openai-chat --no-stream --changing --turns 10
}
verify() {
	grep -q 'text' "$OUT" || bad "the agent did not finish: $(tail -n 2 "$OUT")"
}
