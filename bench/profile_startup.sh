#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Where `lgrun -- true`'s start goes, by perf: N runs of
# `lgrun --bpf=off -- true` recorded machine-wide (its exec, the tree's
# fork and exec, the cgroup, the watchdog, the kernel's work for them),
# then the samples by program and the top symbols of lgrun's own
# processes. Prints; asserts nothing. Root (perf -a with kernel symbols).
# N (200), B (build), LGRUN_ARGS (extra options), TOP (30).
set -u
cd "$(dirname "$0")/.."
B=${B:-build}
N=${N:-200}
LGRUN=$PWD/$B/bin/lgrun
command -v perf >/dev/null || { echo "profile_startup: needs perf (apt install linux-perf)"; exit 1; }
W=$(mktemp -d /var/tmp/lgprof.XXXXXX) # the state dir on disk, as users have it
trap 'rm -rf "$W"' EXIT
TRUE_BIN=$(type -P true)
loop() { for ((i = 0; i < N; i++)); do "$@" >/dev/null 2>&1; done; }
t0=${EPOCHREALTIME/[.,]/}
loop "$TRUE_BIN"
t1=${EPOCHREALTIME/[.,]/}
loop "$LGRUN" --bpf=off --state-dir "$W/st" ${LGRUN_ARGS:-} -- "$TRUE_BIN"
t2=${EPOCHREALTIME/[.,]/}
echo "startup: true $(((t1 - t0) / N)) us, lgrun --bpf=off -- true $(((t2 - t1) / N)) us per run ($N runs, unprofiled)"
perf record -q -a -F 20000 -o "$W/perf.data" -- bash -c "$(declare -f loop); N=$N; loop '$LGRUN' --bpf=off --state-dir '$W/st' ${LGRUN_ARGS:-} -- '$TRUE_BIN'" ||
	{ echo "profile_startup: perf record failed"; exit 1; }
echo "samples by program (all CPUs; swapper is idle time):"
perf report -i "$W/perf.data" --sort comm --stdio 2>/dev/null | grep -E '^ +[0-9]' | head -8
echo "by program and object (% of all samples):"
perf report -i "$W/perf.data" --sort comm,dso --stdio 2>/dev/null | grep -E '^ +[0-9]' |
	grep -E ' (lgrun|lgrun-watchdog|true) ' | head -10
echo "lgrun's processes, top symbols (self, % of all samples):"
perf report -i "$W/perf.data" --sort comm,sym --stdio 2>/dev/null | grep -E '^ +[0-9]' |
	grep -E ' (lgrun|lgrun-watchdog) ' | head -"${TOP:-30}"
