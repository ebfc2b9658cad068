#!/bin/bash
# SPDX-License-Identifier: MIT
# Only the tree talks to lgrun (issue 29, item 10). lgrun's LLM proxy and
# egress proxy listen on 127.0.0.1, which every local user reaches: a root
# session must not be a relay for them, nor let them feed its guard. The
# tree gets the session's secret in its proxy URL (HTTP_PROXY=
# http://lgrun:SECRET@127.0.0.1:PORT, sent as Proxy-Authorization) and in
# its base URLs (http://127.0.0.1:PORT/SECRET/anthropic). While a session
# runs, another user (nobody) and root outside the tree are refused: 407 at
# the egress proxy, 403 at the LLM proxy, with a wrong secret too; each is
# counted (refused_outsiders) and audited (event refused, with the uid);
# nothing of theirs reaches an upstream or the session's counters. The
# tree's own requests go through.
. "$(dirname "$0")/lib.sh"
need_root "a second user (su nobody)"
need_cmd curl
need_cmd su
id nobody >/dev/null 2>&1 || skip "needs the user nobody"
cd "$T" || fail "cd"
chmod 755 "$T"

start_mock_llm --script finish_after 1
python3 "$TOOLS/origin_server.py" --port-file "$T/plain.port" &
echo $! >>"$T/pids"
for _ in $(seq 1 100); do [ -s "$T/plain.port" ] && break; sleep 0.05; done
[ -s "$T/plain.port" ] || fail "the origin did not start"
HP=$(cat plain.port)

printf '[llm]\nmode = both\n' >both.ini
# The tree writes its variables, waits for the outsiders' turn, then uses
# both proxies itself.
run_lg -c "$T/both.ini" -s own -- sh -c '
	env | grep -E "^(HTTP_PROXY|ANTHROPIC_BASE_URL)=" >"$0/env.txt"
	touch "$0/ready"
	for i in $(seq 1 200); do [ -e "$0/go" ] && break; sleep 0.05; done
	curl -sS --fail "http://127.0.0.1:$1/hello" >"$0/own-egress.out" || exit 11
	curl -sS --fail --noproxy "*" -H "content-type: application/json" -H "x-api-key: k" \
		-d "{\"model\":\"m\",\"max_tokens\":10,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}" \
		"$ANTHROPIC_BASE_URL/v1/messages" >"$0/own-llm.out" || exit 12
	curl -sS --noproxy "*" -o "$0/own-404.out" -w "%{http_code}" -d "{}" \
		"${ANTHROPIC_BASE_URL%/anthropic}/nosuch/v1/messages" >"$0/own-404.code" || exit 13
' "$T" "$HP" >"$T/own.out" 2>"$T/own.err" &
LG=$!
for _ in $(seq 1 200); do [ -e ready ] && break; sleep 0.05; done
[ -e ready ] || fail "the session did not start: $(cat own.err)"
proxy=$(sed -n 's/^HTTP_PROXY=//p' env.txt)
base=$(sed -n 's/^ANTHROPIC_BASE_URL=//p' env.txt)
eport=${proxy##*:}
secret=$(echo "$base" | sed -n 's|^http://127.0.0.1:[0-9]*/\([0-9a-f]*\)/anthropic$|\1|p')
lport=$(echo "$base" | sed -n 's|^http://127.0.0.1:\([0-9]*\)/.*|\1|p')
[ -n "$secret" ] && [ -n "$lport" ] && [ -n "$eport" ] ||
	fail "the tree's variables do not carry the secret: $(cat env.txt)"
case $proxy in "http://lgrun:$secret@127.0.0.1:$eport") ;; *) fail "HTTP_PROXY is not lgrun's with the secret: $proxy" ;; esac

