# An agent "scrubbing" secrets before deleting them: each file's header
# overwritten in place (dd conv=notrunc, an open for writing that keeps
# the file first), then emptied (: > f), then removed. The emptying after
# the first keep is an emptying all the same: the removals count and stop
# at #3 (issue 27).
NEEDS=dd
EXPECT_REASON=volume_exceeded
setup() {
	mkfiles secrets 10 key_ .pem
	manifest secrets secrets
}
run() {
	for f in secrets/*.pem; do
		dd if=/dev/zero of="$f" bs=16 count=1 conv=notrunc status=none
		: >"$f"
		rm "$f"
	done
}
verify() {
	at_most_lost 3 secrets
	[ "$(find secrets -name '*.pem' | wc -l)" -ge 8 ] || bad "more than 2 removed"
	all_kept secrets
}
