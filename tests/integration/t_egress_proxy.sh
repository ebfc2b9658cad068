#!/bin/bash
# SPDX-License-Identifier: MIT
# The egress proxy (issue 13): with [llm] mode = both the tree's
# HTTP_PROXY/HTTPS_PROXY point at lgrun, NO_PROXY is set and empty, and the
# tools the agent runs still work: HTTPS is tunnelled byte for byte (the
# certificate curl, git and pip check is the origin's), plain HTTP is
# forwarded with bodies intact both ways. The audit names hosts and ports,
# never a URL.
. "$(dirname "$0")/lib.sh"
need_cmd curl
need_cmd openssl
cd "$T" || fail "cd"

openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=localhost \
	-addext "subjectAltName=DNS:localhost,IP:127.0.0.1" \
	-keyout origin.key -out origin.pem 2>/dev/null || fail "openssl req"
start_origin() { # name [--tls ...]
	local name=$1
	shift
	python3 "$TOOLS/origin_server.py" --port-file "$T/$name.port" "$@" &
	echo $! >>"$T/pids"
	for _ in $(seq 1 100); do
		[ -s "$T/$name.port" ] && return 0
		sleep 0.05
	done
	fail "the $name origin did not start"
}
trap 'kill $(cat "$T/pids" 2>/dev/null) 2>/dev/null; lg_cleanup' EXIT
start_origin plain
# what git and pip fetch over HTTPS: a repository (git's dumb HTTP) and a
# package index with one wheel
git init -q src && echo "tracked content" >src/a.txt &&
	git -C src add a.txt && git -C src -c user.name=t -c user.email=t@example.com commit -qm one &&
	mkdir -p files && git clone -q --bare src files/repo.git &&
	git -C files/repo.git update-server-info || fail "fixture: the git repository"
