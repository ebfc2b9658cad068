# The model repeating the same sentence over and over in its streamed
# answer. The default action is warn; this entry's config makes it kill.
# The first looping answer only warns and tells the model to stop (the
# ladder, steer_at 1); the user says "go on", the model loops again and is
# stopped.
NEEDS=python3
EXPECT_REASON=output_repeat
setup() {
	printf '[output_repeat]\naction = kill\n' >"$META/text.ini"
	LGRUN_ARGS=(--config "$META/text.ini")
	start_mock_llm --script text_repeat --repeat 200
}
run() {
	python3 "$LLM/llm_agent.py" --api openai-chat --turns 4 --follow-up "go on"
}
verify() {
	grep '"event":"steer"' "$STATE/audit.jsonl" | grep '"rule":"output_repeat"' |
		grep -q 'Next: at the next answer that repeats itself, lgrun stops this whole session' ||
		bad "the model was not told before the kill: $(grep '"event":"steer"' "$STATE/audit.jsonl" | cut -c1-300)"
}
