#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Read, check, use (issue 31 item 3): after reading a task's path by its pid
# number, lgrun proves that task is still the one that asked before acting.
# The validity ioctl (SECCOMP_IOCTL_NOTIF_ID_VALID) proves it; so does the
# directory taken through a pidfd of that task that an earlier notification
# of it vouched for, and then the ioctl is skipped. Here: rm -r's removals
# after its first skip it, and every removal is still kept and recorded;
# removals by absolute path from new processes each make the check.
source "$(dirname "$0")/lib.sh"
need_cmd strace

ioctls() { # strace file, kind: how many
	grep -c "SECCOMP_IOCTL_NOTIF_$2" "$1" || true
}

# 1. rm -r of 30 files, in one process, by directory fd: one check.
mkfiles "$T/d" 30
strace -f -e trace=ioctl -o "$T/s1" "$LGRUN" --state-dir "$STATE" --bpf=off --observe \
	--session one -- rm -r "$T/d" 2>"$T/err" || fail "lgrun under strace: $(cat "$T/err")"
[ ! -e "$T/d" ] || fail "rm -r did not remove the directory"
sends=$(ioctls "$T/s1" SEND) valid=$(ioctls "$T/s1" ID_VALID)
[ "$sends" -ge 31 ] || fail "31 answers expected (30 files, 1 directory), saw $sends"
[ "$valid" -le 2 ] || fail "the validity check made $valid times for $sends answers: a vouched pidfd should spare it"
"$LGCTL" --state-dir "$STATE" quarantine list >"$T/list" || fail "quarantine list"
grep -Eq "^one +30 +1 " "$T/list" || fail "not every removal was kept: $(cat "$T/list")"
n=$(grep -c '"k":"destructive"' "$STATE/sessions/one.events.jsonl" || true)
[ "$n" -ge 31 ] || fail "the recording has $n destructive events, 31 expected"

# 2. One rm per file, by absolute path: each is a new task, read by its pid
# number with no pidfd of it vouched for: each answer is checked first.
mkfiles "$T/e" 10
strace -f -e trace=ioctl -o "$T/s2" "$LGRUN" --state-dir "$STATE" --bpf=off --observe \
	--session two -- bash -c 'for f in "$1"/*; do rm "$f"; done' sh "$T/e" 2>"$T/err" ||
	fail "lgrun under strace: $(cat "$T/err")"
sends=$(ioctls "$T/s2" SEND) valid=$(ioctls "$T/s2" ID_VALID)
[ "$sends" -ge 10 ] || fail "10 answers expected, saw $sends"
[ "$valid" -ge 10 ] || fail "only $valid validity checks for 10 removals by new tasks by path"
"$LGCTL" --state-dir "$STATE" quarantine list >"$T/list" || fail "quarantine list"
grep -Eq "^two +10 +0 " "$T/list" || fail "not every removal was kept: $(cat "$T/list")"
pass
