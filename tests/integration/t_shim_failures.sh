#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The failures detector (seed 004) gets its results from the shim: the 4th
# consecutive failed write on one path is reported (default action warn),
# a success in between lets the path recover.
source "$(dirname "$0")/lib.sh"
need_cmd python3

mkdir -p "$T/ro"
chmod 555 "$T/ro"
cat >"$T/writer.py" <<'PY'
import os, sys, time
path = sys.argv[1]
for i in range(int(sys.argv[2])):
    time.sleep(0.05)
    try:
        open(path, "w").write("x")
        print("ok", flush=True)
    except OSError as e:
        print("failed", e.errno, flush=True)
PY
# root ignores permissions: make the write fail another way, a missing directory
run_lg --session fail4 -- python3 "$T/writer.py" "$T/missing/dir/file" 5 >"$T/out" 2>"$T/err"
assert_rc 0 "$RC" "warn does not stop the program"
grep -q '"event":"warn".*"reason":"write_failures"' "$STATE/audit.jsonl" ||
	fail "no write_failures warning after 5 failed writes"
grep -q 'write_failures, 4 failed' "$STATE/audit.jsonl" || fail "summary: $(grep -o '"summary":"[^"]*"' "$STATE/audit.jsonl")"

printf '[failures]\naction = kill\n' >"$T/kill.ini"
run_lg --session fail-kill --config "$T/kill.ini" -- python3 "$T/writer.py" "$T/missing/dir/file" 10 >"$T/out" 2>&1
assert_rc 86 "$RC" "failures with action kill"
# Results are reported after the fact, without blocking: the kill lands a
# moment after the 4th failure, well before the 10th.
[ "$(grep -c failed "$T/out")" -le 6 ] || fail "the writer went on long after the 4th failure"

# Three failures, a success, then failures again: the count went down first.
run_lg --session recover -- python3 - "$T" <<'PY'
import os, sys
t = sys.argv[1]
def w(p):
    try: open(p, "w").write("x")
    except OSError: pass
for _ in range(3): w(t + "/nodir/f")
os.mkdir(t + "/nodir"); w(t + "/nodir/f"); os.remove(t + "/nodir/f"); os.rmdir(t + "/nodir")
w(t + "/nodir/f"); w(t + "/nodir/f")
PY
grep -q '"session":"recover".*write_failures' "$STATE/audit.jsonl" && fail "a success should let the path recover"
pass
