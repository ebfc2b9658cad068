# Codex (installed by `make agents`) on a model provider of its own at a
# plain-HTTP address (config.toml base_url = http://127.0.0.1:PORT/v1: a
# LiteLLM, vLLM or Ollama gateway), under lgrun's egress proxy (auto mode
# for an agent CLI: HTTP_PROXY points at it, NO_PROXY is empty). The model
# asks for the same `ls d` five times. The requests reach the egress proxy
# in clear and must be read as model requests: turns counted, the repeat
# loop stopped at #3 (issue 29, item 7). The harness runs `bash -c run`,
# which auto mode does not know for an agent CLI: mode = both, as auto
# gives `codex exec ...`.
TIMEOUT=120
EXPECT_REASON=repeat
setup() {
	agent_bin CODEX codex
	start_mock_llm --script shell_loop 5 --dir d
	mkdir -p d "$HOME/.codex" "$TMPDIR"
	echo one >d/one.txt
	cat >"$HOME/.codex/config.toml" <<-TOML
		model_provider = "gateway"
		check_for_update_on_startup = false
		[analytics]
		enabled = false
		[model_providers.gateway]
		name = "gateway"
		base_url = "http://127.0.0.1:$(cat "$META/mock.port")/v1"
		env_key = "OPENAI_API_KEY"
		wire_api = "responses"
		supports_websockets = false
	TOML
	export CODEX CODEX_HOME=$HOME/.codex OPENAI_API_KEY=sk-dummy-corpus
	printf '[llm]\nmode = both\n' >"$META/codex-http.ini"
	LGRUN_ARGS=(--config "$META/codex-http.ini")
}
run() {
	"$CODEX" exec --skip-git-repo-check --ephemeral -s workspace-write -m gpt-5.5 \
		"List the files in the directory d." </dev/null
}
verify() {
	n=$(python3 -c '
import json, sys
print(max([len(json.loads(l).get("tool_results", [])) for l in open(sys.argv[1]) if l.strip()] or [0]))
' "$META/mock.log")
	[ "$n" -le 3 ] || bad "the model saw $n results of the same ls"
}
