#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Where `lgrun -- true`'s start goes: the same short command with one part
# of lgrun turned off at a time, against bare `true` and the notify-only
# floor (bench/notify_null.c), interleaved in rounds, medians; each sample
# by `perf stat -r N` (a shell loop without perf). What a part
# costs is lgrun's time minus the time without it. Every variant reads the
# same config text (the default lgrun.ini, a part's key appended), so a
# part is not mixed with parsing that file. `make bench`'s row is a variant
# too: `lgrun -- true` with the default --bpf=auto, `true` found on PATH.
# Last, what one file made in the state dir costs: on an ext4 without a
# journal it can be 100 times tmpfs's (the allocator skips the inodes freed
# in the last minutes, and every start makes three files there).
# Prints; asserts nothing.
#   STARTUP_N (200) runs per sample, STARTUP_ROUNDS (7), B (build)
set -u
cd "$(dirname "$0")/.."
B=${B:-build}
N=${STARTUP_N:-200}
ROUNDS=${STARTUP_ROUNDS:-7}
LGRUN=$PWD/$B/bin/lgrun
TRUE_BIN=$(type -P true)
W=$(mktemp -d /var/tmp/lgstartup.XXXXXX) # the state dir on disk, as users have it
SHM=$(mktemp -d /dev/shm/lgstartup.XXXXXX)
trap 'rm -rf "$W" "$SHM"' EXIT
cc -O2 -pthread -o "$W/notify_null" bench/notify_null.c || exit 1
# the config lgrun reads by default (its --help names it)
CONF=${LGRUN_CONFIG:-$("$LGRUN" --help | sed -n 's/.*else \(\/.*lgrun\.ini\)).*/\1/p')}
[ -r "$CONF" ] || CONF=/dev/null
ini() { # name key-lines...: the default config with them appended
	local n=$1
	shift
	{ cat "$CONF"; printf '%s\n' "$@"; } >"$W/$n.ini"
}
ini noshim '[shim]' 'enabled = false'
ini norec '[record]' 'events = false'
ini noq '[quarantine]' 'enabled = false'
ini noiso '[guard]' 'isolate = false'
ini none '[shim]' 'enabled = false' '[record]' 'events = false' '[quarantine]' \
	'enabled = false' '[guard]' 'isolate = false'
VARIANTS=(bare floor lgrun bench noshim norec noq noiso tmpfs none)
declare -A what=([bare]="true" [floor]="notify_null true (the floor)"
	[lgrun]="lgrun --bpf=off -- true" [bench]="lgrun -- true (make bench's row)"
	[noshim]="  [shim] enabled = false"
	[norec]="  [record] events = false" [noq]="  [quarantine] enabled = false"
	[noiso]="  [guard] isolate = false" [tmpfs]="  the state dir on tmpfs"
	[none]="  all four off")
cmd() { # variant: the command line into CMD
	case $1 in
	bare) CMD=("$TRUE_BIN") ;;
	floor) CMD=("$W/notify_null" "$TRUE_BIN") ;;
	lgrun) CMD=("$LGRUN" --bpf=off --state-dir "$W/st" -- "$TRUE_BIN") ;;
	bench) CMD=("$LGRUN" --state-dir "$W/st" -- true) ;;
	tmpfs) CMD=("$LGRUN" --bpf=off --state-dir "$SHM/st" -- "$TRUE_BIN") ;;
	*) CMD=("$LGRUN" --bpf=off --state-dir "$W/st" -c "$W/$1.ini" -- "$TRUE_BIN") ;;
	esac
}
# One sample: us per run over N runs, by `perf stat -r N` when perf is here
# (it forks and execs each run itself, as the issue asks), else a loop.
sample() { # variant
	local t0 t1 i out
	cmd "$1"
	"${CMD[@]}" >/dev/null 2>&1 || { echo "startup_parts: $1 failed" >&2; exit 1; }
	if [ -n "$PERF" ]; then
		out=$("$PERF" stat -r "$N" --null -- "${CMD[@]}" 2>&1 >/dev/null) || { echo "startup_parts: perf stat of $1 failed" >&2; exit 1; }
		awk '/seconds time elapsed/ { printf "%d", $1 * 1e6 }' <<<"$out"
		return
	fi
	t0=${EPOCHREALTIME/[.,]/}
	for ((i = 0; i < N; i++)); do "${CMD[@]}" >/dev/null 2>&1; done
	t1=${EPOCHREALTIME/[.,]/}
	echo $(((t1 - t0) / N))
}
PERF=$(command -v perf 2>/dev/null)
declare -A samples
for ((r = 0; r < ROUNDS; r++)); do
	order=("${VARIANTS[@]}")
	((r % 2)) && order=($(printf '%s\n' "${VARIANTS[@]}" | tac))
	for v in "${order[@]}"; do
		samples[$v]+="$(sample "$v") "
	done
done
med() { tr ' ' '\n' <<<"${samples[$1]}" | grep . | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
b=$(med bare) l=$(med lgrun)
echo "startup of true, $N runs x $ROUNDS rounds ($([ -n "$PERF" ] && echo "perf stat -r $N" || echo "a shell loop")), medians (us per run); state dir on $(stat -f -c %T "$W")"
for v in "${VARIANTS[@]}"; do
	m=$(med "$v")
	case $v in
	bare) printf '  %-34s %6d us\n' "${what[$v]}" "$m" ;;
	floor | lgrun) printf '  %-34s %6d us  %+6d us over true\n' "${what[$v]}" "$m" "$((m - b))" ;;
	bench) printf '  %-34s %6d us  %+6d us over true\n' "${what[$v]}" "$m" "$((m - b))" ;;
	*) printf '  %-34s %6d us  %+6d us over true; the part costs %+d us\n' "${what[$v]}" "$m" "$((m - b))" "$((l - m))" ;;
	esac
done
# One file made (and removed) in the state dir, as lgrun makes its three.
mk() { # dir: us per file, 50 files, by bash's clock (its loop included)
	local t0 t1 i
	t0=${EPOCHREALTIME/[.,]/}
	for ((i = 0; i < 50; i++)); do : >"$1/.probe$i"; done
	t1=${EPOCHREALTIME/[.,]/}
	rm -f "$1"/.probe*
	echo $(((t1 - t0) / 50))
}
echo "a file made in the state dir's sessions/: $(mk "$W/st/sessions") us ($(stat -f -c %T "$W")), $(mk "$SHM/st/sessions") us (tmpfs)"
