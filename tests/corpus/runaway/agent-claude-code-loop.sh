# Claude Code (installed by `make agents`) against a model that keeps asking
# for the same tool: the same call and the same tool error three times.
TIMEOUT=120
EXPECT_REASON=repeat
setup() {
	agent_bin CLAUDE claude
	start_mock_llm --script loop
	export CLAUDE ANTHROPIC_API_KEY=sk-ant-dummy-corpus DISABLE_TELEMETRY=1 DISABLE_AUTOUPDATER=1 \
		CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 DISABLE_ERROR_REPORTING=1
}
run() {
	"$CLAUDE" -p "check asset fact_sales" --max-turns 10
}
verify() {
	n=$(grep -c . "$META/mock.log")
	[ "$n" -le 3 ] || bad "the model saw $n requests"
}
