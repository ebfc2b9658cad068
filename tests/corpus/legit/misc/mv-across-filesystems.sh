# Moving a batch of exports to another filesystem (a tmpfs): mv copies each
# file, then unlinks the original. The data is still there, at the new
# place (DESIGN: "moved across filesystems" is not lost).
# Fixed in issue 12: the failed rename (EXDEV) tells where the copy is; a
# source whose copy is there (type, size, mtime) is "moved", not lost.
setup() {
	[ -d /dev/shm ] && [ -w /dev/shm ] || skip "no writable /dev/shm"
	[ "$(stat -c %d /dev/shm)" != "$(stat -c %d .)" ] || skip "/dev/shm is on the same filesystem"
	SHM=$(mktemp -d /dev/shm/lgcorpus.XXXXXX)
	echo "$SHM" >"$META/shm"
	export SHM
	mkfiles exports 12 export_ .csv
	manifest exports exports
}
teardown() {
	[ -s "$META/shm" ] && rm -rf "$(cat "$META/shm")"
}
run() {
	mv exports/*.csv "$SHM/"
}
verify() {
	[ "$(ls "$SHM" | wc -l)" = 12 ] || bad "not every file arrived"
}
