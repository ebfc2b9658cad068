#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# lgctl restore run as root, against a tree and an index others controlled:
# a victim's parent replaced by a symlink, --to DIR with a symlink planted
# in it, a kept file altered through a descriptor held across the rm, a
# forged index of a non-root session, and a quarantine folder another user
# planted and swapped. None of them makes restore write where the session
# could not, nor put back what lgrun did not keep.
source "$(dirname "$0")/lib.sh"
need_root "restores as root and acts as nobody"

NU=$(id -u nobody) NG=$(id -g nobody)
chmod 755 "$T" # nobody's parts below

# 1. A parent replaced by a symlink: nothing is written through it.
mkdir -p "$T/v/d" "$T/target" "$T/target2"
printf 'victim\n' >"$T/v/d/f"
sleep 0.05
run_lg --session atk1 -- rm "$T/v/d/f"
assert_rc 0 "$RC" "one removal"
mv "$T/v/d" "$T/v/d.moved"
ln -s "$T/target" "$T/v/d"
"$LGCTL" --state-dir "$STATE" restore atk1 >"$T/out"
assert_rc 1 "$?" "a restore through a symlinked parent"
[ -z "$(ls -A "$T/target")" ] || fail "restore wrote through a symlink: $(ls -la "$T/target")"
grep -q "^failed    $T/v/d/f: its folder: a symlink in the way" "$T/out" || fail "not said: $(cat "$T/out")"

# 2. --to DIR with a symlink planted inside it: refused, nothing written.
mkdir -p "$T/to"
ln -s "$T/target2" "$T/to/${T#/}" 2>/dev/null || { mkdir -p "$T/to$(dirname "$T")"; ln -s "$T/target2" "$T/to$T"; }
"$LGCTL" --state-dir "$STATE" restore atk1 --to "$T/to" >"$T/out"
assert_rc 1 "$?" "--to through a planted symlink"
[ -z "$(ls -A "$T/target2")" ] || fail "--to wrote through a symlink: $(ls -laR "$T/target2")"
grep -q "a symlink in the way" "$T/out" || fail "not said: $(cat "$T/out")"
rm "$T/v/d" && mv "$T/v/d.moved" "$T/v/d"
"$LGCTL" --state-dir "$STATE" restore atk1 >"$T/out" || fail "the honest restore: $(cat "$T/out")"
[ "$(cat "$T/v/d/f")" = victim ] || fail "not restored once the symlink went"

# 3. A kept file altered through a descriptor held open across the rm:
# reported, restored only with --force.
printf 'original content\n' >"$T/held"
touch -d '2021-01-01' "$T/held"
exec 3<>"$T/held"
sleep 0.05
run_lg --session atk3 -- rm "$T/held"
assert_rc 0 "$RC" "the rm"
printf 'EVIL' >&3
exec 3>&-
"$LGCTL" --state-dir "$STATE" restore atk3 >"$T/out"
assert_rc 1 "$?" "a changed kept file"
[ ! -e "$T/held" ] || fail "a changed kept file was restored without --force"
grep -q "^changed   $T/held: its kept file .* changed since it was kept .*; restore it with --force" "$T/out" ||
	fail "not reported: $(cat "$T/out")"
"$LGCTL" --state-dir "$STATE" restore atk3 --force >"$T/out" || fail "--force: $(cat "$T/out")"
[ "$(cat "$T/held")" = "EVILinal content" ] || fail "--force: $(cat "$T/held")"

