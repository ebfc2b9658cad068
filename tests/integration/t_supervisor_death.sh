#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# If lgrun itself is killed (an agent told to "kill stuck processes" may do
# it, or the OOM killer), dead means dead: its watchdog kills the whole tree,
# a daemonized grandchild included, and writes the session's end as
# supervisor_lost. If the watchdog is gone too, what is left fails closed
# (ENOSYS) and the next lgctl status notices: it kills the rest and writes
# the end itself.
source "$(dirname "$0")/lib.sh"
need_cmd python3
need_root "the tree is killed through its cgroup (cgroup.kill)"

cat >"$T/left.py" <<'PY'
import os, sys, time
# detach, like a daemon: survives its parent, leaves its process group
if os.fork(): sys.exit(0)
os.setsid()
open(sys.argv[3], "w").write(str(os.getpid()))
# opened while lgrun lives: with keep_writes every write-open (an append
# too, since issue 39) fails closed (ENOSYS) once it is gone
out = open(sys.argv[2], "a")
time.sleep(1.0)
try:
    os.unlink(sys.argv[1]); r = "deleted"
except OSError as e:
    r = "refused errno=%d" % e.errno
out.write(r)
out.flush()
time.sleep(30)
PY
# start SESSION: the tree is bash (pid in $T/SESSION.main) and a daemon
start() {
	mkfiles "$T/$1" 3
	"$LGRUN" --state-dir "$STATE" --session "$1" -- bash -c \
		'echo $$ >"$4.main"; python3 "$0" "$1" "$2" "$3"; sleep 30' \
		"$T/left.py" "$T/$1/f1" "$T/$1.result" "$T/$1.daemon" "$T/$1" \
		2>"$T/$1.err" &
	LG=$!
	for _ in $(seq 100); do [ -s "$T/$1.daemon" ] && [ -s "$T/$1.main" ] && break; sleep 0.05; done
	[ -s "$T/$1.daemon" ] || fail "$1: the daemon did not start"
	WD=$(pgrep -P $LG -x lgrun-watchdog)
	[ -n "$WD" ] || fail "$1: no watchdog process beside the tree: $(ps -o pid,comm --ppid $LG)"
}
alive() { [ -d /proc/$1 ] && [ "$(awk '{print $3}' /proc/$1/stat 2>/dev/null)" != Z ]; }
field() { python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).read().splitlines()[-1]).get(sys.argv[2], ""))' "$@"; }

# 1. SIGKILL to lgrun: the watchdog kills the tree at once and says so
start lost1
main=$(cat "$T/lost1.main") daemon=$(cat "$T/lost1.daemon")
t0=$EPOCHREALTIME
kill -9 $LG
gone=
for _ in $(seq 1000); do
	if ! alive $main && ! alive $daemon; then gone=$EPOCHREALTIME; break; fi
	sleep 0.001
done
wait $LG 2>/dev/null
[ -n "$gone" ] || fail "the tree outlived lgrun (main alive: $(alive $main && echo yes), daemon alive: $(alive $daemon && echo yes))"
echo "the tree was dead $(awk -v a="$t0" -v b="$gone" 'BEGIN { printf "%.0f", (b - a) * 1000 }') ms after lgrun's SIGKILL"
[ -e "$T/lost1/f1" ] || fail "a leftover process deleted data after lgrun died"
[ ! -s "$T/lost1.result" ] || fail "the daemon ran on after lgrun died: $(cat "$T/lost1.result")"
for _ in $(seq 100); do grep -q supervisor_lost "$STATE/sessions/lost1.json" && break; sleep 0.02; done
[ "$(field "$STATE/sessions/lost1.json" state)" = supervisor_lost ] ||
	fail "the session's state is not supervisor_lost: $(tail -1 "$STATE/sessions/lost1.json")"
[ "$(field "$STATE/sessions/lost1.json" noticed_by)" = "lgrun's watchdog" ] || fail "noticed by whom?"
grep '"session":"lost1"' "$STATE/audit.jsonl" | grep '"event":"session_end"' >"$T/end1"
[ "$(wc -l <"$T/end1")" = 1 ] || fail "expected one end record: $(cat "$T/end1")"
grep -q '"end":"supervisor_lost"' "$T/end1" || fail "end record: $(cat "$T/end1")"
grep -qE '"killed_processes":[12]' "$T/end1" || fail "the end record does not count the killed tree: $(cat "$T/end1")"
grep -q "lgrun: session lost1: lgrun (pid $LG) died without ending the session" "$T/lost1.err" ||
	fail "no word on stderr: $(cat "$T/lost1.err")"
alive $WD && fail "the watchdog stayed"
"$LGCTL" --state-dir "$STATE" status lost1 >"$T/st1"
grep -qE "^lost1 +supervisor_lost +bash .*watchdog noticed" "$T/st1" || fail "lgctl status: $(cat "$T/st1")"
# lgctl status read it; it did not write a second end
[ "$(grep '"session":"lost1"' "$STATE/audit.jsonl" | grep -c session_end)" = 1 ] || fail "a second end record"

# 1b. lgrun killed right after it kept what the tree removed, before it
#     wrote those entries in the quarantine's index (it writes them in
#     batches, within 250 ms): its watchdog writes them, and lgctl restore
#     puts every file back.
mkfiles "$T/lost3" 2
"$LGRUN" --state-dir "$STATE" --session lost3 -- bash -c \
	'rm "$0/f1" "$0/f2" && kill -9 $LGRUN_SUPERVISOR_PID; sleep 30' "$T/lost3" 2>"$T/lost3.err"
