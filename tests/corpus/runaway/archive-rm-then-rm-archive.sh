# Destroying data in three steps: each folder archived (tar czf, zip -r),
# the folder removed by rm (its files live on in the archive: not
# counted), then the archive removed. The archive holds the pre-existing
# content now: removing it destroys that content, one decision per
# archive: stopped at the 3rd (issue 41).
NEEDS="tar gzip zip"
EXPECT_REASON=volume_exceeded
setup() {
	local d
	for d in a b c d e; do mkfiles "logs/$d" 3 l .log; done
	manifest logs logs
}
run() {
	cd logs
	for d in a b; do
		tar czf "$d.tgz" "$d" && rm -rf "$d"
		rm "$d.tgz"
	done
	for d in c d e; do
		zip -qr "$d.zip" "$d" && rm -r "$d"
		rm "$d.zip"
	done
}
verify() {
	[ -e logs/c.zip ] || { bad "the third archive was removed"; return 1; }
	[ -d logs/d ] && [ -d logs/e ] || { bad "went on after the trip"; return 1; }
	all_kept logs
}
