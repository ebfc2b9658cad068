# `git reset --hard` over five files with uncommitted work made before the
# session (the current content is nowhere in the object database).
NEEDS=git
EXPECT_REASON=volume_exceeded
setup() {
	git init -q repo
	local i
	for i in 1 2 3 4 5; do echo "committed $i" >repo/f$i.txt; done
	git -C repo add -A && git -C repo commit -qm one
	for i in 1 2 3 4 5; do echo "precious work $i" >>repo/f$i.txt; done
	manifest work repo/f*.txt
}
run() {
	cd repo && git reset -q --hard
}
verify() {
	at_most_lost 2 work
}
