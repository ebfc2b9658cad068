# An agent "clearing" ten data files with its shell (: > f) and going on
# with its work for a long while. Emptying pre-existing data destroys it
# (issue 27), but until issue 41 it was judged only when the whole tree
# had ended: the agent worked on for as long as it liked first. A file
# still empty ten seconds after its O_TRUNC open, with no process holding
# it open for writing, counts while the tree runs: the session is stopped
# before the work after it ends, every file's content kept.
EXPECT_REASON=volume_exceeded
TIMEOUT=90
setup() {
	mkfiles data 10 part_ .csv
	local f
	for f in data/*.csv; do seq 1 200 >>"$f"; done
	manifest data data
}
run() {
	for f in data/*.csv; do
		: >"$f"
		sleep 0.3
	done
	# the agent goes on: a long build of its own
	for i in $(seq 1 25); do
		echo "step $i" >>own.log
		sleep 1
	done
	touch went-on-to-the-end
}
verify() {
	[ ! -e went-on-to-the-end ] || bad "stopped only when the agent ended" || return 1
	all_kept data
}
