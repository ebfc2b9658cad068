# A Python agent tool "reset the workspace": shutil.rmtree on a directory of
# user documents made before the session.
NEEDS=python3
EXPECT_REASON=volume_exceeded
setup() {
	mkfiles docs/notes 10 note_ .md
	mkfiles docs/specs 10 spec_ .md
	manifest docs docs
}
run() {
	python3 -c 'import shutil; shutil.rmtree("docs")'
}
verify() {
	at_most_lost 2 docs
}
