#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Touch or append, then truncate (issue 12): a touch or a one-byte append
# moves the modification time past the session's start, but the bytes from
# before the start are still there until the session truncates the file.
# Truncating them to zero is stopped at the third. A file the session has
# truncated once holds its own writes: truncating it again (a log it
# rotates, a state file rewritten with ftruncate + write) is not a loss.
source "$(dirname "$0")/lib.sh"

for how in touch append; do
	rm -rf "$T/data" "$STATE"
	mkfiles "$T/data" 10
	case $how in
	touch) pre='touch "$f"' ;;
	append) pre='printf x >>"$f"' ;;
	esac
	run_lg -- bash -c 'for f in "$0"/f*; do '"$pre"'; truncate -s 0 "$f"; done' "$T/data" 2>"$T/err"
	assert_rc 86 "$RC" "$how then truncate"
	empty=$(find "$T/data" -type f -empty | wc -l)
	[ "$empty" -le 2 ] || fail "$how then truncate: $empty of 10 emptied (at most 2)"
	grep -q 'volume_exceeded, 3 truncations of pre-existing files' "$STATE/audit.jsonl" ||
		fail "$how then truncate: the trip does not say what was lost: $(tail -c 400 "$STATE/audit.jsonl")"
done

# One pre-existing state file rewritten 10 times with truncate + write: only
# the first truncation loses pre-existing bytes.
rm -rf "$T/data" "$STATE"
mkfiles "$T/data" 1
run_lg -- bash -c 'for i in $(seq 10); do truncate -s 0 "$0"; echo "state $i" >>"$0"; done' "$T/data/f1" 2>"$T/err"
assert_rc 0 "$RC" "a state file rewritten in place"
assert_no_trip "a state file rewritten in place"
[ "$(cat "$T/data/f1")" = "state 10" ] || fail "the state file has '$(cat "$T/data/f1")'"
pass
