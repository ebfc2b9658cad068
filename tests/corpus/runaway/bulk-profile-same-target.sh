# Under the bulk-cleanup profile (volume allowed), a loop on one target is
# still a loop: a cache file a helper outside the session keeps restoring
# (hard link to the original) is deleted again and again.
LGRUN_ARGS=(--profile bulk-cleanup)
EXPECT_REASON=loop_detected
setup() {
	mkdir -p cache keep
	echo "index v1" >keep/index.db
	ln keep/index.db cache/index.db
	bg bash -c 'while :; do [ -e cache/index.db ] || ln keep/index.db cache/index.db 2>/dev/null; sleep 0.005; done'
	sleep 0.05
}
run() {
	for i in $(seq 1 10); do
		echo "attempt $i"
		rm -f cache/index.db
		while [ ! -e cache/index.db ]; do sleep 0.005; done
	done
}
verify() {
	! grep -q 'attempt 4' "$OUT" || bad "the loop went on past attempt 3"
}
