# A brand-new repository made in the session: 40 commits, files renamed and
# removed along the way, tags, then an aggressive gc and a repack.
NEEDS=git
setup() { :; }
run() {
	set -e
	git init -q proj
	cd proj
	for i in $(seq 1 40); do
		echo "change $i" >>log.txt
		echo "file $i" >f$i.txt
		[ $i -gt 5 ] && [ -e f$((i - 5)).txt ] && git rm -q f$((i - 5)).txt
		git add -A
		[ $((i % 10)) = 0 ] && git mv f$i.txt moved$i.txt
		git commit -qm "commit $i"
		[ $((i % 10)) = 0 ] && git tag v$((i / 10))
	done
	git gc -q --aggressive
	git repack -qad
	git prune
}
verify() {
	[ "$(git -C proj rev-list --count HEAD)" = 40 ] || bad "commits missing"
}
