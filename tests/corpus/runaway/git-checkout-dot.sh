# `git checkout -- .` to "discard my changes" over eight modified files.
NEEDS=git
EXPECT_REASON=volume_exceeded
setup() {
	git init -q repo
	mkdir -p repo/src
	local i
	for i in $(seq 1 8); do echo "v1 $i" >repo/src/m$i.c; done
	git -C repo add -A && git -C repo commit -qm one
	for i in $(seq 1 8); do echo "unsaved $i" >>repo/src/m$i.c; done
	manifest work repo/src
}
run() {
	cd repo && git checkout -q -- .
}
verify() {
	at_most_lost 2 work
}
