# An agent that never finishes (waiting on a job that never completes),
# under a wall-clock budget (--timeout 2s).
LGRUN_ARGS=(--timeout 2s)
EXPECT_REASON=timeout
TIMEOUT=30
setup() { :; }
run() {
	while :; do
		[ -e job.done ] && break
		echo "waiting for the job"
		sleep 0.2
	done
}
verify() {
	grep -q '"reason":"timeout_reserve"' "$STATE/audit.jsonl" || bad "no reserve warning"
}