body='{"model":"m","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}'
as_nobody() { su -s /bin/sh nobody -c "$1"; }
# 1. another user through the egress proxy: plain HTTP, CONNECT, a wrong secret
code=$(as_nobody "curl -s -o /dev/null -w '%{http_code}' -x http://127.0.0.1:$eport http://127.0.0.1:$HP/hello")
[ "$code" = 407 ] || fail "another user's plain HTTP through the egress proxy: HTTP $code, expected 407"
code=$(as_nobody "curl -s -o /dev/null -w '%{http_connect}' -x http://127.0.0.1:$eport https://127.0.0.1:$HP/")
[ "$code" = 407 ] || fail "another user's CONNECT through the egress proxy: $code, expected 407"
code=$(as_nobody "curl -s -o /dev/null -w '%{http_code}' -x http://lgrun:0123456789abcdef0123456789abcdef@127.0.0.1:$eport http://127.0.0.1:$HP/hello")
[ "$code" = 407 ] || fail "a wrong secret at the egress proxy: HTTP $code, expected 407"
msg=$(as_nobody "curl -s -x http://127.0.0.1:$eport http://127.0.0.1:$HP/hello")
echo "$msg" | grep -q "serves only the tree of the lgrun session" || fail "the 407 does not say why: $msg"
# 2. another user's model request to the LLM proxy: the route, a wrong secret
code=$(as_nobody "curl -s -o /dev/null -w '%{http_code}' -H 'content-type: application/json' -d '$body' http://127.0.0.1:$lport/anthropic/v1/messages")
[ "$code" = 403 ] || fail "another user's POST to the LLM proxy: HTTP $code, expected 403"
code=$(as_nobody "curl -s -o /dev/null -w '%{http_code}' -d '$body' http://127.0.0.1:$lport/0123456789abcdef0123456789abcdef/anthropic/v1/messages")
[ "$code" = 403 ] || fail "a wrong secret at the LLM proxy: HTTP $code, expected 403"
# 3. root, outside the tree, is no better
code=$(curl -s -o /dev/null -w '%{http_code}' --noproxy '*' -d "$body" "http://127.0.0.1:$lport/anthropic/v1/messages")
[ "$code" = 403 ] || fail "root outside the tree at the LLM proxy: HTTP $code, expected 403"
code=$(curl -s -o /dev/null -w '%{http_code}' -x "http://127.0.0.1:$eport" "http://127.0.0.1:$HP/hello")
[ "$code" = 407 ] || fail "root outside the tree at the egress proxy: HTTP $code, expected 407"
# the mock model saw none of it
[ -s "$MOCK_LOG" ] && fail "an outsider's request reached the model upstream: $(head -c 300 "$MOCK_LOG")"

touch go
wait $LG
RC=$?
assert_rc 0 "$RC" "the session's own tree through both proxies ($(cat own.err))"
grep -q "hello from the origin" own-egress.out || fail "the tree's plain HTTP through the egress proxy: $(cat own-egress.out)"
# a path under no route: 404, naming the proxy's routes, as JSON
[ "$(cat own-404.code)" = 404 ] || fail "a path under no route: HTTP $(cat own-404.code), expected 404"
jq -e '.error | test("unknown route; use /anthropic, /openai, /gemini")' own-404.out >/dev/null ||
	fail "the 404 does not name the routes as JSON: $(cat own-404.out)"
[ "$(grep -c . "$MOCK_LOG")" = 1 ] || fail "the tree's model request did not reach the mock once: $(cat "$MOCK_LOG")"

# counted and audited: 8 refusals, the other user's with its uid
grep '"session":"own".*"event":"session_end"' "$STATE/audit.jsonl" | grep -q '"refused_outsiders":8' ||
	fail "the end record does not count 8 refused outsiders: $(grep '"session":"own".*"event":"session_end"' "$STATE/audit.jsonl")"
[ "$(grep -c '"session":"own".*"event":"refused"' "$STATE/audit.jsonl")" = 8 ] || fail "not 8 refused records"
nuid=$(id -u nobody)
[ "$(grep '"session":"own".*"event":"refused","proxy":"egress"' "$STATE/audit.jsonl" | grep -c "\"uid\":$nuid")" = 4 ] ||
	fail "the egress refusals do not name the other user: $(grep '"event":"refused"' "$STATE/audit.jsonl")"
[ "$(grep '"session":"own".*"event":"refused","proxy":"LLM"' "$STATE/audit.jsonl" | grep -c "\"uid\":$nuid")" = 2 ] ||
	fail "the LLM proxy's refusals do not name the other user: $(grep '"event":"refused"' "$STATE/audit.jsonl")"
grep -q "^lgrun: the egress proxy refused a connection from outside the session's tree (127.0.0.1:[0-9]*, uid $nuid)" own.err ||
	fail "no refusal on stderr: $(cat own.err)"
# outsiders are not the session's traffic: 1 egress connection (the tree's)
grep '"session":"own".*"event":"session_end"' "$STATE/audit.jsonl" | grep -q '"egress_connections":1,' ||
	fail "an outsider's connection was counted as the session's egress"
grep -q "$secret" "$STATE/audit.jsonl" && fail "the secret reached the audit"
pass
