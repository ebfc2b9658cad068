#!/bin/bash
# SPDX-License-Identifier: MIT
# A 64-bit program can still use the i386 syscall table via "int $0x80".
# Removals and truncations to 0 made that way must count exactly like the
# 64-bit ones: the 3rd pre-existing target trips the guard.
source "$(dirname "$0")/lib.sh"

[ "$(uname -m)" = x86_64 ] || skip "needs an x86_64 kernel (int 0x80)"
[ -x "$LGRUN" ] || fail "lgrun not built: $LGRUN"
[ -x "$FIXBIN/int80" ] || fail "fixture not built: $FIXBIN/int80"
I80=$FIXBIN/int80

# Bare: without IA32 emulation the syscalls fail and the test proves nothing.
mkfiles "$T/bare" 2
"$I80" unlink "$T/bare/f1" >/dev/null && [ ! -e "$T/bare/f1" ] ||
	skip "needs kernel feature IA32 emulation (bare int80 unlink failed)"
"$I80" truncate64 "$T/bare/f2" >/dev/null && [ ! -s "$T/bare/f2" ] ||
	skip "needs kernel feature IA32 emulation (bare int80 truncate64 failed)"

# A fresh state dir per case, so one trip cannot affect the next session.
new_case() {
	STATE=$T/state-$1
	LGRUN_STATE_DIR=$STATE
	mkdir -p "$STATE"
}

# Run "int80 OP" on each path in turn inside one lgrun session.
loop() { # op path...
	local op=$1
	shift
	run_lg -- bash -c 'op=$1; shift; for f; do "$0" "$op" "$f"; done' \
		"$I80" "$op" "$@"
}

for op in unlink unlinkat; do
	new_case "$op"
	D=$T/$op
	mkfiles "$D" 4
	loop "$op" "$D"/f{1..4}
	assert_rc 86 "$RC" "int80 $op over 4 pre-existing files"
	[ ! -e "$D/f1" ] && [ ! -e "$D/f2" ] ||
		fail "int80 $op: f1/f2 survived, the probe did not run under lgrun"
	[ -e "$D/f3" ] && [ -e "$D/f4" ] ||
		fail "int80 $op: f3/f4 deleted after the guard should have tripped"
	[ "$(audit_count trip)" -ge 1 ] || fail "int80 $op: no trip record"
done

# rmdir of pre-existing empty directories counts too.
new_case rmdir
D=$T/rmdir
mkdir -p "$D"/d{1..4}
loop rmdir "$D"/d{1..4}
assert_rc 86 "$RC" "int80 rmdir over 4 pre-existing dirs"
[ ! -e "$D/d1" ] && [ ! -e "$D/d2" ] ||
	fail "int80 rmdir: d1/d2 survived, the probe did not run under lgrun"
[ -d "$D/d3" ] && [ -d "$D/d4" ] ||
	fail "int80 rmdir: d3/d4 removed after the guard should have tripped"
[ "$(audit_count trip)" -ge 1 ] || fail "int80 rmdir: no trip record"

for op in truncate truncate64; do
	new_case "$op"
	D=$T/$op
	mkfiles "$D" 4
	loop "$op" "$D"/f{1..4}
	assert_rc 86 "$RC" "int80 $op over 4 pre-existing non-empty files"
	[ ! -s "$D/f1" ] && [ ! -s "$D/f2" ] ||
		fail "int80 $op: f1/f2 not truncated, the probe did not run under lgrun"
	[ "$(cat "$D/f3")" = "data 3" ] && [ "$(cat "$D/f4")" = "data 4" ] ||
		fail "int80 $op: f3/f4 truncated after the guard should have tripped"
	[ "$(audit_count trip)" -ge 1 ] || fail "int80 $op: no trip record"
done

# 64-bit and 32-bit entry points share one budget.
if [ -x "$FIXBIN/rmloop" ]; then
	new_case mixed
	D=$T/mixed
	mkfiles "$D" 3
	run_lg -- bash -c '"$0" "$2" && "$1" unlink "$3" && "$1" truncate "$4"' \
		"$FIXBIN/rmloop" "$I80" "$D"/f{1..3}
	assert_rc 86 "$RC" "rmloop + int80 unlink + int80 truncate"
	[ ! -e "$D/f1" ] && [ ! -e "$D/f2" ] ||
		fail "mixed: f1/f2 survived, the probes did not run under lgrun"
	[ "$(cat "$D/f3")" = "data 3" ] ||
		fail "mixed: f3 truncated: 32-bit calls do not share the 64-bit budget"
fi
pass
