#!/bin/bash
# SPDX-License-Identifier: MIT
# lgrun benchmark (`make bench`): what lgrun costs, measured in one run.
#
# Rows: 1 startup, 2 rm-heavy, 3 build, 4 kill, 5 guard alone, 6 http loop,
# 7 pipe-heavy (6 and 7: what the preload shim costs on traffic), 8 proxy
# (what the LLM proxy costs a streamed model response). Every row
# runs once per round; inside a round the variants of a row run back to back
# (bare, lgrun, baseline, ...), in reverse order on every other round, so
# drift and ordering effects hit all variants alike. Each number is the
# median over the rounds. Nothing here asserts on time: it prints.
#
# Knobs (environment):
#   BENCH_ROUNDS     rounds (default 9)
#   BENCH_STARTUP_N  invocations per startup sample (default 200)
#   BENCH_RM_FILES   files removed by the rm-heavy row (default 10000)
#   BENCH_BUILD_FILES, BENCH_BUILD_FUNCS  size of the build row (30, 8)
#   BENCH_KILL_PROCS processes of the kill row: 10 subshells x N/10 (500)
#   BENCH_GUARD_EVENTS events fed to the guard (default 2000000)
#   BENCH_HTTP_N     requests of the http-loop row, on one connection (20000)
#   BENCH_PIPE_MB    MiB pushed through the pipe-heavy row's pipe (200)
#   BENCH_PROXY_N    requests per sample of the proxy row (default 200)
#   BENCH_PROXY_CONN keepalive (one connection per sample, the default) or
#                    fresh (a connection per request) for the proxy row
#   BENCH_PIN_CPU    CPU the http and pipe rows run on (both ends of the
#                    connection or pipe; lgrun itself is not pinned), and
#                    the proxy row's client (its upstream server goes on
#                    another CPU when there is one); default the last CPU
#                    we may use, "none" to not pin
#   BENCH_LGRUN_ARGS options every lgrun of the bench gets first, e.g.
#                    --bpf=off (a row's own options come after and win)
#   BENCH_STORE_N    guard events of the Redis store row (default 2000)
#   BENCH_ONLY       comma-separated rows to run: startup,rm,build,edit,rename,
#                    kill,guard,shim,proxy,watch,store,egress (shim = rows 6
#                    and 7)
#   BENCH_EDIT_FILES files an agent rewrites in the edit row (default 50)
#   BENCH_RENAME_FILES  files of the rename rows' git checkout (default 2000;
#                    sed -i rewrites half as many)
#   BENCH_EGRESS_MB  MB downloaded by the egress row (default 100)
#   BENCH_EGRESS_LINK  rate of the egress row's link (tc tbf; default 1gbit)
#   B                build directory (default build)
# Exit status: 0 (also when targets are missed), 1 when lgrun is unusable.
set -u
export LC_ALL=C

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BDIR=${B:-build}
case $BDIR in /*) ;; *) BDIR=$ROOT/$BDIR ;; esac
LGRUN=$BDIR/bin/lgrun
BENCHBIN=$BDIR/bench

ROUNDS=${BENCH_ROUNDS:-9}
STARTUP_N=${BENCH_STARTUP_N:-200}
RM_FILES=${BENCH_RM_FILES:-10000}
RM_DISK_FILES=${BENCH_RM_DISK_FILES:-2000} # written back first: see rm_one
BUILD_FILES=${BENCH_BUILD_FILES:-30}
RENAME_FILES=${BENCH_RENAME_FILES:-2000}
BUILD_FUNCS=${BENCH_BUILD_FUNCS:-8}
KILL_PROCS=${BENCH_KILL_PROCS:-500}
GUARD_EVENTS=${BENCH_GUARD_EVENTS:-2000000}
HTTP_N=${BENCH_HTTP_N:-20000}
PIPE_MB=${BENCH_PIPE_MB:-200}
PROXY_N=${BENCH_PROXY_N:-200}
EGRESS_MB=${BENCH_EGRESS_MB:-100}
PROXY_CONN=${BENCH_PROXY_CONN:-keepalive}
PIN_CPU=${BENCH_PIN_CPU:-}
ONLY=${BENCH_ONLY:-startup,rm,build,edit,rename,kill,guard,shim,proxy,watch,store,egress}
EDIT_FILES=${BENCH_EDIT_FILES:-50}
STORE_N=${BENCH_STORE_N:-2000}
# Options every lgrun run of the bench gets first (a row's own come after
# and win), e.g. BENCH_LGRUN_ARGS=--bpf=off to leave the eBPF observer out.
read -r -a LGRUN_EXTRA <<<"${BENCH_LGRUN_ARGS:-}"

die() {
	echo "bench: $*" >&2
	exit 1
}
note() { echo "bench: $*" >&2; }
want() { [[ ",$ONLY," == *",$1,"* ]]; }

[ "${BASH_VERSINFO[0]}" -ge 5 ] || die "needs bash >= 5 (EPOCHREALTIME)"
for v in ROUNDS STARTUP_N RM_FILES BUILD_FILES BUILD_FUNCS KILL_PROCS GUARD_EVENTS HTTP_N PIPE_MB PROXY_N; do
	[[ ${!v} =~ ^[1-9][0-9]*$ ]] || die "$v='${!v}' is not a positive integer"
done
[[ $PROXY_CONN == keepalive || $PROXY_CONN == fresh ]] ||
	die "BENCH_PROXY_CONN='$PROXY_CONN' is neither keepalive nor fresh"
[ -x "$LGRUN" ] || die "$LGRUN is missing: run 'make' first"
if [ -n "${LGRUN_SUPERVISOR_PID:-}" ]; then
	note "warning: running inside an lgrun session; the numbers measure a nested lgrun"
fi
unset LGRUN_SESSION LGRUN_AGENT LGRUN_STATE_DIR LGRUN_CONFIG

# Wall clock in microseconds.
now_us() {
	local t=${EPOCHREALTIME//[.,]/}
	echo "$t"
}

# ---------------------------------------------------------------- scratch
WORK= STATE= DISK= WORK_TOP= MOUNTED= BASE_CG= KILL_CG= BG_PIDS=() HTTP_SRV= PROXY_SRV= REDIS_SRV= EGRESS_NS= KILL_PID=
cleanup() {
	local p
	trap - EXIT INT TERM HUP
	for p in "${BG_PIDS[@]}" $HTTP_SRV $PROXY_SRV $REDIS_SRV $KILL_PID; do
		kill -KILL "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	if [ -n "$KILL_CG" ] && [ -d "$KILL_CG" ]; then
		echo 1 >"$KILL_CG/cgroup.kill" 2>/dev/null
		for _ in $(seq 100); do
			grep -q 'populated 0' "$KILL_CG/cgroup.events" 2>/dev/null && break
			sleep 0.05
		done
		rmdir "$KILL_CG" 2>/dev/null
	fi
	if [ -n "$MOUNTED" ]; then
		umount "$MOUNTED" 2>/dev/null
		rmdir "$MOUNTED" 2>/dev/null
	fi
	[ -n "$EGRESS_NS" ] && ip netns del "$EGRESS_NS" 2>/dev/null
	[ -n "$WORK" ] && rm -rf "$WORK"
	if [ -n "$STATE" ]; then qclean; rm -rf "$STATE"; fi
	[ -n "$DISK" ] && rm -rf "$DISK"
}
# What the bench's sessions kept in the quarantine, on the state dir's mount
# and at the top of WORK's (only theirs: others' may be there too).
qclean() {
	local f
	for f in "$STATE"/quarantine/*.jsonl; do
		[ -e "$f" ] && [ -n "$WORK_TOP" ] &&
			rm -rf "${WORK_TOP%/}/.lgrun-quarantine/$(basename "$f" .jsonl)"
	done
	[ -n "$WORK_TOP" ] && rmdir "${WORK_TOP%/}/.lgrun-quarantine" 2>/dev/null
	rm -rf "$STATE/quarantine"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

# The files every row works on live on tmpfs.
FS_NOTE=
if [ -d /dev/shm ] && [ "$(stat -f -c %T /dev/shm 2>/dev/null)" = tmpfs ] &&
	WORK=$(mktemp -d /dev/shm/lgbench.XXXXXX 2>/dev/null); then
	FS_NOTE="tmpfs (/dev/shm)"
elif [ "$(id -u)" = 0 ]; then
	MOUNTED=$(mktemp -d "${TMPDIR:-/tmp}/lgbench-mnt.XXXXXX") || die "mktemp failed"
	mount -t tmpfs -o size=1g,mode=700 lgbench "$MOUNTED" || die "cannot mount a tmpfs on $MOUNTED"
	WORK=$MOUNTED/w
	mkdir "$WORK"
	FS_NOTE="tmpfs (private mount)"
else
	WORK=$(mktemp -d "${TMPDIR:-/tmp}/lgbench.XXXXXX") || die "mktemp failed"
	FS_NOTE="$(stat -f -c %T "$WORK") (no tmpfs available: not root and /dev/shm is not tmpfs)"
fi
# lgrun's private state dir on the kind of file system a real one lives on
# (disk): lgrun writes its session record there on every start and exit.
STATE=$(mktemp -d "${TMPDIR:-/tmp}/lgbench-state.XXXXXX") || die "mktemp failed"
STATE_FS=$(stat -f -c %T "$STATE")
# files on that disk too, for the rows that time removing data on disk
DISK=$(mktemp -d "${TMPDIR:-/tmp}/lgbench-disk.XXXXXX") || die "mktemp failed"
# where the quarantine keeps what rounds remove under WORK (its mount's top)
WORK_TOP=$(findmnt -n -o TARGET -T "$WORK" 2>/dev/null)
mkdir -p "$BENCHBIN"

# -------------------------------------------------------------- results
declare -A VALS   # key -> space-separated samples
declare -A SKIP   # row -> reason
declare -a NOTES
add() { VALS[$1]+="$2 "; }
median() { # key -> median of its samples ("" if none)
	local v=${VALS[$1]:-}
	[ -n "$v" ] || { echo ""; return; }
	tr ' ' '\n' <<<"$v" | grep -v '^$' | sort -g | awk '
		{ a[NR] = $1 }
		END { if (NR % 2) printf "%.6f", a[(NR + 1) / 2];
		      else printf "%.6f", (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}
spread() { # key -> "min-max"
	local v=${VALS[$1]:-}
	[ -n "$v" ] || return
	tr ' ' '\n' <<<"$v" | grep -v '^$' | sort -g | awk -v f="${2:-%.1f}" '
		NR == 1 { lo = $1 } { hi = $1 } END { printf f "-" f, lo, hi }'
}
calc() { awk "BEGIN { printf \"$1\", $2 }"; }

# Runs the variants of a row in the given order, reversed on odd rounds.
ordered() { # round variant...
	local r=$1
	shift
	if ((r % 2)); then
		local i
		for ((i = $#; i >= 1; i--)); do echo "${!i}"; done
	else
		printf '%s\n' "$@"
	fi
}

# ------------------------------------------------------------- sanity
if ! "$LGRUN" "${LGRUN_EXTRA[@]}" --state-dir "$STATE" -- true; then
	die "'lgrun -- true' failed (exit $?); nothing to measure"
fi

# ------------------------------------------------------------- row 1: startup
TRUE_BIN=$(type -P true) || TRUE_BIN=/bin/true
startup_bare() {
	local i t0 t1
	t0=$(now_us)
	for ((i = 0; i < STARTUP_N; i++)); do "$TRUE_BIN"; done
	t1=$(now_us)
	add su_bare "$(calc %.4f "($t1 - $t0) / 1000 / $STARTUP_N")"
}
startup_null() {
	local i t0 t1
	[ -n "$HAVE_NULL" ] || return
	t0=$(now_us)
	for ((i = 0; i < STARTUP_N; i++)); do "$BENCHBIN/notify_null" "$TRUE_BIN"; done
	t1=$(now_us)
	add su_null "$(calc %.4f "($t1 - $t0) / 1000 / $STARTUP_N")"
}
startup_lg() {
	local i t0 t1 bad=0
	t0=$(now_us)
	for ((i = 0; i < STARTUP_N; i++)); do
		"$LGRUN" "${LGRUN_EXTRA[@]}" --state-dir "$STATE" -- true || bad=1
	done
	t1=$(now_us)
	if ((bad)); then
		SKIP[startup]="lgrun -- true failed during the run"
		return
	fi
	add su_lg "$(calc %.4f "($t1 - $t0) / 1000 / $STARTUP_N")"
}

# What one file made in the state dir costs (lgrun makes three at each
# start): on an ext4 without a journal it grows with the inodes freed
# there in the last minutes (the allocator steps over them), which the
# other rows and whatever else runs on the machine leave.
startup_mkfile() {
	local i t0 t1 d=$STATE/sessions
	mkdir -p "$d"
	t0=$(now_us)
	for ((i = 0; i < 20; i++)); do : >"$d/.probe$i"; done
	t1=$(now_us)
	rm -f "$d"/.probe*
	add su_mkfile "$(((t1 - t0) / 20))"
}

# An lgrun inside a session registers with the enclosing one and execs:
# timed inside one session (the flow's limits off, the calls still judged).
startup_nested() {
	local us
	printf '[flow]\nmax_rate = 0\nmax_calls = 0\nno_work_calls = 0\n' >"$WORK/nested.ini"
	us=$("$LGRUN" "${LGRUN_EXTRA[@]}" --state-dir "$STATE" -c "$WORK/nested.ini" -- bash -c '
		t0=${EPOCHREALTIME//[.,]/}
		for ((i = 0; i < $1; i++)); do "$2" --agent "w$((i % 2))" -- "$3" || exit 1; done
		t1=${EPOCHREALTIME//[.,]/}
		echo $((t1 - t0))' _ "$STARTUP_N" "$LGRUN" "${LGRUN_EXTRA[@]}" "$TRUE_BIN") || {
		SKIP[nested]="a nested lgrun failed"
		return
	}
	add su_nested "$(calc %.4f "$us / 1000 / $STARTUP_N")"
}

# ------------------------------------------------------------- row 2: rm-heavy
RM_DIR=$WORK/rm
RM_VARIANTS=(bare bulk procmem noq nokw norec observe diskbare disk disknoq)
[ "$(id -u)" = 0 ] && [ -f "$ROOT/build/lib/liblgbpf.so" ] && RM_VARIANTS+=(bpf)
HAVE_NULL=
BULK_ARGS=(--profile bulk-cleanup)
HAVE_STRACE= HAVE_BWRAP=
mkfiles() { # dir n: n small files with content (pre-existing for lgrun)
	local d=$1 n=$2 i
	rm -rf "$d"
	mkdir -p "$d"
	for ((i = 0; i < n; i++)); do printf 'data %d\n' "$i" >"$d/f$i"; done
}
null_setup() {
	if cc -O2 -Wall -pthread -o "$BENCHBIN/notify_null" "$ROOT/bench/notify_null.c" &&
		"$BENCHBIN/notify_null" "$TRUE_BIN"; then
		HAVE_NULL=1
		RM_VARIANTS+=(null least leastkeep)
	else
		SKIP[rm_null]="cannot build or run bench/notify_null.c (seccomp user notification?)"
		SKIP[startup_null]=${SKIP[rm_null]}
	fi
}
rm_setup() {
	if command -v strace >/dev/null 2>&1 && strace -f -o /dev/null "$TRUE_BIN" 2>/dev/null; then
		HAVE_STRACE=1
		RM_VARIANTS+=(strace)
	else
		SKIP[rm_strace]="strace is not installed (or cannot trace here)"
	fi
	if command -v bwrap >/dev/null 2>&1 && bwrap --dev-bind / / "$TRUE_BIN" 2>/dev/null; then
		HAVE_BWRAP=1
		RM_VARIANTS+=(bwrap)
	elif command -v bwrap >/dev/null 2>&1; then
		SKIP[rm_bwrap]="bwrap is installed but 'bwrap --dev-bind / / true' fails here"
	else
		SKIP[rm_bwrap]="bwrap is not installed (apt-get install bubblewrap)"
	fi
	# The shipped bulk-cleanup profile must let RM_FILES deletes through,
	# or the row would time a killed rm. Check once, untimed.
	mkfiles "$RM_DIR" "$RM_FILES"
	"$LGRUN" "${LGRUN_EXTRA[@]}" --state-dir "$STATE" "${BULK_ARGS[@]}" -- rm -rf "$RM_DIR" 2>/dev/null
	local rc=$?
	if [ "$rc" = 86 ]; then
		local conf=$WORK/conf
		mkdir -p "$conf/profiles"
		cp "$ROOT/conf/lgrun.ini" "$conf/lgrun.ini" 2>/dev/null || : >"$conf/lgrun.ini"
		sed -E 's/^[[:space:]]*max_ops[[:space:]]*=.*/max_ops = 1000000/' \
			"$ROOT/conf/profiles/bulk-cleanup.ini" >"$conf/profiles/bulk-cleanup.ini"
		BULK_ARGS=(--config "$conf/lgrun.ini" --profile bulk-cleanup)
		NOTES+=("rm-heavy: the shipped bulk-cleanup profile trips on $RM_FILES deletes" \
			"  (volumetric max_ops $(sed -n 's/^max_ops *= *//p' "$ROOT/conf/profiles/bulk-cleanup.ini") refuses the op that reaches it);" \
			"  timed with a copy of the profile whose max_ops is 1000000 instead")
	elif [ "$rc" != 0 ]; then
		SKIP[rm_bulk]="lgrun --profile bulk-cleanup -- rm -rf failed (exit $rc)"
	fi
	# the same, with the quarantine off: what keeping the files costs
	local noq=$WORK/conf-noq src=$ROOT/conf
	[ "${BULK_ARGS[0]}" = --config ] && src=$(dirname "${BULK_ARGS[1]}")
	mkdir -p "$noq/profiles"
	cp "$src/profiles/"*.ini "$noq/profiles/"
	{ cat "$src/lgrun.ini" 2>/dev/null; printf '\n[quarantine]\nenabled = false\n'; } >"$noq/lgrun.ini"
	NOQ_ARGS=(--config "$noq/lgrun.ini" --profile bulk-cleanup)
	# and with the session recording off: what recording the events costs
	local norec=$WORK/conf-norec
	mkdir -p "$norec/profiles"
	cp "$src/profiles/"*.ini "$norec/profiles/"
	{ cat "$src/lgrun.ini" 2>/dev/null; printf '\n[record]\nevents = false\n'; } >"$norec/lgrun.ini"
	NOREC_ARGS=(--config "$norec/lgrun.ini" --profile bulk-cleanup)
	# and with keep_writes off: what opens leaving the kernel cost rm
	local nokw=$WORK/conf-rm-nokw
	mkdir -p "$nokw/profiles"
	cp "$src/profiles/"*.ini "$nokw/profiles/"
	{ cat "$src/lgrun.ini" 2>/dev/null; printf '\n[quarantine]\nkeep_writes = false\n'; } >"$nokw/lgrun.ini"
	NOKW_ARGS=(--config "$nokw/lgrun.ini" --profile bulk-cleanup)
	qclean
}
rm_one() { # variant
	local v=$1 t0 t1 rc
	case $v in
	disk*)
		# Pre-existing data as a user has it: on disk. Files written a
		# moment ago have no blocks yet (delayed allocation), so removing
		# them frees nothing; these rows time the other case. Untimed sync.
		mkfiles "$DISK/rm" "$RM_DISK_FILES"
		sync ;;
	*) mkfiles "$RM_DIR" "$RM_FILES" ;;
	esac
	case $v in
	diskbare)
		t0=$(now_us); rm -rf "$DISK/rm"; rc=$?; t1=$(now_us) ;;
	disk | disknoq)
		[ -n "${SKIP[rm_bulk]:-}" ] && return
		local args=("${BULK_ARGS[@]}")
		[ "$v" = disknoq ] && args=("${NOQ_ARGS[@]}")
		t0=$(now_us)
		"$LGRUN" "${LGRUN_EXTRA[@]}" --state-dir "$STATE" --bpf=off "${args[@]}" -- rm -rf "$DISK/rm"
		rc=$?
		t1=$(now_us) ;;
	bare)
		t0=$(now_us); rm -rf "$RM_DIR"; rc=$?; t1=$(now_us) ;;
	bulk)
		[ -n "${SKIP[rm_bulk]:-}" ] && return
		t0=$(now_us)
		"$LGRUN" "${LGRUN_EXTRA[@]}" --state-dir "$STATE" --bpf=off "${BULK_ARGS[@]}" -- rm -rf "$RM_DIR"
		rc=$?
		t1=$(now_us) ;;
	procmem) # a default container's way: arguments through /proc/PID/mem
		[ -n "${SKIP[rm_bulk]:-}" ] && return
		t0=$(now_us)
		LGRUN_ARGS_VIA=proc "$LGRUN" "${LGRUN_EXTRA[@]}" --state-dir "$STATE" --bpf=off "${BULK_ARGS[@]}" -- rm -rf "$RM_DIR"
		rc=$?
		t1=$(now_us) ;;
	noq)
		[ -n "${SKIP[rm_bulk]:-}" ] && return
		t0=$(now_us)
		"$LGRUN" "${LGRUN_EXTRA[@]}" --state-dir "$STATE" --bpf=off "${NOQ_ARGS[@]}" -- rm -rf "$RM_DIR"
		rc=$?
		t1=$(now_us) ;;
	nokw)
		[ -n "${SKIP[rm_bulk]:-}" ] && return
		t0=$(now_us)
		"$LGRUN" "${LGRUN_EXTRA[@]}" --state-dir "$STATE" --bpf=off "${NOKW_ARGS[@]}" -- rm -rf "$RM_DIR"
		rc=$?
		t1=$(now_us) ;;
	norec)
		[ -n "${SKIP[rm_bulk]:-}" ] && return
		t0=$(now_us)
		"$LGRUN" "${LGRUN_EXTRA[@]}" --state-dir "$STATE" --bpf=off "${NOREC_ARGS[@]}" -- rm -rf "$RM_DIR"
		rc=$?
		t1=$(now_us) ;;
	bpf)
		[ -n "${SKIP[rm_bulk]:-}" ] && return
		t0=$(now_us)
		"$LGRUN" "${LGRUN_EXTRA[@]}" --state-dir "$STATE" --bpf=on "${BULK_ARGS[@]}" -- rm -rf "$RM_DIR"
		rc=$?
		t1=$(now_us) ;;
	observe)
		t0=$(now_us)
		"$LGRUN" "${LGRUN_EXTRA[@]}" --state-dir "$STATE" --observe -- rm -rf "$RM_DIR" 2>/dev/null
		rc=$?
		t1=$(now_us) ;;
	null)
		t0=$(now_us); "$BENCHBIN/notify_null" rm -rf "$RM_DIR"; rc=$?; t1=$(now_us) ;;
	least) # the least a guard does before it answers (bench/notify_null.c)
		t0=$(now_us); "$BENCHBIN/notify_null" --read rm -rf "$RM_DIR"; rc=$?; t1=$(now_us) ;;
	leastkeep) # and the undo's link, into a folder on the same file system
		rm -rf "$WORK/least-kept" && mkdir "$WORK/least-kept"
		t0=$(now_us)
		"$BENCHBIN/notify_null" --keep "$WORK/least-kept" rm -rf "$RM_DIR"
		rc=$?
		t1=$(now_us)
		rm -rf "$WORK/least-kept" ;; # what it kept: untimed
	strace)
		t0=$(now_us); strace -f -o /dev/null rm -rf "$RM_DIR"; rc=$?; t1=$(now_us) ;;
	bwrap)
		t0=$(now_us); bwrap --dev-bind / / rm -rf "$RM_DIR"; rc=$?; t1=$(now_us) ;;
	esac
	qclean # what the round kept: untimed
	if [ "$rc" != 0 ] || [ -e "$RM_DIR" ] || [ -e "$DISK/rm" ]; then
		SKIP[rm_$v]="run failed (exit $rc) or left files behind"
		rm -rf "$RM_DIR"
		return
	fi
	add "rm_$v" "$(calc %.3f "($t1 - $t0) / 1000")"
}

