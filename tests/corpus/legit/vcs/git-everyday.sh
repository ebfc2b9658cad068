# Everyday git in a repository made before the session (its loose objects
# and work tree predate it): branches, commits, stash, merge, rebase and gc.
NEEDS=git
setup() {
	git init -q repo
	cd repo
	local i
	for i in $(seq -w 1 20); do echo "main $i" >f$i.txt; done
	echo v1 >README
	git add -A && git commit -qm initial
	git checkout -qb feature
	for i in $(seq -w 1 10); do echo "feature $i" >f$i.txt; done
	git commit -qam "feature: first half"
	git checkout -q main
	echo v2 >README && git commit -qam "main: readme"
	cd ..
	manifest repo repo/README
}
run() {
	set -e
	cd repo
	for r in 1 2 3; do
		git checkout -q feature
		echo "wip $r" >>f1$r.txt
		git stash -q
		git checkout -q main
		git checkout -q feature
		git stash pop -q
		git commit -qam "feature: round $r"
		git checkout -q main
		echo "main $r" >>README
		echo "new $r" >new$r.txt
		git add -A && git commit -qm "main: round $r"
	done
	git checkout -qb topic
	echo topic >topic.txt && git add topic.txt && git commit -qm topic
	git checkout -q main
	git merge -q --no-edit topic
	git branch -qd topic
	git rebase -q main feature
	git checkout -q main
	git gc -q
	git fsck --no-progress >/dev/null
}
verify() {
	git -C repo merge-base --is-ancestor main feature || bad "not rebased"
	[ -z "$(git -C repo status --porcelain)" ] || bad "work tree dirty"
	[ "$(cat repo/f05.txt)" = "main 05" ] || bad "f05.txt is '$(cat repo/f05.txt)'"
}
