#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# If lgrun itself is killed (an agent told to "kill stuck processes" may do
# it), the command dies with it and whatever is left fails closed: its
# destructive syscalls fail (ENOSYS) instead of running unsupervised.
source "$(dirname "$0")/lib.sh"
need_cmd python3

mkfiles "$T/data" 3
cat >"$T/left.py" <<'PY'
import os, sys, time
# detach, like a daemon: survives its parent, stays in the session's tree
if os.fork(): sys.exit(0)
os.setsid()
time.sleep(1.0)
try:
    os.unlink(sys.argv[1]); r = "deleted"
except OSError as e:
    r = "refused errno=%d" % e.errno
open(sys.argv[2], "w").write(r)
PY
"$LGRUN" --state-dir "$STATE" -- bash -c 'python3 "$0" "$1" "$2"; sleep 30' \
	"$T/left.py" "$T/data/f1" "$T/result" &
lg=$!
sleep 0.4
main=$(pgrep -P $lg | head -1)
kill -9 $lg
wait $lg 2>/dev/null
for _ in $(seq 1 40); do [ -s "$T/result" ] && break; sleep 0.1; done
[ -n "$main" ] && [ -d /proc/$main ] && [ "$(awk '{print $3}' /proc/$main/stat)" != Z ] &&
	fail "the command outlived lgrun (PDEATHSIG)"
[ -e "$T/data/f1" ] || fail "a leftover process deleted data after lgrun died"
grep -q "refused errno=38" "$T/result" || fail "expected ENOSYS, got: $(cat "$T/result" 2>/dev/null)"
pass
