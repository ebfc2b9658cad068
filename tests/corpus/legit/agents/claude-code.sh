# Claude Code (installed by `make agents`) against the mock model, which
# asks twice for a tool Claude Code does not have (the same tool error,
# twice: under the repeat threshold), then answers.
# The same failing call twice: Claude Code's model is told that a third
# identical call with the same result stops the session (issue 28).
EXPECT_NOTES="repeat/repeat_near"
TIMEOUT=120
setup() {
	agent_bin CLAUDE claude
	start_mock_llm --script "finish_after 2"
	export CLAUDE ANTHROPIC_API_KEY=sk-ant-dummy-corpus DISABLE_TELEMETRY=1 DISABLE_AUTOUPDATER=1 \
		CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 DISABLE_ERROR_REPORTING=1
}
run() {
	"$CLAUDE" -p "check asset fact_sales" --max-turns 6
}
verify() {
	grep -q 'fact_sales is ready' "$OUT" || bad "Claude Code did not finish: $(tail -n 2 "$OUT")"
}
