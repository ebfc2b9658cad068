# The same tool loop through the Gemini API format, streamed.
NEEDS=python3
EXPECT_REASON=repeat
setup() {
	start_mock_llm --script loop
}
run() {
	python3 "$LLM/llm_agent.py" --api gemini --stream --turns 12
}
verify() {
	n=$(grep -c . "$META/mock.log")
	[ "$n" -le 3 ] || bad "the model saw $n requests"
}
