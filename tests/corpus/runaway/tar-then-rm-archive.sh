# Destroying data in two steps: each folder archived with tar
# --remove-files (its files live on in the archive: a transform), then the
# archive removed. The archive holds the pre-existing content now: removing
# it destroys that content, one decision per archive: stopped at the 3rd.
NEEDS="tar gzip"
EXPECT_REASON=volume_exceeded
setup() {
	local d
	for d in a b c d e; do mkfiles "logs/$d" 3 l .log; done
	manifest logs logs
}
run() {
	cd logs
	for d in a b c d e; do
		tar czf "$d.tgz" --remove-files "$d"
		rm "$d.tgz"
	done
}
verify() {
	[ -e logs/c.tgz ] || { bad "the third archive was removed"; return 1; }
	[ -d logs/d ] && [ -d logs/e ] || { bad "went on after the trip"; return 1; }
	all_kept logs
}
