#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Identity is the inode and the name it had before the session (issue 39,
# items 1, 2, 3 and 9, and its "done when": a mixed session restored to the
# manifest from before it: content, modes, symlink targets, hard-link
# pairs, names; appends cut back, what the session made set aside). Each case runs a session over a fresh tree of 20
# pre-existing files, checks what it counted, restores it with one
# lgctl restore and compares the tree's manifest (content, modes, symlink
# targets, hard-link pairs, names) with the one taken before.
source "$(dirname "$0")/lib.sh"
MANIFEST=$TOOLS/manifest.py

n=0
# case NAME EXPECT(trip|notrip) SHELL [SETUP]
case_() {
	local name=$1 expect=$2 cmd=$3 setup=${4:-true} P id out trips
	n=$((n + 1))
	P=$T/c$n
	id=names$n
	mkdir -p "$P/data"
	for i in $(seq -w 1 20); do printf 'data %s of %s\n' "$i" "$name" >"$P/data/f$i"; done
	(cd "$P" && eval "$setup") || fail "$name: setup"
	sleep 0.05
	python3 "$MANIFEST" "$P" >"$T/before.$n"
	before=$(audit_count trip)
	(cd "$P" && "$LGRUN" --state-dir "$STATE" --session "$id" -- sh -c "$cmd") >"$T/run.$n" 2>&1
	trips=$(($(audit_count trip) - before))
	case $expect in
	trip) [ "$trips" = 1 ] || fail "$name: not stopped ($trips trips): $(tail -3 "$T/run.$n")" ;;
	notrip) [ "$trips" = 0 ] || fail "$name: stopped: $(tail -3 "$T/run.$n")" ;;
	esac
	"$LGCTL" --state-dir "$STATE" restore "$id" >"$T/restore.$n" 2>&1 ||
		fail "$name: restore failed: $(tail -5 "$T/restore.$n")"
	python3 "$MANIFEST" "$P" >"$T/after.$n"
	diff "$T/before.$n" "$T/after.$n" >"$T/diff.$n" ||
		fail "$name: the tree is not what it was: $(head -12 "$T/diff.$n"); restore said: $(tail -6 "$T/restore.$n")"
	echo "ok: $name"
}

# 1. renamed into an ignored name, then destroyed
case_ "mv data build; rm -rf build" trip 'mv data build && rm -rf build'
case_ "mv into node_modules, then rm -rf" trip 'mv data node_modules/x && rm -rf node_modules' 'mkdir node_modules'
case_ "mv f f.o; rm f.o" trip 'for f in data/*; do mv $f $f.o; rm $f.o; done'
case_ "mv f f.pyc; : > f.pyc; mv f.pyc f" trip 'for f in data/*; do mv $f $f.pyc; : > $f.pyc; mv $f.pyc $f; done'
# data whose own name an ignore rule covers is kept (not counted)
case_ "rm -rf of a target/ no build made" notrip 'rm -rf target' 'mkdir target && cp data/* target/'
# 2. a hard-link alias
case_ "ln f f.l; : > f.l; rm f.l" trip 'for f in data/*; do ln $f $f.l; : > $f.l; rm $f.l; done'
# 3. symlinks: kept (a name with no data: not counted); one replaced by a file
case_ "rm of 20 symlinks" notrip 'rm l*' 'for i in $(seq -w 1 20); do ln -s data/f$i l$i; done'
case_ "a symlink replaced by a file" notrip 'rm l01 && echo new > l01; mv data/f02 l02' 'ln -s data/f01 l01; ln -s data/f02 l02'
# an empty file's name is its data (a marker, a lock): kept, put back
case_ "rm of empty markers" notrip 'rm data/.gitkeep data/lock' 'touch data/.gitkeep data/lock'
# 9. back under the name from before the session
case_ "mv f mf; : > mf (x4)" trip 'for i in 1 2 3 4; do mv data/f0$i data/mf$i; : > data/mf$i; done'
case_ "mv f mf; : > mf; rm mf" notrip 'mv data/f01 data/mf; : > data/mf; rm data/mf'
case_ "mv f06 f07" notrip 'mv data/f06 data/f07'
case_ "a swap through a third name" notrip 'mv data/f01 t; mv data/f02 data/f01; mv t data/f02'
case_ "a directory renamed twice, a file renamed inside" notrip 'mv data d2; mv d2/f03 d2/g; mv d2 d3'
case_ "a directory moved away, then removed" trip 'mv data x/y/z; rm -r x/y/z' 'mkdir -p x/y'
case_ "a pre-existing hard-link pair removed" notrip 'rm data/f01 data/hl01' 'ln data/f01 data/hl01'
case_ "RENAME_EXCHANGE with a new empty file, then an overwrite" notrip 'python3 -c "
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
open(\"data/new\", \"w\").close()
assert libc.renameat2(-100, b\"data/f01\", -100, b\"data/new\", 2) == 0, ctypes.get_errno()
open(\"data/new\", \"w\").write(\"x\")
"'
# what the session made is set aside (files, symlinks, O_EXCL creates,
# new names of pre-existing files), its empty folders removed
case_ "new files, folders, symlinks and names" notrip 'echo new >data/n1; mkdir -p newdir/sub; echo x >newdir/sub/y; ln -s data/f01 sl; ln data/f02 data/hl; python3 -c "import os; os.close(os.open(\"data/ex\", os.O_CREAT | os.O_EXCL | os.O_WRONLY))"; mv data/n1 data/n2'
# a mixed session: every form at once (trips at its third removal)
case_ "appends and modes" notrip 'echo more >>data/f01; echo more >>data/f01; chmod 600 data/f02; chmod 700 data; echo n >>data/newlog; chmod 640 data/f03; rm data/f03; python3 -c "import os; os.chmod(\"data/f04\", 0o444)"'
case_ "a mixed session" trip 'echo more >>data/f13; chmod 600 data/f14; echo over >data/f01; mv data/f02 data/m02; mv data/f03 data/f04; ln -s f05 data/l5; rm -f sl; echo file >sl; ln data/f06 data/h6; ln data/f07 data/h7; rm data/f07; mkdir newd; echo n >newd/n; mv keep moved; rm data/f08; rm data/f09; rm data/f10; rm data/f11' 'ln -s data/f12 sl; mkdir keep; echo k >keep/k'
# --keep-new leaves what the session made, puts back what it removed
P=$T/kn
mkdir -p "$P"
echo old >"$P/old"
sleep 0.05
run_lg --session keepnew -- sh -c 'rm "$0/old"; echo new >"$0/new"' "$P"
"$LGCTL" --state-dir "$STATE" restore --keep-new keepnew >"$T/kn.out" 2>&1 || fail "--keep-new: $(cat "$T/kn.out")"
[ "$(cat "$P/old")" = old ] && [ "$(cat "$P/new")" = new ] || fail "--keep-new: $(cat "$T/kn.out")"
pass "$n cases: each restored to the manifest from before the session; --keep-new"
