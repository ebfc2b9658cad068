#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Issue 37: where process_vm_readv and pidfd_getfd are refused, as Docker's
# default seccomp profile refuses them without CAP_SYS_PTRACE, lgrun reads
# the tree's arguments through /proc/PID/mem and its directories through
# /proc/PID/fd/N (fixture deny_memreads puts lgrun under such a filter,
# without Docker; t_container runs the real thing):
#  1. ordinary writes and the session's own removals run untouched, lgrun -v
#     says which way it reads, once;
#  2. a delete loop (relative paths: rm -r, whose unlinkat names a dirfd) is
#     stopped at #3 and restored; an O_TRUNC overwrite is kept;
#  3. lgctl doctor says the way is degraded and what fixes it, exit 0;
#  4. a process that makes itself non-dumpable: its writes are refused, and
#     lgrun says why once;
#  5. neither way (no /proc in a user namespace of the test's): lgrun refuses
#     to start, saying why and what to change, and runs nothing; lgctl
#     doctor says it cannot protect here, exit 1.
source "$(dirname "$0")/lib.sh"
DENY=$FIXBIN/deny_memreads
[ -x "$DENY" ] || fail "missing fixture $DENY (make fixtures)"
cd "$T" || fail "cd"

# 1. Ordinary work.
echo keep >mine.txt
"$DENY" --pidfd "$LGRUN" -v --state-dir "$STATE" -s fb-ordinary -- sh -c '
	echo a >new.txt && echo b >>new.txt && rm new.txt
	mkdir -p build/sub && echo o >build/sub/x.o && rm -r build
	python3 -c "import tempfile; tempfile.NamedTemporaryFile().write(b\"x\")"' >out 2>&1
RC=$?
assert_rc 0 "$RC" "ordinary work with the fallback: $(tail -5 out)"
grep -q "^lgrun: refused" out && fail "lgrun refused ordinary work: $(grep "^lgrun: refused" out)"
n=$(grep -c "read through /proc/PID/mem (process_vm_readv was refused: Operation not permitted)" out)
[ "$n" = 1 ] || fail "lgrun -v said the way $n times, expected once: $(grep '^lgrun:' out)"
assert_no_trip "ordinary work with the fallback"

# 2. A delete loop, relative to a directory fd (rm -r), and an overwrite.
mkfiles data 6
echo "precious" >notes.txt
sleep 0.05
"$DENY" --pidfd "$LGRUN" --state-dir "$STATE" -s fb-loop -- sh -c '
	echo gone >notes.txt; rm -r data' >out 2>&1
RC=$?
assert_rc 86 "$RC" "rm -r data with the fallback: $(tail -5 out)"
n=$(ls data | wc -l)
[ "$n" = 4 ] || fail "$n of 6 files left, expected 4 (stopped at the third removal)"
grep -q "cannot read its arguments" out && fail "an argument was not read: $(cat out)"
"$LGCTL" --state-dir "$STATE" restore fb-loop >out 2>&1 || fail "restore: $(cat out)"
for i in 1 2 3 4 5 6; do
	[ "$(cat data/f$i)" = "data $i" ] || fail "data/f$i not restored"
done
[ "$(cat notes.txt)" = precious ] || fail "the overwritten notes.txt did not come back: $(cat notes.txt)"

# 3. The doctor.
"$DENY" --pidfd "$LGCTL" doctor >out 2>&1
RC=$?
assert_rc 0 "$RC" "lgctl doctor with the fallback: $(cat out)"
grep -q "^  degraded  reading the syscalls' arguments: through /proc/PID/mem, since process_vm_readv was refused: Operation not permitted" out ||
	fail "doctor: $(cat out)"
grep -q "^  ok        the calls' directories: through /proc/PID/fd/N, since pidfd_getfd was refused" out || fail "doctor: $(cat out)"
grep -q "^  ok        canary session: " out || fail "doctor's canary: $(cat out)"

# 4. A process that closes its memory to lgrun (non-dumpable, as ssh-agent
#    makes itself), lgrun running as a plain user: its write is refused,
#    and lgrun says why, once.
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	# the state dir under a folder of nobody's: one open to all is refused
	chmod 755 "$T" && mkdir -p "$T/nd" && chown nobody: "$T/nd"
	setpriv --reuid=nobody --regid=nogroup --clear-groups env HOME="$T/nd" \
		"$LGRUN" --state-dir "$T/nd/state" -s fb-nodump -- python3 -c '
import ctypes, os
ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE 0
for i in range(3):
    try:
        open("'"$T"'/nd/x%d" % i, "w").write("x")
    except OSError as e:
        print("refused", e.errno)' >out 2>&1
	n=$(grep -c "^refused 1$" out)
	[ "$n" = 3 ] || fail "a non-dumpable process's writes: $n of 3 refused with EPERM: $(cat out)"
	n=$(grep -c "closed its memory to lgrun (it made itself non-dumpable" out)
	[ "$n" = 1 ] || fail "lgrun said why $n times, expected once: $(cat out)"
fi

# 5. Neither way: /proc hidden in a mount namespace of a user namespace.
#    The sanitizers' runtime reads its options and threads from /proc: not
#    in their builds.
[ "${B:-build}" = build ] || pass "(part 5 skipped in the ${B} build: its runtime needs /proc)"
need_cmd unshare
unshare -rm true 2>/dev/null || skip "needs an unprivileged user namespace (to hide /proc from lgrun)"
unshare -rm --fork sh -c 'mount -t tmpfs none /proc && exec "$0" "$1" --state-dir "$2" -- sh -c "echo ran >\"$3\""' \
	"$DENY" "$LGRUN" "$STATE" "$T/ran" >out 2>&1
RC=$?
assert_rc 125 "$RC" "lgrun where no way reads the tree's memory: $(cat out)"
[ ! -e "$T/ran" ] || fail "the command ran although lgrun refused to start"
grep -q "cannot read the memory of the processes it supervises (process_vm_readv: Operation not permitted; /proc/PID/mem: No such file or directory), so every file write and removal of the command would be refused: not starting. /proc is not mounted here" out ||
	fail "lgrun's refusal does not say why: $(cat out)"
unshare -rm --fork sh -c 'mount -t tmpfs none /proc && exec "$0" "$1" doctor --no-canary' "$DENY" "$LGCTL" >out 2>&1
RC=$?
assert_rc 1 "$RC" "doctor where no way reads: $(cat out)"
grep -q "^  missing   reading the syscalls' arguments: neither process_vm_readv (Operation not permitted) nor /proc/PID/mem (No such file or directory).*Fix: /proc is not mounted here: mount it" out ||
	fail "doctor: $(cat out)"
grep -q "^verdict: lgrun cannot protect here" out || fail "doctor's verdict: $(cat out)"
pass
