# An archive made before the session (a backup from yesterday), then the
# originals removed in the session: the archive holds them, but it is not
# the session's work and lgrun cannot tell it from any archive lying
# around (it may be stale, or be removed next): the removals count
# (issue 41).
NEEDS="tar gzip"
EXPECT_REASON=volume_exceeded
setup() {
	local f
	mkfiles data 10 log .txt
	for f in data/*; do seq 1 500 >>"$f"; done
	manifest data data
	tar czf data.tgz data
	touch -d '2 days ago' data.tgz
}
run() {
	rm -rf data
}
verify() {
	at_most_lost 2 data
}
