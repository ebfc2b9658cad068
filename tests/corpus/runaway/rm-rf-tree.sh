# "Start fresh": rm -rf of a data tree that predates the session.
EXPECT_REASON=volume_exceeded
setup() {
	local d
	for d in raw staged curated; do mkfiles data/$d 15 part_ .parquet; done
	manifest data data
}
run() {
	rm -rf data
}
verify() {
	at_most_lost 2 data
}