for _ in $(seq 100); do grep -q supervisor_lost "$STATE/sessions/lost3.json" 2>/dev/null && break; sleep 0.02; done
[ "$(grep -c '"kind":"file"' "$STATE/quarantine/lost3.jsonl" 2>/dev/null)" = 2 ] ||
	fail "the index of a session whose lgrun died lacks what it kept: $(cat "$STATE/quarantine/lost3.jsonl" 2>&1 | cut -c1-200)"
# the recording's lines wait the same 250 ms: the watchdog writes its head
# and the two removals it held, and lgctl replay reads them
rec="$STATE/sessions/lost3.events.jsonl"
head -1 "$rec" | grep -q '"record":1,"part":0,"session":"lost3"' ||
	fail "the recording of a session whose lgrun died lacks its head: $(head -c 300 "$rec" 2>&1)"
[ "$(grep -c '"k":"destructive".*"target":"[^"]*/lost3/f[12]"' "$rec")" = 2 ] ||
	fail "the recording of a session whose lgrun died lacks the removals it held: $(cut -c1-200 "$rec")"
"$LGCTL" --state-dir "$STATE" replay lost3 >"$T/replay3" 2>&1 || fail "lgctl replay lost3: $(cat "$T/replay3")"
# the same lines twice (lgrun died between writing them and its record of
# that, and the watchdog wrote them again): each entry is read once
cp "$STATE/quarantine/lost3.jsonl" "$T/idx3"
cat "$T/idx3" >>"$STATE/quarantine/lost3.jsonl"
"$LGCTL" --state-dir "$STATE" quarantine list >"$T/list3" 2>&1
[ "$(awk '$1 == "lost3" { print $2 }' "$T/list3")" = 2 ] || fail "an entry written twice is counted twice: $(cat "$T/list3")"
"$LGCTL" --state-dir "$STATE" restore lost3 >"$T/restore3" 2>&1 || fail "lgctl restore lost3: $(cat "$T/restore3")"
[ "$(cat "$T/lost3/f1" "$T/lost3/f2" 2>/dev/null | wc -l)" = 2 ] ||
	fail "lgctl restore did not put both files back: $(cat "$T/restore3")"

# 2. The watchdog killed first, then lgrun: what is left fails closed, and
#    the next lgctl status kills it and writes the end
start lost2
daemon=$(cat "$T/lost2.daemon")
kill -9 $WD
kill -9 $LG
wait $LG 2>/dev/null
for _ in $(seq 60); do [ -s "$T/lost2.result" ] && break; sleep 0.05; done
[ -e "$T/lost2/f1" ] || fail "a leftover process deleted data after lgrun died"
grep -q "refused errno=38" "$T/lost2.result" || fail "expected ENOSYS, got: $(cat "$T/lost2.result" 2>/dev/null)"
alive $daemon || fail "fixture: the daemon should still run (nobody noticed yet)"
"$LGCTL" --state-dir "$STATE" top --once >"$T/top2"
grep -qE "^lost2 +bash +lost " "$T/top2" || fail "lgctl top does not show the session lost: $(cat "$T/top2")"
"$LGCTL" --state-dir "$STATE" status >"$T/st2"
grep -qE "^lost2 +supervisor_lost .*lgctl status noticed and killed the 1 process" "$T/st2" || fail "lgctl status: $(cat "$T/st2")"
for _ in $(seq 100); do alive $daemon || break; sleep 0.01; done
alive $daemon && fail "lgctl status did not kill what was left"
grep '"session":"lost2"' "$STATE/audit.jsonl" | grep -q '"end":"supervisor_lost".*"noticed_by":"lgctl status"' ||
	fail "no end record by lgctl status"

# 3. An ordinary end, and a Ctrl-C (SIGINT to the whole process group):
#    the watchdog leaves with lgrun and writes nothing
"$LGRUN" --state-dir "$STATE" --session ok1 -- true || fail "lgrun -- true"
[ "$(field "$STATE/sessions/ok1.json" state)" = exited ] || fail "ok1: $(tail -1 "$STATE/sessions/ok1.json")"
[ ! -e "$STATE/sessions/ok1.lost" ] || fail "a normal end was taken for a lost supervisor"
# a process group of its own, as a terminal's job is; Ctrl-C goes to all of it
python3 -c 'import os, signal, subprocess, sys, time
os.setpgrp()
p = subprocess.Popen(sys.argv[1:], stderr=subprocess.DEVNULL)
time.sleep(0.5)
signal.signal(signal.SIGINT, signal.SIG_IGN)
os.killpg(0, signal.SIGINT)
sys.exit(p.wait())' "$LGRUN" --state-dir "$STATE" --session int1 -- sleep 30
[ "$(field "$STATE/sessions/int1.json" state)" = cancelled ] || fail "int1: $(tail -1 "$STATE/sessions/int1.json")"
grep '"session":"int1"' "$STATE/audit.jsonl" | grep -q '"end":"cancelled"' || fail "int1: no cancelled end"
grep -q '"session":"int1".*supervisor_lost' "$STATE/audit.jsonl" && fail "int1: a Ctrl-C was taken for a lost supervisor"
# gone (a killed lgrun's watchdog is a zombie of init's for a moment); only
# this test's: its command line is its lgrun's, with this state dir (other
# lgruns may run on the machine meanwhile)
left=$(ps -eo pid,stat,comm | awk '$3 == "lgrun-watchdog" && $2 !~ /Z/ { print $1 }' |
	while read -r p; do
		tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | grep -qF -- "--state-dir $STATE " && echo "$p"
	done)
[ -z "$left" ] || fail "a watchdog outlived its session: $left"
pass
