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
