#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Tool deletes are counted per session, whatever process makes them: a
# forking agent, a multi-threaded one, and one that closes every descriptor
# (the shim's too) and carries on.
source "$(dirname "$0")/lib.sh"
need_cmd python3
start_catalog
port=$(cat "$CATALOG_PORT_FILE")

cat >"$T/agent.py" <<'PY'
import http.client, os, sys, threading, time
port, mode = int(sys.argv[1]), sys.argv[2]
def delete(n):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    for _ in range(n):
        try:
            c.request("DELETE", "/assets/fact_sales"); c.getresponse().read()
        except OSError as e:
            print("refused:", e, flush=True); return
        time.sleep(0.05)
if mode == "fork":
    delete(1)
    pid = os.fork()
    if pid == 0:
        delete(3); os._exit(0)
    os.waitpid(pid, 0)
elif mode == "threads":
    ts = [threading.Thread(target=delete, args=(2,)) for _ in range(3)]
    [t.start() for t in ts]; [t.join() for t in ts]
elif mode == "closefds":
    os.closerange(3, 65536)
    delete(5)
PY
for mode in fork threads closefds; do
	: >"$CATALOG_LOG"
	run_lg --session "p-$mode" --config "$TOOLS/catalog.ini" -- python3 "$T/agent.py" "$port" "$mode" >"$T/out" 2>&1
	assert_rc 86 "$RC" "$mode agent"
	n=$(grep -c '^DELETE ' "$CATALOG_LOG")
	if [ $mode = threads ]; then
		# Concurrent threads: the two allowed DELETEs may still be on
		# their way (verdict in, request not yet written) when the third
		# is refused and the tree dies, so 0 to 2 arrive; never a third.
		[ "$n" -le 2 ] || fail "threads: the server saw $n DELETEs"
	else
		[ "$n" = 2 ] || fail "$mode: the server saw $n DELETEs, expected 2"
	fi
done
# Short-lived processes: many end before lgrun takes their connection (no
# cgroup to read any more); what they sent is read all the same. 40 rm of a
# missing file: 40 results, none refused.
run_lg --session short -- bash -c 'for i in $(seq 1 40); do rm "$0/missing" 2>/dev/null; done; true' "$T"
assert_rc 0 "$RC" "short-lived processes"
n=$(grep -c '"k":"op_result".*"target":"[^"]*/missing"' "$STATE/sessions/short.events.jsonl")
[ "$n" = 40 ] || fail "short-lived processes: $n of 40 results read (refused: $(session_field short shim_refused))"
[ "$(session_field short shim_refused)" = 0 ] || fail "connections refused: $(session_field short shim_refused)"
pass
