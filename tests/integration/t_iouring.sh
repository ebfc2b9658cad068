#!/bin/bash
# SPDX-License-Identifier: MIT
# IORING_OP_UNLINKAT removes files without an unlinkat(2) syscall the filter
# could inspect, so io_uring_setup must fail with ENOSYS under lgrun.
source "$(dirname "$0")/lib.sh"

[ -x "$LGRUN" ] || fail "lgrun not built: $LGRUN"
[ -x "$FIXBIN/iouring" ] || fail "fixture not built: $FIXBIN/iouring"

D=$T/data
mkfiles "$D" 2
# Bare run: without working io_uring the test proves nothing.
"$FIXBIN/iouring" unlink "$D/f2" >"$T/bare" 2>&1
brc=$?
[ "$brc" != 2 ] || skip "needs kernel feature io_uring (bare: $(cat "$T/bare"))"
[ "$brc" = 0 ] && [ ! -e "$D/f2" ] ||
	skip "needs kernel feature IORING_OP_UNLINKAT (bare: $(cat "$T/bare"))"

run_lg -- "$FIXBIN/iouring" unlink "$D/f1" >"$T/out" 2>&1
cat "$T/out"
[ -e "$D/f1" ] || fail "io_uring unlink deleted a pre-existing file under lgrun"
assert_rc 2 "$RC" "iouring unlink under lgrun"
grep -q "setup failed: ENOSYS" "$T/out" ||
	fail "io_uring_setup did not fail with ENOSYS"
pass
