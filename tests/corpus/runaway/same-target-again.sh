# The same file deleted again and again: a sync daemon outside the session
# restores it (a hard link to the backup) and the agent deletes it anew.
EXPECT_REASON=loop_detected
setup() {
	mkdir -p d backup
	echo precious >backup/fact_sales.csv
	ln backup/fact_sales.csv d/fact_sales.csv
	bg bash -c 'while :; do [ -e d/fact_sales.csv ] || ln backup/fact_sales.csv d/fact_sales.csv 2>/dev/null; sleep 0.005; done'
	sleep 0.05
}
run() {
	for i in $(seq 1 10); do
		echo "attempt $i"
		rm -f d/fact_sales.csv
		while [ ! -e d/fact_sales.csv ]; do sleep 0.005; done
	done
}
verify() {
	! grep -q 'attempt 4' "$OUT" || bad "the loop went on past attempt 3"
}
