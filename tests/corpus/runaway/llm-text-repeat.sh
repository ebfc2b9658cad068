# The model repeating the same sentence over and over in its streamed
# answer. The default action is warn; this entry's config makes it kill.
NEEDS=python3
EXPECT_REASON=output_repeat
setup() {
	printf '[output_repeat]\naction = kill\n' >"$META/text.ini"
	LGRUN_ARGS=(--config "$META/text.ini")
	start_mock_llm --script text_repeat --repeat 200
}
run() {
	python3 "$LLM/llm_agent.py" --api openai-chat --turns 4
}
verify() { :; }
