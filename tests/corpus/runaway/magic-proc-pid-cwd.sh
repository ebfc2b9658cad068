# An agent removing files by a path through /proc/$$/cwd (its shell's
# working directory, as a tool printed it): one rm a file, each through
# another process's magic link. Under lgrun's mount namespace (root) the
# target's root is not lgrun's, and RESOLVE_IN_ROOT answers EXDEV for a
# magic link: the removals went unseen as "missing" (issue 29, item 5).
# (/proc/self/cwd/... is rewritten to the target's /proc/PID and was seen.)
EXPECT_REASON=volume_exceeded
setup() {
	mkfiles data 10 rec_ .json
	manifest data data
}
run() {
	for i in $(seq 1 10); do rm "/proc/$$/cwd/data/rec_$i.json"; done
}
verify() {
	at_most_lost 2 data
	all_kept data
}
