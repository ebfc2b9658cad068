# An orchestrator delegating to the same sub-agent in a tight loop (30
# nested lgrun calls in a few seconds): more than 20 calls a minute.
EXPECT_REASON=flow_rate
setup() { :; }
run() {
	for i in $(seq 1 30); do
		"$LGRUN" --agent helper -- true || exit $?
	done
}
verify() {
	[ "$(grep -c '"event":"trip"' "$STATE/audit.jsonl")" = 1 ] || bad "no single trip"
}
