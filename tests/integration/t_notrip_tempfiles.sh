#!/bin/bash
# SPDX-License-Identifier: MIT
# Heavy temp-file churn must not trip the guard with the default config:
# 1000 temp files created and deleted (python tempfile in its usual forms,
# and a shell mktemp/rm loop), and a lock file taken and released 100 times
# at the same path. Everything removed was born in the session, so neither
# the volume nor the same-path detector may count it, however fast it goes.
source "$(dirname "$0")/lib.sh"
need_cmd python3
need_cmd mktemp
PY=$(python3 -c 'import sys; print(sys.executable)') || skip "python3 does not run"

export TMPDIR=$T/tmp
mkdir -p "$TMPDIR" "$T/work" || fail "fixture: mkdir"
# A pre-existing neighbour of the lock file: it must survive untouched.
echo "keep" >"$T/work/data.txt"

# The python part: 800 temp files in four styles, then the lock loop.
cat >"$T/churn.py" <<'EOF'
import os, sys, tempfile
work = sys.argv[1]
n = 0
for i in range(200):                          # delete-on-close files
    with tempfile.NamedTemporaryFile(prefix="ntf") as f:
        f.write(b"x" * 512); f.flush(); n += 1
for i in range(200):                          # mkstemp + unlink
    fd, p = tempfile.mkstemp(suffix=".tmp"); os.write(fd, b"y"); os.close(fd)
    os.unlink(p); n += 1
for i in range(100):                          # temp dirs with 2 files each
    with tempfile.TemporaryDirectory() as d:
        for k in range(2):
            with open(os.path.join(d, f"part{k}"), "w") as f: f.write("z")
            n += 1
for i in range(200):                          # write-then-rename "atomic save"
    fd, p = tempfile.mkstemp(dir=work, prefix=".out.")
    os.write(fd, b"v%d" % i); os.close(fd)
    os.replace(p, os.path.join(work, "result.txt")); n += 1
lock = os.path.join(work, ".lock")
for i in range(100):                          # O_EXCL lock file, same path
    fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
    os.write(fd, b"%d\n" % os.getpid()); os.close(fd)
    os.unlink(lock)
print(n)
EOF
sleep 1 # birth times strictly older than the session start

run_lg -- bash -c '
set -e
py=$1 work=$2
n=$("$py" "$work/../churn.py" "$work")
# The shell part: 200 mktemp files and dirs, removed with rm.
for i in $(seq 1 100); do
	f=$(mktemp); echo "$i" >"$f"; rm -f "$f"
	d=$(mktemp -d); echo "$i" >"$d/x"; rm -rf "$d"
	n=$((n + 2))
done
echo "$n" >"$work/count"
' churn "$PY" "$T/work"
assert_no_trip "temp file churn"
assert_rc 0 "$RC" "temp file churn"

cnt=$(cat "$T/work/count" 2>/dev/null)
[ "$cnt" = 1000 ] || fail "made '$cnt' temp files, expected 1000"
[ "$(cat "$T/work/result.txt")" = v199 ] || fail "atomic-save result wrong"
[ "$(cat "$T/work/data.txt")" = keep ] || fail "data.txt changed"
[ ! -e "$T/work/.lock" ] || fail "lock file left"
left=$(find "$TMPDIR" -mindepth 1 | head)
[ -z "$left" ] || fail "temp files left: $left"
left=$(find "$T/work" -name '.out.*')
[ -z "$left" ] || fail "atomic-save temp files left: $left"

pass