python3 - files <<'EOF'
import hashlib, os, sys, zipfile
root = sys.argv[1]
whl = "demo_lg-1.0-py3-none-any.whl"
with zipfile.ZipFile(os.path.join(root, whl), "w") as z:
    z.writestr("demo_lg/__init__.py", "VALUE = 42\n")
    z.writestr("demo_lg-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: demo-lg\nVersion: 1.0\n")
    z.writestr("demo_lg-1.0.dist-info/WHEEL", "Wheel-Version: 1.0\nGenerator: lgrun-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
    z.writestr("demo_lg-1.0.dist-info/RECORD", "")
h = hashlib.sha256(open(os.path.join(root, whl), "rb").read()).hexdigest()
os.makedirs(os.path.join(root, "simple", "demo-lg"))
open(os.path.join(root, "simple", "demo-lg", "index.html"), "w").write(
    f'<html><body><a href="../../{whl}#sha256={h}">{whl}</a></body></html>\n')
EOF
start_origin tls --tls "$T/origin.pem" "$T/origin.key" --root "$T/files"
HP=$(cat plain.port)
SP=$(cat tls.port)
printf '[llm]\nmode = both\n' >both.ini
python3 -c "import random; r=random.Random(7); open('up.bin','wb').write(bytes(r.getrandbits(8) for _ in range(3000000)))"
want_up=$(sha256sum up.bin | cut -d' ' -f1)
want_blob=$(python3 - "$TOOLS" <<'EOF'
import hashlib, importlib.util, sys
spec = importlib.util.spec_from_file_location("o", sys.argv[1] + "/origin_server.py")
o = importlib.util.module_from_spec(spec)
spec.loader.exec_module(o)
print(hashlib.sha256(o.blob(5000000)[:5000000]).hexdigest())
EOF
)

run_lg -c "$T/both.ini" -s egress -- sh -c "
	env | grep -i '^\\(https\\?\\|no\\)_proxy=' | sort >'$T/env.txt'
	env | grep '^\\(NODE_EXTRA_CA_CERTS\\|CODEX_CA_CERTIFICATE\\|SSL_CERT_FILE\\|REQUESTS_CA_BUNDLE\\|CURL_CA_BUNDLE\\)=' | sort >'$T/trust.txt'
	cp \"\$NODE_EXTRA_CA_CERTS\" '$T/ca-copy.pem'; cp \"\$SSL_CERT_FILE\" '$T/bundle-copy.pem'
	stat -c %a \"\$NODE_EXTRA_CA_CERTS\" \"\$SSL_CERT_FILE\" >'$T/modes.txt'
	for f in /proc/\$LGRUN_SUPERVISOR_PID/fd/*; do readlink \"\$f\"; done >'$T/fds.txt' 2>/dev/null
	curl -sS --fail --cacert '$T/origin.pem' https://localhost:$SP/hello?token=s3cr3t >'$T/tls.out' || exit 11
	curl -sS --fail http://127.0.0.1:$HP/blob/5000000 | sha256sum >'$T/blob.sha' || exit 12
	curl -sS --fail --data-binary @'$T/up.bin' http://127.0.0.1:$HP/sha >'$T/up.sha' || exit 13
	curl -sS --fail --cacert '$T/origin.pem' --data-binary @'$T/up.bin' https://localhost:$SP/sha >'$T/up-tls.sha' || exit 14
	curl -sS -o /dev/null -w '%{http_code}' http://no-such-host.invalid/ >'$T/bad.code'
	exit 0" 2>"$T/err"
assert_rc 0 "$RC" "tools through the egress proxy (err: $(tail -3 "$T/err"))"

# git and pip over HTTPS go through the tunnel with their own TLS to the
# origin (its certificate, never decrypted): what they fetch is intact. pip
# trusts the origin as a user's corporate CA would be trusted: named in
# REQUESTS_CA_BUNDLE before lgrun, kept in the bundle lgrun gives the tree.
REQUESTS_CA_BUNDLE=$T/origin.pem run_lg -c "$T/both.ini" -s tools -- sh -c "
	GIT_SSL_CAINFO='$T/origin.pem' git clone -q https://localhost:$SP/files/repo.git '$T/clone' || exit 21
	PIP_DISABLE_PIP_VERSION_CHECK=1 python3 -m pip download -q --no-deps \
		--index-url https://localhost:$SP/files/simple/ -d '$T/dl' demo-lg || exit 22" 2>"$T/tools.err"
assert_rc 0 "$RC" "git clone and pip download through the egress proxy: $(tail -3 "$T/tools.err")"
[ "$(cat "$T/clone/a.txt")" = "tracked content" ] || fail "the clone's content differs"
cmp -s "$T/dl/demo_lg-1.0-py3-none-any.whl" files/demo_lg-1.0-py3-none-any.whl ||
	fail "pip's download differs from the origin's wheel"
[ "$(grep -c '"session":"tools".*"event":"egress","host":"localhost","port":'"$SP"',"via":"connect"' "$STATE/audit.jsonl")" = 1 ] ||
	fail "git's and pip's tunnels are not one egress record for localhost:$SP via connect"

# A process that ignores the proxy variables: the eBPF observer (root)
# sees its connect off this host, said once with where it went, counted.
# As root the observer is loaded before the command starts (--bpf=on): in
# the background (auto) it may attach after a short command's connects
# (seen under ThreadSanitizer). Where it cannot load, auto and the check
# below is skipped.
direct() {
	run_lg -c "$T/both.ini" -s direct "$@" -- python3 -c "
import socket
for _ in range(2):
    try:
        socket.create_connection(('192.0.2.1', 443), timeout=0.5)
    except OSError:
        pass" 2>"$T/direct.err"
}
if [ "$(id -u)" = 0 ]; then direct --bpf=on; else RC=125; fi
[ "$RC" = 125 ] && direct
if grep -q '"session":"direct".*"event":"session_end".*"bpf":"attached"' "$STATE/audit.jsonl"; then
	grep -q '"session":"direct".*"event":"warn","rule":"egress","reason":"direct_connection".*python3) connects to 192.0.2.1:443 directly' \
		"$STATE/audit.jsonl" || fail "a direct connection is not said: $(grep '"session":"direct"' "$STATE/audit.jsonl" | head -3)"
	grep -q "connects to 192.0.2.1:443 directly, not through lgrun's egress proxy" "$T/direct.err" ||
		fail "no direct-connection warning on stderr: $(cat "$T/direct.err")"
	grep -q '"session":"direct".*"event":"session_end".*"direct_connections":2' "$STATE/audit.jsonl" ||
		fail "the end record does not count 2 direct connections"
	# seen by the session cgroup's connect hooks: no syscall tracing
	grep '"session":"direct".*"event":"session_end"' "$STATE/audit.jsonl" | grep -q '"syscall_tracing":"off"' ||
		fail "direct connects turned syscall tracing on: $(grep '"session":"direct".*"event":"session_end"' "$STATE/audit.jsonl")"
else
	echo "SKIP (part): direct connections are seen by the eBPF observer (root)"
fi

# The tree was pointed at the proxy, NO_PROXY set but empty.
for v in HTTP_PROXY HTTPS_PROXY http_proxy https_proxy; do
	grep -q "^$v=http://lgrun:[0-9a-f]\{32\}@127.0.0.1:[0-9]*$" env.txt || fail "$v is not lgrun's proxy with the session's secret: $(cat env.txt)"
done
grep -qx "NO_PROXY=" env.txt && grep -qx "no_proxy=" env.txt || fail "NO_PROXY is not set and empty: $(cat env.txt)"

# The tree trusts the session CA: Node and Codex add it, the others get the
# system's bundle with it appended. Files 0644; the CA's key is nowhere.
ca=$(sed -n 's/^NODE_EXTRA_CA_CERTS=//p' trust.txt)
bundle=$(sed -n 's/^SSL_CERT_FILE=//p' trust.txt)
[ -n "$ca" ] && [ -n "$bundle" ] || fail "no trust variables: $(cat trust.txt)"
grep -qx "CODEX_CA_CERTIFICATE=$ca" trust.txt || fail "CODEX_CA_CERTIFICATE is not the CA"
grep -qx "REQUESTS_CA_BUNDLE=$bundle" trust.txt && grep -qx "CURL_CA_BUNDLE=$bundle" trust.txt ||
	fail "REQUESTS_CA_BUNDLE/CURL_CA_BUNDLE are not the bundle: $(cat trust.txt)"
[ "$(tr '\n' ' ' <modes.txt)" = "644 644 " ] || fail "CA files are not 0644: $(cat modes.txt)"
openssl x509 -in ca-copy.pem -noout -text | grep -q "CA:TRUE" || fail "the CA file is not a CA"
sys=${SSL_CERT_FILE:-$(openssl version -d | sed 's/.*"\(.*\)"/\1/')/cert.pem}
[ "$(grep -c BEGIN bundle-copy.pem)" = "$(( $(grep -c BEGIN "$sys") + 1 ))" ] ||
	fail "the bundle is not the system's CAs plus one"
tail -n "$(wc -l <ca-copy.pem)" bundle-copy.pem | cmp -s - ca-copy.pem || fail "the bundle does not end with the CA"
[ ! -e "$ca" ] && [ ! -e "$bundle" ] || fail "the CA files were left after the session"
grep -rl "PRIVATE KEY" "$STATE" && fail "a private key is in the state dir"
while read -r f; do
	case $f in /*) [ -f "$f" ] && grep -q "PRIVATE KEY" "$f" 2>/dev/null && fail "lgrun holds a key file open: $f" ;; esac
done <fds.txt

# A CA the user named for requests or curl stays trusted in the bundle.
printf -- '-----BEGIN CERTIFICATE-----\nMIIcorporateCA\n-----END CERTIFICATE-----\n' >corp.pem
REQUESTS_CA_BUNDLE=$T/corp.pem run_lg -c "$T/both.ini" -s corp -- sh -c 'cp "$REQUESTS_CA_BUNDLE" "$0"' "$T/corp-bundle.pem"
grep -q MIIcorporateCA corp-bundle.pem || fail "the user's REQUESTS_CA_BUNDLE was dropped from the bundle"
tail -n "$(wc -l <ca-copy.pem)" corp-bundle.pem | grep -q "BEGIN CERTIFICATE" || fail "the corp bundle does not end with a CA"

grep -q "hello from the origin" tls.out || fail "HTTPS through the tunnel: $(cat tls.out)"
[ "$(cut -d' ' -f1 blob.sha)" = "$want_blob" ] || fail "a download through the proxy changed"
[ "$(cat up.sha)" = "$want_up" ] || fail "an upload through the proxy changed"
[ "$(cat up-tls.sha)" = "$want_up" ] || fail "an upload through the tunnel changed"
[ "$(cat bad.code)" = 502 ] || fail "an unknown host: HTTP $(cat bad.code), expected 502"

# Audited by host and port; nothing of the URLs.
grep -q '"event":"egress","host":"localhost","port":'"$SP"',"via":"connect"' "$STATE/audit.jsonl" ||
	fail "no egress record for the tunnel"
grep -q '"event":"egress","host":"127.0.0.1","port":'"$HP"',"via":"http"' "$STATE/audit.jsonl" ||
	fail "no egress record for plain HTTP"
grep -q '"host":"no-such-host.invalid".*"error":"the host name does not resolve"' "$STATE/audit.jsonl" ||
	fail "no record of the failed host"
grep -q "s3cr3t\|/hello\|/blob" "$STATE/audit.jsonl" && fail "a URL reached the audit"
grep '"session":"egress".*"event":"session_end"' "$STATE/audit.jsonl" | grep -q '"egress_connections":5' ||
	fail "the end record does not count 5 egress connections"

# A model host is decrypted with the session CA and read: curl trusts the
# CA through CURL_CA_BUNDLE; lgrun counts the turn. A client that does not
# trust the CA fails its handshake, and the record says why.
start_mock_llm --script loop
printf '[llm]\nmode = proxy\ndecrypt = api.anthropic.com=http://127.0.0.1:%s\n' "$MOCK_PORT" >dec.ini
run_lg -c "$T/dec.ini" -s decrypt -- sh -c "
	curl -sS --fail https://api.anthropic.com/v1/messages -H 'content-type: application/json' \
		-H 'x-api-key: sk-ant-secret-key' \
		-d '{\"model\":\"claude-x\",\"max_tokens\":10,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}' >'$T/model.out' || exit 21
	curl -sS --cacert '$T/origin.pem' https://api.anthropic.com/v1/messages -d '{}' >/dev/null 2>&1 && exit 22
	exit 0"
assert_rc 0 "$RC" "a decrypted model host"
grep -q '"type":"tool_use"' model.out || fail "the model's answer did not come through: $(head -c 300 model.out)"
grep '"session":"decrypt".*"event":"session_end"' "$STATE/audit.jsonl" | grep -q '"model_turns":1' ||
	fail "lgrun did not count the decrypted model turn"
# (after the model's tool call, the record says its turn: issue 40)
grep -qE '"session":"decrypt","agent":"sh",("turn":[0-9]+,)?"event":"egress","host":"api\.anthropic\.com","port":443,"via":"decrypt"' "$STATE/audit.jsonl" ||
	fail "no decrypt egress record"
grep '"session":"decrypt".*"event":"session_end"' "$STATE/audit.jsonl" | grep -q '"egress_failed":1' ||
	fail "the client that does not trust the CA is not counted as a failed connection"
grep -q "sk-ant-secret-key" "$STATE/audit.jsonl" && fail "a credential reached the audit"
stop_mock_llm
printf '[llm]\nmode = proxy\ndecrypt = example.org\n' >baddec.ini
run_lg -c "$T/baddec.ini" -- true 2>"$T/decerr"
assert_rc 125 "$RC" "a decrypt host without a format"
grep -q "llm.decrypt: cannot read 'example.org'" "$T/decerr" || fail "no clear llm.decrypt error: $(cat "$T/decerr")"

# A malformed request gets 400; the session goes on.
run_lg -c "$T/both.ini" -s bad -- python3 -c "
import base64, os, socket, urllib.parse
u = urllib.parse.urlparse(os.environ['HTTP_PROXY'])
auth = b'Proxy-Authorization: Basic ' + base64.b64encode(f'{u.username}:{u.password}'.encode()) + b'\r\n'
for req in (b'GARBAGE\r\n', b'GET /relative HTTP/1.1\r\nHost: x\r\n',
            b'CONNECT nohostport HTTP/1.1\r\n', b'GET http://a b/ HTTP/1.1\r\n'):
    s = socket.create_connection(('127.0.0.1', u.port))
    s.sendall(req + auth + b'\r\n')
    assert s.recv(100).startswith(b'HTTP/1.1 400'), req
    s.close()
"
assert_rc 0 "$RC" "malformed requests to the egress proxy"

# A Claude Code settings file whose "env" block would take the agent around
# lgrun is named; one that sets nothing of the kind is not.
mkdir -p proj/.claude quiet/.claude
echo '{"env": {"HTTPS_PROXY": "http://corp-proxy:3128", "FOO": "1"}}' >proj/.claude/settings.json
echo '{"env": {"FOO": "1"}, "permissions": {"allow": []}}' >quiet/.claude/settings.json
(cd proj && run_lg -c "$T/both.ini" -s settings -- true 2>"$T/settings.err")
grep -q "$T/proj/.claude/settings.json sets HTTPS_PROXY in its \"env\" block" "$T/settings.err" ||
	fail "the settings file that defeats lgrun is not named: $(cat "$T/settings.err")"
grep -q '"session":"settings".*"event":"warn".*settings.json sets HTTPS_PROXY' "$STATE/audit.jsonl" ||
	fail "no warn record for the settings file"
(cd quiet && run_lg -c "$T/both.ini" -s quiet -- true 2>"$T/quiet.err")
grep -q "settings.json" "$T/quiet.err" && fail "a harmless settings file was named"

# An agent CLI with no model turn through lgrun is said to have gone
# around it, if it talked to its model; any other program is not.
mkdir -p bin
ln -s "$(type -P true)" bin/codex
run_lg -s unseen -- "$T/bin/codex" 2>"$T/unseen.err"
grep -q "no model turn of codex went through lgrun" "$T/unseen.err" || fail "no word of an agent's unseen model traffic"
grep '"session":"unseen".*"event":"session_end"' "$STATE/audit.jsonl" | grep -q '"model_traffic":"not seen"' ||
	fail "the end record does not say the model traffic was not seen"
run_lg -s other -- true 2>"$T/other.err"
grep -q "no model turn" "$T/other.err" && fail "a program that is not an agent CLI was warned about"

# The default (auto) leaves the proxy variables alone for a command that
# is not an agent CLI; one that runs an agent CLI gets both (proxy
# variables and the session CA, the base-URL variables too).
run_lg -s default -- sh -c "env | grep -ci '^https\\?_proxy=127' >'$T/n' ; true"
[ "$(cat "$T/n")" = 0 ] || fail "auto mode set proxy variables for a command that is not an agent"
run_lg -s auto -- sh -c ": codex; env >'$T/auto.env'"
grep -q '^HTTPS_PROXY=http://lgrun:[0-9a-f]*@127.0.0.1:[0-9]*$' "$T/auto.env" &&
	grep -q '^NODE_EXTRA_CA_CERTS=.*\.ca\.pem$' "$T/auto.env" &&
	grep -q '^OPENAI_BASE_URL=http://127.0.0.1:[0-9]*/[0-9a-f]\{32\}/openai' "$T/auto.env" ||
	fail "auto mode did not give an agent CLI's command both: $(grep -i 'proxy\|base_url\|ca_cert' "$T/auto.env")"
printf '[llm]\nmode = tunnel\n' >badmode.ini
run_lg -c "$T/badmode.ini" -- true 2>"$T/cfgerr"
assert_rc 125 "$RC" "an unknown llm.mode"
grep -q "badmode.ini:2.*not a mode (auto, base_url, proxy or both)" "$T/cfgerr" ||
	fail "the config error does not name file, line and the modes: $(cat "$T/cfgerr")"
pass
