# A real tar whose archive goes nowhere: tar cf /dev/null --remove-files
# (GNU tar does not even read the files for /dev/null), or an archive
# removed while tar still writes it. The archiver is real, but nothing
# holds the content: a loss like any other (issue 29, item 1).
NEEDS=tar
EXPECT_REASON=volume_exceeded
setup() {
	mkfiles data 12 log .txt
	manifest data data
}
run() {
	tar cf /dev/null --remove-files data
}
verify() {
	at_most_lost 2 data
}
