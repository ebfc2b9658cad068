#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A flood from inside the tree does not make lgrun deaf: while one process
# holds thousands of connections to lgrun's control socket, another sends
# MCP tool calls through the shim as fast as it can (each call a new one:
# no rule trips on it) and a third streams a 512 MB model response through
# the LLM proxy, a fourth removes pre-existing files, and the
# trip still lands at its third removal, promptly (its latency is printed:
# the notify thread answers and kills without the busy main loop). lgrun's
# memory stays bounded (printed) and the refused connections are counted.
source "$(dirname "$0")/lib.sh"
need_cmd python3
need_cmd cc

# the model API: one streamed Anthropic response of 512 MB (512K events of 1 KB)
cc -O2 -pthread -o "$T/sse_stream" "$LG_ROOT/bench/sse_stream.c" || fail "cannot build bench/sse_stream.c"
"$T/sse_stream" serve "$T/sse.port" 524288 1024 65536 chunked &
echo $! >>"$T/pids"
trap 'kill $(cat "$T/pids" 2>/dev/null) 2>/dev/null; lg_cleanup' EXIT
for _ in $(seq 200); do [ -s "$T/sse.port" ] && break; sleep 0.1; done
[ -s "$T/sse.port" ] || fail "the stream server did not start"
export ANTHROPIC_BASE_URL=http://127.0.0.1:$(cat "$T/sse.port")

mkfiles "$T/d" 5
cat >"$T/conns.py" <<'PY'
import os, socket, sys, time
held = []
for i in range(3000):
    try:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        s.connect(os.environ["LGRUN_SOCK"])
        s.send(b"\x00" * 64)  # not a frame: dropped, counted
        held.append(s)
    except OSError:
        break
open(sys.argv[1], "w").write(str(len(held)))
time.sleep(30)
PY
cat >"$T/rm.py" <<'PY'
import os, sys, time
d, out = sys.argv[1], sys.argv[2]
for _ in range(200):  # the connections are held, the calls are flowing
    if os.path.exists(out.replace(".rm", ".conns")):
        break
    time.sleep(0.05)
time.sleep(1.0)  # the stream is flowing
for i in (1, 2, 3, 4, 5):
    # written before: the tripping removal is never answered (killed)
    open(out, "a").write("%d %.6f\n" % (i, time.time()))
    try:
        os.unlink("%s/f%d" % (d, i))
    except OSError:
        pass
PY
"$LGRUN" --state-dir "$STATE" --session flood -- bash -c '
	ulimit -n 4096
	python3 "$0" "$2.conns" &
	python3 "$3" --changing --times 200000 >/dev/null 2>&1 &
	"$5" client 1 524288 1024 keepalive proxy >"$2.sse" 2>&1 &
	python3 "$1" "$4" "$2.rm"
	sleep 30' "$T/conns.py" "$T/rm.py" "$T/out" "$TOOLS/mcp_agent.py" "$T/d" "$T/sse_stream" \
	>"$T/lg.out" 2>&1 &
LG=$!
# lgrun's peak memory, sampled while the floods run
peak=0
while kill -0 $LG 2>/dev/null; do
	h=$(awk '/^VmHWM/ { print $2 }' /proc/$LG/status 2>/dev/null)
	[ -n "$h" ] && [ "$h" -gt "$peak" ] && peak=$h
	sleep 0.1
done
wait $LG
assert_rc 86 $? "the runaway removal under a flood: $(tail -3 "$T/lg.out")"
[ -e "$T/d/f3" ] && [ -e "$T/d/f4" ] || fail "more than two files lost under the flood"
[ "$(cat "$T/out.conns" 2>/dev/null || echo 0)" -ge 1000 ] || fail "fixture: only $(cat "$T/out.conns" 2>/dev/null) connections held"
trip=$(grep '"session":"flood"' "$STATE/audit.jsonl" | grep '"event":"trip"' | head -1)
echo "$trip" | grep -q '"reason":"volume_exceeded"' || fail "no volume trip: $trip"
# the latency: the third removal's start to the trip's record
t3=$(awk '$1 == 3 { print $2 }' "$T/out.rm")
tt=$(echo "$trip" | python3 -c 'import json, sys, datetime
t = json.loads(sys.stdin.read())["time"]
print(datetime.datetime.fromisoformat(t.replace("Z", "+00:00")).timestamp())')
ms=$(awk -v a="$t3" -v b="$tt" 'BEGIN { printf "%.0f", (b - a) * 1000 }')
calls=$(session_field flood tool_calls)
# the stream was flowing when the trip came (a completed one would say n=1)
grep -q "^n=1" "$T/out.sse" && fail "fixture: the 512 MB stream ended before the trip"
grep -qi "fail\|HTTP/1.1 [45]" "$T/out.sse" && fail "fixture: the stream through the proxy failed: $(cat "$T/out.sse")"
echo "under a flood of $(cat "$T/out.conns") connections, $calls MCP calls and a 512 MB model stream: the trip recorded ${ms} ms after the third removal began; lgrun's peak RSS $((peak / 1024)) MiB"
[ "$ms" -lt 1000 ] || fail "the trip took ${ms} ms under the flood"
[ "$peak" -lt $((256 * 1024)) ] || fail "lgrun grew to $((peak / 1024)) MiB under the flood"
[ "$(session_field flood shim_malformed)" -ge 1 ] || fail "the garbage sent on the connections was not counted: $(tail -1 "$STATE/sessions/flood.json")"

# The memory cap ([shim] max_memory): with no room for any process's
# pending calls (~140 KB each), every call is dropped, counted and said once
# in the audit, and the session goes on and ends normally; with the
# default, all of them are judged.
printf '[shim]\nmax_memory = 1K\n' >"$T/cap.ini"
run_lg --session cap -c "$T/cap.ini" -- python3 "$TOOLS/mcp_agent.py" --threads 4 --changing --times 5
assert_rc 0 "$RC" "calls past the memory cap"
[ "$(session_field cap shim_dropped)" -ge 20 ] || fail "the calls past the cap were not counted: $(tail -1 "$STATE/sessions/cap.json")"
[ "$(session_field cap tool_calls)" = 0 ] || fail "calls past the cap were judged: $(tail -1 "$STATE/sessions/cap.json")"
run_lg --session nocap -- python3 "$TOOLS/mcp_agent.py" --threads 4 --changing --times 5
assert_rc 0 "$RC" "calls within the memory cap"
[ "$(session_field nocap tool_calls)" = 20 ] || fail "the calls within the cap were not all judged: $(tail -1 "$STATE/sessions/nocap.json")"
[ "$(session_field nocap shim_dropped)" = 0 ] || fail "calls within the cap were dropped: $(tail -1 "$STATE/sessions/nocap.json")"
[ "$(grep '"session":"cap"' "$STATE/audit.jsonl" | grep -c '"reason":"memory_cap"')" = 1 ] ||
	fail "the cap is not said once in the audit: $(grep '"session":"cap"' "$STATE/audit.jsonl" | grep -v session_end)"
pass
