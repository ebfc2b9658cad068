#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# O_TRUNC opens of pre-existing files count at the open only when
# configured, and truncation to zero counts by default. A file rewritten
# after truncation is an overwrite; one left empty when the tree is over
# counts as destroyed then (issue 27: emptying is destroying).
source "$(dirname "$0")/lib.sh"

mkfiles "$T/a" 5
# Default: an overwrite (O_TRUNC, then new content) is kept, never counted.
run_lg -- bash -c 'for i in 1 2 3 4 5; do : > "$0/f$i"; echo new >"$0/f$i"; done' "$T/a"
assert_rc 0 "$RC" "O_TRUNC opens followed by new content"
assert_no_trip
# Two files left empty: counted at the end (the end record says so), under the limit.
mkfiles "$T/a2" 2
run_lg --session le2 -- bash -c 'for i in 1 2; do : > "$0/f$i"; done' "$T/a2"
assert_rc 0 "$RC" "two files left empty"
grep '"event":"session_end"' "$STATE/audit.jsonl" | grep '"session":"le2"' | grep -q '"left_empty":2' ||
	fail "the end record does not count 2 files left empty: $(tail -1 "$STATE/audit.jsonl")"
# Five left empty: the session trips at its end, truthfully, and blocks;
# one restore gives every file back.
mkfiles "$T/a5" 5
cp -a "$T/a5" "$T/a5.orig"
run_lg --session le5 -- bash -c 'for i in 1 2 3 4 5; do : > "$0/f$i"; done' "$T/a5" 2>"$T/le5.err"
assert_rc 86 "$RC" "five files emptied and left empty"
grep -q "emptied and left empty at the end" "$T/le5.err" &&
	grep -q "the command had already ended: nothing was refused or stopped" "$T/le5.err" ||
	fail "the trip message is not true to what happened: $(cat "$T/le5.err")"
! grep -q "the operation was refused" "$T/le5.err" || fail "says an operation was refused: $(cat "$T/le5.err")"
[ -e "$STATE/sessions/le5.killed" ] || fail "the session is not blocked"
"$LGCTL" --state-dir "$STATE" replay le5 >"$T/rp.out" 2>&1
grep -q "emptied and left empty at the end" "$T/rp.out" || fail "the replay differs: $(cat "$T/rp.out")"
"$LGCTL" --state-dir "$STATE" restore le5 >"$T/rs.out" 2>&1 || fail "restore: $(cat "$T/rs.out")"
for i in 1 2 3 4 5; do cmp -s "$T/a5.orig/f$i" "$T/a5/f$i" || fail "f$i is not restored: $(cat "$T/rs.out")"; done
# --observe: what would have tripped, nothing blocked
mkfiles "$T/a6" 4
run_lg --session le6 --observe -- bash -c 'for i in 1 2 3 4; do : > "$0/f$i"; done' "$T/a6" 2>/dev/null
assert_rc 0 "$RC" "observe mode"
[ ! -e "$STATE/sessions/le6.killed" ] || fail "observe mode blocked the session"

# Judged while the tree runs (issue 41): three emptied, then the tree
# goes on; ten seconds on they count, and the tree is stopped, truthfully.
mkfiles "$T/a7" 4
run_lg --session le7 -- bash -c 'for i in 1 2 3; do : > "$0/f$i"; done; sleep 40; touch "$0/late"' "$T/a7" 2>"$T/le7.err"
assert_rc 86 "$RC" "three emptied, the tree going on"
[ ! -e "$T/a7/late" ] || fail "stopped only when the tree ended"
grep -q "emptied and left so for 1[0-9]s with no writer" "$T/le7.err" &&
	grep -q "the files were emptied or cut before lgrun judged them" "$T/le7.err" ||
	fail "the trip message is not true to what happened: $(cat "$T/le7.err")"
