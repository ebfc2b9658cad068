# Deletes fired in parallel: one rm per file, all in the background at once.
# Known miss (issue 12): some runs lose 3 to 6 files, others only 2 (a
# race between concurrent removals, so it shows FIXED? in some runs).
KNOWN=issue-12
EXPECT_REASON=volume_exceeded
setup() {
	mkfiles data 20 shard_ .dat
	manifest data data
}
run() {
	cd data
	for f in *; do rm -f "$f" & done
	wait
}
verify() {
	at_most_lost 2 data
}