# ------------------------------------------------------------- row 3: build
PROJ=$WORK/proj
BUILD_VARIANTS=(bare lg procmem noq nokw noremote null)
[ "$(id -u)" = 0 ] && [ -f "$ROOT/build/lib/liblgbpf.so" ] && BUILD_VARIANTS+=(bpf)
build_setup() {
	mkdir -p "$WORK/conf-build-noq" "$WORK/conf-nokw" "$WORK/conf-noremote"
	{ cat "$ROOT/conf/lgrun.ini"; printf '\n[remote]\nenabled = false\n'; } >"$WORK/conf-noremote/lgrun.ini"
	{ cat "$ROOT/conf/lgrun.ini"; printf '\n[quarantine]\nenabled = false\n'; } >"$WORK/conf-build-noq/lgrun.ini"
	{ cat "$ROOT/conf/lgrun.ini"; printf '\n[quarantine]\nkeep_writes = false\n'; } >"$WORK/conf-nokw/lgrun.ini"
	command -v make >/dev/null 2>&1 || { SKIP[build]="make is not installed"; return; }
	command -v cc >/dev/null 2>&1 || { SKIP[build]="cc is not installed"; return; }
	bash "$ROOT/bench/gen_project.sh" "$PROJ" "$BUILD_FILES" "$BUILD_FUNCS" ||
		{ SKIP[build]="cannot generate the project"; return; }
	# Warm the compiler's pages once, untimed.
	make -C "$PROJ" -s -j2 >/dev/null 2>&1 || { SKIP[build]="the generated project does not build"; return; }
}
build_one() { # bare|lg|bpf
	local t0 t1 rc
	[ -n "${SKIP[build]:-}" ] && return
	make -C "$PROJ" -s clean >/dev/null 2>&1
	if [ "$1" = bare ] || [ "$1" = null ]; then
		[ "$1" = null ] && [ -z "$HAVE_NULL" ] && return
		times >"$WORK/times.0"
		t0=$(now_us)
		$([ "$1" = null ] && echo "$BENCHBIN/notify_null") make -C "$PROJ" -s -j2 >/dev/null
		rc=$?
		t1=$(now_us)
		times >"$WORK/times.1"
	else
		times >"$WORK/times.0"
		t0=$(now_us)
		LGRUN_ARGS_VIA=$([ "$1" = procmem ] && echo proc) \
			"$LGRUN" "${LGRUN_EXTRA[@]}" --state-dir "$STATE" --bpf="$([ "$1" = bpf ] && echo on || echo off)" \
			$([ "$1" = noq ] && echo --config "$WORK/conf-build-noq/lgrun.ini") \
			$([ "$1" = nokw ] && echo --config "$WORK/conf-nokw/lgrun.ini") \
			$([ "$1" = noremote ] && echo --config "$WORK/conf-noremote/lgrun.ini") \
			-- make -C "$PROJ" -s -j2 >/dev/null
		rc=$?
		t1=$(now_us)
		times >"$WORK/times.1"
	fi
	if [ "$rc" != 0 ] || [ ! -x "$PROJ/app" ]; then
		SKIP[build]="the $1 build failed (exit $rc)"
		return
	fi
	add "build_$1" "$(calc %.3f "($t1 - $t0) / 1000")"
	add "buildcpu_$1" "$(($(children_cpu_ms "$WORK/times.1") - $(children_cpu_ms "$WORK/times.0")))"
}
# ------------------------------------------------------- row 3c: an agent edits
# An agent's write tool over pre-existing files: each of EDIT_FILES files
# (4 KiB) read, then written anew with open(path, "w"), by one Python
# process. With keep_writes (the default) each file's old content is kept
# (a reflink, else a copy) before its O_TRUNC open runs.
EDIT_DIR=$WORK/edit
edit_setup() {
	mkdir -p "$WORK/conf-nokw"
	{ cat "$ROOT/conf/lgrun.ini"; printf '\n[quarantine]\nkeep_writes = false\n'; } >"$WORK/conf-nokw/lgrun.ini"
	command -v python3 >/dev/null 2>&1 || SKIP[edit]="python3 is not installed"
}
edit_one() { # bare|lg|nokw
	local t0 t1 rc i
	[ -n "${SKIP[edit]:-}" ] && return
	rm -rf "$EDIT_DIR"
	mkdir -p "$EDIT_DIR"
	for ((i = 0; i < EDIT_FILES; i++)); do head -c 4096 /dev/urandom >"$EDIT_DIR/f$i.py"; done
	local py='import os, sys
d = sys.argv[1]
for n in sorted(os.listdir(d)):
    p = os.path.join(d, n)
    with open(p, "rb") as f:
        old = f.read()
    with open(p, "w") as f:
        f.write("# edited\n" + old.hex()[:4000])'
	t0=$(now_us)
	case $1 in
	bare) python3 -c "$py" "$EDIT_DIR"; rc=$? ;;
	lg | nokw)
		"$LGRUN" "${LGRUN_EXTRA[@]}" --state-dir "$STATE" --bpf=off \
			$([ "$1" = nokw ] && echo --config "$WORK/conf-nokw/lgrun.ini") \
			-- python3 -c "$py" "$EDIT_DIR"
		rc=$? ;;
	esac
	t1=$(now_us)
	qclean
	[ "$rc" = 0 ] || { SKIP[edit]="the $1 edit failed (exit $rc)"; return; }
	add "edit_$1" "$(calc %.3f "($t1 - $t0) / 1000")"
}
# User+system CPU of the waited-for children, in ms, from a `times` dump
# (taken in this shell: a command substitution would see its own children).
children_cpu_ms() {
	awk 'NR == 2 { t = 0
		for (i = 1; i <= 2; i++) { split($i, a, "m"); sub("s", "", a[2]); t += a[1] * 60 + a[2] }
		printf "%.0f", t * 1000 }' "$1"
}

