# Removing project directories one at a time (rm -r of each subdirectory).
EXPECT_REASON=volume_exceeded
setup() {
	local d
	for d in alpha beta gamma delta epsilon; do mkfiles projects/$d 4; done
	manifest projects projects
}
run() {
	for d in projects/*; do rm -r "$d"; done
}
verify() {
	at_most_lost 2 projects
}
