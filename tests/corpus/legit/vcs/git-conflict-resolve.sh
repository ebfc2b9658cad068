# A merge with a conflict, resolved and committed; then a revert, a
# cherry-pick, an interactive-free rebase of a stack, and reset --soft.
NEEDS=git
setup() {
	git init -q repo
	cd repo
	printf 'a\nb\nc\n' >conf.txt
	local i
	for i in 1 2 3 4 5; do echo "x$i" >x$i.txt; done
	git add -A && git commit -qm base
	git checkout -qb other
	printf 'a\nB-other\nc\n' >conf.txt && git commit -qam other
	git checkout -q main
	printf 'a\nB-main\nc\n' >conf.txt && git commit -qam main
	cd ..
	manifest repo repo/x1.txt repo/x2.txt repo/x3.txt
}
run() {
	cd repo
	git merge -q other 2>/dev/null && exit 9
	printf 'a\nB-both\nc\n' >conf.txt
	set -e
	git add conf.txt
	git commit -qm "merge other"
	echo y >y.txt && git add y.txt && git commit -qm y
	git revert --no-edit HEAD >/dev/null
	git checkout -qb stack main~2
	echo s1 >s1.txt && git add s1.txt && git commit -qm s1
	echo s2 >s2.txt && git add s2.txt && git commit -qm s2
	git checkout -q main
	git cherry-pick stack~1 >/dev/null
	git rebase -q main stack
	git reset -q --soft HEAD~1
	git commit -qm "s2 again"
	git checkout -q main
}
verify() {
	grep -q B-both repo/conf.txt || bad "merge not resolved"
	none_lost repo
}
