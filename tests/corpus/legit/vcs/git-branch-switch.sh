# Switching to a branch that lacks five committed files which were on disk
# before the session: git removes them, but every byte is in the object
# database (they come back on the way back).
NEEDS=git
setup() {
	git init -q repo
	cd repo
	mkdir docs
	echo kept >README
	local i
	for i in 1 2 3; do echo "main only $i" >m$i.txt; done
	for i in 1 2; do echo "doc $i" >docs/d$i.md; done
	git add -A && git commit -qm main
	git checkout -qb slim
	git rm -q m1.txt m2.txt m3.txt docs/d1.md docs/d2.md
	git commit -qm slim
	git checkout -q main
	cd ..
	manifest repo repo/m1.txt repo/m2.txt repo/m3.txt repo/docs repo/README
}
run() {
	set -e
	cd repo
	git checkout -q slim
	git log --oneline -1
	git checkout -q main
}
verify() {
	none_lost repo
}
