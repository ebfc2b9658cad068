#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# max_bytes counts what keeping takes (issue 39, item 6): a removed file is
# kept by a hard link, which takes no new space (its blocks were used
# already), so three 6 MB removals under max_bytes 10M are all kept, and
# the end record and lgctl quarantine list say what is held (on disk) and
# what was copied (nothing). A copy takes its bytes: two 6 MB files written
# in place under the same bound, the second is not kept (max_bytes).
source "$(dirname "$0")/lib.sh"
need_cmd python3

printf '[quarantine]\nmax_bytes = 10M\n' >"$T/q.ini"
D=$T/data
mkdir -p "$D" "$T/orig"
for f in f1 f2 f3 g1 g2; do head -c 6000000 /dev/urandom >"$D/$f"; done
cp -a "$D/." "$T/orig/"
sleep 0.05

# 1. Three removals of 6 MB each: all kept, nothing copied.
run_lg --session links --profile bulk-cleanup --config "$T/q.ini" -- rm "$D/f1" "$D/f2" "$D/f3" 2>"$T/err"
assert_rc 0 "$RC" "three removals"
grep -q "could not be kept" "$T/err" && fail "a removal's link was counted against max_bytes: $(cat "$T/err")"
grep '"session":"links"' "$STATE/audit.jsonl" | grep '"event":"session_end"' | python3 -c '
import json, sys
e = json.loads(sys.stdin.read())
assert e["kept_files"] == 3 and e["not_kept"] == 0, e
assert e["kept_bytes"] == 18000000 and e["copied_bytes"] == 0, e
assert 18000000 <= e["held_bytes"] < 18100000, e
' || fail "the end record: $(grep '"session":"links"' "$STATE/audit.jsonl" | grep session_end)"
"$LGCTL" --state-dir "$STATE" quarantine list >"$T/list" || fail "quarantine list"
grep -Eq "^links +3 +0 +18.0 MB +18.0 MB +0 B " "$T/list" || fail "list: $(cat "$T/list")"
"$LGCTL" --state-dir "$STATE" restore links >"$T/out" 2>&1 || fail "restore: $(cat "$T/out")"
for f in f1 f2 f3; do cmp -s "$T/orig/$f" "$D/$f" || fail "$f did not come back: $(cat "$T/out")"; done

# 2. Two copies of 6 MB each (written in place): the second passes 10M.
run_lg --session copies --config "$T/q.ini" -- sh -c 'for f; do printf X | dd of="$f" bs=1 seek=3 conv=notrunc status=none; done' sh "$D/g1" "$D/g2" 2>"$T/err"
assert_rc 0 "$RC" "two writes in place"
grep -q "open_write of $D/g2 could not be kept in the quarantine (quarantine.max_bytes reached)" "$T/err" ||
	fail "a copy past max_bytes was kept: $(cat "$T/err")"
grep '"session":"copies"' "$STATE/audit.jsonl" | grep '"event":"session_end"' | python3 -c '
import json, sys
e = json.loads(sys.stdin.read())
assert e["kept_files"] == 1 and e["not_kept"] == 1, e
assert 6000000 <= e["copied_bytes"] <= 10 << 20, e
' || fail "the end record of the copies: $(grep '"session":"copies"' "$STATE/audit.jsonl" | grep session_end)"
"$LGCTL" --state-dir "$STATE" quarantine list >"$T/list" || fail "quarantine list"
grep -Eq "^copies +1 +0 +6.0 MB +6.0 MB +6.0 MB " "$T/list" || fail "list of the copies: $(cat "$T/list")"
pass
