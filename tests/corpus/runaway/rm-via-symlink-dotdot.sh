# The agent removes files by a path that goes through a symlink and then
# "..": the kernel resolves ".." from the link's target, so the files
# removed are next to the target, not next to the link. Fixed in issue 12:
# paths are resolved as the kernel resolves them, never lexically.
EXPECT_REASON=volume_exceeded
setup() {
	mkdir -p store/current work
	mkfiles store 10 rec_ .json
	manifest data store
	ln -s ../store/current work/cur
}
run() {
	cd work && for i in $(seq 1 10); do rm -f "cur/../rec_$i.json"; done
}
verify() {
	at_most_lost 2 data
}
