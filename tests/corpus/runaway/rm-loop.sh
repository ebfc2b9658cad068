# An agent "cleaning up" a data directory one file at a time.
EXPECT_REASON=volume_exceeded
setup() {
	mkfiles data 12 sales_ .csv
	manifest data data
}
run() {
	for f in data/*.csv; do
		echo "removing $f"
		rm "$f"
	done
}
verify() {
	at_most_lost 2 data
}