# ----------------------------------------------------------- row 3b: rename
# Renames, with the quarantine on and off: git checkout of a tree whose every
# file changes (git writes each file new; the old ones are in its objects),
# and sed -i over pre-existing files (each a rename over one: kept first).
REPO=$WORK/repo SEDDIR=$WORK/sedi
rename_setup() {
	command -v git >/dev/null 2>&1 || { SKIP[rename]="git is not installed"; return; }
	command -v sed >/dev/null 2>&1 || { SKIP[rename]="sed is not installed"; return; }
	local i
	mkdir -p "$REPO" "$WORK/conf-build-noq"
	{ cat "$ROOT/conf/lgrun.ini"; printf '\n[quarantine]\nenabled = false\n'; } >"$WORK/conf-build-noq/lgrun.ini"
	(
		cd "$REPO" && git init -q -b a . && git config user.email b@b && git config user.name b &&
			for ((i = 0; i < RENAME_FILES; i++)); do
				mkdir -p "d$((i % 20))" && printf 'line %d\n' "$i" >"d$((i % 20))/f$i.txt"
			done && git add -A && git commit -qm a && git checkout -qb b &&
			for ((i = 0; i < RENAME_FILES; i++)); do printf 'b\n' >>"d$((i % 20))/f$i.txt"; done &&
			git commit -qam b && git checkout -q a
	) >/dev/null 2>&1 || { SKIP[rename]="cannot make the git repository"; return; }
}
rename_one() { # bare|lg|noq
	local v=$1 t0 t1 rc cmd args=()
	[ -n "${SKIP[rename]:-}" ] && return
	[ "$v" = noq ] && args=(--config "$WORK/conf-build-noq/lgrun.ini")
	for cmd in checkout sedi; do
		if [ $cmd = checkout ]; then
			git -C "$REPO" checkout -q a || { SKIP[rename]="git checkout failed"; return; }
			set -- git -C "$REPO" checkout -q b
		else
			mkfiles "$SEDDIR" "$((RENAME_FILES / 2))"
			set -- sed -i s/data/DATA/ "$SEDDIR"/f*
		fi
		t0=$(now_us)
		if [ "$v" = bare ]; then
			"$@"
		else
			"$LGRUN" "${LGRUN_EXTRA[@]}" --state-dir "$STATE" --bpf=off "${args[@]}" -- "$@"
		fi
		rc=$?
		t1=$(now_us)
		qclean
		[ "$rc" = 0 ] || { SKIP[rename]="$v $cmd failed (exit $rc)"; return; }
		add "${cmd}_$v" "$(calc %.3f "($t1 - $t0) / 1000")"
	done
}

