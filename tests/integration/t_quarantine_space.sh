#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Keeping never fills a disk (issue 27): on a 60 MB tmpfs holding 40 MB of
# files, rm -rf of them under a profile that lets it run frees the space
# (what the quarantine holds stays within the free space above the floor),
# so a write of the same size then succeeds; what is not kept is said and
# counted. At the floor, an older ended session's entries go first, never a
# blocked one's; max_total bounds all sessions' copies together.
source "$(dirname "$0")/lib.sh"
need_root "mounts a tmpfs"

M=$T/fs
mkdir -p "$M"
mount -t tmpfs -o size=60m tmpfs "$M" || skip "cannot mount a tmpfs"
trap 'umount -l "$M" 2>/dev/null; lg_cleanup' EXIT

# age_hour SESSION: its entries made to look an hour old
age_hour() {
	python3 - "$STATE/quarantine/$1.jsonl" <<'PY'
import json, sys, time
p = sys.argv[1]
old = int((time.time() - 3600) * 1e9)
lines = [json.loads(l) for l in open(p)]
with open(p, "w") as f:
    for e in lines:
        e["time_ns"] = old
        f.write(json.dumps(e) + "\n")
PY
	touch -d '1 hour ago' "$STATE/quarantine/$1.jsonl"
}

fill() { # dir n: n files of 1 MB
	mkdir -p "$1"
	for i in $(seq 1 "$2"); do head -c 1000000 /dev/urandom >"$1/f$i"; done
}

# 1. rm -rf of 40 MB frees it: the next 40 MB write succeeds.
fill "$M/d" 40
sleep 0.05
run_lg --session space1 --profile bulk-cleanup -- rm -rf "$M/d" 2>"$T/err1"
assert_rc 0 "$RC" "rm -rf under bulk-cleanup"
head -c 40000000 /dev/zero >"$M/big" 2>"$T/werr" || fail "a 40 MB write after rm -rf of 40 MB: $(cat "$T/werr"); df: $(df -h "$M" | tail -1)"
rm -f "$M/big"
grep -q "could not be kept in the quarantine (its filesystem is at quarantine.min_free)" "$T/err1" ||
	fail "what was not kept is not said: $(cat "$T/err1")"
python3 - "$STATE/audit.jsonl" <<'PY' || fail "the end record"
import json, sys
end = [json.loads(l) for l in open(sys.argv[1]) if '"session_end"' in l][-1]
# 60 MB - 40 MB = ~20 MB free, the floor 6 MB: some 14 files kept, the rest not
assert 8 <= end["kept_files"] <= 16 and end["not_kept"] >= 24, end
assert end["kept_files"] + end["not_kept"] == 40, end
PY
kept1=$(find "$M/.lgrun-quarantine/space1" -type f | wc -l)
[ "$kept1" -ge 8 ] || fail "space1 kept $kept1 files"

# 2. At the floor, an older ended session's entries go first: space1 is
# made to look an hour old; a new session removing more is kept again.
age_hour space1
fill "$M/e" 30
sleep 0.05
run_lg --session space2 --profile bulk-cleanup -- rm -rf "$M/e" 2>"$T/err2"
assert_rc 0 "$RC" "the second rm -rf"
grep -q "dropped what session space1 kept" "$T/err2" || fail "space1 was not dropped: $(cat "$T/err2")"
[ ! -e "$STATE/quarantine/space1.jsonl" ] || fail "space1's index is still there"
[ "$(find "$M/.lgrun-quarantine/space2" -type f | wc -l)" -ge 8 ] || fail "space2 kept too little"

# 3. A blocked session's entries are never dropped.
umount "$M" && mount -t tmpfs -o size=60m tmpfs "$M" || fail "remount"
mkfiles "$M/g" 5
sleep 0.05
run_lg --session blocked1 -- sh -c 'for f in "$0"/*; do rm "$f"; done' "$M/g" 2>/dev/null
assert_rc 86 "$RC" "the loop that blocks its session"
age_hour blocked1
fill "$M/h" 45
sleep 0.05
run_lg --session space3 --profile bulk-cleanup -- rm -rf "$M/h" 2>"$T/err3"
assert_rc 0 "$RC" "rm -rf beside a blocked session"
[ -e "$STATE/quarantine/blocked1.jsonl" ] || fail "a blocked session's entries were dropped: $(cat "$T/err3")"

# 4. max_total: what all sessions' copies take together (a removal's link
# takes no new space: t_quarantine_links).
printf '[quarantine]\nmax_total = 3M\n' >"$T/total.ini"
fill "$M/i" 6
sleep 0.05
run_lg --session space4 --config "$T/total.ini" -- sh -c 'for f in "$0"/*; do printf X | dd of="$f" bs=1 seek=3 conv=notrunc status=none; done' "$M/i" 2>"$T/err4"
assert_rc 0 "$RC" "writes in place with max_total"
grep -q "all sessions' copies reach quarantine.max_total" "$T/err4" || fail "max_total is not said: $(cat "$T/err4")"
pass
