# A program that tunes itself through the kernel's files, as process
# managers, test runners and build tools do: its OOM score and name under
# /proc/self, and (as root) a kernel setting under /sys written back as it
# is. Writing them is a request to the kernel, not data: nothing is kept,
# nothing is counted, and no warning says a file "could not be kept".
NEEDS="python3"
setup() {
	mkfiles data 3
	manifest data data
}
run() {
	set -e
	for i in 1 2 3 4 5; do
		echo $((100 * i)) >/proc/self/oom_score_adj
		echo "worker-$i" >/proc/self/comm
	done
	python3 -c '
import os
for i in range(5):
    with open("/proc/self/comm", "w") as f:
        f.write("py-%d" % i)'
	# as root, a setting of the kernel's written back as it is (a tuning
	# script's step): a file of sysfs, there since boot
	f=/sys/kernel/mm/transparent_hugepage/enabled
	if [ "$(id -u)" = 0 ] && [ -w "$f" ]; then
		cur=$(sed 's/.*\[\(.*\)\].*/\1/' "$f")
		for i in 1 2 3; do echo "$cur" >"$f"; done
	fi
}
verify() {
	none_lost data
	! grep -q '"reason":"not_kept"' "$STATE/audit.jsonl" ||
		bad "a kernel file was reported as data not kept: $(grep -m1 '"reason":"not_kept"' "$STATE/audit.jsonl" | cut -c1-200)"
	grep '"event":"session_end"' "$STATE/audit.jsonl" | grep -q '"kept_files":0,' ||
		bad "kernel files were kept: $(grep '"event":"session_end"' "$STATE/audit.jsonl" | grep -o '"kept_[a-z]*":[0-9]*' | tr '\n' ' ')"
}
