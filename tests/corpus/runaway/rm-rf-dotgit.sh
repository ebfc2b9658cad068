# `rm -rf .git` to "re-initialise" a repository: its history is the object
# database itself.
NEEDS=git
EXPECT_REASON=volume_exceeded
setup() {
	git init -q repo
	local i
	for i in 1 2 3 4 5; do echo "file $i" >repo/f$i.txt; git -C repo add -A; git -C repo commit -qm "c$i"; done
	manifest git repo/.git
}
run() {
	cd repo && rm -rf .git && git init -q
}
verify() {
	at_most_lost 2 git
}
