#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Real agent CLIs on their default endpoints, in their usual login modes
# (issue 13): no base-URL variable, only the proxy variables ([llm] mode =
# proxy). lgrun's egress proxy decrypts the model host with the session CA
# (the CLI trusts it through NODE_EXTRA_CA_CERTS or CODEX_CA_CERTIFICATE)
# and hands each request, or websocket, to the LLM proxy, whose upstream
# here is the mock model: lgrun sees the turns, and the repeat loop is
# stopped after 3 model requests, as with the base URL.
#   claude      api.anthropic.com, API key
#   claude-oauth                   OAuth token (CLAUDE_CODE_OAUTH_TOKEN)
#   gemini      generativelanguage.googleapis.com, API key
#   gemini-google  cloudcode-pa.googleapis.com, Google login (Code Assist:
#                  the Gemini request and responses in an envelope); its
#                  token check (oauth2.googleapis.com) and user info
#                  (www.googleapis.com) go to the mock too
#   codex       api.openai.com, API key (codex login): a websocket
#   codex-chatgpt  chatgpt.com/backend-api/codex, ChatGPT login: a websocket
#   codex-https    the same with the websocket refused (426): HTTPS, its
#                  request bodies zstd-encoded
#   codex-custom   a provider of config.toml at https://192.0.2.10/v1 (an
#                  address: the leaf carries an IP SAN), HTTPS
# Skips a CLI not installed. LG_EGRESS_ONLY=name runs one variant.
source "$(dirname "$0")/lib.sh"

# A ChatGPT login as `codex login` leaves it: tokens whose claims name the
# plan and the account (never checked offline: the signature is not).
codex_chatgpt_login() {
	python3 - "$CODEX_HOME/auth.json" <<-'PY'
		import base64, json, sys, time
		def b64(d):
		    return base64.urlsafe_b64encode(json.dumps(d).encode()).rstrip(b"=").decode()
		def jwt(claims):
		    return b64({"alg": "RS256", "typ": "JWT"}) + "." + b64(claims) + ".c2ln"
		now = int(time.time())
		auth = {"https://api.openai.com/auth": {"chatgpt_plan_type": "pro",
		        "chatgpt_account_id": "acc-lgrun-fixture", "chatgpt_user_id": "user-lgrun"}}
		idt = jwt({"email": "dev@example.com", "email_verified": True,
		           "iat": now, "exp": now + 864000, **auth})
		at = jwt({"iat": now, "exp": now + 864000, **auth})
		json.dump({"OPENAI_API_KEY": None,
		           "tokens": {"id_token": idt, "access_token": at,
		                      "refresh_token": "rt-lgrun-fixture",
		                      "account_id": "acc-lgrun-fixture"},
		           "last_refresh": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())},
		          open(sys.argv[1], "w"))
	PY
}

