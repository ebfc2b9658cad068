#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# --watch-output when lgrun's stdout is a terminal: the command gets a
# pseudo-terminal (it still sees a terminal and its size, follows resizes,
# reads what is typed, and Ctrl-C interrupts it), and its output is still
# watched for repetition. lgrun runs on a pty made by this test.
source "$(dirname "$0")/lib.sh"
need_cmd python3

cat >"$T/agent.py" <<'PY'
import os, signal, sys, time
print("ttys", os.isatty(0), os.isatty(1), os.isatty(2), flush=True)
print("size %d %d" % os.get_terminal_size(1), flush=True)
def winch(*_):
    print("resized %d %d" % os.get_terminal_size(1), flush=True)
signal.signal(signal.SIGWINCH, winch)
print("ready", flush=True)
line = sys.stdin.readline()
print("got [%s]" % line.strip(), flush=True)
for _ in range(6):
    print("=" * 20 + " the same progress line, again and again " + "=" * 20, flush=True)
print("waiting", flush=True)
time.sleep(30)
print("not interrupted", flush=True)
PY

cat >"$T/drive.py" <<'PY'
import fcntl, os, pty, select, struct, sys, termios, time
lgrun, state, agent = sys.argv[1:4]
pid, fd = pty.fork()
if pid == 0:
    fcntl.ioctl(1, termios.TIOCSWINSZ, struct.pack("HHHH", 33, 111, 0, 0))
    os.execv(lgrun, [lgrun, "--state-dir", state, "--watch-output", "--",
                     "python3", agent])
out = b""
def read_until(token, timeout=10):
    global out
    end = time.time() + timeout
    while token not in out:
        left = end - time.time()
        if left <= 0:
            sys.stdout.write(out.decode(errors="replace"))
            sys.exit("timed out waiting for %r" % token)
        r, _, _ = select.select([fd], [], [], left)
        if r:
            try:
                b = os.read(fd, 4096)
            except OSError:
                b = b""
            if not b:
                sys.stdout.write(out.decode(errors="replace"))
                sys.exit("EOF waiting for %r" % token)
            out += b
read_until(b"ready")
fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 132, 0, 0))
read_until(b"resized 132 40")
os.write(fd, b"hello agent\r")
read_until(b"got [hello agent]")
read_until(b"waiting")
os.write(fd, b"\x03")  # Ctrl-C, as typed
_, status = os.waitpid(pid, 0)
try:
    while True:
        b = os.read(fd, 4096)
        if not b:
            break
        out += b
except OSError:
    pass
sys.stdout.write(out.decode(errors="replace"))
print("\nlgrun-exit", os.waitstatus_to_exitcode(status))
PY

timeout 60 python3 "$T/drive.py" "$LGRUN" "$STATE" "$T/agent.py" >"$T/out" 2>&1 || { cat "$T/out"; fail "the pty run failed"; }
tr -d '\r' <"$T/out" >"$T/clean"
grep -q "ttys True True True" "$T/clean" || { cat "$T/clean"; fail "the command does not see a terminal"; }
grep -q "size 111 33" "$T/clean" || fail "the command does not see the terminal's size"
grep -q "resized 132 40" "$T/clean" || fail "a resize did not reach the command"
grep -q "got \[hello agent\]" "$T/clean" || fail "typed input did not reach the command"
! grep -q "not interrupted" "$T/clean" || fail "Ctrl-C did not interrupt the command"
grep -q "lgrun-exit 130" "$T/clean" || { tail -3 "$T/clean"; fail "lgrun should exit 130 (the command died of SIGINT)"; }
grep -q '"rule":"output_repeat"' "$STATE/audit.jsonl" || fail "repeated output was not seen through the pty"
pass
