#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What a rewind costs (issue 40: "10,000 entries in under 2 s on tmpfs"):
# Claude Code against the mock model removes N pre-existing files in turn 1
# (the delete rules off, so that all go), then `lgctl rewind --turn 1` puts
# them back; baseline: `cp -a` of the same N files, in the same round. On
# tmpfs (/dev/shm). Prints the medians and their ratio; asserts nothing.
# N (10000), ROUNDS (3), B (build). Needs `make agents` (Claude Code).
set -u
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
source "$ROOT/tests/integration/lib.sh"
need_agent claude
N=${N:-10000}
ROUNDS=${ROUNDS:-3}
export LC_ALL=C
mountpoint -q /dev/shm || skip "needs /dev/shm (tmpfs)"
printf '[volumetric]\nmax_ops = 0\n[same_target]\nmax = 0\n' >"$T/cfg.ini"
echo "rm -rf big" >"$T/1.sh"
echo "echo done" >"$T/2.sh"
agent_setup claude
start_mock_llm --script shell_cmds 2 --cmd "sh $T/{i}.sh"
agent_cmd claude "Do the steps."
ms() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.0f\n", (b - a) * 1000 }'; }
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
: >"$T/rewind.ms"
: >"$T/cp.ms"
for r in $(seq 1 "$ROUNDS"); do
	W=$(mktemp -d /dev/shm/lgrewind.XXXXXX)
	mkdir -p "$W/proj/big" "$W/state"
	python3 -c 'import sys
for i in range(int(sys.argv[2])):
    open(f"{sys.argv[1]}/f{i}", "w").write(f"data {i}\n")' "$W/proj/big" "$N"
	cp -a "$W/proj/big" "$W/src"
	sleep 0.05
	(cd "$W/proj" && "$LGRUN" --state-dir "$W/state" --config "$T/cfg.ini" \
		--session rw -- timeout 300 "${AGENT_CMD[@]}" >"$T/out" 2>&1) ||
		{ rm -rf "$W"; fail "the session failed: $(tail -3 "$T/out")"; }
	[ ! -e "$W/proj/big" ] || { rm -rf "$W"; fail "turn 1 did not remove big/"; }
	s=$EPOCHREALTIME
	"$LGCTL" --state-dir "$W/state" rewind rw --turn 1 >"$T/rw.out" 2>&1
	e=$EPOCHREALTIME
	n=$(find "$W/proj/big" -type f | wc -l)
	[ "$n" = "$N" ] || { rm -rf "$W"; fail "the rewind put back $n of $N: $(tail -3 "$T/rw.out")"; }
	ms "$s" "$e" >>"$T/rewind.ms"
	s=$EPOCHREALTIME
	cp -a "$W/src" "$W/copy"
	e=$EPOCHREALTIME
	ms "$s" "$e" >>"$T/cp.ms"
	rm -rf "$W"
done
rw=$(median <"$T/rewind.ms")
cp=$(median <"$T/cp.ms")
printf 'rewind of %d removed files (tmpfs, median of %d): %d ms; cp -a of them: %d ms; %.2fx\n' \
	"$N" "$ROUNDS" "$rw" "$cp" "$(awk -v a="$rw" -v b="$cp" 'BEGIN { print (b ? a / b : 0) }')"
