#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Codex on a model provider of its own at a plain-HTTP address (issue 29,
# item 7): config.toml's base_url = http://127.0.0.1:PORT/v1, a local
# gateway such as LiteLLM, vLLM or Ollama (here the mock model). lgrun runs
# it in auto mode (an agent CLI: the egress proxy, NO_PROXY empty), so the
# requests reach the egress proxy in clear, as absolute-URI requests. They
# are read as model requests (the LLM proxy's parsers and actions, through
# its route for plain HTTP): a benign session runs to its end with its turns
# counted; the same-command loop is stopped at #3. (With supports_websockets
# = true Codex opens its ws:// through a CONNECT tunnel, which is relayed
# unread: see docs/proxies.md.)
source "$(dirname "$0")/lib.sh"
need_agent codex
mkdir -p "$T/work/d"
echo one >"$T/work/d/one.txt"
agent_setup codex

provider() { # websockets: true or false
	cat >"$CODEX_HOME/config.toml" <<-TOML
		model_provider = "gateway"
		check_for_update_on_startup = false
		[analytics]
		enabled = false
		[model_providers.gateway]
		name = "gateway"
		base_url = "http://127.0.0.1:$MOCK_PORT/v1"
		env_key = "OPENAI_API_KEY"
		wire_api = "responses"
		supports_websockets = $1
	TOML
}
codex_cmd=("$AGENT_BIN" exec --skip-git-repo-check --ephemeral -s workspace-write -m gpt-5.5)
end_field() { # session field
	grep "\"session\":\"$1\".*\"event\":\"session_end\"" "$STATE/audit.jsonl" |
		grep -o "\"$2\":[0-9]*" | head -1 | cut -d: -f2
}

# 1. A benign session: every turn read, nothing stopped.
start_mock_llm --script shell_benign 4
provider false
run_lg --session http-benign -vv -- timeout 60 "${codex_cmd[@]}" "Check that the workspace is in order." \
	</dev/null >"$T/benign.out" 2>&1
[ "$RC" = 0 ] || fail "a benign session: exit status $RC; $(tail -3 "$T/benign.out")"
assert_no_trip "a benign session on a plain-HTTP provider"
[ "$(mock_max_results)" = 4 ] || fail "the benign session ran $(mock_max_results) of its 4 commands"
turns=$(end_field http-benign model_turns)
[ "${turns:-0}" -ge 5 ] || fail "the model turns over plain HTTP were not read: model_turns=${turns:-none}
$(proxy_view "$T/benign.out")"
grep -q "\"session\":\"http-benign\".*\"event\":\"egress\",\"host\":\"127.0.0.1\",\"port\":$MOCK_PORT,\"via\":\"http\"" \
	"$STATE/audit.jsonl" || fail "no egress record for the gateway"
grep -q "no model turn of codex" "$T/benign.out" && fail "lgrun says it saw no model turn"
grep -q "the egress proxy refused" "$T/benign.out" && fail "a client of the tree was called an outsider"
stop_mock_llm

# 2. The same `ls d` five times: stopped at #3.
for ws in false; do
	start_mock_llm --script shell_loop 5 --dir d
	provider $ws
	run_lg --session "http-loop-$ws" -vv -- timeout 60 "${codex_cmd[@]}" "List the files in the directory d." \
		</dev/null >"$T/loop-$ws.out" 2>&1
	n=$(mock_max_results)
	[ "$RC" = 86 ] || fail "websockets=$ws: the same ls 5 times: exit status $RC, expected 86; the model saw $n results
$(proxy_view "$T/loop-$ws.out")"
	grep "\"session\":\"http-loop-$ws\".*\"event\":\"trip\"" "$STATE/audit.jsonl" |
		grep -q '"rule":"repeat".*exec_command' || fail "websockets=$ws: no repeat trip naming exec_command"
	[ "$n" -le 3 ] || fail "websockets=$ws: the model saw $n results of the same ls, expected at most 3"
	stop_mock_llm
done
pass
