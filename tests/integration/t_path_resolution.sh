#!/bin/bash
# SPDX-License-Identifier: MIT
# lgrun resolves a path argument the way the kernel will for the process
# that passed it (issue 12): a symlink before "..", /proc/self and
# /proc/thread-self, a chroot, a private mount namespace, and paths longer
# than PATH_MAX. Each time, three deletes of pre-existing files stop the
# tree and the file left is the one the guard saw.
. "$(dirname "$0")/lib.sh"
cd "$T" || fail "cd"

# The third delete trips; the records name the real files.
expect_trip() { # what session-id real-dir
	assert_rc 86 "$RC" "$1"
	grep -q "\"session\":\"$2\".*\"event\":\"trip\".*\"reason\":\"volume_exceeded\"" \
		"$STATE/audit.jsonl" || fail "$1: no volume trip record"
	grep -q "\"session\":\"$2\".*\"event\":\"trip\".*\"target\":\"$3/f3\"" \
		"$STATE/audit.jsonl" || fail "$1: the trip record does not name $3/f3"
	[ -e "$3/f3" ] && [ -e "$3/f4" ] || fail "$1: lost more than two files"
}

# 1. A symlink before "..": lnk/../f is in the link's target's parent.
mkfiles "$T/real" 5
mkdir -p "$T/real/sub" "$T/other"
ln -s "$T/real/sub" "$T/other/lnk"
run_lg -s dotdot -- sh -c "cd '$T/other' && for i in 1 2 3 4; do rm lnk/../f\$i || exit 1; done"
expect_trip "a symlink before .." dotdot "$T/real"

# 2. /proc/self, /proc/thread-self and /proc/self/fd/N are the process's own.
mkfiles "$T/procself" 5
run_lg -s procself -- python3 -c "
import os
os.chdir('$T/procself')
os.unlink('/proc/self/cwd/f1')
os.unlink('/proc/thread-self/cwd/f2')
fd = os.open('.', os.O_RDONLY)
os.unlink('/proc/self/fd/%d/f3' % fd)
os.unlink('/proc/self/fd/%d/f4' % fd)
"
expect_trip "/proc/self" procself "$T/procself"

# 2b. Magic links (issue 29, item 5): /dev/fd/N of an open directory is the
#     process's own (not lgrun's), /proc/PID/cwd and /proc/PID/root of
#     another process, and a symlink to a magic link; each one a removal of
#     the real file, kept. Under root the tree has its own mount namespace,
#     where RESOLVE_IN_ROOT answers EXDEV for a magic link.
magic() { # session-id real-dir script
	mkfiles "$2" 5
	run_lg -s "$1" -- bash -c "$3" >"$T/$1.out" 2>&1
	expect_trip "$1" "$1" "$2"
	grep -q "\"event\":\"quarantine\"" "$STATE/audit.jsonl" && [ -n "$(ls "$STATE"/quarantine/*.jsonl 2>/dev/null)" ] ||
		fail "$1: nothing kept"
	[ "$(cat "$STATE"/quarantine/*.jsonl | grep -c "$2/f[12]")" = 2 ] ||
		fail "$1: f1 and f2 are not kept: $(cat "$STATE"/quarantine/*.jsonl | cut -c1-300)"
}
magic devfd "$T/devfd" "cd /; exec 7<'$T/devfd'; for i in 1 2 3 4; do rm /dev/fd/7/f\$i || exit 1; done"
magic pidcwd "$T/pidcwd" "cd '$T/pidcwd'; for i in 1 2 3 4; do rm /proc/\$\$/cwd/f\$i || exit 1; done"
magic pidroot "$T/pidroot" "cd /; for i in 1 2 3 4; do rm /proc/\$\$/root'$T/pidroot'/f\$i || exit 1; done"
magic viasym "$T/viasym" "cd '$T/viasym'; ln -s /proc/\$\$/cwd '$T/cwdlink'; for i in 1 2 3 4; do rm '$T/cwdlink'/f\$i || exit 1; done"