# 4. A forged index: nobody's session wrote lines into its own index.
# Root's restore acts as nobody and takes nothing from the text it could not.
NST=$T/nst
mkdir -p "$NST/quarantine/forge/0" "$T/nd" "$T/rootdir" "$T/rootonly"
chown -R "$NU:$NG" "$NST" "$T/nd"
chmod 700 "$NST/quarantine" "$NST/quarantine/forge" "$NST/quarantine/forge/0"
printf 'root secret\n' >"$T/rootonly/s"
chmod 600 "$T/rootonly/s"
runuser -u nobody -- sh -c 'printf "x\n" >"$0/2"; printf "y\n" >"$0/3"; chmod 644 "$0/2" "$0/3"' "$NST/quarantine/forge/0"
line() { # kept path mode op: a line matching the kept file's facts
	local ino=0 size=0 mt=0
	[ -e "$1" ] && read -r ino size mt < <(python3 -c 'import os,sys; s=os.stat(sys.argv[1]); print(s.st_ino, s.st_size, s.st_mtime_ns)' "$1")
	printf '{"n":%s,"time_ns":1,"session":"forge","kind":"file","op":"%s","path":"%s","kept":"%s","mode":%s,"uid":0,"gid":0,"size":%s,"ino":%s,"mtime_ns":%s,"atime_ns":%s}\n' \
		"$RANDOM" "$4" "$2" "$1" "$3" "$size" "$ino" "$mt" "$mt"
}
{
	line "$T/rootonly/s" "$T/nd/loot" 33152 unlink
	line "$NST/quarantine/forge/0/2" "$T/nd/suid" 36863 unlink
	line "$NST/quarantine/forge/0/3" "$T/rootdir/planted" 33188 unlink
	line "$NST/quarantine/forge/0/3" "$T/nd/../rootdir/dots" 33188 unlink
	line "$NST/quarantine/forge/0/../../../../rootonly/s" "$T/nd/loot2" 33152 unlink
} | runuser -u nobody -- sh -c 'cat >"$0"' "$NST/quarantine/forge.jsonl"
# nothing of it is sealed: refused as a whole (issue 39 item 12) ...
"$LGCTL" --state-dir "$NST" restore forge >"$T/out" 2>&1
assert_rc 1 "$?" "a forged index"
grep -q "index is not sealed by lgrun" "$T/out" || fail "an unsealed index was believed: $(cat "$T/out")"
[ ! -e "$T/nd/suid" ] || fail "an unsealed index was restored"
# ... and even when trusted by hand, nothing it names goes where it may not
"$LGCTL" --state-dir "$NST" restore --trust-unsigned forge >"$T/out"
assert_rc 1 "$?" "a forged index, --trust-unsigned"
[ "$(cat "$T/rootonly/s")" = "root secret" ] && [ "$(stat -c '%a %u' "$T/rootonly/s")" = "600 0" ] ||
	fail "the root-only file was touched"
[ ! -e "$T/nd/loot" ] && [ ! -e "$T/nd/loot2" ] || fail "a root-only file was moved: $(cat "$T/out")"
grep -q "^refused   $T/nd/loot: its kept file $T/rootonly/s is not in a quarantine folder of session forge" "$T/out" &&
	grep -q "^refused   $T/nd/loot2: its kept file's path is not absolute and normal" "$T/out" &&
	grep -q "^refused   $T/nd/../rootdir/dots: its path is not absolute and normal" "$T/out" ||
	fail "the forged lines are not refused: $(cat "$T/out")"
[ -e "$T/nd/suid" ] || fail "nobody's own file was not restored: $(cat "$T/out")"
[ "$(stat -c '%a %u' "$T/nd/suid")" = "644 $NU" ] || fail "the index set a mode or owner: $(stat -c '%a %u' "$T/nd/suid")"
[ ! -e "$T/rootdir/planted" ] || fail "restore wrote into root's folder as root"
grep -q "^failed    $T/rootdir/planted: Permission denied" "$T/out" || fail "not said: $(cat "$T/out")"
# ... and gc (often run as root) removes no file a forged line names
"$LGCTL" --state-dir "$NST" quarantine gc --force forge >"$T/out" || fail "gc of the forged index: $(cat "$T/out")"
[ "$(cat "$T/rootonly/s")" = "root secret" ] || fail "gc removed a file a forged line named"

# 5. A quarantine folder another user planted (0777) and then swapped.
mkdir -p "$T/shm"
mount -t tmpfs -o size=4m,mode=1777 lgatk "$T/shm" || fail "cannot mount a tmpfs"
trap 'umount -l "$T/shm" 2>/dev/null; lg_cleanup' EXIT
runuser -u nobody -- mkdir "$T/shm/.lgrun-quarantine"
chmod 0777 "$T/shm/.lgrun-quarantine"
printf 'root only\n' >"$T/shm/secret"
chmod 600 "$T/shm/secret"
sleep 0.05
run_lg --session atk5 -- rm "$T/shm/secret"
assert_rc 0 "$RC" "a root session's removal"
if [ -d "$T/shm/.lgrun-quarantine/atk5" ]; then
	runuser -u nobody -- sh -c 'mv "$0/atk5" "$0/gone" && mkdir -p "$0/atk5/0" && printf "planted\n" >"$0/atk5/0/1"' "$T/shm/.lgrun-quarantine" ||
		fail "nobody could not swap the folder"
fi
"$LGCTL" --state-dir "$STATE" restore atk5 >"$T/out"
if grep -q '"kept":"'"$T/shm/.lgrun-quarantine/" "$STATE/quarantine/atk5.jsonl"; then
	[ ! -e "$T/shm/secret" ] || fail "restored from a planted folder: $(cat "$T/shm/secret")"
	grep -q "^refused   $T/shm/secret: the quarantine's folder $T/shm/.lgrun-quarantine is another user's" "$T/out" ||
		fail "not refused: $(cat "$T/out")"
else # kept elsewhere by lgrun (it would not use a planted folder)
	[ ! -e "$T/shm/secret" ] || [ "$(cat "$T/shm/secret")" = "root only" ] || fail "not the original: $(cat "$T/out")"
fi
pass
