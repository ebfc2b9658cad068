#!/bin/bash
# SPDX-License-Identifier: MIT
# A double-forked, setsid()ed daemon leaves the command's process tree and
# session. lgrun must still kill it (and its children) when the guard trips,
# and also when the main command exits normally.
source "$(dirname "$0")/lib.sh"

[ -x "$LGRUN" ] || fail "lgrun not built: $LGRUN"
for b in daemon rmloop; do
	[ -x "$FIXBIN/$b" ] || fail "fixture not built: $FIXBIN/$b"
done
need_cmd timeout

# Kill whatever a failing case left behind, then the usual cleanup.
PIDFILES=()
df_cleanup() {
	local f
	for f in "${PIDFILES[@]}"; do
		[ -f "$f" ] && kill -9 $(cat "$f") 2>/dev/null
	done
	lg_cleanup
}
trap df_cleanup EXIT

# Alive = exists, is not a zombie and is still our daemon (not a reused pid).
alive() {
	local st
	st=$(cut -d' ' -f3 "/proc/$1/stat" 2>/dev/null) || return 1
	[ "$st" != Z ] && [ "$st" != X ] &&
		tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null | grep -q fixtures/daemon
}

# Wait up to 2 s for every pid in the pidfile to be gone.
all_gone() { # pidfile
	local i p left
	for i in $(seq 1 20); do
		left=
		for p in $(cat "$1"); do
			alive "$p" && left="$left $p"
		done
		[ -z "$left" ] && return 0
		sleep 0.1
	done
	echo "still alive after 2 s:$left"
	return 1
}

# lgrun with a time limit: a supervisor waiting on the daemon would hang.
run_lgt() {
	timeout -k 5 60 "$LGRUN" --state-dir "$STATE" "$@"
	RC=$?
	[ "$RC" != 124 ] || fail "lgrun did not return within 60 s"
}

# Bare: the daemon must outlive its launcher, or the test proves nothing.
P0=$T/pid0
PIDFILES+=("$P0")
"$FIXBIN/daemon" -t "$P0" 2 || fail "bare daemon failed to start"
sleep 0.3
for p in $(cat "$P0"); do
	alive "$p" || fail "bare daemon pid $p died on its own"
done
kill -9 $(cat "$P0")

# Case 1: the guard trips while the daemon runs.
D=$T/data
mkfiles "$D" 3
P1=$T/pid1
PIDFILES+=("$P1")
run_lgt -- bash -c '"$0" -t "$1" 5 && "$2" "$3" "$4" "$5"' \
	"$FIXBIN/daemon" "$P1" "$FIXBIN/rmloop" "$D"/f{1..3}
assert_rc 86 "$RC" "daemon + rmloop over 3 pre-existing files"
[ -e "$D/f3" ] || fail "f3 deleted after the guard should have tripped"
[ ! -e "$D/f1" ] || fail "f1 survived: rmloop did not run under lgrun"
[ -f "$P1" ] || fail "the daemon never wrote its pidfile"
[ "$(wc -l <"$P1")" = 6 ] || fail "pidfile has $(wc -l <"$P1") pids, expected 6"
all_gone "$P1" || fail "daemon tree survived the trip"
[ "$(audit_count trip)" -ge 1 ] || fail "no trip record in the audit log"

# Case 2: the command starts the daemon and exits 0; leftovers are killed.
STATE=$T/state2
LGRUN_STATE_DIR=$STATE
mkdir -p "$STATE"
P2=$T/pid2
PIDFILES+=("$P2")
run_lgt -- "$FIXBIN/daemon" -t "$P2" 2
assert_rc 0 "$RC" "command that only starts a daemon"
[ -f "$P2" ] || fail "the daemon never wrote its pidfile"
all_gone "$P2" || fail "daemon tree survived the end of the session"
assert_no_trip "daemon launch"
pass
