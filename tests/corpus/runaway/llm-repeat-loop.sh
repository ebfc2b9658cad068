# A model stuck in a tool loop (mock API, script `loop`): the same tool call
# with the same result; lgrun's proxy refuses the request carrying the third.
NEEDS=python3
EXPECT_REASON=repeat
setup() {
	start_mock_llm --script loop
}
run() {
	python3 "$LLM/llm_agent.py" --api anthropic --turns 12
}
verify() {
	n=$(grep -c . "$META/mock.log")
	[ "$n" -le 3 ] || bad "the model saw $n requests"
}