run_one() { # variant host
	local v=$1 host=$2 cli=${1%%-*} base=$PWD mock_args=()
	[ -z "${LG_EGRESS_ONLY:-}" ] || [ "$LG_EGRESS_ONLY" = "$v" ] || return 0
	AGENT_BIN=$(agent_bin "$cli") || {
		echo "SKIP (part): the $cli CLI is not installed (make agents)"
		return 0
	}
	[ "$v" = codex-https ] && mock_args=(--no-websocket)
	start_mock_llm --script loop "${mock_args[@]}"
	unset ANTHROPIC_BASE_URL OPENAI_BASE_URL GOOGLE_GEMINI_BASE_URL
	rm -rf "$T/home" "$T/work"
	(
		agent_setup "$cli"
		printf '[llm]\nmode = proxy\ndecrypt = %s=http://127.0.0.1:%s\n' \
			"$host" "$MOCK_PORT" >"$T/$v.ini"
		case $cli in
		claude) cmd=("$AGENT_BIN" -p "check asset fact_sales" --max-turns 10) ;;
		gemini) cmd=("$AGENT_BIN" -p "check asset fact_sales" --yolo) ;;
		codex)
			# the built-in provider (api.openai.com, or chatgpt.com with
			# a ChatGPT login), websocket first
			cat >"$CODEX_HOME/config.toml" <<-'TOML'
				check_for_update_on_startup = false
				[analytics]
				enabled = false
			TOML
			cmd=("$AGENT_BIN" exec --skip-git-repo-check --ephemeral
				-s workspace-write -m gpt-5.5 "check asset fact_sales")
			;;
		esac
		case $v in
		claude-oauth)
			unset ANTHROPIC_API_KEY
			export CLAUDE_CODE_OAUTH_TOKEN=sk-ant-oat01-dummy-lgrun-fixture
			;;
		codex)
			printenv OPENAI_API_KEY | "$AGENT_BIN" login --with-api-key >/dev/null 2>&1 ||
				fail "codex login --with-api-key failed"
			unset OPENAI_API_KEY
			;;
		codex-chatgpt | codex-https)
			unset OPENAI_API_KEY
			codex_chatgpt_login
			;;
		gemini-google)
			unset GEMINI_API_KEY
			python3 - "$HOME/.gemini" <<-'PY'
				import json, sys, time
				d = sys.argv[1]
				s = json.load(open(d + "/settings.json"))
				s["security"]["auth"]["selectedType"] = "oauth-personal"
				json.dump(s, open(d + "/settings.json", "w"))
				json.dump({"access_token": "ya29.dummy-lgrun-fixture",
				           "refresh_token": "1//dummy-lgrun-fixture",
				           "scope": "https://www.googleapis.com/auth/cloud-platform openid",
				           "token_type": "Bearer",
				           "expiry_date": int(time.time() * 1000) + 3600 * 1000},
				          open(d + "/oauth_creds.json", "w"))
			PY
			printf '[llm]\nmode = proxy\ndecrypt = %s=http://127.0.0.1:%s, %s:gemini=http://127.0.0.1:%s, %s:gemini=http://127.0.0.1:%s\n' \
				"$host" "$MOCK_PORT" oauth2.googleapis.com "$MOCK_PORT" \
				www.googleapis.com "$MOCK_PORT" >"$T/$v.ini"
			;;
		codex-custom)
			# a provider of the user's: its host is decrypted as configured
			cat >"$CODEX_HOME/config.toml" <<-'TOML'
				model_provider = "corp"
				check_for_update_on_startup = false
				[analytics]
				enabled = false
				[model_providers.corp]
				name = "corp"
				base_url = "https://192.0.2.10/v1"
				env_key = "OPENAI_API_KEY"
				wire_api = "responses"
			TOML
			printf '[llm]\nmode = proxy\ndecrypt = %s:openai=http://127.0.0.1:%s\n' \
				"$host" "$MOCK_PORT" >"$T/$v.ini"
			;;
		esac
		run_lg -c "$T/$v.ini" --session "$v-egress" -- \
			timeout 90 "${cmd[@]}" </dev/null >"$T/$v.out" 2>&1
		echo "$RC" >"$T/$v.rc"
	)
	cd "$base" || fail "cd"
	RC=$(cat "$T/$v.rc")
	assert_rc 86 "$RC" "$v on its default endpoint: $(tail -3 "$T/$v.out")"
	grep -q "\"session\":\"$v-egress\".*\"event\":\"egress\",\"host\":\"$host\",\"port\":443,\"via\":\"decrypt\"" \
		"$STATE/audit.jsonl" || fail "$v: no decrypted egress to $host"
	grep -q "\"session\":\"$v-egress\".*\"event\":\"trip\".*\"rule\":\"repeat\"" "$STATE/audit.jsonl" ||
		fail "$v: no repeat trip"
	n=$(mock_max_results)
	[ "$n" -le 3 ] || fail "$v: the model saw $n tool results, at most 3 expected"
	# the mock saw the credentials: nothing was lost on the way
	grep -q '"auth": true' "$MOCK_LOG" || fail "$v: the model requests carried no credentials"
	case $v in
	claude)
		grep -q '"auth_via": "x-api-key"' "$MOCK_LOG" || fail "$v: not the API key"
		;;
	claude-oauth)
		# the OAuth token goes as a bearer, never as an API key
		grep -q '"auth_via": "bearer"' "$MOCK_LOG" && ! grep -q '"auth_via": "x-api-key"' "$MOCK_LOG" ||
			fail "$v: not the OAuth token: $(grep -o '"auth_via": "[^"]*"' "$MOCK_LOG" | sort | uniq -c)"
		;;
	codex | codex-chatgpt)
		grep -q '"ws": true' "$MOCK_LOG" || fail "$v: Codex did not use its websocket"
		! grep -q '"ws": true.*"prewarm": false.*"turn": 4' "$MOCK_LOG" ||
			fail "$v: a 4th turn went to the model"
		! grep -q "Falling back from WebSockets" "$T/$v.out" ||
			fail "$v: Codex fell back to HTTPS: $(grep -m1 Falling "$T/$v.out")"
		;;
	gemini-google)
		grep -q '"api": "code-assist", "path": "/v1internal:streamGenerateContent"' "$MOCK_LOG" ||
			fail "$v: no Code Assist turn: $(head -c 300 "$MOCK_LOG")"
		;;
	codex-https)
		! grep -q '"ws": true' "$MOCK_LOG" || fail "$v: a websocket turn despite the refusal"
		grep -q '"path": "/backend-api/codex/responses", [^{]*"zstd": true' "$MOCK_LOG" ||
			fail "$v: no zstd-encoded HTTPS turn: $(head -c 300 "$MOCK_LOG")"
		;;
	esac
	stop_mock_llm
}

run_one claude api.anthropic.com
run_one claude-oauth api.anthropic.com
run_one gemini generativelanguage.googleapis.com
run_one gemini-google cloudcode-pa.googleapis.com
run_one codex api.openai.com
run_one codex-chatgpt chatgpt.com
run_one codex-https chatgpt.com
run_one codex-custom 192.0.2.10
pass
