#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# lgctl top under tmux: a session appears, its counts rise, its trip shows
# as it happens, sorting keys answer, q exits 0; frames are drawn in place
# (home and clear-to-end, never a clear screen); --once prints one frame.
source "$(dirname "$0")/lib.sh"
need_cmd tmux
need_cmd script

SOCK=$T/tmux.sock
tm() { tmux -S "$SOCK" "$@"; }
trap 'tm kill-server 2>/dev/null; lg_cleanup' EXIT
screen() { tm capture-pane -p -t top; }
wait_for() { # pattern what: the screen shows it within 10 s
	local i
	for i in $(seq 100); do
		screen | grep -qE "$1" && return 0
		sleep 0.1
	done
	fail "top never showed $2: $(screen)"
}

mkfiles "$T/d" 8
tm new-session -d -s top -x 200 -y 30 \
	"'$LGCTL' --state-dir '$STATE' top --interval 200ms; echo \$? >'$T/top.rc'; sleep 60"
wait_for "^lgctl top: 0 session" "its header"
"$LGRUN" --state-dir "$STATE" --session slow -- bash -c 'for i in 1 2 3 4 5 6 7 8; do rm "$0/f$i"; sleep 0.8; done' "$T/d" 2>/dev/null &
LG=$!
# the session appears, and its deletes count up against volumetric.max_ops
wait_for "^slow +bash +running .* 1/3 " "the session with one delete"
wait_for "^slow +bash +running .* 2/3 " "the count rising to two"
# the trip, as it happens
wait_for "^slow +bash +TRIPPED " "the trip in the session's row"
wait_for "^TRIPPED slow: kill: volume_exceeded, 3 deletes of pre-existing files" "the trip's summary"
wait $LG
[ $? = 86 ] || fail "the session was not stopped by the guard"
# sorting keys
tm send-keys -t top n
wait_for "sorted by name \(" "sorting by name"
tm send-keys -t top r
wait_for "sorted by name, reversed" "the reversed order"
tm send-keys -t top q
for i in $(seq 50); do [ -s "$T/top.rc" ] && break; sleep 0.1; done
[ "$(cat "$T/top.rc" 2>/dev/null)" = 0 ] || fail "q did not end top with status 0: $(cat "$T/top.rc" 2>/dev/null)"

# In place: cursor home and clear to the end of lines, never a clear screen.
# timeout stays in the pty's foreground process group (--foreground): in a
# group of its own, top's tcsetattr would stop it with SIGTTOU (a hang when
# script's shell, /bin/sh, does not exec the command); -k bounds it anyway.
SHELL=/bin/sh timeout 20 script -q -c "exec timeout --foreground -k 2 -s INT 1 '$LGCTL' --state-dir '$STATE' top --interval 200ms" /dev/null >"$T/raw" </dev/null 2>&1
grep -q $'\033\[H' "$T/raw" || fail "no frame drawn in place: $(head -c 300 "$T/raw" | od -c | head)"
! grep -q $'\033\[2J' "$T/raw" || fail "top clears the screen (flicker)"
grep -q $'\033\[?1049l' "$T/raw" || fail "the terminal is not given back (alternate screen left on)"

# --once (or no terminal): one plain frame
"$LGCTL" --state-dir "$STATE" top --once >"$T/once"
grep -qE "^slow +bash +TRIPPED " "$T/once" || fail "--once: $(cat "$T/once")"
# the note decided at the 2nd delete ([steer], issue 28)
grep -q "^NOTES   slow: 1 note(s) decided for the model, the last: volumetric (volume_near)" "$T/once" ||
	fail "--once does not show the note: $(cat "$T/once")"
! grep -q $'\033' "$T/once" || fail "--once wrote terminal control"
pass