# ------------------------------------------------------------- row 4: kill
KDIR=$WORK/kill
KILL_NSUB=10
KILL_NPER=$(((KILL_PROCS + KILL_NSUB - 1) / KILL_NSUB))
CG_ROOT=
kill_setup() {
	[ "$(id -u)" = 0 ] || { SKIP[kill]="needs root (creates a cgroup v2 leaf)"; return; }
	command -v pgrep >/dev/null 2>&1 || { SKIP[kill]="pgrep is not installed (procps)"; return; }
	pgrep --help 2>&1 | grep -q -- --cgroup || { SKIP[kill]="pgrep has no --cgroup (procps >= 3.3.17 needed)"; return; }
	local mnt own
	mnt=$(awk '{ for (i = 1; i <= NF; i++) if ($i == "-") { if ($(i+1) == "cgroup2") print $5; break } }' \
		/proc/self/mountinfo | head -n1)
	own=$(sed -n 's/^0:://p' /proc/self/cgroup)
	[ -n "$mnt" ] || { SKIP[kill]="no cgroup2 mount in /proc/self/mountinfo"; return; }
	[ "$own" = / ] && own=
	CG_ROOT=$mnt$own
	BASE_CG=$CG_ROOT/lgbench-kill-$$
	[ -w "$CG_ROOT" ] || { SKIP[kill]="cannot create cgroups under $CG_ROOT"; return; }
	cc -O2 -Wall -o "$BENCHBIN/cgkill" "$ROOT/bench/cgkill.c" ||
		{ SKIP[kill]="cannot build bench/cgkill.c"; return; }
	mkdir -p "$KDIR"
}
kill_lg() { # round
	[ -n "${SKIP[kill]:-}" ] && return
	local id=lgbench-kill-$$-$1 rec ms rc
	rm -f "$KDIR"/*
	printf 'x\n' | tee "$KDIR/keep1" "$KDIR/keep2" "$KDIR/keep3" >/dev/null
	timeout -k 5 120 "$LGRUN" "${LGRUN_EXTRA[@]}" --state-dir "$STATE" --session "$id" -- \
		bash "$ROOT/bench/spawn_tree.sh" "$KILL_NSUB" "$KILL_NPER" "$KDIR/ready" \
		"$KDIR/keep1" "$KDIR/keep2" "$KDIR/keep3" >/dev/null 2>&1
	rc=$?
	rec=$(grep "\"session\":\"$id\"" "$STATE/audit.jsonl" 2>/dev/null | grep '"event":"trip"' | tail -n1)
	ms=$(sed -n 's/.*"kill_ms":\([0-9.eE+-]*\).*/\1/p' <<<"$rec")
	if [ "$rc" != 86 ] || [ -z "$ms" ]; then
		SKIP[kill]="the lgrun run did not trip (exit $rc) or its record has no kill_ms"
		return
	fi
	grep -q '"kill_method":"cgroup.kill"' <<<"$rec" ||
		NOTES+=("kill: round $1: lgrun used kill_method $(sed -n 's/.*"kill_method":"\([^"]*\)".*/\1/p' <<<"$rec")")
	add kill_lg "$ms"
}
kill_base() {
	[ -n "${SKIP[kill]:-}" ] && return
	local pid ms i
	rm -f "$KDIR/ready"
	mkdir "$BASE_CG" || { SKIP[kill]="cannot create $BASE_CG"; return; }
	KILL_CG=$BASE_CG
	bash -c 'echo $$ >"$1/cgroup.procs" && exec bash "$2" "$3" "$4" "$5"' _ \
		"$BASE_CG" "$ROOT/bench/spawn_tree.sh" "$KILL_NSUB" "$KILL_NPER" "$KDIR/ready" \
		>/dev/null 2>&1 &
	pid=$!
	KILL_PID=$pid # its own: the servers in BG_PIDS live on
	for ((i = 0; i < 6000; i++)); do
		[ -e "$KDIR/ready" ] && break
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.01
	done
	if [ -e "$KDIR/ready" ]; then
		ms=$("$BENCHBIN/cgkill" "$BASE_CG" poll) || ms=
	fi
	wait "$pid" 2>/dev/null
	KILL_PID=
	rmdir "$BASE_CG" 2>/dev/null
	KILL_CG=
	[ -n "${ms:-}" ] || { SKIP[kill]="the baseline tree did not start or cgroup.kill failed"; return; }
	add kill_base "$ms"
}

# ------------------------------------------------------------- row 5: guard
guard_setup() {
	local objs
	objs=$(ls "$BDIR"/obj/supervisor/guard/*.o "$BDIR"/obj/supervisor/lib/text.o \
		"$BDIR"/obj/supervisor/lib/glob.o 2>/dev/null)
	[ -n "$objs" ] && [ -f "$BDIR/obj/supervisor/guard/event.o" ] ||
		{ SKIP[guard]="no guard objects in $BDIR/obj (run 'make')"; return; }
	# The Makefile's language flags, from the source root so -Isupervisor resolves.
	(cd "$ROOT" && cc -std=gnu11 -O2 -D_GNU_SOURCE -Isupervisor \
		-o "$BENCHBIN/guard_bench" bench/guard_bench.c $objs) ||
		{ SKIP[guard]="cannot build bench/guard_bench.c against the guard objects"; return; }
}
guard_one() { # mixed|destroy
	[ -n "${SKIP[guard]:-}" ] && return
	local out ns
	out=$("$BENCHBIN/guard_bench" "$GUARD_EVENTS" "$1") ||
		{ SKIP[guard]="guard_bench failed or tripped: $out"; return; }
	ns=$(sed -n 's/.*ns_per_event=\([0-9.]*\).*/\1/p' <<<"$out")
	add "guard_$1" "$ns"
}

# ------------------------------------------------------ row 10: Redis store
# The guard's windows in memory vs in Redis on loopback (a redis-server
# started here and stopped at the end), per destructive event.
store_setup() {
	local objs port
	command -v redis-server >/dev/null || { SKIP[store]="redis-server is not installed"; return; }
	# lgrun's objects but its CLI's (the store needs the config layer, which
	# needs the parsers of the values it checks)
	objs=$(ls "$BDIR"/obj/supervisor/*/*.o \
		"$BDIR"/obj/preload/{recog,volatile}.o 2>/dev/null |
		grep -Ev '/(lgrun|lgctl|proxy)/|/(wsframe|zbody|tls|bpfobs)\.o$')
	(cd "$ROOT" && cc -std=gnu11 -O2 -D_GNU_SOURCE -Isupervisor \
		-o "$BENCHBIN/store_bench" bench/store_bench.c $objs -lhiredis -linih -ljansson \
		-lseccomp -lpthread -ldl -lm) ||
		{ SKIP[store]="cannot build bench/store_bench.c"; return; }
	port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no >/dev/null 2>&1 &
	REDIS_SRV=$!
	for _ in $(seq 1 100); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.05; done
	STORE_URL=redis://127.0.0.1:$port/0
}
store_one() {
	local out
	[ -n "${SKIP[store]:-}" ] && return
	out=$("$BENCHBIN/store_bench" "$STORE_URL" "$STORE_N") || { SKIP[store]="store_bench failed: $out"; return; }
	add store_mem "$(sed -n 's/.*mem_ns=\([0-9.]*\).*/\1/p' <<<"$out")"
	add store_redis "$(sed -n 's/.*redis_ns=\([0-9.]*\).*/\1/p' <<<"$out")"
}

# ------------------------------------------------- rows 6, 7: the preload shim
# Row 6: a loopback HTTP/1.1 keep-alive loop (bench/http_loop.c), timed by
# the client's own clock around its requests, so lgrun's startup (row 1) is
# not in it. Row 7: a pipe carrying 4 KiB writes and reads, timed by bash's
# clock around the pipeline inside the command. Both ends of the connection
# or pipe run on one CPU (BENCH_PIN_CPU).
HTTP_BIN=$BENCHBIN/http_loop
HTTP_PORT=
SHIM_LIB=$BDIR/lib/liblgshim.so
SHIMOFF_ARGS=()
PIN=()
PIN_NOTE=
PIPE_BLOCKS=$((PIPE_MB * 256))
# shellcheck disable=SC2016 # expanded by the bash that runs it
PIPE_CMD='t0=$EPOCHREALTIME
dd if=/dev/zero bs=4k count='$PIPE_BLOCKS' status=none | dd of=/dev/null bs=4k status=none
st="${PIPESTATUS[*]}" t1=$EPOCHREALTIME
[ "$st" = "0 0" ] || exit 1
echo "us=$((${t1/[.,]/} - ${t0/[.,]/}))"'
shim_setup() {
	local conf rc out i
	# One CPU for both ends: a wake-up across CPUs can cost more than the
	# whole request (on VMs by far), and where the scheduler puts the two
	# ends changes from run to run.
	if [ "$PIN_CPU" = none ]; then
		PIN_NOTE="not pinned (BENCH_PIN_CPU=none)"
	elif ! command -v taskset >/dev/null 2>&1; then
		PIN_NOTE="not pinned: taskset is not installed (util-linux)"
	else
		[ -n "$PIN_CPU" ] || PIN_CPU=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status |
			awk -F, '{ n = split($NF, r, "-"); print r[n] }')
		if [[ $PIN_CPU =~ ^[0-9]+$ ]] && taskset -c "$PIN_CPU" true 2>/dev/null; then
			PIN=(taskset -c "$PIN_CPU")
			PIN_NOTE="both ends on CPU $PIN_CPU (taskset; lgrun not pinned)"
		else
			PIN_NOTE="not pinned: cannot run on CPU '$PIN_CPU'"
		fi
	fi
	if [ ! -f "$SHIM_LIB" ]; then
		SKIP[http]="no shim at $SHIM_LIB (lgrun would run without it): run 'make'"
		SKIP[pipe]=${SKIP[http]}
		return
	fi
	# The shim off: the same config with [shim] enabled = false.
	conf=$WORK/conf-shimoff
	mkdir -p "$conf/profiles"
	cp "$ROOT/conf/lgrun.ini" "$conf/lgrun.ini" 2>/dev/null || : >"$conf/lgrun.ini"
	if grep -q '^[[:space:]]*\[shim\]' "$conf/lgrun.ini"; then
		sed -i '/^[[:space:]]*\[shim\]/a enabled = false' "$conf/lgrun.ini"
	else
		printf '\n[shim]\nenabled = false\n' >>"$conf/lgrun.ini"
	fi
	cp "$ROOT/conf/profiles/bulk-cleanup.ini" "$conf/profiles/" 2>/dev/null
	SHIMOFF_ARGS=(--config "$conf/lgrun.ini")
	out=$("$LGRUN" "${LGRUN_EXTRA[@]}" --state-dir "$STATE" "${SHIMOFF_ARGS[@]}" -- env 2>&1)
	rc=$?
	if [ "$rc" != 0 ]; then
		SKIP[http_off]="lgrun refuses [shim] enabled = false (exit $rc): $(tail -n1 <<<"$out")"
		SKIP[pipe_off]=${SKIP[http_off]}
	elif grep -q liblgshim <<<"$out"; then
		SKIP[http_off]="[shim] enabled = false still preloads the shim"
		SKIP[pipe_off]=${SKIP[http_off]}
	fi
	# Row 7 needs GNU dd (status=none).
	dd if=/dev/zero of=/dev/null bs=4k count=1 status=none 2>/dev/null ||
		SKIP[pipe]="dd is missing or has no status=none (coreutils)"
	# Row 6: build, start the bare server (it serves every variant but
	# "both"), check the client once, untimed, bare and under lgrun.
	command -v cc >/dev/null 2>&1 || { SKIP[http]="cc is not installed"; return; }
	cc -O2 -Wall -o "$HTTP_BIN" "$ROOT/bench/http_loop.c" ||
		{ SKIP[http]="cannot build bench/http_loop.c"; return; }
	rm -f "$WORK/http.port"
	"${PIN[@]}" "$HTTP_BIN" serve "$WORK/http.port" &
	HTTP_SRV=$!
	for ((i = 0; i < 1000; i++)); do
		[ -s "$WORK/http.port" ] && break
		kill -0 "$HTTP_SRV" 2>/dev/null || break
		sleep 0.01
	done
	HTTP_PORT=$(cat "$WORK/http.port" 2>/dev/null)
	[ -n "$HTTP_PORT" ] || { SKIP[http]="the http_loop server did not start"; return; }
	"${PIN[@]}" "$HTTP_BIN" client "$HTTP_PORT" 1000 >/dev/null ||
		{ SKIP[http]="http_loop client failed against its bare server"; return; }
	out=$("$LGRUN" "${LGRUN_EXTRA[@]}" --state-dir "$STATE" --session "lgbench-http-$$-check" --profile bulk-cleanup -- \
		"${PIN[@]}" "$HTTP_BIN" client "$HTTP_PORT" 1000 2>&1)
	rc=$?
	if [ "$rc" != 0 ]; then
		SKIP[http_lg]="the client under lgrun failed (exit $rc): $(tail -n1 <<<"$out")"
		SKIP[http_both]=${SKIP[http_lg]}
	elif [ "$(session_field "lgbench-http-$$-check" tool_calls)" = 0 ]; then
		NOTES+=("http loop: the shim reported no tool calls in the check run: the rows time an idle shim")
	fi
}
session_field() { # id key -> the number in the session's current record ("" if none)
	# the file keeps every record written (running, attached, exited): the last counts
	sed -n "s/.*\"$2\":\([0-9]*\).*/\1/p" "$STATE/sessions/$1.json" 2>/dev/null | tail -n 1
}
http_one() { # variant round
	local v=$1 id=lgbench-http-$$-$2-$1 out rc us
	[ -n "${SKIP[http]:-}" ] || [ -n "${SKIP[http_$v]:-}" ] && return
	case $v in
	bare)
		out=$("${PIN[@]}" "$HTTP_BIN" client "$HTTP_PORT" "$HTTP_N") ;;
	lg)
		out=$("$LGRUN" "${LGRUN_EXTRA[@]}" --state-dir "$STATE" --session "$id" --profile bulk-cleanup -- \
			"${PIN[@]}" "$HTTP_BIN" client "$HTTP_PORT" "$HTTP_N") ;;
	both)
		out=$("$LGRUN" "${LGRUN_EXTRA[@]}" --state-dir "$STATE" --session "$id" --profile bulk-cleanup -- \
			"${PIN[@]}" bash "$ROOT/bench/http_pair.sh" "$HTTP_BIN" "$HTTP_N" "$WORK/http-pair.port") ;;
	off)
		out=$("$LGRUN" "${LGRUN_EXTRA[@]}" --state-dir "$STATE" --session "$id" "${SHIMOFF_ARGS[@]}" --profile bulk-cleanup -- \
			"${PIN[@]}" "$HTTP_BIN" client "$HTTP_PORT" "$HTTP_N") ;;
	esac
	rc=$?
	us=$(sed -n 's/^us=\([0-9][0-9]*\)$/\1/p' <<<"$out")
	if [ "$rc" != 0 ] || [ -z "$us" ]; then
		SKIP[http_$v]="run failed (exit $rc)"
		return
	fi
	add "http_$v" "$(calc %.3f "$us / 1000")"
	if [ "$v" = lg ] || [ "$v" = both ]; then
		add "httpcalls_$v" "$(session_field "$id" tool_calls)"
		add "httpdrop_$v" "$(session_field "$id" shim_dropped)"
	fi
}
pipe_one() { # variant
	local v=$1 out rc us t0 t1
	[ -n "${SKIP[pipe]:-}" ] || [ -n "${SKIP[pipe_$v]:-}" ] && return
	t0=$(now_us)
	case $v in
	bare) out=$("${PIN[@]}" bash -c "$PIPE_CMD") ;;
	lg) out=$("$LGRUN" "${LGRUN_EXTRA[@]}" --state-dir "$STATE" -- "${PIN[@]}" bash -c "$PIPE_CMD") ;;
	null) [ -n "$HAVE_NULL" ] || return
		out=$("$BENCHBIN/notify_null" "${PIN[@]}" bash -c "$PIPE_CMD") ;;
	off) out=$("$LGRUN" "${LGRUN_EXTRA[@]}" --state-dir "$STATE" "${SHIMOFF_ARGS[@]}" -- "${PIN[@]}" bash -c "$PIPE_CMD") ;;
	esac
	rc=$?
	t1=$(now_us)
	us=$(sed -n 's/^us=\([0-9][0-9]*\)$/\1/p' <<<"$out")
	if [ "$rc" != 0 ] || [ -z "$us" ]; then
		SKIP[pipe_$v]="run failed (exit $rc)"
		return
	fi
	add "pipe_$v" "$(calc %.3f "$us / 1000")"
	add "pipewall_$v" "$(calc %.3f "($t1 - $t0) / 1000")"
}

# ------------------------------------------------------------- row 8: proxy
# A streamed model response through lgrun's LLM proxy (bench/sse_stream.c):
# a C upstream server sends an Anthropic Messages SSE stream of 1 MB
# (PROXY_EVENTS text deltas of PROXY_EVSIZE bytes) in PROXY_WSIZE writes,
# chunked, no delay; a C client posts to $ANTHROPIC_BASE_URL/v1/messages and
# times each response by its own clock (lgrun's startup is row 1). Direct:
# the client's ANTHROPIC_BASE_URL is the upstream. lgrun: the same variable
# is in lgrun's environment (the upstream), the client runs under lgrun and
# posts to the session's ANTHROPIC_BASE_URL, lgrun's proxy. There is no
# "[llm] proxy = false" variant: the client would then talk to the upstream
# directly, which is the direct baseline. The client and the server run on
# different CPUs when there are two (lgrun, the proxy, is not pinned).
PROXY_BIN=$BENCHBIN/sse_stream
PROXY_EVENTS=1024 PROXY_EVSIZE=1024 PROXY_WSIZE=16384
PROXY_PORT= PROXY_BYTES= PROXY_PIN_NOTE= PROXY_ERR_NOTED=
PROXY_ENV=() PROXY_CPIN=() PROXY_SPIN=()
cpus_allowed() { # -> the CPUs we may run on, one a line
	sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status | tr ',' '\n' |
		awk -F- 'NF == 1 { print $1 } NF == 2 { for (i = $1; i <= $2; i++) print i }'
}
proxy_pin() {
	local c s
	if [ "$PIN_CPU" = none ]; then
		PROXY_PIN_NOTE="not pinned (BENCH_PIN_CPU=none)"
		return
	elif ! command -v taskset >/dev/null 2>&1; then
		PROXY_PIN_NOTE="not pinned: taskset is not installed (util-linux)"
		return
	fi
	c=$PIN_CPU
	[ -n "$c" ] || c=$(cpus_allowed | tail -n1)
	s=$(cpus_allowed | grep -vx "$c" | head -n1)
	[ -n "$s" ] || s=$c
	if [[ $c =~ ^[0-9]+$ ]] && taskset -c "$c" true 2>/dev/null && taskset -c "$s" true 2>/dev/null; then
		PROXY_CPIN=(taskset -c "$c")
		PROXY_SPIN=(taskset -c "$s")
		PROXY_PIN_NOTE="client on CPU $c, upstream server on CPU $s (taskset); lgrun and its proxy not pinned"
	else
		PROXY_PIN_NOTE="not pinned: cannot run on CPU '$c'"
	fi
}
proxy_setup() {
	local out rc i turns v was=
	command -v cc >/dev/null 2>&1 || { SKIP[proxy]="cc is not installed"; return; }
	cc -O2 -Wall -pthread -o "$PROXY_BIN" "$ROOT/bench/sse_stream.c" ||
		{ SKIP[proxy]="cannot build bench/sse_stream.c"; return; }
	proxy_pin
	rm -f "$WORK/sse.port"
	"${PROXY_SPIN[@]}" "$PROXY_BIN" serve "$WORK/sse.port" "$PROXY_EVENTS" "$PROXY_EVSIZE" \
		"$PROXY_WSIZE" chunked &
	PROXY_SRV=$!
	for ((i = 0; i < 1000; i++)); do
		[ -s "$WORK/sse.port" ] && break
		kill -0 "$PROXY_SRV" 2>/dev/null || break
		sleep 0.01
	done
	PROXY_PORT=$(cat "$WORK/sse.port" 2>/dev/null)
	[ -n "$PROXY_PORT" ] || { SKIP[proxy]="the sse_stream server did not start"; return; }
	printf '[llm]\nmode = base_url\n' >"$WORK/pcurl-base.ini"
	printf '[llm]\nmode = proxy\ndecrypt = api.anthropic.com=http://127.0.0.1:%s\n' \
		"$PROXY_PORT" >"$WORK/pcurl-dec.ini"
	# The upstream as lgrun's own environment names it; no HTTP proxy from
	# the environment between lgrun's libcurl and the upstream.
	for v in http_proxy HTTP_PROXY all_proxy ALL_PROXY; do [ -n "${!v:-}" ] && was+=" $v"; done
	[ -n "$was" ] && NOTES+=("proxy: unset for this row:$was (libcurl would send the upstream traffic through it)")
	PROXY_ENV=(env -u http_proxy -u HTTP_PROXY -u all_proxy -u ALL_PROXY
		"ANTHROPIC_BASE_URL=http://127.0.0.1:$PROXY_PORT")
	out=$("${PROXY_ENV[@]}" "${PROXY_CPIN[@]}" "$PROXY_BIN" client 5 "$PROXY_EVENTS" "$PROXY_EVSIZE" "$PROXY_CONN") ||
		{ SKIP[proxy]="sse_stream client failed against its server, direct"; return; }
	PROXY_BYTES=$(sed -n 's/^bytes=\([0-9]*\)$/\1/p' <<<"$out")
	out=$("${PROXY_ENV[@]}" "$LGRUN" "${LGRUN_EXTRA[@]}" --state-dir "$STATE" --session "lgbench-proxy-$$-check" --profile bulk-cleanup -- \
		"${PROXY_CPIN[@]}" "$PROXY_BIN" client 5 "$PROXY_EVENTS" "$PROXY_EVSIZE" "$PROXY_CONN" proxy 2>&1)
	rc=$?
	if [ "$rc" != 0 ] && grep -q "not lgrun's proxy" <<<"$out"; then
		SKIP[proxy_lg]="the session's ANTHROPIC_BASE_URL is not lgrun's proxy ([llm] proxy = false, or the proxy did not start)"
	elif [ "$rc" != 0 ]; then
		SKIP[proxy_lg]="the client under lgrun failed (exit $rc): $(tail -n1 <<<"$out")"
	else
		turns=$(session_field "lgbench-proxy-$$-check" model_turns)
		[ "$turns" = 5 ] ||
			NOTES+=("proxy: the check run's session record counts ${turns:-no} model turns for 5 responses")
	fi
}
proxy_kv() { # output key -> value
	sed -n "s/^$2=\([0-9.]*\)$/\1/p" <<<"$1"
}
proxy_one() { # variant round
	local v=$1 id=lgbench-proxy-$$-$2 out rc tot
	[ -n "${SKIP[proxy]:-}" ] || [ -n "${SKIP[proxy_$v]:-}" ] && return
	case $v in
	direct)
		out=$("${PROXY_ENV[@]}" "${PROXY_CPIN[@]}" "$PROXY_BIN" client "$PROXY_N" \
			"$PROXY_EVENTS" "$PROXY_EVSIZE" "$PROXY_CONN") ;;
	lg)
		out=$("${PROXY_ENV[@]}" "$LGRUN" "${LGRUN_EXTRA[@]}" --state-dir "$STATE" --session "$id" --profile bulk-cleanup -- \
			"${PROXY_CPIN[@]}" "$PROXY_BIN" client "$PROXY_N" "$PROXY_EVENTS" "$PROXY_EVSIZE" \
			"$PROXY_CONN" proxy 2>"$WORK/proxy.err") ;;
	esac
	rc=$?
	tot=$(proxy_kv "$out" total_med_us)
	if [ "$rc" != 0 ] || [ -z "$tot" ]; then
		SKIP[proxy_$v]="run failed (exit $rc)"
		[ "$v" = lg ] && SKIP[proxy_$v]+=": $(tail -n1 "$WORK/proxy.err" 2>/dev/null)"
		return
	fi
	add "proxy_ttfb_$v" "$(calc %.4f "$(proxy_kv "$out" ttfb_med_us) / 1000")"
	add "proxy_ttfb90_$v" "$(calc %.4f "$(proxy_kv "$out" ttfb_p90_us) / 1000")"
	add "proxy_tot_$v" "$(calc %.4f "$tot / 1000")"
	add "proxy_mbs_$v" "$(calc %.2f "$(proxy_kv "$out" bytes) / $tot")"
	if [ "$v" = lg ]; then
		add proxy_turns "$(session_field "$id" model_turns)"
		if [ -s "$WORK/proxy.err" ] && [ -z "$PROXY_ERR_NOTED" ]; then
			PROXY_ERR_NOTED=1
			NOTES+=("proxy: lgrun wrote $(wc -l <"$WORK/proxy.err") line(s) to stderr in a timed run (round $(($2 + 1))), the first: $(head -n1 "$WORK/proxy.err")")
		fi
	fi
}

