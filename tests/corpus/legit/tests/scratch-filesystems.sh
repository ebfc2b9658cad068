# A storage project's test suite makes scratch filesystems to test on, as
# xfstests and e2fsprogs' own tests do: sparse image files of its own,
# attached as loop devices, mkfs.ext4 on each (again between its cases),
# wipefs -a at the end, and blkid read between. Each device is empty at
# the session's first write of it: what is on it from then on is the
# session's, and nothing is counted (issue 39 item 8). Root only.
NEEDS="losetup mkfs.ext4 wipefs blkid"
setup() {
	[ "$(id -u)" = 0 ] || skip "needs root (loop devices)"
	mkfiles data 3
	manifest data data
	: >"$META/loops"
}
run() {
	set -e
	for i in 1 2 3 4; do
		truncate -s 32M "scratch$i.img"
		d=$(losetup -f --show "scratch$i.img")
		echo "$d" >>"$META/loops"
		mkfs.ext4 -q -F "$d"
		blkid -p "$d" >/dev/null
		mkfs.ext4 -q -F "$d"
		wipefs -a "$d" >/dev/null
	done
}
verify() {
	none_lost data
	! grep -q '"op":"device_write"' "$STATE/audit.jsonl" ||
		bad "a write of a fresh device was counted: $(grep -m1 '"op":"device_write"' "$STATE/audit.jsonl" | cut -c1-200)"
}
teardown() {
	local l
	[ -f "$META/loops" ] || return 0
	while read -r l; do losetup -d "$l"; done <"$META/loops"
}