# 3. Paths longer than PATH_MAX: rm -rf of a tree the session made works as
#    it does bare; one that was there before is guarded, not broken.
deep() { # dir: 24 levels of 200-character names, a file in each
	python3 - "$1" <<'EOF'
import os, sys
os.makedirs(sys.argv[1], exist_ok=True)
os.chdir(sys.argv[1])
for i in range(24):
    n = "d" * 200
    os.mkdir(n)
    os.chdir(n)
    open("f", "w").write("data")
assert len(os.getcwd()) > 4096
EOF
}
run_lg -s deep-own -- sh -c "$(declare -f deep); deep '$T/own' && rm -rf '$T/own'"
assert_rc 0 "$RC" "rm -rf of a deep tree the session made"
[ ! -e "$T/own" ] || fail "rm -rf of a deep tree did not remove it"
grep -q '"session":"deep-own".*"event":"trip"' "$STATE/audit.jsonl" &&
	fail "a deep tree the session made: the guard tripped"
deep "$T/old"
run_lg -s deep-old -- rm -rf "$T/old"
assert_rc 86 "$RC" "rm -rf of a deep pre-existing tree"
left=$(find "$T/old" -name f | wc -l)
[ "$left" -ge 22 ] || fail "rm -rf of a deep pre-existing tree lost $((24 - left)) files"
grep -q "\"session\":\"deep-old\".*File name too long" "$STATE/audit.jsonl" &&
	fail "a long path was refused as too long"

if [ "$(id -u)" != 0 ]; then
	echo "SKIP (part): chroot and mount namespace cases need root"
	pass
fi

# 4. A chroot: absolute paths are the chroot's.
mkdir -p "$T/jail/data" "$T/jail/bin"
cp "$FIXBIN/rmloop-static" "$T/jail/bin/rmloop"
mkfiles "$T/jail/data" 5
mkfiles "$T/data" 5 # what the same paths name outside
run_lg -s jail -- chroot "$T/jail" /bin/rmloop /data/f1 /data/f2 /data/f3 /data/f4
expect_trip "a chroot" jail "$T/jail/data"
[ -e "$T/data/f1" ] || fail "a chroot: the file outside it is gone"

# 4b. Relative to a directory descriptor (unlinkat(dirfd, name), as rm -r
#     does; lgrun takes the very descriptor with pidfd_getfd): the file in
#     that directory, even after the directory was renamed; a descriptor
#     that is not a directory fails ENOTDIR and one that is not open EBADF,
#     as the kernel says, and neither counts.
mkfiles "$T/byfd" 5
run_lg -s dirfd -- python3 -c "
import errno, os, sys
d = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECTORY)
f = os.open(sys.argv[1] + '/f5', os.O_RDONLY)
for fd, want in ((f, errno.ENOTDIR), (999, errno.EBADF)):
    try:
        os.unlink('f4', dir_fd=fd)
        sys.exit('unlinkat(%d) succeeded' % fd)
    except OSError as e:
        if e.errno != want:
            sys.exit('unlinkat(%d): %s, not %s' % (fd, e, errno.errorcode[want]))
os.rename(sys.argv[1], sys.argv[1] + '.moved')
for i in (1, 2, 3, 4):
    os.unlink('f%d' % i, dir_fd=d)
" "$T/byfd" >"$T/out" 2>&1
expect_trip "relative to a directory descriptor, moved" dirfd "$T/byfd.moved"

# 5. A private mount namespace: a bind mount lgrun cannot see.
mkfiles "$T/precious" 5
mkdir -p "$T/view"
run_lg -s mountns -- unshare -m --propagation private sh -c "
	mount --bind '$T/precious' '$T/view' || exit 9
	for i in 1 2 3 4; do rm '$T/view/f'\$i || exit 1; done"
[ "$RC" != 9 ] || skip "cannot bind-mount in a new mount namespace"
assert_rc 86 "$RC" "a private mount namespace"
[ -e "$T/precious/f3" ] && [ -e "$T/precious/f4" ] ||
	fail "a private mount namespace: lost more than two files"
pass
