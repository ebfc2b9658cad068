# A cleanup meant to delete a lot, run under the shipped bulk-cleanup
# profile: 400 old artifacts (made before the session) pruned with find.
LGRUN_ARGS=(--profile bulk-cleanup)
setup() {
	local d
	for d in 1 2 3 4; do mkfiles artifacts/run$d 100 art_ .bin; done
	mkfiles keep 5
	manifest keep keep
}
run() {
	find artifacts -name 'art_*.bin' -delete
	find artifacts -type d -empty -delete
}
verify() {
	[ ! -e artifacts ] || bad "artifacts left: $(find artifacts | head -3)"
	none_lost keep
}
