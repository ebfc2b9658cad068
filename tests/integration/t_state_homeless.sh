#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A user with no home it may write (docker run -u 1000 with no such user in
# the image gets HOME=/): lgrun keeps its state in a private /tmp/lgrun-UID,
# and lgctl finds it there (issue 37):
#  1. as nobody with HOME=/, a delete loop is stopped at #3, the state dir is
#     /tmp/lgrun-65534, nobody's, mode 0700; lgctl restore puts the files back;
#     lgctl doctor says where the state is and why;
#  2. that name made first by another user (root's folder, or a symlink):
#     lgrun refuses to start, says why and what to set, and runs nothing.
source "$(dirname "$0")/lib.sh"
need_root "setpriv to nobody, and planting root's folder in /tmp"
need_cmd setpriv
setpriv --reuid=nobody --regid=nogroup --clear-groups true 2>/dev/null ||
	skip "cannot switch to nobody with setpriv"
uid=$(id -u nobody)
SD=/tmp/lgrun-$uid
[ -e "$SD" ] || [ -L "$SD" ] && skip "$SD exists already: not this test's to remove"
trap 'rm -rf "$SD"; lg_cleanup' EXIT
chmod 755 "$T"
W=$T/w
mkdir -p "$W" && mkfiles "$W/d" 5 && chown -R nobody "$W"
sleep 0.05
as_nobody() {
	setpriv --reuid=nobody --regid=nogroup --clear-groups \
		env -u LGRUN_STATE_DIR -u XDG_STATE_HOME HOME=/ "$@"
}

# 1.
as_nobody "$LGRUN" -v -s homeless -- sh -c "cd '$W' && for f in d/*; do rm \"\$f\"; done" >"$T/out" 2>&1
RC=$?
assert_rc 86 "$RC" "a delete loop as nobody with HOME=/: $(tail -5 "$T/out")"
[ "$(ls "$W/d" | wc -l)" = 3 ] || fail "the loop was not stopped at #3: $(ls "$W/d")"
grep -q "the state dir is $SD: no home this user may write (HOME=/)" "$T/out" ||
	fail "lgrun -v did not say where its state went: $(grep '^lgrun:' "$T/out")"
[ "$(stat -c '%u %a' "$SD")" = "$uid 700" ] || fail "$SD is $(stat -c '%U %a' "$SD"), expected nobody's, 700"
[ -s "$SD/audit.jsonl" ] || fail "no audit log in $SD"
as_nobody "$LGCTL" restore homeless >"$T/out" 2>&1 || fail "lgctl restore as nobody: $(cat "$T/out")"
for i in 1 2 3 4 5; do
	[ "$(cat "$W/d/f$i")" = "data $i" ] || fail "d/f$i not restored"
done
as_nobody "$LGCTL" doctor --no-canary >"$T/out" 2>&1
grep -q "^  info      state dir: $SD: no home this user may write (HOME=/)" "$T/out" ||
	fail "lgctl doctor does not say where the state is: $(cat "$T/out")"
grep -q "^  ok        state dir: $SD, this user's, mode 0700" "$T/out" || fail "doctor: $(cat "$T/out")"

# 2. Made first by another user: root's folder, then a symlink.
rm -rf "$SD"
mkdir -m 755 "$SD"
as_nobody "$LGRUN" -- sh -c "touch '$T/ran'" >"$T/out" 2>&1
RC=$?
assert_rc 125 "$RC" "a state dir root made first: $(cat "$T/out")"
[ ! -e "$T/ran" ] || fail "the command ran"
grep -q "$SD cannot be used: it belongs to another user or is open to others. Set LGRUN_STATE_DIR=DIR" "$T/out" ||
	fail "lgrun does not say why: $(cat "$T/out")"
rmdir "$SD"
mkdir -p "$T/elsewhere" && chmod 777 "$T/elsewhere"
ln -s "$T/elsewhere" "$SD"
as_nobody "$LGRUN" -- sh -c "touch '$T/ran'" >"$T/out" 2>&1
RC=$?
assert_rc 125 "$RC" "a symlink planted at the state dir: $(cat "$T/out")"
grep -q "it is a symlink or not a folder" "$T/out" || fail "lgrun does not say why: $(cat "$T/out")"
[ -z "$(ls "$T/elsewhere")" ] || fail "lgrun wrote through the planted symlink: $(ls "$T/elsewhere")"
pass
