# A second work tree for a hotfix: git worktree add, commit there, merge it
# back, remove the work tree and prune.
NEEDS=git
setup() {
	git init -q repo
	local i
	for i in $(seq 1 15); do echo "line $i" >repo/src$i.c; done
	git -C repo add -A && git -C repo commit -qm initial
	manifest repo repo/src1.c
}
run() {
	set -e
	cd repo
	git worktree add -q ../hotfix -b hotfix
	(cd ../hotfix && echo fix >>src3.c && git commit -qam "fix src3" && echo new >notes.md && git add notes.md && git commit -qm notes)
	git merge -q --ff-only hotfix
	git worktree remove ../hotfix
	git worktree add -q ../review main~1 --detach
	git worktree remove --force ../review
	git worktree prune
	git branch -qd hotfix
}
verify() {
	[ ! -e hotfix ] && [ ! -e review ] || bad "work trees left"
	grep -q fix repo/src3.c || bad "the fix is not merged"
	none_lost repo
}
