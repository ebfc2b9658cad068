#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Block devices (issue 39 item 8): a write-open of a block device holding a
# filesystem is a destructive op on pre-existing data. wipefs -a over three
# ext4 loop devices trips at the third, which keeps its signature; nothing
# of them is kept, and the records say so. dd of= over them counts the same
# (a lower max_ops), and so does a loop device the session attaches over an
# image holding a filesystem. A fresh, zeroed loop device mkfs'ed under lgrun is the
# session's own: no trip, nothing counted; reading a device never counts.
source "$(dirname "$0")/lib.sh"

need_root "loop devices"
for c in losetup mkfs.ext4 wipefs blkid dd; do need_cmd "$c"; done

LOOPS=()
trap 'for l in "${LOOPS[@]}" $(cat "$T/inloops" 2>/dev/null); do losetup -d "$l" 2>/dev/null; done; lg_cleanup' EXIT
# A loop device over a new sparse file of $T (all zeros): its path in LOOP.
newloop() {
	truncate -s 32M "$T/$1.img"
	LOOP=$(losetup -f --show "$T/$1.img" 2>"$T/losetup.err") ||
		skip "cannot attach a loop device: $(cat "$T/losetup.err")"
	LOOPS+=("$LOOP")
}
is_ext4() { [ "$(blkid -p -o value -s TYPE "$1" 2>/dev/null)" = ext4 ]; }

# 1. wipefs -a over three ext4 filesystems: the third is refused, kept intact.
W=()
for i in 1 2 3; do
	newloop "w$i"
	mkfs.ext4 -q -F "$LOOP" >/dev/null 2>&1 || fail "mkfs.ext4 $LOOP before the session"
	W+=("$LOOP")
done
run_lg --session bd1 -- bash -c 'for d in "$@"; do wipefs -a "$d"; done' sh "${W[@]}" >"$T/out1" 2>&1
assert_rc 86 "$RC" "wipefs -a over three ext4 loop devices"
is_ext4 "${W[0]}" && fail "the first wipefs did not run: $(cat "$T/out1")"
is_ext4 "${W[1]}" && fail "the second wipefs did not run"
is_ext4 "${W[2]}" || fail "the third device lost its filesystem: the trip did not refuse it"
[ "$(audit_count trip)" = 1 ] || fail "expected one trip record"
python3 - "$STATE/audit.jsonl" "${W[@]}" <<'PY' || fail "the records of the devices"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
devs = sys.argv[2:]
trip = [r for r in recs if r["event"] == "trip"][0]
assert trip["op"] == "device_write" and trip["target"] == devs[2], trip
assert trip["kept"] is False and "cannot keep a block device" in trip["note"], trip
assert trip["holds"] == "an ext4 filesystem", trip
s = trip["summary"]
assert "3 writes over block devices holding data" in s and "ext4" in s, s
assert "lgrun cannot keep a block device's content" in s, s
assert trip.get("device_writes") == 2, trip
warns = [r for r in recs if r["event"] == "warn" and r.get("op") == "device_write"]
assert [w["target"] for w in warns] == devs[:2], warns
assert all(w["kept"] is False and w["exe"] == "wipefs" for w in warns), warns
PY
grep -q "cannot keep a block device's content" "$T/out1" || fail "the warning is not on stderr: $(cat "$T/out1")"
"$LGCTL" --state-dir "$STATE" report bd1 -o "$T/bd1.html" >/dev/null 2>&1 || fail "lgctl report bd1"
grep -q 'quarantine-devices' "$T/bd1.html" || fail "lgctl report does not say the devices were not kept"

# 2. dd of= (conv=notrunc: O_WRONLY|O_CREAT) with max_ops = 2: the second trips.
printf '[volumetric]\nmax_ops = 2\n' >"$T/two.ini"
D=()
for i in 1 2; do
	newloop "d$i"
	mkfs.ext4 -q -F "$LOOP" >/dev/null 2>&1 || fail "mkfs.ext4 $LOOP"
	D+=("$LOOP")
done
run_lg --session bd2 --config "$T/two.ini" -- bash -c \
	'for d in "$@"; do dd if=/dev/zero of="$d" bs=4k count=1 conv=notrunc status=none; done' sh "${D[@]}" >"$T/out2" 2>&1
assert_rc 86 "$RC" "dd of= over two ext4 loop devices, max_ops = 2"
is_ext4 "${D[0]}" && fail "the first dd did not run: $(cat "$T/out2")"
is_ext4 "${D[1]}" || fail "the second device lost its filesystem"
grep '"event":"trip"' "$STATE/audit.jsonl" | grep -q "\"target\":\"${D[1]}\"" || fail "the trip does not name ${D[1]}"

# 2b. A loop device attached in the session over an image that holds a
# filesystem (losetup opens the device for writing while it has no file:
# nothing then) is judged anew: the second trips.
for i in 1 2; do
	truncate -s 32M "$T/i$i.img"
	mkfs.ext4 -q -F "$T/i$i.img" >/dev/null 2>&1 || fail "mkfs.ext4 $T/i$i.img"
done
run_lg --session bd2b --config "$T/two.ini" -- bash -c \
	'for f in "$@"; do l=$(losetup -f --show "$f") || exit 9; echo "$l" >>"$0/inloops"; wipefs -a "$l"; done' \
	"$T" "$T/i1.img" "$T/i2.img" >"$T/out2b" 2>&1
assert_rc 86 "$RC" "losetup then wipefs over two ext4 images, max_ops = 2: $(cat "$T/out2b")"
[ "$(wc -l <"$T/inloops")" = 2 ] || fail "losetup in the session: $(cat "$T/out2b")"
is_ext4 "$(sed -n 2p "$T/inloops")" || fail "the second image lost its filesystem"

# 3. Legit: fresh zeroed loop devices mkfs'ed (twice, then wiped) under
# lgrun, and the ext4 devices above only read: no trip, nothing counted.
F=()
for i in 1 2 3; do
	newloop "f$i"
	F+=("$LOOP")
done
before=$(audit_count trip)
run_lg --session bd3 -- bash -c '
	for d in "$@"; do mkfs.ext4 -q -F "$d" && mkfs.ext4 -q -F "$d" && wipefs -a "$d" >/dev/null && mkfs.ext4 -q -F "$d" || exit 1; done' \
	sh "${F[@]}" >"$T/out3" 2>&1
assert_rc 0 "$RC" "mkfs of fresh loop devices: $(cat "$T/out3")"
run_lg --session bd4 -- bash -c '
	for i in 1 2 3; do dd if="$1" of=/dev/null bs=4k count=4 status=none; blkid -p "$1" >/dev/null; done' \
	sh "${W[2]}" >"$T/out4" 2>&1
assert_rc 0 "$RC" "reads of a device with a filesystem: $(cat "$T/out4")"
for d in "${F[@]}"; do is_ext4 "$d" || fail "mkfs.ext4 $d under lgrun did not make its filesystem"; done
[ "$(audit_count trip)" = "$before" ] || fail "the fresh devices or the reads tripped"
for id in bd3 bd4; do
	grep "\"session\":\"$id\"" "$STATE/audit.jsonl" | grep -q device_write &&
		fail "$id: a device write was counted"
	grep -q '"op":"device_write"' "$STATE/sessions/$id.events.jsonl" 2>/dev/null &&
		fail "$id: a device write reached the guard"
done
pass
