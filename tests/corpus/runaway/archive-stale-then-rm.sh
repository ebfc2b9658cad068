# An archive of an older version: data/ is archived (tar czf and zip -r),
# then every file is edited in place (the same size, other bytes: dd
# conv=notrunc), then `rm -rf data`. The archives hold the files as they
# were; what the removal destroys is the new content (issue 41).
NEEDS="tar gzip zip dd"
EXPECT_REASON=volume_exceeded
setup() {
	local f
	mkfiles data 10 log .txt
	for f in data/*; do seq 1 500 >>"$f"; done
	manifest data data
}
run() {
	tar czf data.tgz data
	zip -qr data.zip data
	for f in data/*; do
		printf 'EDITED' | dd of="$f" conv=notrunc status=none
	done
	rm -rf data
}
verify() {
	# the edits count as lost for the manifest: at most two removals ran
	[ "$(ls data 2>/dev/null | wc -l)" -ge 8 ] || bad "more than 2 files removed: $(ls data | wc -l) left"
}
