#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Where lgrun's time per unlink goes: `perf record` of lgrun --observe over
# rm -rf of N pre-existing files on tmpfs (the bench's rm row), then the
# notify thread's profile: its share in the kernel and in lgrun, its top
# symbols, and its syscalls per unlink; with PARTS=1, the notify step's
# parts by call stacks (bench/notify_parts.py). Prints; asserts nothing. Root
# (perf with kernel symbols). N (10000), B (build), LGRUN_ARGS (extra options).
set -u
cd "$(dirname "$0")/.."
B=${B:-build}
N=${N:-10000}
LGRUN=$PWD/$B/bin/lgrun
command -v perf >/dev/null || { echo "profile_rm: needs perf (apt install linux-perf)"; exit 1; }
W=$(mktemp -d /dev/shm/lgprof.XXXXXX)
trap 'rm -rf "$W"' EXIT
mk() { # N small files with content (an empty file holds no data to lose)
	python3 -c 'import os, sys
d, n = sys.argv[1], int(sys.argv[2])
os.makedirs(d, exist_ok=True)
for i in range(n):
    with open(f"{d}/f{i}", "w") as f: f.write(f"data {i}\n")' "$W/rm" "$N"
}
mk
perf record -q -F 20000 -o "$W/perf.data" -- "$LGRUN" --state-dir "$W/st" --observe \
	${LGRUN_ARGS:-} -- rm -rf "$W/rm" 2>/dev/null >/dev/null || { echo "profile_rm: perf record failed"; exit 1; }
# the threads (perf's "pid" key is the thread), lgrun's busiest first
perf report -i "$W/perf.data" --sort pid --stdio 2>/dev/null | grep -E '^ +[0-9]' >"$W/threads"
echo "lgrun --observe -- rm -rf of $N pre-existing files on tmpfs: samples by thread"
head -6 "$W/threads"
perf report -i "$W/perf.data" --sort pid,dso --stdio 2>/dev/null | grep -E '^ +[0-9]' >"$W/dso"
perf report -i "$W/perf.data" --sort pid,sym --stdio 2>/dev/null | grep -E '^ +[0-9]' >"$W/sym"
for tid in $(grep -E ':lgrun *$' "$W/threads" | head -2 | awk '{ print $2 }' | cut -d: -f1); do
	echo "thread $tid: by object (% of all samples)"
	grep -E " $tid:" "$W/dso" | head -5
	echo "thread $tid: top symbols (self, % of all samples)"
	grep -E " $tid:" "$W/sym" | head -"${TOP:-30}"
done
if [ -n "${PARTS:-}" ]; then # the notify step's parts, by call stacks
	mk
	perf record -q -F 5000 --call-graph dwarf,65528 -o "$W/parts.data" -- "$LGRUN" --state-dir "$W/st2" \
		--observe ${LGRUN_ARGS:-} -- rm -rf "$W/rm" 2>/dev/null >/dev/null || { echo "profile_rm: perf record -g failed"; exit 1; }
	perf script -i "$W/parts.data" -F tid,ip,sym 2>/dev/null >"$W/parts.txt"
	python3 bench/notify_parts.py "$W/parts.txt" "$N" 5000
fi
mk
strace -c -f -o "$W/strace.txt" "$LGRUN" --state-dir "$W/st" --observe ${LGRUN_ARGS:-} -- rm -rf "$W/rm" 2>/dev/null >/dev/null
echo "syscalls of lgrun and rm per unlink (strace -c -f; rm itself makes about 1 per file):"
awk -v n="$N" '$NF ~ /^[a-z_0-9]+$/ && $4 ~ /^[0-9]+$/ && $4 >= n / 10 { printf "  %-20s %6.2f\n", $NF, $4 / n }' "$W/strace.txt"
