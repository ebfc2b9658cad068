#!/bin/bash
# SPDX-License-Identifier: MIT
# Extracting an archive over the tree it came from must not trip the guard
# with the default config. GNU tar, on finding a file in the way, unlinks it
# and creates the archived one, so 50 pre-existing files are removed and
# replaced at once.
source "$(dirname "$0")/lib.sh"
need_cmd tar

# 50 files in a few subdirectories, archived before the session.
for d in a b c d e; do mkfiles "$T/tree/$d" 10; done
n=$(find "$T/tree" -type f | wc -l)
[ "$n" = 50 ] || fail "fixture: $n files, expected 50"
tar -C "$T" -cf "$T/tree.tar" tree || fail "fixture: tar -cf"
# Change every file after archiving, so the extraction visibly restores the
# archived contents.
find "$T/tree" -type f -exec sh -c 'for f; do echo "local edit" >>"$f"; done' sh {} + ||
	fail "fixture: edit files"
sleep 1 # birth times strictly older than the session start

run_lg -- tar -C "$T" -xf "$T/tree.tar"
assert_no_trip "tar -xf over the source tree"
assert_rc 0 "$RC" "tar -xf over the source tree"

n=$(find "$T/tree" -type f | wc -l)
[ "$n" = 50 ] || fail "after extraction: $n files, expected 50"
left=$(grep -rl "local edit" "$T/tree")
[ -z "$left" ] || fail "files not replaced by the archive: $left"
[ "$(cat "$T/tree/c/f7")" = "data 7" ] || fail "tree/c/f7 has '$(cat "$T/tree/c/f7")'"

pass
