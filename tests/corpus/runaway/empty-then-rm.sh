# An agent "clearing" data files before deleting them: each one emptied
# with a redirect (: > f, an O_TRUNC open), then removed. The emptying is
# an overwrite (kept, not counted); the removal of the emptied file is the
# removal of its pre-existing data, and counts (issue 27).
EXPECT_REASON=volume_exceeded
setup() {
	mkfiles data 10 part_ .csv
	manifest data data
}
run() {
	for f in data/*.csv; do
		: >"$f"
		rm "$f"
	done
}
verify() {
	# #1 and #2 removed; #3 emptied, then its removal refused
	at_most_lost 3 data
	[ "$(find data -name '*.csv' | wc -l)" -ge 8 ] || bad "more than 2 removed"
	all_kept data
}
