# Deletes fired in parallel: one rm per file, all in the background at once.
# Fixed in issue 12: an allowed delete not yet run in the kernel still finds
# its file there, which was taken for the file come back.
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
