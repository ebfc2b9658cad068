#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# [store] backend = redis with a real redis-server on a loopback port:
# two supervisors of one session (two state dirs stand for two hosts) count
# as one and die together; a reset on one host frees both; the server
# unreachable at start (fail or local), lost mid-session (SIGSTOP: no
# answer at all, and killed), and back (the counts are reconciled).
source "$(dirname "$0")/lib.sh"
need_cmd redis-server
need_cmd redis-cli
need_root "a cgroup per session (the tree kill is checked)"

REDIS_PID=
start_redis() { # port
	redis-server --port "$1" --bind 127.0.0.1 --save '' --appendonly no \
		--daemonize no >"$T/redis.log" 2>&1 &
	REDIS_PID=$!
	for _ in $(seq 1 100); do
		redis-cli -p "$1" ping >/dev/null 2>&1 && return 0
		sleep 0.05
	done
	fail "redis-server did not start on port $1"
}
stop_redis() {
	[ -n "$REDIS_PID" ] || return 0
	kill -CONT "$REDIS_PID" 2>/dev/null
	kill "$REDIS_PID" 2>/dev/null
	wait "$REDIS_PID" 2>/dev/null
	# (a server started by a subshell is not our child: wait for it)
	for _ in $(seq 1 100); do
		kill -0 "$REDIS_PID" 2>/dev/null || break
		sleep 0.05
	done
	REDIS_PID=
}
trap 'stop_redis; lg_cleanup' EXIT
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
start_redis "$PORT"
cat >"$T/store.ini" <<INI
[store]
backend = redis
url = redis://127.0.0.1:$PORT/0
INI
A=$T/hostA B=$T/hostB
mkdir -p "$A" "$B"
mkfiles "$T/a" 2
mkfiles "$T/b" 2

# 1. A deletes a/f1, B deletes b/f1, A's a/f2 is the third overall: refused,
#    A's tree killed, and B's too (it was going to delete b/f2 later).
"$LGRUN" -c "$T/store.ini" --state-dir "$A" -s fleet -- bash -c 'rm "$0/f1"; sleep 0.6; rm "$0/f2"; sleep 10' "$T/a" >"$T/outA" 2>&1 &
PA=$!
"$LGRUN" -c "$T/store.ini" --state-dir "$B" -s fleet -- bash -c 'sleep 0.3; rm "$0/f1"; echo $$ >"$0/../b.pid"; sleep 10; rm "$0/f2"' "$T/b" >"$T/outB" 2>&1 &
PB=$!
wait $PA
RA=$?
wait $PB
RB=$?
assert_rc 86 "$RA" "host A"
assert_rc 86 "$RB" "host B (killed by A's trip)"
[ -e "$T/a/f2" ] || fail "the third delete overall was not refused"
[ -e "$T/b/f2" ] || fail "host B's tree went on"
[ ! -e "$T/a/f1" ] && [ ! -e "$T/b/f1" ] || fail "the first two deletes should have happened"
grep -q "all supervisors of the session" "$T/outA" || fail "A should say the count is the session's"
grep -q '"reason":"killed_by_peer"' "$B/audit.jsonl" || fail "B's trip record should say a peer stopped it"
bpid=$(cat "$T/b.pid")
! kill -0 "$bpid" 2>/dev/null || fail "host B's shell survived"
redis-cli -p "$PORT" exists 'lgrun:{fleet}:killed' | grep -q 1 || fail "no shared killed marker (hash-tagged key)"

# 1b. Agent-to-agent calls are counted for the session too: with at most
#     3 calls a minute, two nested starts on each host make the fourth
#     overall the one refused.
cat >"$T/flow.ini" <<INI
[store]
backend = redis
url = redis://127.0.0.1:$PORT/0
[flow]
max_rate = 3
no_work_calls = 0
INI
"$LGRUN" -c "$T/flow.ini" --state-dir "$A" -s fleetflow -- bash -c '"$0" --agent x -- true; "$0" --agent y -- true; sleep 1; true' "$LGRUN" >"$T/outA" 2>&1 &
PA=$!
"$LGRUN" -c "$T/flow.ini" --state-dir "$B" -s fleetflow -- bash -c 'sleep 0.5; "$0" --agent x -- true && echo third-ok; "$0" --agent y -- true || echo fourth-refused' "$LGRUN" >"$T/outB" 2>&1 &
PB=$!
wait $PA
wait $PB
RB=$?
assert_rc 86 "$RB" "the fourth call of the session"
grep -q third-ok "$T/outB" || { cat "$T/outB"; fail "the third call overall should be allowed"; }
grep -q "call rate limit exceeded (max 3/minute, all supervisors of the session)" "$T/outB" || { cat "$T/outB"; fail "no shared rate message"; }
"$LGCTL" -c "$T/store.ini" --state-dir "$B" reset fleetflow >/dev/null

# 2. Both stay blocked; a reset on host A lets both start.
run_lg -c "$T/store.ini" --state-dir "$B" -s fleet -- true 2>/dev/null
assert_rc 87 "$RC" "B blocked"
"$LGCTL" -c "$T/store.ini" --state-dir "$A" reset fleet >/dev/null || fail "lgctl reset with the store"
run_lg -c "$T/store.ini" --state-dir "$B" -s fleet -- true
assert_rc 0 "$RC" "B after the reset on A"
run_lg -c "$T/store.ini" --state-dir "$A" -s fleet -- true
assert_rc 0 "$RC" "A after its reset"

