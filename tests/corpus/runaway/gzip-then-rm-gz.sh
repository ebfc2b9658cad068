# Destroying data in two steps: each file compressed (gzip f writes f.gz and
# removes f: a transform, nothing lost yet), then its archive removed. The
# archive holds the pre-existing content now, so removing it destroys that
# content as removing f would have: stopped at the 3rd archive.
NEEDS="gzip"
EXPECT_REASON=volume_exceeded
setup() {
	mkfiles data 10 rec_ .csv
	manifest data data
}
run() {
	cd data
	for f in *.csv; do
		gzip "$f"
		rm "$f.gz"
	done
}
verify() {
	# the first two gone (kept), the third lives on in its .gz: 3 away
	# from their paths, and one archive left
	at_most_lost 3 data || return 1
	[ "$(ls data/*.gz 2>/dev/null | wc -l)" = 1 ] || { bad "not one archive left: $(ls data)"; return 1; }
	all_kept data
}
