#!/bin/bash
# SPDX-License-Identifier: MIT
# x32 syscalls (bit 30 set in rax) must never reach the kernel: the filter
# kills the process (or it gets an error). Either way the file survives.
# On a kernel without x32 only the kill proves the filter acted.
source "$(dirname "$0")/lib.sh"

[ "$(uname -m)" = x86_64 ] || skip "needs an x86_64 kernel (x32 ABI)"
[ -x "$LGRUN" ] || fail "lgrun not built: $LGRUN"
[ -x "$FIXBIN/x32" ] || fail "fixture not built: $FIXBIN/x32"

D=$T/data
mkfiles "$D" 2
# Bare run on a scratch file: tells whether this kernel has x32 at all.
"$FIXBIN/x32" unlink "$D/f2" >"$T/bare" 2>&1
if [ ! -e "$D/f2" ]; then
	X32=1
	echo "note: x32 is enabled in this kernel (bare unlink worked)"
else
	X32=0
	echo "note: x32 disabled in this kernel, bare: $(cat "$T/bare")"
fi

run_lg -- "$FIXBIN/x32" unlink "$D/f1" >"$T/out" 2>&1
cat "$T/out"
[ -e "$D/f1" ] || fail "x32 unlink deleted a pre-existing file under lgrun"
[ "$RC" != 0 ] || fail "x32 unlink reported success under lgrun"
if [ "$RC" -gt 128 ]; then
	echo "note: the probe was killed by signal $((RC - 128))"
elif [ "$X32" = 0 ]; then
	# The kernel's own ENOSYS would hide a filter that lets x32 through;
	# only the kill the contract promises shows the filter acted.
	fail "x32 probe not killed (exit $RC): cannot tell the filter from the kernel's ENOSYS"
else
	echo "note: the probe got an error (lgrun exit status $RC)"
fi
pass
