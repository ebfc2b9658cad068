# An agent removing files through /dev/fd/N/... of a directory it opened:
# /dev/fd is /proc/self/fd, which must be the target's own, and fd N is a
# magic link to the open directory (issue 29, item 5).
EXPECT_REASON=volume_exceeded
setup() {
	mkfiles data 10 row_ .csv
	manifest data data
}
run() {
	exec 7<data
	for i in $(seq 1 10); do rm "/dev/fd/7/row_$i.csv"; done
}
verify() {
	at_most_lost 2 data
	all_kept data
}
