#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# make load: LOAD_SESSIONS (100) lgrun sessions at once on this machine, one
# mock model API for all. Each runs a mixed workload: files it writes and
# removes, two pre-existing files removed (kept by the quarantine), MCP
# tools/call through the shim, model turns streamed through the proxy.
# Every fifth session is a runaway of one kind (deletes, a repeated MCP
# call, a repeated model tool call).
#
# Checked per session: the legit ones end completed with exit 0 and no
# trip; each runaway is stopped (exit 86) by its own rule, and its trip is
# recorded in its own session only; every event of the workload is counted
# in its session's end record (tool calls, model turns, destructive
# operations, kept files), or its loss is counted (shim_dropped); lgrun's
# peak RSS (VmHWM, sampled) per session. One summary line; exit 1 on any
# failure.
set -u
cd "$(dirname "$0")/../.."
ROOT=$PWD
B=${B:-build}
N=${LOAD_SESSIONS:-100}
LGRUN=$ROOT/$B/bin/lgrun
TOOLS=$ROOT/tests/fixtures/tools
LLM=$ROOT/tests/fixtures/llm
[ -x "$LGRUN" ] || { echo "load: no $LGRUN: run make all"; exit 2; }
command -v python3 >/dev/null || { echo "load: needs python3 (make deps)"; exit 2; }
T=$(mktemp -d /tmp/lgload.XXXXXX)
STATE=$T/state
PIDS=()
cleanup() {
	kill "${PIDS[@]}" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT

python3 "$LLM/mock_llm.py" --port-file "$T/mock.port" --log "$T/mock.log" \
	--max-lifetime 600 --chunk-delay 0 --script loop &
PIDS+=($!)
for _ in $(seq 100); do [ -s "$T/mock.port" ] && break; sleep 0.05; done
[ -s "$T/mock.port" ] || { echo "load: the mock model API did not start"; exit 1; }
export ANTHROPIC_BASE_URL=http://127.0.0.1:$(cat "$T/mock.port")

# kind of session i: legit, or a runaway
kind() {
	case $(($1 % 15)) in
	0) echo deletes ;;
	5) echo mcp ;;
	10) echo model ;;
	*) echo legit ;;
	esac
}

# the workload (runs under lgrun): $1 kind, $2 its directory
cat >"$T/work.sh" <<'SH'
kind=$1 d=$2 tools=$3 llm=$4
set -e
case $kind in
legit)
	mkdir "$d/own"
	for i in $(seq 30); do echo "$i" >"$d/own/t$i"; done
	rm -r "$d/own"
	rm "$d/pre/f1" "$d/pre/f2"
	python3 "$tools/mcp_agent.py" --changing --times 4 >/dev/null
	# 4 turns of changing tool results: it gives up (5), untripped
	python3 "$llm/llm_agent.py" --api anthropic --changing --turns 4 >/dev/null ||
		[ $? = 5 ]
	;;
deletes) rm -rf "$d/pre" ;;
mcp) python3 "$tools/mcp_agent.py" --times 6 >/dev/null ;;
model) python3 "$llm/llm_agent.py" --api anthropic --turns 8 >/dev/null ;;
esac
SH

# peak RSS of every lgrun of ours, sampled while they run
sample_rss() {
	while :; do
		for p in $(pgrep -x lgrun); do
			awk -v p="$p" '/^VmHWM/ { print p, $2 }' /proc/$p/status 2>/dev/null
		done >>"$T/rss"
		sleep 0.2
	done
}
sample_rss &
PIDS+=($!)

start=$EPOCHREALTIME
for i in $(seq "$N"); do
	d=$T/s$i
	mkdir -p "$d/pre"
	for f in $(seq 10); do echo "data $f of $i" >"$d/pre/f$f"; done
	sync -f "$d/pre" 2>/dev/null
	(
		"$LGRUN" --state-dir "$STATE" --session "load$i" -- \
			bash "$T/work.sh" "$(kind "$i")" "$d" "$TOOLS" "$LLM" \
			>"$d/out" 2>"$d/err"
		echo $? >"$d/rc"
	) &
