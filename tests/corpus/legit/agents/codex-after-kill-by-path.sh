# Codex run by its path, not from PATH (npx, a project's node_modules/.bin,
# an install in a cache folder), started again after a Codex session was
# killed: the same routine as legit/agents/codex-after-kill. Program-scoped
# rules (`codex codex-bwrap-synthetic-mount-targets-*/`) trusted only the
# codex found on PATH at the start, so this Codex was killed for clearing
# its sandbox's scratch (issue 40's note). Now an npm install's own binary
# (a node_modules tree with .bin/codex, there before the session) is the
# program too.
# What follows is codex-after-kill's story: Codex (installed by `make
# agents`) started again after a Codex session was killed. A killed Codex leaves its sandbox's scratch behind in TMPDIR
# (codex-bwrap-synthetic-mount-targets-N/<id>/<pid>: bubblewrap's mount
# targets, a lock), and the next Codex clears it before its first command:
# Codex's own routine, not the agent's decision. It was killed at its 3rd
# removal there (a killed Codex, by lgrun or by hand, made every next
# Codex session die the same way). The model asks for two harmless
# commands, then answers.
TIMEOUT=180
setup() {
	agent_bin CODEX codex
	# not on PATH: run by its path, as npx and node_modules/.bin do
	local d p=
	IFS=: read -ra dirs <<<"$PATH"
	for d in "${dirs[@]}"; do [ -x "$d/codex" ] || p=${p:+$p:}$d; done
	export PATH=$p
	mkdir -p d "$HOME/.codex" "$TMPDIR"
	for i in 1 2 3 4 5; do echo "stale $i" >"d/f$i"; done
	cp "$LLM/codex-config.toml" "$HOME/.codex/config.toml"
	export CODEX CODEX_HOME=$HOME/.codex OPENAI_API_KEY=sk-dummy-corpus
	# the earlier session: Codex removing d/f1..f5, killed by lgrun at #3
	python3 "$LLM/mock_llm.py" --port-file "$META/kill.port" --log "$META/kill.log" \
		--max-lifetime 120 --chunk-delay 0 --script shell_rm 5 --dir d &
	local mock=$! n=0
	while [ ! -s "$META/kill.port" ] && [ $n -lt 100 ]; do sleep 0.05; n=$((n + 1)); done
	OPENAI_BASE_URL=http://127.0.0.1:$(cat "$META/kill.port")/v1 \
		timeout -k 5 120 "$LGRUN" --state-dir "$META/kill-state" -- sh -c \
		'exec "$0" exec --skip-git-repo-check --ephemeral -s workspace-write -m gpt-5.5 \
			-c "model_providers.lgmock.base_url=\"$OPENAI_BASE_URL\"" "remove d/f1 to d/f5" </dev/null' \
		"$CODEX" >"$META/kill.out" 2>&1 || true
	kill "$mock" 2>/dev/null
	wait "$mock" 2>/dev/null
	ls -d "$TMPDIR"/codex-bwrap-synthetic-mount-targets-* >/dev/null 2>&1 ||
		skip "the killed Codex left no sandbox scratch (another Codex version?)"
	start_mock_llm --script shell_benign 2
}
run() {
	exec "$CODEX" exec --skip-git-repo-check --ephemeral -s workspace-write -m gpt-5.5 \
		-c "model_providers.lgmock.base_url=\"$OPENAI_BASE_URL\"" \
		"look around in this directory" </dev/null
}
verify() {
	[ -s "$META/mock.log" ] || bad "Codex never asked the model"
}
