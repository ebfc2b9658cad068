#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# As an ordinary user lgrun cannot make a cgroup here: it must still trip
# at #3 and kill the whole tree (child subreaper + descendant walk), and a
# double-forked daemon must not survive.
source "$(dirname "$0")/lib.sh"
need_root "to switch to the unprivileged user nobody"
need_cmd setpriv

chmod 755 "$T"
mkdir -p "$T/u/data" "$T/u/state"
for i in 1 2 3 4 5; do echo $i >"$T/u/data/f$i"; done
chown -R nobody: "$T/u"
[ -x "$FIXBIN/daemon" ] || fail "fixtures not built (make fixtures)"
# The build tree must be reachable for nobody (it is under /work or /tmp).
setpriv --reuid=nobody --regid=nogroup --clear-groups true 2>/dev/null ||
	skip "cannot switch to nobody with setpriv"
setpriv --reuid=nobody --regid=nogroup --clear-groups test -x "$LGRUN" ||
	skip "the build tree is not readable by nobody"

setpriv --reuid=nobody --regid=nogroup --clear-groups -- \
	"$LGRUN" -v --state-dir "$T/u/state" -- bash -c '
	"$1" "$0/daemon.pid"
	for i in 1 2 3 4 5; do rm "$0/data/f$i"; done' "$T/u" "$FIXBIN/daemon" >"$T/out" 2>&1
RC=$?
assert_rc 86 "$RC" "unprivileged delete loop"
[ -e "$T/u/data/f3" ] || fail "f3 was deleted"
pid=$(head -n1 "$T/u/daemon.pid" 2>/dev/null)
[ -n "$pid" ] || fail "the daemon did not start"
for _ in $(seq 1 40); do
	[ -d /proc/$pid ] && [ "$(awk '{print $3}' /proc/$pid/stat 2>/dev/null)" != Z ] || break
	sleep 0.05
done
if [ -d /proc/$pid ] && [ "$(awk '{print $3}' /proc/$pid/stat)" != Z ]; then
	kill -9 $pid
	fail "the double-forked daemon $pid survived the unprivileged tree kill"
fi
if grep -q "no cgroup for the session" "$T/out"; then
	grep -q '"kill_method":"descendant walk"' "$T/u/state/audit.jsonl" ||
		fail "without a cgroup the record should say the tree was walked"
fi
pass
