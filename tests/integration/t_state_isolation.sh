#!/bin/bash
# SPDX-License-Identifier: MIT
# A careless root agent against lgrun's record and block (issue 12): in the
# tree's own mount namespace the state dir is read-only (no truncation,
# append, chattr or link there), and in its cgroup namespace no process can
# move out of the session's cgroup. With [guard] isolate = false, a process
# that left the cgroup is still found and killed at a trip, and counted. A
# killed marker that cannot be written is said, with exit status 88.
. "$(dirname "$0")/lib.sh"
need_root "mount and cgroup namespaces, chattr"
need_cmd chattr
cd "$T" || fail "cd"
CGMNT=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
[ -n "$CGMNT" ] || skip "no cgroup2 mount"

# An earlier session's record, to be attacked.
mkfiles data 4
run_lg -s first -- rm data/f1 data/f2 data/f3 data/f4
assert_rc 86 "$RC" "the first trip"
before=$(wc -l <"$STATE/audit.jsonl")

# 1. The state dir is read-only for the tree, root or not.
mkfiles data 4
run_lg -s attack -- sh -c "
	(true >'$STATE/audit.jsonl') 2>/dev/null && echo truncated
	(printf '{\"half\":' >>'$STATE/audit.jsonl') 2>/dev/null && echo appended
	chattr +i '$STATE' 2>/dev/null && echo immutable
	ln -s /dev/null '$STATE/sessions/x' 2>/dev/null && echo linked
	ln '$STATE/audit.jsonl' '$T/hard' 2>/dev/null && truncate -s 0 '$T/hard' 2>/dev/null && echo via-link
	rm data/f1 data/f2 data/f3 data/f4" >"$T/attack.out" 2>&1
assert_rc 86 "$RC" "the attacking session's trip"
grep -q "truncated\|appended\|immutable\|linked\|via-link" "$T/attack.out" &&
	fail "the tree changed lgrun's state: $(cat "$T/attack.out")"
lsattr -d "$STATE" 2>/dev/null | grep -q -- '-i-' && fail "the state dir was made immutable"
[ -e "$STATE/sessions/first.killed" ] || fail "the first session's marker is gone"
after=$(wc -l <"$STATE/audit.jsonl")
[ "$after" -gt "$before" ] || fail "no new audit records"
python3 -c "
import json, sys
for n, line in enumerate(open(sys.argv[1]), 1):
    json.loads(line)
" "$STATE/audit.jsonl" || fail "audit.jsonl has a line that is not JSON"

# 2. A root process cannot leave the session's cgroup.
mkfiles data 4
run_lg -v -s stay -- sh -c "
	sh -c 'echo \$\$ >$CGMNT/cgroup.procs 2>/dev/null; exec sleep 60.7371' &
	sleep 0.5
	rm data/f1 data/f2 data/f3 data/f4" 2>"$T/stay.err"
assert_rc 86 "$RC" "the trip with a process that tried to leave"
if p=$(pgrep -f "^sleep 60.7371$"); then
	cat "$T/stay.err"
	cat /proc/$p/cgroup /proc/$p/status | grep -i "^0::\|^state\|^ppid"
	pkill -f "^sleep 60.7371$"
	fail "a process that tried to leave the cgroup survived"
fi
grep '"session":"stay".*"event":"trip"' "$STATE/audit.jsonl" | grep -q '"survivors":0' ||
	fail "survivors is not 0"

# 3. Without isolation a root process can leave; the trip still kills it,
#    by pid, and says so (needs the eBPF observer to have seen it born).
mkfiles data 4
printf '[guard]\nisolate = false\n' >noiso.ini
run_lg -c "$T/noiso.ini" --bpf on -s leave -- sh -c "
	sleep 0.3
	sh -c 'echo \$\$ >$CGMNT/cgroup.procs && exec sleep 61.7371' &
	sleep 0.5
	rm data/f1 data/f2 data/f3 data/f4" 2>"$T/leave.err"
if grep -q "cannot load\|eBPF" "$T/leave.err" && [ "$RC" = 125 ]; then
	echo "SKIP (part): the eBPF observer does not load here"
else
	assert_rc 86 "$RC" "the trip with a process that left"
	pgrep -f "^sleep 61.7371$" >/dev/null && { pkill -f "^sleep 61.7371$"; fail "a process that left the cgroup survived the trip"; }
	grep '"session":"leave".*"event":"trip"' "$STATE/audit.jsonl" | grep -q '"escaped":1' ||
		fail "the trip record does not count the process that left"
	grep -q "left its cgroup" "$T/leave.err" || fail "no word of the process that left"
fi

# 3b. A root process that enters lgrun's own namespaces in its first
#     moments (before the eBPF observer could see it born), leaves the
#     cgroup and detaches: lgrun is its subreaper, so the trip kills it
#     too, and counts it (issue 29, item 8: it survived, survivors:0).
need_cmd nsenter
mkfiles data 4
run_lg --bpf off -s early -- sh -c "
	nsenter -t \$PPID -m -C sh -c 'echo \$\$ >$CGMNT/cgroup.procs && exec setsid sleep 62.7371' &
	sleep 0.5
	rm data/f1 data/f2 data/f3 data/f4" 2>"$T/early.err"
assert_rc 86 "$RC" "the trip with a process that left early"
if pgrep -f "^sleep 62.7371$" >/dev/null; then
	pkill -f "^sleep 62.7371$"
	fail "a process that left the cgroup before the observer loaded survived the trip: $(grep '"session":"early".*"event":"trip"' "$STATE/audit.jsonl" | grep -o '"survivors":[0-9]*')"
fi
# Writing cgroup.procs is a request to the kernel, not data to keep.
grep '"session":"early"' "$STATE/audit.jsonl" | grep -q '"reason":"not_kept"\|"not_kept":[1-9]\|"kept_writes":[1-9]' &&
	fail "a write to a kernel file was reported as data not kept: $(grep '"session":"early".*not_kept' "$STATE/audit.jsonl" | cut -c1-300)"
grep '"session":"early".*"event":"trip"' "$STATE/audit.jsonl" | grep -q '"escaped":1' ||
	fail "the trip record does not count the process that left early: $(grep '"session":"early".*"event":"trip"' "$STATE/audit.jsonl" | cut -c1-300)"

# 4. A killed marker that cannot be written: said, and exit status 88.
mkfiles data 4
"$LGRUN" --state-dir "$STATE" -s nomark -- sh -c "sleep 1; rm data/f1 data/f2 data/f3 data/f4" 2>"$T/nomark.err" &
LP=$!
sleep 0.4
chattr +i "$STATE/sessions" || skip "chattr +i does not work on $STATE"
wait "$LP"
RC=$?
chattr -i "$STATE/sessions"
assert_rc 88 "$RC" "a trip whose marker cannot be written"
grep -q "could NOT be blocked" "$T/nomark.err" || fail "no word that the block failed"
grep -q "stays blocked" "$T/nomark.err" && fail "claimed the session stays blocked"
[ -e "$STATE/sessions/nomark.killed" ] && fail "a marker exists after all"
pass
