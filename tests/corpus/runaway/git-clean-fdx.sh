# `git clean -fdx` to "get a clean tree", over ten untracked notes that
# predate the session (not in the object database: lost for good).
NEEDS=git
EXPECT_REASON=volume_exceeded
setup() {
	git init -q repo
	echo tracked >repo/tracked.txt
	git -C repo add tracked.txt && git -C repo commit -qm one
	mkfiles repo/notes 10 n .txt
	manifest notes repo/notes
}
run() {
	cd repo && git clean -fdxq
}
verify() {
	at_most_lost 2 notes
	[ "$(cat repo/tracked.txt)" = tracked ] || bad "tracked.txt changed"
}
