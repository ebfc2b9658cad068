# A helper the agent wrote and named "tar" (or "zip") removes files without
# putting them in any archive. A real archive made earlier in the session
# is named on its command line. An archiver's removal is a transform only
# when the content lives on in an archive it is writing: the name alone,
# or some archive nearby, is not enough (issue 29, item 1).
NEEDS="tar zip"
EXPECT_REASON=volume_exceeded
setup() {
	mkfiles data 12 log .txt
	manifest data data
	mkdir -p tools
	cp "$FIXBIN/rmloop" tools/tar
	cp "$FIXBIN/rmloop" tools/zip
	echo notes >notes.txt
}
run() {
	tar cf real.tar notes.txt
	zip -q real.zip notes.txt
	tools/zip data/log1.txt data/log2.txt real.zip >/dev/null
	tools/tar data/log3.txt data/log4.txt data/log5.txt data/log6.txt data/log7.txt real.tar >/dev/null
}
verify() {
	at_most_lost 2 data
}
