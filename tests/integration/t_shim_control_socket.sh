#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The control socket accepts only the session's own processes, and a
# malformed frame from inside is counted and dropped: the supervisor and
# the command carry on.
source "$(dirname "$0")/lib.sh"
need_cmd python3

cat >"$T/poke.py" <<'PY'
import socket, struct, sys
path, what = sys.argv[1], sys.argv[2]
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.connect(path)
if what == "garbage":
    s.send(b"\x00\x01garbage that is not a frame")
elif what == "oversized":
    s.send(b"x" * 9000)
elif what == "liar":   # a hello claiming another pid
    body = struct.pack("<BHI", 1, 4, 1)
    s.send(struct.pack("<HBBIII", 0x474c, 1, 1, len(body), 0, 0) + body)
s.settimeout(2)
try:
    print("closed" if s.recv(100) == b"" else "open")
except (ConnectionResetError, socket.timeout) as e:
    print("closed" if isinstance(e, ConnectionResetError) else "open")
PY
# From inside the session: malformed frames are dropped, the command goes on.
run_lg --session ctl -- bash -c '
	for w in garbage oversized liar; do python3 "$0" "$LGRUN_SOCK" $w; done
	echo still-running' "$T/poke.py" >"$T/out" 2>&1
assert_rc 0 "$RC" "malformed frames from inside"
grep -q still-running "$T/out" || fail "the command did not carry on: $(cat "$T/out")"
[ "$(grep -c closed "$T/out")" = 3 ] || fail "each bad connection should be closed: $(cat "$T/out")"
[ "$(session_field ctl shim_malformed)" -ge 3 ] || fail "malformed frames not counted"

# From outside the session: refused.
run_lg --session ctl2 -- bash -c 'echo "$LGRUN_SOCK" > "$0.sock"; sleep 2' "$T/x" &
lg=$!
for _ in $(seq 1 40); do [ -s "$T/x.sock" ] && break; sleep 0.05; done
python3 "$T/poke.py" "$(cat "$T/x.sock")" hello >"$T/outside" 2>&1
wait $lg
grep -q closed "$T/outside" || fail "an outside process was not refused: $(cat "$T/outside")"
[ "$(session_field ctl2 shim_refused)" -ge 1 ] || fail "the refusal was not counted"
pass
