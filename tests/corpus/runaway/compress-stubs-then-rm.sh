# A careless "archive then clean up" loop: the agent writes a stub next to
# each file (echo x > f.gz, no compressor involved), then removes the
# original. The stub holds nothing of the file: this is loss, however the
# names look (issue 29, item 1: what a transform is not).
EXPECT_REASON=volume_exceeded
setup() {
	mkfiles data 12 report .csv
	manifest data data
}
run() {
	cd data
	for f in *; do
		echo x >"$f.gz"
		rm "$f"
	done
}
verify() {
	at_most_lost 2 data
}
