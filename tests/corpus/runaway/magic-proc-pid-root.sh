# An agent removing files by a path through /proc/$$/root (the shell's
# root, a magic link), one rm a file: under lgrun's mount namespace the
# target's root is not lgrun's, where RESOLVE_IN_ROOT answers EXDEV for a
# magic link (issue 29, item 5).
EXPECT_REASON=volume_exceeded
setup() {
	mkfiles data 10 doc_ .txt
	manifest data data
}
run() {
	for i in $(seq 1 10); do rm "/proc/$$/root$WORK/data/doc_$i.txt"; done
}
verify() {
	at_most_lost 2 data
	all_kept data
}
