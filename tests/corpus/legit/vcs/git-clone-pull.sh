# Two clones of a local bare repository: commit and push from one, pull
# (fast-forward and then a merge) in the other, fetch --prune.
NEEDS=git
setup() {
	git init -q --bare origin.git
	git clone -q origin.git a 2>/dev/null
	local i
	for i in $(seq 1 10); do echo "v1 $i" >a/file$i; done
	git -C a add -A && git -C a commit -qm one && git -C a push -q origin main
	git clone -q origin.git b
	manifest b b/file1
}
run() {
	set -e
	cd a
	for i in 1 2 3; do echo "v2 $i" >file$i; done
	git rm -q file10
	git commit -qam two
	git push -q origin main
	git push -q origin main:old-branch
	git push -q origin --delete old-branch
	cd ../b
	git pull -q --ff-only
	echo local >local.txt && git add local.txt && git commit -qm local
	cd ../a && echo three >file4 && git commit -qam three && git push -q origin main
	cd ../b
	git pull -q --no-rebase --no-edit
	git fetch -q --prune
	git push -q origin main
}
verify() {
	[ "$(cat b/file4)" = three ] || bad "not merged"
	[ ! -e b/file10 ] || bad "file10 not removed"
}
