# Files "touched" by sed -i (which replaces each with a new inode born in
# the session) and then deleted: the content predates the session, the
# inode does not. Issue 12.
KNOWN=issue-12
EXPECT_REASON=volume_exceeded
setup() {
	mkfiles notes 10 note_ .md
	manifest notes notes
}
run() {
	sed -i 's/record/RECORD/' notes/*.md
	rm -f notes/*.md
}
verify() {
	# sed's edit itself is not a loss; the deletes are.
	local n
	n=$(find notes -name '*.md' | wc -l)
	[ "$n" -ge 8 ] || bad "$((10 - n)) of 10 pre-existing files lost (at most 2 allowed)"
}
