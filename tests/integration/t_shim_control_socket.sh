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
elif what.startswith("ring"):
    # a hello with a ring (wire.h): 128-byte header, 64 KiB of data
    import fcntl, mmap, os
    size = 128 + 65536
    fd = os.memfd_create("ring", os.MFD_ALLOW_SEALING)
    os.ftruncate(fd, size)
    if what != "ring-unsealed":
        fcntl.fcntl(fd, fcntl.F_ADD_SEALS, fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW)
    m = mmap.mmap(fd, size)
    m[0:8] = struct.pack("<II", 0x4c47524e, 65536)
    body = struct.pack("<BHI", 1, 4, os.getpid())
    hello = struct.pack("<HBBIII", 0x474c, 1, 1, len(body), 0, 0) + body
    s.sendmsg([hello], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, struct.pack("i", fd))])
    # garbage in the ring: a header claiming a huge frame, then the bell
    m[128:144] = struct.pack("<HBBIII", 0x474c, 1, 2, 60000, 0, 0)
    m[8:12] = struct.pack("<I", 16)          # head
    bell = struct.pack("<HBBIII", 0x474c, 1, 9, 0, 0, 0)
    s.send(bell)
s.settimeout(2)
try:
    print("closed" if s.recv(100) == b"" else "open")
except (ConnectionResetError, socket.timeout) as e:
    print("closed" if isinstance(e, ConnectionResetError) else "open")
PY
# From inside the session: malformed frames are dropped, the command goes on.
run_lg --session ctl -- bash -c '
	for w in garbage oversized liar ring ring-unsealed; do python3 "$0" "$LGRUN_SOCK" $w; done
	echo still-running' "$T/poke.py" >"$T/out" 2>&1
assert_rc 0 "$RC" "malformed frames from inside"
grep -q still-running "$T/out" || fail "the command did not carry on: $(cat "$T/out")"
# an unsealed ring is not mapped (the process may use its socket): open
[ "$(grep -c closed "$T/out")" = 4 ] || fail "each bad connection should be closed: $(cat "$T/out")"
[ "$(session_field ctl shim_malformed)" -ge 4 ] || fail "malformed frames not counted"

# From outside the session: refused.
run_lg --session ctl2 -- bash -c 'echo "$LGRUN_SOCK" > "$0.sock"; sleep 2' "$T/x" &
lg=$!
for _ in $(seq 1 40); do [ -s "$T/x.sock" ] && break; sleep 0.05; done
python3 "$T/poke.py" "$(cat "$T/x.sock")" hello >"$T/outside" 2>&1
wait $lg
grep -q closed "$T/outside" || fail "an outside process was not refused: $(cat "$T/outside")"
[ "$(session_field ctl2 shim_refused)" -ge 1 ] || fail "the refusal was not counted"
pass