# The same stream timed by curl through each way an agent reaches its model
# (issue 13): direct to the upstream; the base-URL route (lgrun's
# ANTHROPIC_BASE_URL); the egress proxy decrypting api.anthropic.com
# ([llm] mode = proxy, decrypt = api.anthropic.com=the upstream; curl goes
# by HTTPS_PROXY and trusts the session CA, the file NODE_EXTRA_CA_CERTS
# names: with CURL_CA_BUNDLE, the system's 145 CAs and it, curl parses the
# whole bundle again for every connection, about 20 ms here, which is the
# client's cost, not the route's; an agent loads its store once).
# PROXY_CURL_N POSTs in one curl; the decrypted route makes a CONNECT and a
# TLS handshake per request (one request per connection).
PROXY_CURL_N=10
proxy_curl_one() { # direct|base|decrypt
	local v=$1 url out args=()
	[ -n "${SKIP[proxy]:-}" ] || [ -n "${SKIP[pcurl_$v]:-}" ] && return
	command -v curl >/dev/null || { SKIP[pcurl_$v]="curl is not installed"; return; }
	case $v in
	direct) url=http://127.0.0.1:$PROXY_PORT/v1/messages ;;
	base) url='$ANTHROPIC_BASE_URL/v1/messages' ;;
	decrypt) url='--cacert "$NODE_EXTRA_CA_CERTS" https://api.anthropic.com/v1/messages' ;;
	esac
	# -o applies to one URL: one each
	for ((i = 0; i < PROXY_CURL_N; i++)); do args+=(-o /dev/null "$url"); done
	# shellcheck disable=SC2016 # expanded by sh -c, in the session
	local cmd='exec curl -sS -X POST -H "content-type: application/json" \
		--data "{\"stream\":true}" -w "%{time_starttransfer} %{time_total} %{size_download}\n" '"${args[*]}"
	case $v in
	direct) out=$(env -u http_proxy -u HTTP_PROXY -u https_proxy -u HTTPS_PROXY sh -c "$cmd") ;;
	base) out=$("${PROXY_ENV[@]}" "$LGRUN" "${LGRUN_EXTRA[@]}" --state-dir "$STATE" \
		-c "$WORK/pcurl-base.ini" --profile bulk-cleanup -- sh -c "$cmd" 2>/dev/null) ;;
	decrypt) out=$("$LGRUN" "${LGRUN_EXTRA[@]}" --state-dir "$STATE" \
		-c "$WORK/pcurl-dec.ini" --profile bulk-cleanup -- sh -c "$cmd" 2>/dev/null) ;;
	esac
	if [ $? != 0 ] || [ "$(grep -c . <<<"$out")" != "$PROXY_CURL_N" ]; then
		SKIP[pcurl_$v]="curl failed: $(tail -n1 <<<"$out")"
		return
	fi
	add "pcurl_ttfb_$v" "$(awk '{ print $1 * 1000 }' <<<"$out" | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')"
	add "pcurl_mbs_$v" "$(awk '{ b += $3; t += $2 } END { printf "%.2f", b / t / 1e6 }' <<<"$out")"
}

# ------------------------------------------------------------- run
T_START=$(now_us)
LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
echo "lgrun bench: $ROUNDS rounds, variants interleaved within each round (order reversed every other round)"
echo "  files on $FS_NOTE; lgrun state dir on $STATE_FS ($STATE)"
{ want rm || want startup || want build || want shim; } && null_setup
# ------------------------------------------------------------- row 9: watch
# --watch-output: 200 MB of base64 text (lines of 76 characters) through
# `cat` with lgrun passing stdout through and watching it, against bare
# `cat`. Timed by the wall clock around each run (lgrun's start included).
# ------------------------------------------------------------- egress
# A download through lgrun's egress proxy ([llm] mode = proxy): EGRESS_MB
# from a loopback server (Python, socket.sendfile: the kernel copies) with
# curl: direct (--noproxy), through a CONNECT tunnel (curl -p, relayed byte
# for byte) and as a plain-HTTP forward; MB/s from curl's own clock.
EGRESS_PORT= EGRESS_SRV=
egress_setup() {
	local f=$WORK/egress.bin
	command -v curl >/dev/null || { SKIP[egress]="curl is not installed"; return; }
	head -c "$((EGRESS_MB * 1000000))" /dev/zero >"$f"
	cat >"$WORK/egress_srv.py" <<'PY'
import os, socket, sys, threading
path, portfile, addr = sys.argv[1], sys.argv[2], sys.argv[3]
s = socket.socket()
s.bind((addr, 0))
s.listen(16)
open(portfile + ".tmp", "w").write(str(s.getsockname()[1]))
os.rename(portfile + ".tmp", portfile)
size = os.path.getsize(path)
def serve(c):
    buf = b""
    while b"\r\n\r\n" not in buf:
        d = c.recv(4096)
        if not d:
            return
        buf += d
    c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n" % size)
    with open(path, "rb") as f:
        c.sendfile(f)
    c.close()
while True:
    c, _ = s.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
PY
	python3 "$WORK/egress_srv.py" "$f" "$WORK/egress.port" 127.0.0.1 &
	EGRESS_SRV=$!
	BG_PIDS+=("$EGRESS_SRV")
	for _ in $(seq 1 100); do
		[ -s "$WORK/egress.port" ] && break
		sleep 0.05
	done
	EGRESS_PORT=$(cat "$WORK/egress.port" 2>/dev/null)
	[ -n "$EGRESS_PORT" ] || SKIP[egress]="the download server did not start"
	printf '[llm]\nmode = proxy\n' >"$WORK/egress.ini"
	egress_link_setup "$f"
}

# The same server behind a link with a rate, as a download from another
# host has: a network namespace, a veth pair and a token bucket (tc tbf) of
# EGRESS_LINK on the origin's side. Root only; netem (a delay) is not
# assumed, the kernel may lack it.
EGRESS_LINK=${BENCH_EGRESS_LINK:-1gbit}
EGRESS_LINK_URL=
egress_link_setup() {
	local f=$1 port dev=lgb$$h peer=lgb$$o
	[ "$(id -u)" = 0 ] || { SKIP[egress_link]="needs root (a network namespace, a veth pair, tc)"; return; }
	command -v ip >/dev/null && command -v tc >/dev/null ||
		{ SKIP[egress_link]="needs ip and tc (iproute2)"; return; }
	EGRESS_NS=lgbench-$$
	if ! { ip netns add "$EGRESS_NS" &&
		ip link add "$dev" type veth peer name "$peer" &&
		ip link set "$peer" netns "$EGRESS_NS" &&
		ip addr add 10.251.$(($$ % 250)).1/30 dev "$dev" && ip link set "$dev" up &&
		ip netns exec "$EGRESS_NS" sh -c "ip addr add 10.251.$(($$ % 250)).2/30 dev $peer &&
			ip link set $peer up && ip link set lo up &&
			tc qdisc add dev $peer root tbf rate $EGRESS_LINK burst 256kb latency 20ms"; } 2>"$WORK/link.err"; then
		SKIP[egress_link]="cannot make the link: $(head -n1 "$WORK/link.err")"
		return
	fi
	ip netns exec "$EGRESS_NS" python3 "$WORK/egress_srv.py" "$f" "$WORK/egress_link.port" \
		"10.251.$(($$ % 250)).2" &
	BG_PIDS+=("$!")
	for _ in $(seq 1 100); do
		[ -s "$WORK/egress_link.port" ] && break
		sleep 0.05
	done
	port=$(cat "$WORK/egress_link.port" 2>/dev/null)
	[ -n "$port" ] || { SKIP[egress_link]="the download server did not start"; return; }
	EGRESS_LINK_URL=http://10.251.$(($$ % 250)).2:$port/blob
}

egress_one() { # direct|tunnel|forward|link_direct|link_tunnel
	local v=$1 url out
	[ -n "${SKIP[egress]:-}" ] || [ -n "${SKIP[egress_$v]:-}" ] && return
	url=http://127.0.0.1:$EGRESS_PORT/blob
	case $v in
	link_*)
		[ -n "${SKIP[egress_link]:-}" ] && return
		url=$EGRESS_LINK_URL v=${v#link_} ;;
	esac
	case $v in
	direct) out=$(curl -sS --noproxy '*' -o /dev/null -w '%{speed_download}' "$url") ;;
	tunnel) out=$("$LGRUN" "${LGRUN_EXTRA[@]}" --state-dir "$STATE" -c "$WORK/egress.ini" -- \
		curl -sS -p -o /dev/null -w '%{speed_download}' "$url" 2>/dev/null) ;;
	forward) out=$("$LGRUN" "${LGRUN_EXTRA[@]}" --state-dir "$STATE" -c "$WORK/egress.ini" -- \
		curl -sS -o /dev/null -w '%{speed_download}' "$url" 2>/dev/null) ;;
	esac
	if [ $? != 0 ] || [ -z "$out" ]; then
		SKIP[egress_$1]="curl failed"
		return
	fi
	add "egress_$1" "$(calc %.3f "$out / 1e6")"
}

watch_setup() {
	WATCH_FILE=$WORK/watch.txt
	head -c $((150 << 20)) /dev/urandom | base64 >"$WATCH_FILE" 2>/dev/null ||
		SKIP[watch]="cannot make the 200 MB input"
}
watch_one() { # variant
	local v=$1 t0 t1 rc
	[ -n "${SKIP[watch]:-}" ] && return
	t0=$(now_us)
	case $v in
	bare) cat "$WATCH_FILE" >/dev/null ;;
	pipe) cat "$WATCH_FILE" | cat >/dev/null ;;
	lg) "$LGRUN" "${LGRUN_EXTRA[@]}" --state-dir "$STATE" --watch-output -- cat "$WATCH_FILE" >/dev/null ;;
	esac
	rc=$?
	t1=$(now_us)
	[ "$rc" = 0 ] || { SKIP[watch]="run failed (exit $rc)"; return; }
	add "watch_$v" "$(calc %.3f "($t1 - $t0) / 1000")"
}

