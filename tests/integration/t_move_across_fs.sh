#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Moves are not losses (issue 12). mv to another filesystem copies, then
# removes every source file; `ln f keep/f; rm f` leaves the data under the
# other name. Neither counts, however many files. But data moved to a trash
# folder (on the same filesystem or another) and deleted there is lost, and
# that is stopped at the third.
source "$(dirname "$0")/lib.sh"
need_root "mounts a tmpfs as the other filesystem"

OTHER=$T/other
mkdir -p "$OTHER"
mount -t tmpfs -o size=64m lgtest "$OTHER" || skip "cannot mount a tmpfs"
trap 'umount -l "$OTHER" 2>/dev/null; lg_cleanup' EXIT

# A tree and single files, moved by mv and by Python's shutil.move.
mkfiles "$T/data/tree/sub" 8
mkfiles "$T/data/loose" 6
run_lg -- bash -c 'mv "$0/tree" "$1/" && mv "$0"/loose/f* "$1/" &&
	python3 -c "import shutil,sys; shutil.move(sys.argv[1], sys.argv[2])" "$0/loose" "$1/loose"' \
	"$T/data" "$OTHER" 2>"$T/err"
assert_rc 0 "$RC" "mv to another filesystem"
assert_no_trip "mv to another filesystem"
[ "$(find "$OTHER/tree" -type f | wc -l)" = 8 ] || fail "the moved tree is not complete"
[ "$(find "$OTHER" -maxdepth 1 -name 'f*' | wc -l)" = 6 ] || fail "the moved files are not all there"
[ ! -e "$T/data/tree" ] || fail "mv left the source"
grep -q '"moved":' "$STATE/audit.jsonl" || fail "the end record does not count the moved sources"

# Hard links: the data survives through the other name.
rm -rf "$STATE"
mkfiles "$T/keep" 6
mkdir -p "$T/kept"
run_lg -- bash -c 'for f in "$0"/f*; do ln "$f" "$1/" && rm "$f"; done' "$T/keep" "$T/kept" 2>"$T/err"
assert_rc 0 "$RC" "ln then rm"
assert_no_trip "ln then rm"
[ "$(ls "$T/kept" | wc -l)" = 6 ] || fail "the kept links are missing"

# Moved to a trash folder on another filesystem, then emptied: the copies
# hold pre-existing content, and deleting them is stopped.
rm -rf "$STATE" "$OTHER"/*
mkfiles "$T/docs" 10
run_lg -- bash -c 'mkdir -p "$1/trash" && mv "$0"/f* "$1/trash/" && rm -f "$1"/trash/*' "$T/docs" "$OTHER" 2>"$T/err"
assert_rc 86 "$RC" "trash on another filesystem, emptied"
left=$(find "$OTHER/trash" -type f | wc -l)
[ "$left" -ge 8 ] || fail "trash on another filesystem: lost $((10 - left)) of 10 (at most 2)"

# The same on one filesystem: the inodes keep their birth times.
rm -rf "$STATE"
mkfiles "$T/docs2" 10
run_lg -- bash -c 'mkdir -p "$0/../trash2" && mv "$0"/f* "$0/../trash2/" && rm -f "$0"/../trash2/*' "$T/docs2" 2>"$T/err"
assert_rc 86 "$RC" "trash on the same filesystem, emptied"
left=$(find "$T/trash2" -type f | wc -l)
[ "$left" -ge 8 ] || fail "trash on the same filesystem: lost $((10 - left)) of 10 (at most 2)"
pass
