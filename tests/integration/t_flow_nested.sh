#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Nested sessions and flows (seed 002) with real nested lgruns: an lgrun
# inside a session registers as a child session of the flow; the chain is
# collapsed; each rule refuses the call that breaks it (the nested lgrun
# exits 86 with the reason) and kills the flow by default.
source "$(dirname "$0")/lib.sh"
need_root "seccomp user notification and a cgroup for the session"

# nest.sh NAME...: runs the rest of the names, each under `lgrun --agent
# NAME` inside the one before; each level records its pid and does a
# little work (a file write) first.
cat >"$T/nest.sh" <<'SH'
#!/bin/bash
echo $$ >>"$NEST_PIDS"
echo work >"$NEST_DIR/work.$$"
[ $# -eq 0 ] && { touch "$NEST_DIR/innermost-ran"; sleep "${NEST_SLEEP:-0}"; exit 0; }
name=$1; shift
"$LGRUN" --agent "$name" -- bash "$0" "$@"
rc=$?
echo "$rc" >>"$NEST_DIR/rcs"
exit $rc
SH
export NEST_PIDS=$T/pids NEST_DIR=$T LGRUN

reset_run() { rm -f "$T/pids" "$T/innermost-ran" "$T/rcs" "$T"/work.* "$STATE/audit.jsonl"; }
survivors() { # pids of the run still alive
	local p n=0
	for p in $(cat "$T/pids" 2>/dev/null); do
		kill -0 "$p" 2>/dev/null && n=$((n + 1))
	done
	echo $n
}

# 1. Six deep is refused: a -> b -> c -> d -> e -> f (depth 6 > 5).
reset_run
NEST_SLEEP=30 run_lg --agent a -- bash "$T/nest.sh" b c d e f 2>"$T/err"
assert_rc 86 "$RC" "six deep"
grep -q "effective call depth 6 exceeds limit (max 5)" "$T/err" || { cat "$T/err"; fail "no depth message on stderr"; }
grep -q "'f' was not started" "$T/err" || fail "the nested lgrun did not say it refused to start"
[ ! -e "$T/innermost-ran" ] || fail "the sixth level ran"
[ "$(wc -l <"$T/pids")" = 5 ] || fail "expected 5 levels to have run, got $(wc -l <"$T/pids")"
[ "$(survivors)" = 0 ] || fail "$(survivors) processes of the flow survived"
grep -q '"reason":"flow_depth"' "$STATE/audit.jsonl" || fail "no flow_depth trip record"
grep -q 'chain a -> b -> c -> d -> e -> f)' "$STATE/audit.jsonl" || fail "the trip does not show the chain"

# 2. Five deep is fine, and each level's exit is a return.
reset_run
run_lg --agent a -- bash "$T/nest.sh" b c d e 2>"$T/err"
assert_rc 0 "$RC" "five deep"
[ -e "$T/innermost-ran" ] || fail "the innermost level did not run"
grep '"event":"session_end"' "$STATE/audit.jsonl" | grep -q '"agent_calls":4,"agent_calls_rejected":0,"longest_chain":5' ||
	fail "session_end lacks the flow counters"

# 3. Collapsing chains: 1 -> 2 -> 1 -> 2 -> 1 and 1 -> 2 -> 1 -> 3 -> 1
#    nest eight and four levels deep but stay at depth 2.
reset_run
run_lg --agent a -- bash "$T/nest.sh" b a b a b a b a 2>"$T/err"
assert_rc 0 "$RC" "a b a b a b a b a"
[ -e "$T/innermost-ran" ] || fail "oscillation: the innermost level did not run"
reset_run
run_lg --agent a -- bash "$T/nest.sh" b a c a 2>"$T/err"
assert_rc 0 "$RC" "a b a c a"
assert_no_trip "collapsing chains"

# 4. A self-call is refused.
reset_run
run_lg --agent a -- bash "$T/nest.sh" a 2>"$T/err"
assert_rc 86 "$RC" "self-call"
grep -q "self-calls not allowed" "$T/err" || fail "no self-call message"

# 5. With action = deny only the call is refused: the caller sees 86 and
#    goes on.
cat >"$T/deny.ini" <<'INI'
[flow]
action = deny
INI
reset_run
run_lg -c "$T/deny.ini" --agent a -- bash "$T/nest.sh" b c d e f 2>"$T/err"
assert_rc 86 "$RC" "deny: the refusal travels up as each level's exit status"
[ "$(head -1 "$T/rcs")" = 86 ] || fail "deny: the nested lgrun did not exit 86"
[ "$(wc -l <"$T/pids")" = 5 ] || fail "deny: the levels above should all have run"
grep -q '"event":"deny"' "$STATE/audit.jsonl" || fail "deny: no deny record"
[ "$(audit_count trip)" = 0 ] || fail "deny: the flow was killed"

# 6. Eleven sessions in one flow: a calls b1 ... b10 in turn (each returns);
#    the tenth would make 11.
reset_run
cat >"$T/fan.sh" <<'SH'
#!/bin/bash
for i in $(seq 1 "$1"); do
	echo w >"$NEST_DIR/fan.$i"
	"$LGRUN" --agent "b$i" -- true || { echo "b$i refused" >&2; exit 3; }
done
SH
cat >"$T/rate.ini" <<'INI'
[flow]
no_work_calls = 0
INI
run_lg -c "$T/rate.ini" --agent a -- bash "$T/fan.sh" 9 2>"$T/err"
assert_rc 0 "$RC" "ten sessions"
run_lg -c "$T/rate.ini" --agent a -- bash "$T/fan.sh" 10 2>"$T/err"
assert_rc 86 "$RC" "eleven sessions"
grep -q "flow involves too many sessions (11, max 10)" "$T/err" || fail "no sessions message"

# 7. 21 calls within a minute.
reset_run
cat >"$T/loop.sh" <<'SH'
#!/bin/bash
for i in $(seq 1 "$1"); do
	"$LGRUN" --agent "w$((i % 2))" -- true || exit 3
done
SH
run_lg -c "$T/rate.ini" --agent a -- bash "$T/loop.sh" 20 2>"$T/err"
assert_rc 0 "$RC" "20 calls in a minute"
run_lg -c "$T/rate.ini" --agent a -- bash "$T/loop.sh" 21 2>"$T/err"
assert_rc 86 "$RC" "21 calls in a minute"
grep -q "call rate limit exceeded (max 20/minute)" "$T/err" || fail "no rate message"

# 8. 101 calls in a flow (the rate limit off).
cat >"$T/total.ini" <<'INI'
[flow]
max_rate = 0
no_work_calls = 0
INI
run_lg -c "$T/total.ini" --agent a -- bash "$T/loop.sh" 101 2>"$T/err"
assert_rc 86 "$RC" "101 calls"
grep -q "total call limit exceeded (max 100 per flow)" "$T/err" || fail "no total message"

# 9. The flow's age: a delegation still open past max_duration refuses the
#    next call; back at the first session, a new call starts a fresh flow.
cat >"$T/dur.ini" <<'INI'
[flow]
max_duration = 1s
INI
reset_run
run_lg -c "$T/dur.ini" --agent a -- bash -c '"$LGRUN" --agent b -- bash -c "sleep 1.3; \"\$LGRUN\" --agent c -- true"' 2>"$T/err"
assert_rc 86 "$RC" "flow timeout"
grep -q "flow timeout (max 1 s)" "$T/err" || { cat "$T/err"; fail "no timeout message"; }
reset_run
run_lg -c "$T/dur.ini" --agent a -- bash -c 'echo x >"$NEST_DIR/w1"; "$LGRUN" --agent b -- true && sleep 1.3 && "$LGRUN" --agent b -- true' 2>"$T/err"
assert_rc 0 "$RC" "resume after a break"

# 10. Rapid calls that do nothing: a warning, not a kill.
reset_run
run_lg --agent a -- bash "$T/loop.sh" 6 2>"$T/err"
assert_rc 0 "$RC" "rapid calls with no work"
grep -q "rapid calls with no work" "$T/err" || fail "no no-work warning"
grep -q '"reason":"flow_no_work"' "$STATE/audit.jsonl" || fail "no flow_no_work record"

# 11. A cleared environment is not a way out: the nested lgrun still finds
#     its supervisor. Under a shell the flow id is inherited from it; with
#     nothing to inherit it from the registration is refused.
reset_run
run_lg --agent a -- sh -c 'env -i "$LGRUN" --agent b -- /bin/sh -c "echo in-b"; true' >"$T/out" 2>"$T/err"
assert_rc 0 "$RC" "cleared env under a shell"
grep -q in-b "$T/out" || fail "b did not run"
reset_run
run_lg --agent a -- env -i "$LGRUN" --agent b -- /bin/true 2>"$T/err"
assert_rc 86 "$RC" "cleared env, nothing to inherit from"
grep -q "correlation ID required" "$T/err" || fail "no correlation id message"
grep -q "keep LGRUN_FLOW" "$T/err" || fail "no hint about LGRUN_FLOW"

# 12. Metrics.
grep -q 'lgrun_flow_rejected_calls_total{reason="flow_depth"}' "$STATE/lgrun.prom" || fail "no flow metrics"
grep -q '^lgrun_flow_calls_total' "$STATE/lgrun.prom" || fail "no flow call counter"
pass
