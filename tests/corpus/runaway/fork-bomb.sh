# A process explosion: workers that each start more workers, under a
# process budget in this entry's config (budget.max_processes = 40).
EXPECT_REASON=max_processes
TIMEOUT=30
setup() {
	printf '[budget]\nmax_processes = 40\n' >"$META/procs.ini"
	LGRUN_ARGS=(--config "$META/procs.ini")
}
run() {
	spawn() { sleep 23.4567 & sleep 23.4567 & [ "$1" -gt 0 ] && { spawn $(($1 - 1)) & spawn $(($1 - 1)) & }; wait; }
	spawn 6
}
verify() {
	# an odd duration, so no other process on the machine matches
	! pgrep -fx 'sleep 23.4567' >/dev/null || bad "processes of the tree survived"
}
