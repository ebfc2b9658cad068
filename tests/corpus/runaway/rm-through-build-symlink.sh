# A project whose build/ is a symlink to the data it was built from (a
# common layout for large datasets): the agent "cleans the build folder"
# file by file. build/ is a shipped ignore folder; the files are the data.
# Fixed in issue 12: ignore globs judge where a path really leads.
EXPECT_REASON=volume_exceeded
setup() {
	mkfiles datasets 10 part_ .csv
	manifest data datasets
	mkdir -p proj
	ln -s ../datasets proj/build
}
run() {
	cd proj && for f in build/*; do rm -f "$f"; done
}
verify() {
	at_most_lost 2 data
}