want rm && rm_setup
want build && build_setup
want edit && edit_setup
want rename && rename_setup
want kill && kill_setup
want guard && guard_setup
want shim && shim_setup
want proxy && proxy_setup
want watch && watch_setup
want egress && egress_setup
want store && store_setup

for ((r = 0; r < ROUNDS; r++)); do
	printf '  round %d/%d ...' "$((r + 1))" "$ROUNDS"
	rm -rf "$STATE/sessions"
	if want startup; then
		for v in $(ordered "$r" bare lg null nested); do "startup_$v"; done
		startup_mkfile
	fi
	if want rm; then
		for v in $(ordered "$r" "${RM_VARIANTS[@]}"); do rm_one "$v"; done
	fi
	if want build && [ -z "${SKIP[build]:-}" ]; then
		for v in $(ordered "$r" "${BUILD_VARIANTS[@]}"); do build_one "$v"; done
	fi
	if want edit && [ -z "${SKIP[edit]:-}" ]; then
		for v in $(ordered "$r" bare lg nokw); do edit_one "$v"; done
	fi
	if want rename && [ -z "${SKIP[rename]:-}" ]; then
		for v in $(ordered "$r" bare lg noq); do rename_one "$v"; done
	fi
	if want kill && [ -z "${SKIP[kill]:-}" ]; then
		for v in $(ordered "$r" lg base); do
			if [ "$v" = lg ]; then kill_lg "$r"; else kill_base; fi
		done
	fi
	if want guard && [ -z "${SKIP[guard]:-}" ]; then
		for v in $(ordered "$r" mixed destroy); do guard_one "$v"; done
	fi
	if want shim; then
		for v in $(ordered "$r" bare lg both off); do http_one "$v" "$r"; done
		for v in $(ordered "$r" bare lg off null); do pipe_one "$v"; done
	fi
	if want proxy && [ -z "${SKIP[proxy]:-}" ]; then
		for v in $(ordered "$r" direct lg); do proxy_one "$v" "$r"; done
		for v in $(ordered "$r" direct base decrypt); do proxy_curl_one "$v"; done
	fi
	if want watch; then
		for v in $(ordered "$r" bare pipe lg); do watch_one "$v"; done
	fi
	if want store; then
		store_one
	fi
	if want egress && [ -z "${SKIP[egress]:-}" ]; then
		for v in $(ordered "$r" direct tunnel forward link_direct link_tunnel); do egress_one "$v"; done
	fi
	printf ' %.1fs\n' "$(calc %.6f "($(now_us) - $T_START) / 1e6")"
done
T_END=$(now_us)
if [ -n "$HTTP_SRV" ]; then
	kill -TERM "$HTTP_SRV" 2>/dev/null
	wait "$HTTP_SRV" 2>/dev/null
	HTTP_SRV=
fi
if [ -n "$PROXY_SRV" ]; then
	kill -TERM "$PROXY_SRV" 2>/dev/null
	wait "$PROXY_SRV" 2>/dev/null
	PROXY_SRV=
fi

# ------------------------------------------------------------- table
FMT='%-22s %-46s %12s %12s %8s %10s %-12s %-4s %s\n'
hdr() {
	echo
	# shellcheck disable=SC2059
	printf "$FMT" ROW MEASURED BASELINE "UNDER TEST" RATIO DIFF TARGET MET NOTE
	printf "$FMT" ---------------------- ---------------------------------------------- \
		------------ ------------ -------- ---------- ------------ ---- ----
}
row() { printf "$FMT" "$@"; }
met() { # condition-as-awk-expression
	awk "BEGIN { exit !($1) }" && echo yes || echo NO
}
skiprow() { row "$1" "$2" - - - - "$3" - "skipped: $4"; }

hdr
# 1 startup
if want startup; then
	b=$(median su_bare) l=$(median su_lg)
	if [ -n "${SKIP[startup]:-}" ] || [ -z "$l" ]; then
		skiprow "1 startup" "lgrun -- true vs true, per invocation" "<= +1.5 ms" "${SKIP[startup]:-no samples}"
	else
		d=$(calc %.6f "$l - $b")
		row "1 startup" "lgrun -- true vs true, per run (x$STARTUP_N)" \
			"$(calc '%.3f ms' "$b")" "$(calc '%.3f ms' "$l")" "$(calc '%.2fx' "$l / $b")" \
			"$(calc '%+.3f ms' "$d")" "<= +1.5 ms" "$(met "$d <= 1.5")" \
			"lgrun range $(spread su_lg %.3f) ms; a file made in its state dir: $(median su_mkfile | cut -d. -f1) us (it makes 3)"
	fi
	l=$(median su_null)
	if [ -n "$l" ] && [ -n "$b" ]; then
		row "1 startup: notify" "notify_null true vs true, per run" \
			"$(calc '%.3f ms' "$b")" "$(calc '%.3f ms' "$l")" "$(calc '%.2fx' "$l / $b")" \
			"$(calc '%+.3f ms' "$l - $b")" "(reference)" - \
			"fork + filter + listener hand-off + thread: the floor"
	elif [ -n "${SKIP[startup_null]:-}" ]; then
		skiprow "1 startup: notify" "notify_null true vs true, per run" "(reference)" "${SKIP[startup_null]}"
	fi
	n=$(median su_nested) l=$(median su_lg)
	if [ -n "$n" ] && [ -n "$l" ]; then
		row "1 startup: nested" "lgrun inside a session vs top-level lgrun" \
			"$(calc '%.3f ms' "$l")" "$(calc '%.3f ms' "$n")" "$(calc '%.2fx' "$n / $l")" \
			"$(calc '%+.3f ms' "$n - $l")" "(reference)" - \
			"registers over the control socket, then execs; $(spread su_nested %.3f) ms"
	else
		skiprow "1 startup: nested" "lgrun inside a session vs top-level lgrun" "(reference)" "${SKIP[nested]:-no samples}"
	fi
fi
# 2 rm-heavy
if want rm; then
	b=$(median rm_bare)
	what="rm -rf $RM_FILES files"
	if [ -z "$b" ]; then
		skiprow "2 rm-heavy" "$what" "<= 2.0x" "${SKIP[rm_bare]:-no bare samples}"
	else
		su_d=
		[ -n "$(median su_lg)" ] && su_d=$(calc %.6f "$(median su_lg) - $(median su_bare)")
		floor=$(median rm_null)
		for v in bulk procmem noq nokw norec bpf observe null least leastkeep strace bwrap; do
			case $v in
			bulk) name="2 rm-heavy: lgrun" desc="$what, --profile bulk-cleanup" tgt="<= 2.0x" ;;
			procmem) name="2 rm-heavy: /proc/PID/mem" desc="$what, bulk-cleanup, LGRUN_ARGS_VIA=proc (a default container)" tgt="(vs lgrun)" ;;
			noq) name="2 rm-heavy: no quarantine" desc="$what, bulk-cleanup, quarantine off" tgt="(vs lgrun)" ;;
			nokw) name="2 rm-heavy: no keep_writes" desc="$what, bulk-cleanup, [quarantine] keep_writes off" tgt="(vs lgrun)" ;;
			norec) name="2 rm-heavy: no recording" desc="$what, bulk-cleanup, [record] events off" tgt="(vs lgrun)" ;;
			bpf) name="2 rm-heavy: +bpf" desc="$what, bulk-cleanup, --bpf=on" tgt="(vs lgrun)" ;;
			observe) name="2 rm-heavy: observe" desc="$what, --observe (default config)" tgt="<= 2.0x" ;;
			null) name="2 rm-heavy: notify" desc="$what, notify_null (answer only)" tgt="(reference)" ;;
			least) name="2 rm-heavy: least" desc="$what, notify_null --read (path, directory, statx)" tgt="(reference)" ;;
			leastkeep) name="2 rm-heavy: least+keep" desc="$what, notify_null --keep (and a link)" tgt="(reference)" ;;
			strace) name="2 rm-heavy: strace" desc="$what, strace -f -o /dev/null" tgt="(reference)" ;;
			bwrap) name="2 rm-heavy: bwrap" desc="$what, bwrap --dev-bind / /" tgt="(reference)" ;;
			esac
			l=$(median "rm_$v")
			if [ -n "${SKIP[rm_$v]:-}" ] || [ -z "$l" ]; then
				skiprow "$name" "$desc" "$tgt" "${SKIP[rm_$v]:-no samples}"
				continue
			fi
			ratio=$(calc %.4f "$l / $b")
			m=-
			[ "$tgt" = "<= 2.0x" ] && m=$(met "$ratio <= 2.0")
			extra="range $(spread "rm_$v" %.1f) ms"
			if [ "$v" = noq ] && [ -n "$(median rm_bulk)" ]; then
				extra="lgrun (quarantine on) is $(calc '%.3fx' "$(median rm_bulk) / $l") of this: keeping $RM_FILES just-written files (no blocks yet, so removing them frees little) by hard links (target <= 1.10x); $(spread rm_noq %.1f) ms"
			elif [ "$v" = nokw ] && [ -n "$(median rm_bulk)" ]; then
				extra="lgrun (keep_writes on) is $(calc '%.3fx' "$(median rm_bulk) / $l") of this: rm opens nothing for writing; $(spread rm_nokw %.1f) ms"
			elif [ "$v" = norec ] && [ -n "$(median rm_bulk)" ]; then
				extra="lgrun (recording on) is $(calc '%.3fx' "$(median rm_bulk) / $l") of this: a JSON line per event into a buffer; $(spread rm_norec %.1f) ms"
			elif [ "$v" = procmem ] && [ -n "$(median rm_bulk)" ]; then
				extra="$(calc '%.3fx' "$l / $(median rm_bulk)") of lgrun with process_vm_readv: an open and a close of /proc/PID/mem per path read, +$(calc '%.2f' "($l - $(median rm_bulk)) * 1000 / $RM_FILES") us/unlink; $(spread rm_procmem %.1f) ms"
			elif [ "$v" = bpf ] && [ -n "$(median rm_bulk)" ]; then
				extra="$(calc '%.3fx' "$l / $(median rm_bulk)") of lgrun --bpf=off (the observer's own cost); $(spread rm_bpf %.1f) ms"
			elif [ "$v" = bulk ] || [ "$v" = observe ]; then
				if [ -n "$su_d" ]; then
					extra="+$(calc '%.2f' "($l - $b - $su_d) * 1000 / $RM_FILES") us/unlink (startup excluded)"
					[ -n "$floor" ] &&
						extra+=", +$(calc '%.2f' "($l - $floor - $su_d) * 1000 / $RM_FILES") over the floor"
					extra+="; $(spread "rm_$v" %.1f) ms"
				fi
			elif [ "$v" = null ]; then
				extra="+$(calc '%.2f' "($l - $b) * 1000 / $RM_FILES") us/unlink: the seccomp-notify round trip alone; $(spread rm_null %.1f) ms"
			elif [ "$v" = least ] || [ "$v" = leastkeep ]; then
				extra="$(calc '%.2fx' "$l / $floor") the floor, +$(calc '%.2f' "($l - $floor) * 1000 / $RM_FILES") us/unlink over it; $(spread "rm_$v" %.1f) ms"
			fi
			row "$name" "$desc" "$(calc '%.1f ms' "$b")" "$(calc '%.1f ms' "$l")" \
				"$(calc '%.2fx' "$ratio")" "$(calc '%+.1f ms' "$l - $b")" "$tgt" "$m" "$extra"
		done
	fi
	# the same on files already on disk: the quarantine on vs off
	b=$(median rm_diskbare) l=$(median rm_disk) n=$(median rm_disknoq)
	what="rm -rf $RM_DISK_FILES files on disk (synced)"
	if [ -z "$b" ] || [ -z "$l" ] || [ -z "$n" ]; then
		skiprow "2 rm-heavy on disk" "$what" "<= 1.10x" "${SKIP[rm_disk]:-${SKIP[rm_disknoq]:-${SKIP[rm_diskbare]:-no samples}}}"
	else
		ratio=$(calc %.4f "$l / $n")
		row "2 rm-heavy on disk: quarantine" "$what, bulk-cleanup, quarantine on vs off" \
			"$(calc '%.1f ms' "$n")" "$(calc '%.1f ms' "$l")" "$(calc '%.2fx' "$ratio")" \
			"$(calc '%+.1f ms' "$l - $n")" "<= 1.10x" "$(met "$ratio <= 1.10")" \
			"baseline: the quarantine off; bare rm $(calc '%.1f' "$b") ms; off $(spread rm_disknoq %.1f), on $(spread rm_disk %.1f) ms"
	fi
