# A real tar -z whose archive goes nowhere: tar czf /dev/null
# --remove-files. GNU tar runs gzip and writes its output to /dev/null
# (through a child of its own, /dev/null is no regular file): the
# compressor's output is no archive, and while tar's child is about to
# open it, the name it opens has no archive's suffix. The archiver and its
# compressor are real, but nothing holds the content: a loss like any
# other (issue 29, item 1).
NEEDS="tar gzip"
EXPECT_REASON=volume_exceeded
setup() {
	mkfiles data 12 log .txt
	manifest data data
}
run() {
	tar czf /dev/null --remove-files data
}
verify() {
	at_most_lost 2 data
}
