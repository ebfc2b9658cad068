#!/bin/bash
# SPDX-License-Identifier: MIT
# A path argument on a userfaultfd page: lgrun's read of it blocks until the
# page is served, or for good. One stuck read must stop neither the other
# processes' syscalls, nor the timeout, signals or lgctl stop (issue 12).
# Needs root: an unprivileged userfaultfd is user-mode only and would not
# block lgrun's read at all.
. "$(dirname "$0")/lib.sh"
need_root "a kernel-mode userfaultfd (vm.unprivileged_userfaultfd is for user-mode faults only)"
UF=$FIXBIN/uffd_path
[ -x "$UF" ] || fail "missing fixture $UF (make fixtures)"
cd "$T" || fail "cd"

# 1. A page served after 4 s: the call waits for it, as it would bare,
#    then runs; meanwhile another process's deletes are answered.
echo a >slow
echo b >other
run_lg -s uffd-late -- timeout 60 sh -c "
	$UF '$T/slow' 4000 >>'$T/order.log' &
	sleep 0.3
	rm -f '$T/other' && echo rm-done >>'$T/order.log'
	wait"
assert_rc 0 "$RC" "a late-served page"
[ ! -e slow ] || fail "the late-served unlink did not run"
[ ! -e other ] || fail "the other process's rm did not run"
order=$(tr '\n' ' ' <order.log)
[ "$order" = "rm-done unlink: ok " ] ||
	fail "the other process's rm waited for the stuck read (order: $order)"
assert_no_trip "a late-served page"
grep -q '"event":"warn".*not been readable' "$STATE/audit.jsonl" ||
	fail "no warning record for the stuck read"

# 2. Never served: the budget's timeout still ends the session.
echo a >never
timeout 60 "$LGRUN" --state-dir "$STATE" -s uffd-timeout -t 3s -- \
	"$UF" "$T/never" -1 >/dev/null 2>&1
RC=$?
[ "$RC" != 124 ] || fail "the timeout did not end a session stuck on a read"
assert_rc 86 "$RC" "the timeout with a stuck read"
grep -q '"session":"uffd-timeout".*"event":"trip".*"rule":"budget"' \
	"$STATE/audit.jsonl" || fail "no budget trip record"
[ -e never ] || fail "the never-readable unlink ran"
"$LGCTL" --state-dir "$STATE" reset uffd-timeout >/dev/null || fail "reset"

# 3. Never served: SIGTERM ends it.
"$LGRUN" --state-dir "$STATE" -s uffd-term -- "$UF" "$T/never" -1 \
	>/dev/null 2>&1 &
LP=$!
sleep 3 # past the read deadline: the stuck thread has been left
kill -TERM "$LP"
for _ in $(seq 1 100); do
	kill -0 "$LP" 2>/dev/null || break
	sleep 0.1
done
kill -0 "$LP" 2>/dev/null && { kill -KILL "$LP"; fail "SIGTERM did not end a session stuck on a read"; }
wait "$LP"
assert_rc 143 "$?" "SIGTERM with a stuck read"

# 4. Never served: lgctl stop ends it.
"$LGRUN" --state-dir "$STATE" -s uffd-stop -- "$UF" "$T/never" -1 \
	>/dev/null 2>&1 &
LP=$!
sleep 3
timeout 30 "$LGCTL" --state-dir "$STATE" stop uffd-stop >/dev/null 2>&1
RC=$?
[ "$RC" != 124 ] || fail "lgctl stop hung on a session stuck on a read"
for _ in $(seq 1 100); do
	kill -0 "$LP" 2>/dev/null || break
	sleep 0.1
done
kill -0 "$LP" 2>/dev/null && { kill -KILL "$LP"; fail "lgctl stop did not end a session stuck on a read"; }
wait "$LP"

# 5. A tree that strands reader after reader is stopped.
timeout 120 "$LGRUN" --state-dir "$STATE" -s uffd-many -- sh -c "
	for i in 1 2 3 4 5 6; do $UF '$T/never' -1 & done; wait" \
	>/dev/null 2>"$T/many.err"
RC=$?
[ "$RC" != 124 ] || fail "six stuck reads: the session never ended"
assert_rc 86 "$RC" "six stuck reads"
grep -q '"session":"uffd-many".*"event":"trip".*"rule":"supervisor".*"reason":"unreadable"' \
	"$STATE/audit.jsonl" || fail "no unreadable trip record"
[ -e never ] || fail "a never-readable unlink ran"
pass