fi
# 3 build
if want build; then
	b=$(median build_bare) l=$(median build_lg)
	what="make -j2 after clean, $BUILD_FILES-file C project"
	if [ -n "${SKIP[build]:-}" ] || [ -z "$l" ] || [ -z "$b" ]; then
		skiprow "3 build" "$what" "<= 1.03x" "${SKIP[build]:-no samples}"
	else
		ratio=$(calc %.4f "$l / $b")
		row "3 build" "$what" "$(calc '%.0f ms' "$b")" "$(calc '%.0f ms' "$l")" \
			"$(calc '%.3fx' "$ratio")" "$(calc '%+.0f ms' "$l - $b")" "<= 1.03x" \
			"$(met "$ratio <= 1.03")" "--bpf=off; CPU (user+sys) $(calc '%.3fx' "$(median buildcpu_lg) / $(median buildcpu_bare)"); wall bare $(spread build_bare %.0f), lgrun $(spread build_lg %.0f) ms"
		p=$(median build_noq)
		if [ -n "$p" ]; then
			row "3 build: no quarantine" "same, quarantine off vs on" "$(calc '%.0f ms' "$p")" "$(calc '%.0f ms' "$l")" \
				"$(calc '%.3fx' "$l / $p")" "$(calc '%+.0f ms' "$l - $p")" "(vs lgrun)" - \
				"what the quarantine costs a build: nothing pre-existing is removed; $(spread build_noq %.0f) ms"
		fi
		p=$(median build_procmem)
		if [ -n "$p" ]; then
			row "3 build: /proc/PID/mem" "same, LGRUN_ARGS_VIA=proc (a default container) vs process_vm_readv" "$(calc '%.0f ms' "$l")" "$(calc '%.0f ms' "$p")" \
				"$(calc '%.3fx' "$p / $l")" "$(calc '%+.0f ms' "$p - $l")" "(vs lgrun)" - \
				"$(calc '%.3fx' "$p / $b") of bare; CPU $(calc '%.3fx' "$(median buildcpu_procmem) / $(median buildcpu_lg)"); $(spread build_procmem %.0f) ms"
		fi
		p=$(median build_bpf)
		if [ -n "$p" ]; then
			ratio=$(calc %.4f "$p / $l")
			row "3 build: +bpf" "same, --bpf=on vs --bpf=off" "$(calc '%.0f ms' "$l")" "$(calc '%.0f ms' "$p")" \
				"$(calc '%.3fx' "$ratio")" "$(calc '%+.0f ms' "$p - $l")" "<= 1.05x" "$(met "$ratio <= 1.05")" \
				"$(calc '%.3fx' "$p / $b") of bare; CPU $(calc '%.3fx' "$(median buildcpu_bpf) / $(median buildcpu_lg)"); $(spread build_bpf %.0f) ms"
		fi
	fi
fi
# 3 build, keep_writes off; 3c an agent's edits
if want build; then
	l=$(median build_lg) p=$(median build_nokw)
	if [ -n "$l" ] && [ -n "$p" ]; then
		row "3 build: no keep_writes" "same, [quarantine] keep_writes off vs on" "$(calc '%.0f ms' "$p")" "$(calc '%.0f ms' "$l")" \
			"$(calc '%.3fx' "$l / $p")" "$(calc '%+.0f ms' "$l - $p")" "(vs lgrun)" - \
			"what keeping overwritten files costs a build (its writes are to new files: each open leaves the kernel, nothing is kept); $(spread build_nokw %.0f) ms"
	fi
	p=$(median build_noremote)
	if [ -n "$l" ] && [ -n "$p" ]; then
		row "3 build: no [remote]" "same, [remote] enabled = false vs true" "$(calc '%.0f ms' "$p")" "$(calc '%.0f ms' "$l")" \
			"$(calc '%.3fx' "$l / $p")" "$(calc '%+.0f ms' "$l - $p")" "(vs lgrun)" - \
			"what reading command lines at exec costs a build (issue 38: every exec leaves the kernel; only a CLI of the table has its arguments read); CPU $(calc '%.3fx' "$(median buildcpu_lg) / $(median buildcpu_noremote)"); $(spread build_noremote %.0f) ms"
	fi
fi
if want edit; then
	b=$(median edit_bare) l=$(median edit_lg) p=$(median edit_nokw)
	what="python rewrites $EDIT_FILES pre-existing 4 KiB files (open 'w')"
	if [ -n "${SKIP[edit]:-}" ] || [ -z "$b" ] || [ -z "$l" ] || [ -z "$p" ]; then
		skiprow "3c edit" "$what" "(reference)" "${SKIP[edit]:-no samples}"
	else
		row "3c edit: lgrun" "$what" "$(calc '%.1f ms' "$b")" "$(calc '%.1f ms' "$l")" \
			"$(calc '%.3fx' "$l / $b")" "$(calc '%+.1f ms' "$l - $b")" "(reference)" - \
			"keep_writes on: each file's old content kept first ($(calc '%.0f' "($l - $p) * 1000 / $EDIT_FILES") us/file over keep_writes off); $(spread edit_lg %.1f) ms"
		row "3c edit: no keep_writes" "same, keep_writes off" "$(calc '%.1f ms' "$b")" "$(calc '%.1f ms' "$p")" \
			"$(calc '%.3fx' "$p / $b")" "$(calc '%+.1f ms' "$p - $b")" "(reference)" - \
			"nothing kept: lgrun's start and the notify loop; $(spread edit_nokw %.1f) ms"
	fi
fi
# 3b rename
if want rename; then
	for cmd in checkout sedi; do
		case $cmd in
		checkout) what="git checkout of $RENAME_FILES changed files" ;;
		sedi) what="sed -i over $((RENAME_FILES / 2)) pre-existing files" ;;
		esac
		b=$(median "${cmd}_bare") l=$(median "${cmd}_lg") n=$(median "${cmd}_noq")
		if [ -n "${SKIP[rename]:-}" ] || [ -z "$b" ] || [ -z "$l" ] || [ -z "$n" ]; then
			skiprow "3b $cmd" "$what" "(vs lgrun)" "${SKIP[rename]:-no samples}"
			continue
		fi
		row "3b $cmd: lgrun" "$what" "$(calc '%.1f ms' "$b")" "$(calc '%.1f ms' "$l")" \
			"$(calc '%.2fx' "$l / $b")" "$(calc '%+.1f ms' "$l - $b")" "(reference)" - \
			"default config, --bpf=off; bare $(spread "${cmd}_bare" %.1f), lgrun $(spread "${cmd}_lg" %.1f) ms"
		row "3b $cmd: no quarantine" "same, quarantine off vs on" "$(calc '%.1f ms' "$n")" "$(calc '%.1f ms' "$l")" \
			"$(calc '%.3fx' "$l / $n")" "$(calc '%+.1f ms' "$l - $n")" "(vs lgrun)" - \
			"$([ $cmd = sedi ] && echo "each rename replaces pre-existing data: kept by a link first" ||
				echo "the old files are in git's objects (recoverable): only .git's index and HEAD are kept"); $(spread "${cmd}_noq" %.1f) ms"
	done
fi
# 4 kill
if want kill; then
	b=$(median kill_base) l=$(median kill_lg)
	what="$((KILL_NSUB * KILL_NPER)) sleeps: cgroup.kill -> populated 0"
	if [ -n "${SKIP[kill]:-}" ] || [ -z "$l" ] || [ -z "$b" ]; then
		skiprow "4 kill" "$what" "<= 1.2x" "${SKIP[kill]:-no samples}"
	else
		ratio=$(calc %.4f "$l / $b")
		row "4 kill" "$what" "$(calc '%.1f ms' "$b")" "$(calc '%.1f ms' "$l")" \
			"$(calc '%.2fx' "$ratio")" "$(calc '%+.1f ms' "$l - $b")" "<= 1.2x" \
			"$(met "$ratio <= 1.2")" "baseline $(spread kill_base %.1f), lgrun $(spread kill_lg %.1f) ms"
	fi
fi
# 5 guard
if want guard; then
	for v in mixed destroy; do
		if [ "$v" = mixed ]; then
			name="5 guard alone" desc="lg_guard_feed x $GUARD_EVENTS, half DESTROY"
		else
			name="5 guard: DESTROY" desc="lg_guard_feed x $GUARD_EVENTS, all DESTROY"
		fi
		ns=$(median "guard_$v")
		if [ -n "${SKIP[guard]:-}" ] || [ -z "$ns" ]; then
			skiprow "$name" "$desc" "(info)" "${SKIP[guard]:-no samples}"
			continue
		fi
		row "$name" "$desc" - "$(calc '%.1f ns/ev' "$ns")" - - "(info)" - \
			"$(calc '%.2f M events/s' "1000 / $ns")"
	done
fi

# 6 http loop, 7 pipe-heavy
if want shim; then
	b=$(median http_bare)
	for v in lg both off; do
		case $v in
		lg) name="6 http loop: lgrun" desc="$HTTP_N POSTs 1 KB, client: lgrun bulk-cleanup" tgt="<= 1.05x" ;;
		both) name="6 http loop: both" desc="$HTTP_N POSTs 1 KB, server+client in lgrun" tgt="<= 1.05x" ;;
		off) name="6 http loop: shim off" desc="$HTTP_N POSTs 1 KB, client: lgrun, shim off" tgt="(reference)" ;;
		esac
		l=$(median "http_$v")
		if [ -n "${SKIP[http]:-}" ] || [ -n "${SKIP[http_$v]:-}" ] || [ -z "$l" ] || [ -z "$b" ]; then
			skiprow "$name" "$desc" "$tgt" "${SKIP[http]:-${SKIP[http_$v]:-${SKIP[http_bare]:-no samples}}}"
			continue
		fi
		ratio=$(calc %.4f "$l / $b")
		m=-
		[ "$tgt" = "<= 1.05x" ] && m=$(met "$ratio <= 1.05")
		extra="$(calc '%+.2f' "($l - $b) * 1000 / $HTTP_N") us/request"
		case $v in
		lg | both)
			extra+="; POSTs reported as HTTP tool calls, never held"
			extra+=" (supervisor counted $(median "httpcalls_$v" | cut -d. -f1)/run, $(median "httpdrop_$v" | cut -d. -f1) dropped)" ;;
		off) extra+="; lgrun without the shim: seccomp filter only" ;;
		esac
		extra+="; $(spread "http_$v" %.0f) ms"
		row "$name" "$desc" "$(calc '%.1f ms' "$b")" "$(calc '%.1f ms' "$l")" \
			"$(calc '%.3fx' "$ratio")" "$(calc '%+.1f ms' "$l - $b")" "$tgt" "$m" "$extra"
	done
	b=$(median pipe_bare)
	for v in lg off; do
		case $v in
		lg) name="7 pipe-heavy: lgrun" desc="$PIPE_MB MiB, dd bs=4k | dd bs=4k, lgrun" tgt="<= 1.05x" ;;
		off) name="7 pipe-heavy: shim off" desc="$PIPE_MB MiB, dd bs=4k | dd bs=4k, lgrun shim off" tgt="(reference)" ;;
		esac
		l=$(median "pipe_$v")
		if [ -n "${SKIP[pipe]:-}" ] || [ -n "${SKIP[pipe_$v]:-}" ] || [ -z "$l" ] || [ -z "$b" ]; then
			skiprow "$name" "$desc" "$tgt" "${SKIP[pipe]:-${SKIP[pipe_$v]:-${SKIP[pipe_bare]:-no samples}}}"
			continue
		fi
		ratio=$(calc %.4f "$l / $b")
		m=-
		[ "$tgt" = "<= 1.05x" ] && m=$(met "$ratio <= 1.05")
		row "$name" "$desc" "$(calc '%.1f ms' "$b")" "$(calc '%.1f ms' "$l")" \
			"$(calc '%.3fx' "$ratio")" "$(calc '%+.1f ms' "$l - $b")" "$tgt" "$m" \
			"$(calc '%+.0f' "($l - $b) * 1e6 / ($PIPE_BLOCKS * 2)") ns per 4 KiB read or write; wall with lgrun's start $(calc '%.1f' "$(median pipewall_bare)") -> $(calc '%.1f' "$(median "pipewall_$v")") ms; $(spread "pipe_$v" %.1f) ms"
	done
fi

# 9 watch-output
if want watch; then
	b=$(median watch_bare)
	l=$(median watch_lg)
	name="9 watch-output" desc="~200 MB base64 text through cat, --watch-output"
	if [ -n "${SKIP[watch]:-}" ] || [ -z "$l" ] || [ -z "$b" ]; then
		skiprow "$name" "$desc" "<= 1.10x" "${SKIP[watch]:-no samples}"
	else
		ratio=$(calc %.4f "$l / $b")
		row "$name" "$desc" "$(calc '%.1f ms' "$b")" "$(calc '%.1f ms' "$l")" \
			"$(calc '%.3fx' "$ratio")" "$(calc '%+.1f ms' "$l - $b")" "<= 1.10x" \
			"$(met "$ratio <= 1.10")" "wall clock, lgrun's start included; $(spread watch_lg %.1f) ms; the output's pipe is the floor: a shell pipe cat | cat takes $(calc '%.1f' "$(median watch_pipe)") ms"
		p=$(median watch_pipe)
		[ -n "$p" ] && row "" "vs a shell pipe (cat | cat >/dev/null)" "$(calc '%.1f ms' "$p")" "$(calc '%.1f ms' "$l")" \
			"$(calc '%.3fx' "$l / $p")" "$(calc '%+.1f ms' "$l - $p")" "<= 1.10x" "$(met "$l / $p <= 1.10")" \
			"lgrun splices all but the watched last KiB of each read"
	fi
fi

# 10 store
if want store; then
	m=$(median store_mem) r=$(median store_redis)
	if [ -n "${SKIP[store]:-}" ] || [ -z "$m" ] || [ -z "$r" ]; then
		skiprow "10 store: redis" "guard decisions, windows in Redis" "(info)" "${SKIP[store]:-no samples}"
	else
		row "10 store: redis" "guard per DESTROY event, memory vs Redis (loopback)" \
			"$(calc '%.2f us' "$m / 1000")" "$(calc '%.1f us' "$r / 1000")" "$(calc '%.0fx' "$r / $m")" \
			"$(calc '%+.1f us' "($r - $m) / 1000")" "(info)" - \
			"$(calc '%.0f' "1e9 / $m") vs $(calc '%.0f' "1e9 / $r") decisions/s; one round trip per event (a script updates the volumetric and same-target windows)"
	fi
fi

