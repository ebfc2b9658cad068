# Files "touched" by sed -i (which replaces each with a new inode born in
# the session) and then deleted: the content predates the session, the
# inode does not. Fixed in issue 12: a rename over pre-existing content
# carries its status on to the new inode.
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