done
wait_all() {
	local i
	for i in $(seq "$N"); do
		while [ ! -s "$T/s$i/rc" ]; do sleep 0.1; done
	done
}
wait_all
secs=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')

# one session's end record, as fields
end_of() { grep "\"session\":\"$1\"" "$STATE/audit.jsonl" | grep '"event":"session_end"'; }
num() { echo "$1" | grep -o "\"$2\":[0-9]*" | head -1 | cut -d: -f2; }

fails=0 legit=0 stopped=0
bad() {
	fails=$((fails + 1))
	[ $fails -le 20 ] && echo "load: session load$1: $2"
}
for i in $(seq "$N"); do
	k=$(kind "$i") rc=$(cat "$T/s$i/rc") s=load$i
	end=$(end_of $s)
	[ "$(echo "$end" | grep -c .)" = 1 ] || { bad $i "expected one end record, got: $end"; continue; }
	trips=$(grep "\"session\":\"$s\"" "$STATE/audit.jsonl" | grep -c '"event":"trip"')
	case $k in
	legit)
		[ "$rc" = 0 ] || { bad $i "legit workload exited $rc: $(tail -3 "$T/s$i/err")"; continue; }
		[ "$trips" = 0 ] || { bad $i "a legit session tripped"; continue; }
		echo "$end" | grep -q '"end":"completed"' || { bad $i "end: $end"; continue; }
		# every event counted, or its loss counted
		dropped=$(tail -1 "$STATE/sessions/$s.json" | grep -o '"shim_dropped":[0-9]*' | cut -d: -f2)
		calls=$(num "$end" tool_calls) turns=$(num "$end" model_turns)
		kept=$(num "$end" kept_files) attempts=$(num "$end" destructive_attempts)
		if [ "${dropped:-0}" = 0 ]; then
			# tool_calls counts completed calls (call and result):
			# 4 MCP, 3 of the model's 4 (the agent gives up on the 4th)
			[ "$calls" = 7 ] || bad $i "tool calls: $calls counted, 7 completed (4 MCP, 3 model)"
			[ "$turns" = 4 ] || bad $i "model turns: $turns counted, 4 made"
		fi
		[ "$kept" = 2 ] || bad $i "kept files: $kept, 2 pre-existing files were removed"
		[ "${attempts:-0}" -ge 2 ] || bad $i "destructive attempts: $attempts"
		[ -e "$T/s$i/pre/f3" ] || bad $i "a pre-existing file it did not remove is gone"
		legit=$((legit + 1))
		;;
	*)
		[ "$rc" = 86 ] || { bad $i "runaway ($k) exited $rc, not stopped: $(tail -3 "$T/s$i/err")"; continue; }
		want=$(case $k in deletes) echo volume_exceeded ;; *) echo repeat ;; esac)
		grep "\"session\":\"$s\"" "$STATE/audit.jsonl" | grep '"event":"trip"' | grep -q "\"reason\":\"$want\"" ||
			{ bad $i "runaway ($k): no $want trip in its session"; continue; }
		[ "$k" != deletes ] || [ "$(ls "$T/s$i/pre" | wc -l)" -ge 8 ] ||
			bad $i "the runaway removed more than two files"
		stopped=$((stopped + 1))
		;;
	esac
done
# trips land in their own session only: as many trip records as runaways
ntrips=$(grep -c '"event":"trip"' "$STATE/audit.jsonl")
nrun=$(for i in $(seq "$N"); do kind "$i"; done | grep -vc legit)
[ "$ntrips" = "$nrun" ] || bad all "$ntrips trip records for $nrun runaways"
rss=$(awk '{ if ($2 > m[$1]) m[$1] = $2 } END { for (p in m) { n++; s += m[p]; if (m[p] > x) x = m[p] } if (n) printf "%d %d %d", n, s / n / 1024, x / 1024 }' "$T/rss")
set -- $rss
echo "load: $N sessions at once in ${secs}s: $legit legit passed, $stopped of $nrun runaways stopped in their own session, $fails failure(s); lgrun peak RSS per session: mean ${2:-?} MiB, max ${3:-?} MiB (${1:-0} sampled)"
[ $fails = 0 ]
