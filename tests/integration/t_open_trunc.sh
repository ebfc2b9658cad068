#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# O_TRUNC opens of pre-existing files count only when configured, and
# truncation to zero counts by default. A file rewritten after truncation is
# an overwrite.
source "$(dirname "$0")/lib.sh"

mkfiles "$T/a" 5
# Default: plain shell redirections (O_TRUNC) are not even seen.
run_lg -- bash -c 'for i in 1 2 3 4 5; do : > "$0/f$i"; done' "$T/a"
assert_rc 0 "$RC" "O_TRUNC opens with the default syscall list"

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