# 9 egress
if want egress; then
	b=$(median egress_direct)
	for v in tunnel forward; do
		l=$(median "egress_$v")
		case $v in
		tunnel) name="9 egress: tunnel lo" desc="$EGRESS_MB MB download, CONNECT tunnel (curl -p)" tgt="(reference)" ;;
		forward) name="9 egress: forward" desc="$EGRESS_MB MB download, plain HTTP forwarded" tgt="(reference)" ;;
		esac
		if [ -n "${SKIP[egress]:-}" ] || [ -z "$l" ] || [ -z "$b" ]; then
			skiprow "$name" "$desc" "$tgt" "${SKIP[egress]:-${SKIP[egress_$v]:-no samples}}"
			continue
		fi
		row "$name" "$desc" "$(calc '%.0f MB/s' "$b")" "$(calc '%.0f MB/s' "$l")" \
			"$(calc '%.3fx' "$l / $b")" "$(calc '%+.0f MB/s' "$l - $b")" "$tgt" \
			- \
			"direct $(spread egress_direct %.0f), lgrun $(spread "egress_$v" %.0f) MB/s; curl, loopback sendfile server, same CPUs: 3 busy processes on $(nproc) CPUs"
	done
	# the target row: a link with a rate, the download a tool makes
	name="9 egress: tunnel" desc="$EGRESS_MB MB download, CONNECT tunnel, $EGRESS_LINK link"
	b=$(median egress_link_direct) l=$(median egress_link_tunnel)
	if [ -n "${SKIP[egress]:-}" ] || [ -z "$l" ] || [ -z "$b" ]; then
		skiprow "$name" "$desc" ">= 0.95x" "${SKIP[egress]:-${SKIP[egress_link]:-${SKIP[egress_link_tunnel]:-${SKIP[egress_link_direct]:-no samples}}}}"
	else
		row "$name" "$desc" "$(calc '%.0f MB/s' "$b")" "$(calc '%.0f MB/s' "$l")" \
			"$(calc '%.3fx' "$l / $b")" "$(calc '%+.0f MB/s' "$l - $b")" ">= 0.95x" \
			"$(met "$l / $b >= 0.95")" \
			"direct $(spread egress_link_direct %.0f), lgrun $(spread egress_link_tunnel %.0f) MB/s; origin in a network namespace behind a veth pair, tc tbf $EGRESS_LINK"
	fi
fi

# 8 proxy
if want proxy; then
	what="1 MB SSE, $PROXY_N POSTs, $PROXY_CONN"
	b=$(median proxy_ttfb_direct) l=$(median proxy_ttfb_lg)
	why=${SKIP[proxy]:-${SKIP[proxy_lg]:-${SKIP[proxy_direct]:-no samples}}}
	if [ -n "${SKIP[proxy]:-}" ] || [ -n "${SKIP[proxy_lg]:-}" ] || [ -z "$l" ] || [ -z "$b" ]; then
		skiprow "8 proxy: TTFB" "TTFB median, $what" "<= +1 ms" "$why"
		skiprow "8 proxy: throughput" "MB/s median, $what" ">= 0.95x" "$why"
	else
		d=$(calc %.6f "$l - $b")
		row "8 proxy: TTFB" "TTFB median, $what" \
			"$(calc '%.3f ms' "$b")" "$(calc '%.3f ms' "$l")" "$(calc '%.2fx' "$l / $b")" \
			"$(calc '%+.3f ms' "$d")" "<= +1 ms" "$(met "$d <= 1")" \
			"p90 $(calc %.3f "$(median proxy_ttfb90_direct)") -> $(calc %.3f "$(median proxy_ttfb90_lg)") ms; direct $(spread proxy_ttfb_direct %.3f), lgrun $(spread proxy_ttfb_lg %.3f) ms"
		b=$(median proxy_mbs_direct) l=$(median proxy_mbs_lg)
		ratio=$(calc %.4f "$l / $b")
		row "8 proxy: throughput" "MB/s median, $what" \
			"$(calc '%.0f MB/s' "$b")" "$(calc '%.0f MB/s' "$l")" "$(calc '%.3fx' "$ratio")" \
			"$(calc '%+.0f MB/s' "$l - $b")" ">= 0.95x" "$(met "$ratio >= 0.95")" \
			"per response $(calc %.2f "$(median proxy_tot_direct)") -> $(calc %.2f "$(median proxy_tot_lg)") ms; proxy counted $(median proxy_turns | cut -d. -f1)/$PROXY_N model turns per run; lgrun $(spread proxy_mbs_lg %.0f) MB/s"
	fi
	# curl through each route: direct, base URL, decrypted by the egress proxy
	b=$(median pcurl_ttfb_direct)
	for v in base decrypt; do
		l=$(median "pcurl_ttfb_$v")
		case $v in
		base) name="8 proxy: curl base URL" ;;
		decrypt) name="8 proxy: curl egress" ;;
		esac
		what="TTFB median, 1 MB SSE, $PROXY_CURL_N POSTs, curl"
		if [ -z "$b" ] || [ -z "$l" ]; then
			skiprow "$name" "$what" "(reference)" "${SKIP[proxy]:-${SKIP[pcurl_$v]:-${SKIP[pcurl_direct]:-no samples}}}"
			continue
		fi
		row "$name" "$what" "$(calc '%.3f ms' "$b")" "$(calc '%.3f ms' "$l")" \
			"$(calc '%.2fx' "$l / $b")" "$(calc '%+.3f ms' "$l - $b")" "(reference)" - \
			"MB/s direct $(calc %.0f "$(median pcurl_mbs_direct)") -> $(calc %.0f "$(median "pcurl_mbs_$v")"); TTFB $(spread "pcurl_ttfb_$v" %.3f) ms$([ "$v" = decrypt ] && echo "; a CONNECT and a TLS handshake per request")"
	done
fi

# Against the floor: a bare seccomp notify loop answering CONTINUE
# (bench/notify_null.c), measured in this run (issue 31's targets).
if [ -n "$HAVE_NULL" ]; then
	echo
	echo "against the floor (bench/notify_null.c, this run):"
	fl() { # what floor lgrun target met
		printf '  %-44s floor %-14s lgrun %-14s target %-18s %s\n' "$1" "$2" "$3" "$4" "$5"
	}
	b=$(median rm_bare) f=$(median rm_null) l=$(median rm_observe)
	if [ -n "$b" ] && [ -n "$f" ] && [ -n "$l" ]; then
		fl "rm -rf $RM_FILES files, --observe" "$(calc '%.2fx bare' "$f / $b")" \
			"$(calc '%.2fx floor' "$l / $f")" "<= 1.4x floor" "$(met "$l / $f <= 1.4")"
		q=$(median rm_noq)
		[ -n "$q" ] &&
			fl "the same, quarantine off (bulk-cleanup)" "$(calc '%.2fx bare' "$f / $b")" \
				"$(calc '%.2fx floor' "$q / $f")" "<= 1.15x floor" "$(met "$q / $f <= 1.15")"
		su=0
		[ -n "$(median su_lg)" ] && [ -n "$(median su_null)" ] &&
			su=$(calc %.6f "$(median su_lg) - $(median su_null)")
		fu=$(calc %.3f "($f - $b) * 1000 / $RM_FILES")
		lu=$(calc %.3f "($l - $b - $su) * 1000 / $RM_FILES")
		fl "one unlink (startup excluded)" "+$fu us" "+$lu us" "<= floor + 7 us" \
			"$(met "$lu <= $fu + 7")"
	fi
	# What no design can do without: bench/notify_null.c --read and --keep.
	# A target below these is below the least a guard does; what lgrun
	# adds beyond them is its decision and its records.
	r=$(median rm_least) k=$(median rm_leastkeep) q=$(median rm_noq)
	if [ -n "$b" ] && [ -n "$f" ] && [ -n "$r" ] && [ -n "$k" ]; then
		echo "  the least a guard does before it answers (notify_null --read, --keep; this run):"
		room() { # least-ratio target: what the target leaves beyond the least
			awk "BEGIN { d = $2 - ($1); if (d <= -0.005) printf \"below the least by %.2fx\", -d; else if (d < 0.005) printf \"the least itself\"; else printf \"leaves %.2fx of the floor\", d }"
		}
		least() { # what ratio-to-floor target lgrun-ratio
			printf '    %-46s %-22s target %-9s %-28s lgrun %s\n' "$1" "$2" "$3" "$4" "$5"
		}
		least "read the path, take its directory, one statx" \
			"$(calc '%.2fx floor' "$r / $f") ($(calc '%+.2f' "($r - $f) * 1000 / $RM_FILES") us)" \
			"<= 1.15x" "$(room "$r / $f" 1.15)" \
			"$([ -n "$q" ] && calc '%.2fx floor, quarantine off' "$q / $f")"
		least "the same and a link (the undo)" \
			"$(calc '%.2fx floor' "$k / $f") ($(calc '%+.2f' "($k - $f) * 1000 / $RM_FILES") us)" \
			"<= 1.4x" "$(room "$k / $f" 1.4)" \
			"$(calc '%.2fx floor, --observe' "$l / $f")"
		least "one unlink: the least beyond the floor" \
			"+$(calc '%.2f' "($k - $f) * 1000 / $RM_FILES") us" "<= +7 us" \
			"$(calc '%.2f us left' "7 - ($k - $f) * 1000 / $RM_FILES")" \
			"+$(calc '%.2f us' "$lu - $fu") over the floor"
	fi
	b=$(median su_bare) f=$(median su_null) l=$(median su_lg)
	[ -n "$b" ] && [ -n "$f" ] && [ -n "$l" ] &&
		fl "startup of true" "$(calc '%+.2f ms' "$f - $b")" "$(calc '%+.2f ms' "$l - $b")" \
			"<= +1.5 ms" "$(met "$l - $b <= 1.5")"
	b=$(median build_bare) f=$(median build_null) l=$(median build_lg)
	[ -n "$b" ] && [ -n "$f" ] && [ -n "$l" ] &&
		fl "build -j2" "$(calc '%.3fx' "$f / $b")" "$(calc '%.3fx' "$l / $b")" "<= 1.03x" \
			"$(met "$l / $b <= 1.03")"
	b=$(median pipe_bare) f=$(median pipe_null) l=$(median pipe_lg)
	[ -n "$b" ] && [ -n "$f" ] && [ -n "$l" ] &&
		fl "pipe $PIPE_MB MiB" "$(calc '%.3fx' "$f / $b")" "$(calc '%.3fx' "$l / $b")" "<= 1.02x" \
			"$(met "$l / $b <= 1.02")"
fi

echo
for n in "${NOTES[@]}"; do echo "note: $n"; done
want guard && echo "guard: distinct targets, fake clock +1 ms/event (60k targets live in the 60 s windows), volumetric max 1000000, same_target max 3, budget off; nothing trips"
want rm && [ -n "$HAVE_NULL" ] && echo "rm-heavy notify: bench/notify_null.c, a supervisor that answers every notification with CONTINUE at once (same syscalls, same sync wake-up): the floor of any seccomp-notify design"
want kill && echo "kill: baseline = bench/cgkill.c on a leaf made here, waiting as lgrun does (poll POLLPRI 10 ms on cgroup.events); lgrun = kill_ms of its trip record (3 pre-existing deletes, default limits)"
if want shim; then
	echo "http loop: bench/http_loop.c, blocking C server and client on 127.0.0.1 (one write per message, TCP_NODELAY), $HTTP_N POST /echo on one keep-alive connection, 1 KB JSON bodies that differ per request; timed by the client's clock (lgrun's startup is row 1); baseline: both bare; 'both': bench/http_pair.sh starts the server inside the session"
	echo "pipe-heavy: $PIPE_BLOCKS x 4 KiB of zeros, dd | dd, timed by bash's clock inside the command; 'shim off': [shim] enabled = false, the same lgrun otherwise"
	echo "http loop, pipe-heavy: $PIN_NOTE"
fi
if want proxy; then
	if [ "$PROXY_CONN" = fresh ]; then conn="a new connection per request (connect() inside both times)"
	else conn="one keep-alive connection per sample"; fi
	echo "proxy: bench/sse_stream.c; upstream: blocking C server (a thread per connection, keep-alive) answering POST /v1/messages with a 200 text/event-stream, chunked, an Anthropic Messages stream of $PROXY_EVENTS content_block_delta events of $PROXY_EVSIZE bytes (${PROXY_BYTES:-?} bytes with message_start ... message_stop), written $PROXY_WSIZE bytes at a time with no delay; client: C, $PROXY_N POSTs to \$ANTHROPIC_BASE_URL/v1/messages on $conn, every response checked byte for byte; TTFB = the request's write() to the read() that returns the first body byte; MB/s = body bytes (1e6 per MB) / the request's write() to the last body byte; medians per sample, then over the rounds; direct: ANTHROPIC_BASE_URL = the upstream; lgrun: the same in lgrun's environment, the client under lgrun --profile bulk-cleanup posts to the session's ANTHROPIC_BASE_URL (lgrun's proxy); no '[llm] proxy = false' variant: the client would talk to the upstream directly, the direct baseline"
	echo "proxy: $PROXY_PIN_NOTE"
fi
echo "lgrun: $LGRUN, built $(date -u -r "$LGRUN" "${LGRUN_EXTRA[@]}" '+%F %T UTC'), source $(git -C "$ROOT" describe --always --dirty 2>/dev/null || echo '?')"
echo "load average: $LOAD_START at start, $(cut -d' ' -f1-3 /proc/loadavg) at end (other load on the machine widens the spread)"
echo "machine: $(nproc) CPUs ($(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n1)), kernel $(uname -r), $(awk '/MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo)"
echo "rounds: $ROUNDS (median), startup $STARTUP_N invocations per sample; total $(calc %.0f "($T_END - $T_START) / 1e6") s"
