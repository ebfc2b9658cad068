#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Real agent CLIs on their default endpoints (issue 13): no base-URL
# variable, only the proxy variables ([llm] mode = proxy). lgrun's egress
# proxy decrypts the model host with the session CA (the CLI trusts it
# through NODE_EXTRA_CA_CERTS) and hands each request to the LLM proxy,
# whose upstream here is the mock model: lgrun sees the turns, and the
# repeat loop is stopped after 3 model requests, as with the base URL.
# Claude Code (api.anthropic.com, API key), gemini-cli
# (generativelanguage.googleapis.com, API key) and Codex (api.openai.com,
# API key, built-in provider). Skips a CLI not installed.
source "$(dirname "$0")/lib.sh"

run_one() { # cli host
	local cli=$1 host=$2 base=$PWD
	AGENT_BIN=$(agent_bin "$cli") || {
		echo "SKIP (part): the $cli CLI is not installed (make agents)"
		return 0
	}
	start_mock_llm --script loop
	unset ANTHROPIC_BASE_URL OPENAI_BASE_URL GOOGLE_GEMINI_BASE_URL
	(
		agent_setup "$cli"
		printf '[llm]\nmode = proxy\ndecrypt = %s=http://127.0.0.1:%s\n' \
			"$host" "$MOCK_PORT" >"$T/$cli.ini"
		case $cli in
		claude) cmd=("$AGENT_BIN" -p "check asset fact_sales" --max-turns 10) ;;
		gemini) cmd=("$AGENT_BIN" -p "check asset fact_sales" --yolo) ;;
		codex)
			# the built-in provider: api.openai.com, websocket first
			cat >"$CODEX_HOME/config.toml" <<-'TOML'
				check_for_update_on_startup = false
				[analytics]
				enabled = false
			TOML
			cmd=("$AGENT_BIN" exec --skip-git-repo-check --ephemeral
				-s workspace-write -m gpt-5.5 "check asset fact_sales")
			;;
		esac
		run_lg -c "$T/$cli.ini" --session "$cli-egress" -- \
			timeout 90 "${cmd[@]}" </dev/null >"$T/$cli.out" 2>&1
		echo "$RC" >"$T/$cli.rc"
	)
	cd "$base" || fail "cd"
	RC=$(cat "$T/$cli.rc")
	assert_rc 86 "$RC" "$cli on its default endpoint: $(tail -3 "$T/$cli.out")"
	grep -q "\"session\":\"$cli-egress\".*\"event\":\"egress\",\"host\":\"$host\",\"port\":443,\"via\":\"decrypt\"" \
		"$STATE/audit.jsonl" || fail "$cli: no decrypted egress to $host"
	grep -q "\"session\":\"$cli-egress\".*\"event\":\"trip\".*\"rule\":\"repeat\"" "$STATE/audit.jsonl" ||
		fail "$cli: no repeat trip"
	n=$(mock_max_results)
	[ "$n" -le 3 ] || fail "$cli: the model saw $n tool results, at most 3 expected"
	stop_mock_llm
}

run_one claude api.anthropic.com
run_one gemini generativelanguage.googleapis.com
# Codex tries a websocket first: refused (not read yet), it falls back to
# HTTPS, which is read.
run_one codex api.openai.com
grep -q "Falling back from WebSockets to HTTPS" "$T/codex.out" 2>/dev/null ||
	! agent_bin codex >/dev/null || fail "Codex did not fall back to HTTPS: $(tail -3 "$T/codex.out")"
pass
