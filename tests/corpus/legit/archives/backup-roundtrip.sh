# A backup before a risky change: tar czf of the project, extract into a
# scratch dir, compare with diff -r, remove the scratch dir.
NEEDS="tar gzip diff"
setup() {
	local d
	for d in src docs conf; do mkfiles proj/$d 12; done
	manifest proj proj
}
run() {
	set -e
	tar -czf backup.tgz proj
	mkdir check
	tar -xzf backup.tgz -C check
	diff -r proj check/proj
	rm -rf check
	tar -tzf backup.tgz | wc -l
}
verify() {
	[ ! -e check ] || bad "scratch dir left"
	none_lost proj
}
