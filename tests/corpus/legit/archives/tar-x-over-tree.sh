# Restoring a tree from its archive over local edits: GNU tar unlinks each
# file in the way and writes the archived one (50 pre-existing files).
NEEDS=tar
setup() {
	local d
	for d in a b c d e; do mkfiles tree/$d 10; done
	tar -cf tree.tar tree
	find tree -type f -exec sh -c 'for f; do echo "local edit" >>"$f"; done' sh {} +
}
run() {
	tar -xf tree.tar
}
verify() {
	[ "$(find tree -type f | wc -l)" = 50 ] || bad "files missing"
	! grep -rq "local edit" tree || bad "not restored"
}
