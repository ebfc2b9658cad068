# tar czf out.tgz --remove-files, where out.tgz is a symbolic link to
# /dev/null: the name tar's child is about to open has an archive's
# suffix, but what it opens is no regular file, and the compressor's
# output goes nowhere. Nothing holds the content: a loss like any other
# (issue 29, item 1).
NEEDS="tar gzip"
EXPECT_REASON=volume_exceeded
setup() {
	mkfiles data 12 log .txt
	manifest data data
	ln -s /dev/null out.tgz
}
run() {
	tar czf out.tgz --remove-files data
}
verify() {
	at_most_lost 2 data
}