"$LGCTL" --state-dir "$STATE" replay le7 >"$T/rp7.out" 2>&1
grep -q "emptied and left so for 1[0-9]s" "$T/rp7.out" || fail "the replay differs: $(cat "$T/rp7.out")"
# One decision counts once: emptied (counted ten seconds on), then removed:
# the removal destroys nothing more. With max_ops = 4, three emptied and
# their three removals would trip if counted twice.
mkfiles "$T/a8" 3
printf '[volumetric]\nmax_ops = 4\n' >"$T/four.ini"
run_lg --session le8 --config "$T/four.ini" -- bash -c 'for i in 1 2 3; do : > "$0/f$i"; done; sleep 12; rm "$0"/f*' "$T/a8"
assert_rc 0 "$RC" "emptied, counted, then removed: counted once"
grep '"event":"session_end"' "$STATE/audit.jsonl" | grep '"session":"le8"' | grep -q '"left_empty":3' ||
	fail "the three emptied files were not counted: $(tail -1 "$STATE/audit.jsonl")"

mkfiles "$T/b" 5
printf '[guard]\nsyscalls = unlink, unlinkat, rmdir, truncate, ftruncate, rename, open_trunc\n' >"$T/ot.ini"
run_lg --config "$T/ot.ini" -- bash -c 'for i in 1 2 3 4 5; do : > "$0/f$i"; done' "$T/b" 2>/dev/null
assert_rc 86 "$RC" "emptying 3 files with open_trunc configured"
[ -s "$T/b/f3" ] || fail "f3 was emptied"

# openat2(O_TRUNC) reads its flags from the struct open_how: the same.
mkfiles "$T/e" 5
cat >"$T/openat2.py" <<'PY'
import ctypes, os, struct, sys
libc = ctypes.CDLL(None, use_errno=True)
for p in sys.argv[1:]:
    how = struct.pack("QQQ", os.O_WRONLY | os.O_TRUNC, 0, 0)
    fd = libc.syscall(437, -100, p.encode(), how, len(how))
    if fd < 0:
        sys.exit("openat2 %s: %s" % (p, os.strerror(ctypes.get_errno())))
    os.close(fd)
PY
run_lg --config "$T/ot.ini" -- python3 "$T/openat2.py" "$T/e/f1" "$T/e/f2" "$T/e/f3" "$T/e/f4" 2>/dev/null
assert_rc 86 "$RC" "emptying 3 files by openat2 with open_trunc configured"
[ -s "$T/e/f3" ] || fail "f3 was emptied by openat2"
mkfiles "$T/g" 5
cat >"$T/openat2_ro.py" <<'PY'
import ctypes, os, struct, sys
libc = ctypes.CDLL(None, use_errno=True)
for p in sys.argv[1:]:
    how = struct.pack("QQQ", os.O_RDONLY, 0, 0)
    fd = libc.syscall(437, -100, p.encode(), how, len(how))
    if fd < 0:
        sys.exit("openat2 %s: %s" % (p, os.strerror(ctypes.get_errno())))
    os.close(fd)
PY
run_lg --config "$T/ot.ini" -- python3 "$T/openat2_ro.py" "$T/g/f1" "$T/g/f2" "$T/g/f3" "$T/g/f4"
assert_rc 0 "$RC" "openat2 for reading"
# ... and is not taken for an emptying: nothing of it is kept.
grep '"event":"session_end"' "$STATE/audit.jsonl" | tail -1 | grep -q '"kept_files":0,' ||
	fail "openat2 for reading was kept as an emptying: $(grep '"event":"session_end"' "$STATE/audit.jsonl" | tail -1 | grep -o '"kept_[a-z]*":[0-9]*' | tr '\n' ' ')"

# Rewriting after truncation is an overwrite (editors, config writers).
mkfiles "$T/c" 6
run_lg --config "$T/ot.ini" -- bash -c 'for i in 1 2 3 4 5 6; do echo new > "$0/f$i"; done' "$T/c"
assert_rc 0 "$RC" "rewriting 6 files"

mkfiles "$T/d" 5
run_lg -- bash -c 'for i in 1 2 3 4 5; do truncate -s 0 "$0/f$i"; done' "$T/d" 2>/dev/null
assert_rc 86 "$RC" "truncate -s 0 of pre-existing files"
run_lg -- bash -c 'for i in 1 2 3 4 5; do truncate -s 2 "$0/f$i"; done' "$T/a"
assert_rc 0 "$RC" "shrinking files is not destruction"
pass