# 3. The store unreachable at start: fail refuses, local runs on its own.
stop_redis
run_lg -c "$T/store.ini" --state-dir "$A" -s down1 -- true 2>"$T/err"
assert_rc 125 "$RC" "on_store_error = fail"
grep -q "the shared store is unavailable: cannot connect to redis://127.0.0.1:$PORT/0" "$T/err" || { cat "$T/err"; fail "no message naming the store"; }
grep -q "on_store_error = local" "$T/err" || fail "the message should say how to run without it"
printf 'on_store_error = local\n' >>"$T/store.ini"
run_lg -c "$T/store.ini" --state-dir "$A" -s down2 -- true 2>"$T/err"
assert_rc 0 "$RC" "on_store_error = local"
grep -q '"session":"down2".*"reason":"store_unavailable"' "$A/audit.jsonl" || fail "running without the store was not audited"

# 4. Lost mid-session and back: f1 counted in the store, f2 while it does
#    not answer (stopped: the delete must not hang past the timeout), f3
#    after it came back empty: the replayed entries make f3 the third.
start_redis "$PORT"
mkfiles "$T/c" 3
cat >"$T/agent.sh" <<'SH'
rm "$1/f1"
kill -STOP "$2"
rm "$1/f2"
kill -CONT "$2"; kill "$2"; touch "$1/../redis-killed"
while [ ! -e "$1/../redis-back" ]; do sleep 0.05; done
sleep 1.1 # lgrun tries a lost store again at most once a second
rm "$1/f3"
SH
(
	while [ ! -e "$T/redis-killed" ]; do sleep 0.05; done
	wait "$REDIS_PID" 2>/dev/null
	sleep 0.2
	start_redis "$PORT"
	touch "$T/redis-back"
	echo "$REDIS_PID" >"$T/redis2.pid"
) &
HELPER=$!
timeout 30 "$LGRUN" -c "$T/store.ini" --state-dir "$A" -s midway -- bash "$T/agent.sh" "$T/c" "$REDIS_PID" 2>"$T/err"
RC=$?
wait $HELPER
REDIS_PID=$(cat "$T/redis2.pid" 2>/dev/null)
assert_rc 86 "$RC" "the third delete after the store came back"
[ -e "$T/c/f3" ] || fail "f3 should have been refused"
[ ! -e "$T/c/f2" ] || fail "f2 should have gone while the store was lost (counted locally)"
grep -q '"session":"midway".*"reason":"store_lost"' "$A/audit.jsonl" || fail "the loss was not audited"
grep -q '"session":"midway".*"reason":"store_back"' "$A/audit.jsonl" || fail "the return was not audited"
grep -q 'were added to the shared windows again' "$A/audit.jsonl" || fail "no reconciliation recorded"

# 5. on_store_error = fail: while the store does not answer, deletes are
#    refused (and not counted), audited once; when it answers they go on.
sed -i '/on_store_error/d' "$T/store.ini"
mkfiles "$T/d" 3
cat >"$T/agent2.sh" <<'SH'
rm "$1/f1" && echo f1-ok
kill -STOP "$2"
rm "$1/f2" 2>/dev/null || echo f2-refused
rm "$1/f3" 2>/dev/null || echo f3-refused
kill -CONT "$2"
sleep 1.1
rm "$1/f2" && echo f2-ok
SH
timeout 30 "$LGRUN" -c "$T/store.ini" --state-dir "$A" -s failclosed -- bash "$T/agent2.sh" "$T/d" "$REDIS_PID" >"$T/out" 2>"$T/err"
RC=$?
[ "$RC" = 0 ] || { cat "$T/out" "$T/err"; grep failclosed "$A/audit.jsonl" | cut -c1-400; fail "fail mode: exit $RC"; }
[ "$(tr '\n' ' ' <"$T/out")" = "f1-ok f2-refused f3-refused f2-ok " ] || fail "fail mode: $(tr '\n' ' ' <"$T/out")"
[ "$(grep -c '"session":"failclosed".*"reason":"store_unavailable"' "$A/audit.jsonl")" = 1 ] || fail "the refusals should be audited once"

# 6. A password comes from the environment variable store.password_env.
stop_redis
redis-server --port "$PORT" --bind 127.0.0.1 --save '' --appendonly no --requirepass s3cret \
	--daemonize no >"$T/redis.log" 2>&1 &
REDIS_PID=$!
for _ in $(seq 1 100); do redis-cli -p "$PORT" -a s3cret --no-auth-warning ping >/dev/null 2>&1 && break; sleep 0.05; done
printf 'password_env = LG_TEST_REDIS_PW\n' >>"$T/store.ini"
LG_TEST_REDIS_PW=s3cret run_lg -c "$T/store.ini" --state-dir "$A" -s withpw -- true 2>"$T/err"
[ "$RC" = 0 ] || { cat "$T/err" "$T/store.ini"; fail "with the password: exit $RC"; }
LG_TEST_REDIS_PW=wrong run_lg -c "$T/store.ini" --state-dir "$A" -s withpw -- true 2>"$T/err"
assert_rc 125 "$RC" "a wrong password"
grep -q 'refused the password in \$LG_TEST_REDIS_PW' "$T/err" || { cat "$T/err"; fail "no message for a wrong password"; }
! grep -q wrong "$T/err" || fail "the password must not be printed"

# 7. A bad URL is a config error with file and line.
printf '[store]\nbackend = redis\nurl = http://x\n' >"$T/bad.ini"
run_lg -c "$T/bad.ini" -- true 2>"$T/err"
assert_rc 125 "$RC" "bad url"
grep -q "bad.ini:3: store.url 'http://x' is not redis://HOST:PORT/DB or unix:/PATH" "$T/err" || { cat "$T/err"; fail "no file:line for a bad url"; }
printf '[store]\nbackend = redis\nurl = redis://:secret@h:1/0\n' >"$T/bad.ini"
run_lg -c "$T/bad.ini" -- true 2>"$T/err"
grep -q "must not carry a password" "$T/err" || fail "a password in the URL must be refused"
pass
