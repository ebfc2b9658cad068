#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A sparse file is kept as what it holds (issue 39, item 4): a 1 GiB file
# with 4 KiB of data, emptied (: >) or written in place (dd conv=notrunc),
# is kept (max_copy judges its allocated bytes, not its size) as a copy
# with its holes left holes, and lgctl restore puts it back byte for byte,
# with its size and its holes: in place, and through restore's own copy
# (--to a small tmpfs, another filesystem, where a dense 1 GiB cannot go).
# A file with more data than max_copy is still not kept.
source "$(dirname "$0")/lib.sh"
need_cmd python3

# sparse PATH OFFSET_MIB: 1 GiB, 4 KiB of data at OFFSET_MIB, holes around
sparse() {
	truncate -s 1G "$1"
	head -c 4096 /dev/urandom | dd of="$1" bs=1M seek="$2" conv=notrunc status=none
}
# same A B: the same bytes (compared where either holds data: elsewhere
# both read zeros), the same size, and B holds at most 1 MiB on disk
same() {
	python3 - "$1" "$2" <<'PY'
import os, sys
a, b = sys.argv[1], sys.argv[2]
fa, fb = os.open(a, os.O_RDONLY), os.open(b, os.O_RDONLY)
sa, sb = os.fstat(fa), os.fstat(fb)
if sa.st_size != sb.st_size:
    sys.exit(f"{b}: {sb.st_size} bytes, {sa.st_size} expected")
if sb.st_blocks * 512 > 1 << 20:
    sys.exit(f"{b}: {sb.st_blocks * 512} bytes on disk: its holes were filled")
def extents(fd, size):
    at, out = 0, []
    while at < size:
        try:
            d = os.lseek(fd, at, os.SEEK_DATA)
        except OSError:
            break
        h = os.lseek(fd, d, os.SEEK_HOLE)
        out.append((d, h))
        at = h
    return out
for d, h in extents(fa, sa.st_size) + extents(fb, sb.st_size):
    for off in range(d, h, 1 << 20):
        n = min(1 << 20, h - off)
        if os.pread(fa, n, off) != os.pread(fb, n, off):
            sys.exit(f"{b}: differs from {a} at {off}")
PY
}

D=$T/data
mkdir -p "$D" "$T/orig"
sparse "$D/empty" 400
sparse "$D/inplace" 0
head -c 2097152 /dev/urandom >"$D/dense"
truncate -s 1G "$D/dense"
cp --sparse=always "$D/empty" "$D/inplace" "$T/orig/"
sleep 0.05

# 1. Emptied, and written in place: both kept, as copies holding 4 KiB.
run_lg --session sp -- sh -c ': >"$0"; printf XYZ | dd of="$1" bs=1 seek=10 conv=notrunc status=none' \
	"$D/empty" "$D/inplace" 2>"$T/err"
assert_rc 0 "$RC" "the overwrites"
grep -q "could not be kept" "$T/err" && fail "a sparse file was not kept: $(cat "$T/err")"
[ ! -s "$D/empty" ] && [ "$(head -c 13 "$D/inplace" | tail -c 3)" = XYZ ] || fail "the writes did not happen"
python3 - "$STATE/quarantine/sp.jsonl" <<'PY' || fail "the kept copies"
import json, os, sys
e = [json.loads(l) for l in open(sys.argv[1])]
assert len(e) == 2, e
for x in e:
    st = os.stat(x["kept"])
    assert x["size"] == 1 << 30 and st.st_size == 1 << 30, x
    assert st.st_blocks * 512 <= 1 << 20, (x["kept"], st.st_blocks)
    assert x["copied"] <= 1 << 20, x
PY
grep '"event":"session_end"' "$STATE/audit.jsonl" | tail -1 | python3 -c '
import json, sys
e = json.loads(sys.stdin.read())
assert e["kept_files"] == 2 and e["kept_bytes"] == 2 << 30, e
assert 0 < e["copied_bytes"] <= 2 << 20 and e["held_bytes"] == e["copied_bytes"], e
' || fail "the end record's totals: $(grep session_end "$STATE/audit.jsonl" | tail -1)"

# 2. Restored in place: byte for byte, its size and its holes.
"$LGCTL" --state-dir "$STATE" restore sp >"$T/out" 2>&1 || fail "restore: $(cat "$T/out")"
for f in empty inplace; do
	same "$T/orig/$f" "$D/$f" || fail "$f restored: $(cat "$T/out")"
done

# 3. Through restore's own copy: --to another filesystem, a 16 MB tmpfs.
if [ "$(id -u)" = 0 ] && mkdir -p "$T/to" && mount -t tmpfs -o size=16m tmpfs "$T/to" 2>/dev/null; then
	trap 'umount -l "$T/to" 2>/dev/null; lg_cleanup' EXIT
	run_lg --session sp2 -- sh -c ': >"$0"' "$D/empty" 2>"$T/err"
	assert_rc 0 "$RC" "the second overwrite"
	"$LGCTL" --state-dir "$STATE" restore sp2 --to "$T/to" >"$T/out" 2>&1 || fail "restore --to: $(cat "$T/out")"
	same "$T/orig/empty" "$T/to$D/empty" || fail "restored --to a tmpfs: $(cat "$T/out")"
	umount "$T/to"
else
	echo "note: not root or no tmpfs: restore's copy to another filesystem not tried"
fi

# 4. max_copy still bounds the data: 2 MiB of it, max_copy 1M: not kept.
printf '[quarantine]\nmax_copy = 1M\n' >"$T/small.ini"
run_lg --session sp3 --config "$T/small.ini" -- sh -c ': >"$0"' "$D/dense" 2>"$T/err"
assert_rc 0 "$RC" "the overwrite of a file with 2 MiB of data"
grep -q "could not be kept in the quarantine (File too large)" "$T/err" ||
	fail "2 MiB of data kept past max_copy 1M: $(cat "$T/err")"
pass
