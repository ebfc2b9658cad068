#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Another user's mount (issue 39 item 13): files removed on a mount whose
# top is another user's are kept in M/.lgrun-quarantine (lgrun's, 0700);
# lgctl restore refused every one of them ("another user's folder"). It
# now trusts the session's folder there as the very one lgrun made (its
# device and inode, recorded in the index), and puts them back; a folder
# the other user swapped in at that name is still refused.
source "$(dirname "$0")/lib.sh"
need_root "mounts a tmpfs and gives it to another user"
id nobody >/dev/null 2>&1 || skip "needs the user nobody"

M=$T/m
mkdir -p "$M"
mount -t tmpfs -o size=16m tmpfs "$M" || skip "cannot mount a tmpfs here"
trap 'umount -l "$M" 2>/dev/null; lg_cleanup' EXIT
chown nobody "$M"
chmod 755 "$M"
mkdir "$M/data"
for i in 1 2; do echo "on nobody's mount $i" >"$M/data/f$i"; done
cp -a "$M/data" "$T/orig"
sleep 0.05
run_lg --session om1 -- rm "$M/data/f1" "$M/data/f2"
assert_rc 0 "$RC" "two removals"
[ -d "$M/.lgrun-quarantine/om1" ] || fail "not kept on the mount: $(ls -la "$M")"
grep -q '"folder_ino"' "$STATE/quarantine/om1.jsonl" || fail "the folder is not recorded"
"$LGCTL" --state-dir "$STATE" restore om1 >"$T/out" 2>&1 || fail "restore: $(cat "$T/out")"
for i in 1 2; do
	cmp -s "$T/orig/f$i" "$M/data/f$i" || fail "f$i not restored: $(cat "$T/out")"
done

# the other user moves lgrun's folder away and plants one of root's
# making at its name (as root: the worst case): not the one recorded
echo "again" >"$M/data/f3"
sleep 0.05
run_lg --session om2 -- rm "$M/data/f3"
mv "$M/.lgrun-quarantine/om2" "$M/.lgrun-quarantine/om2.real"
mkdir -m 700 -p "$M/.lgrun-quarantine/om2/0"
echo forged >"$M/.lgrun-quarantine/om2/0/1"
"$LGCTL" --state-dir "$STATE" restore om2 >"$T/out2" 2>&1 && fail "a swapped folder was trusted: $(cat "$T/out2")"
grep -q "^refused" "$T/out2" || fail "not refused: $(cat "$T/out2")"
[ ! -e "$M/data/f3" ] || fail "restored from a swapped folder: $(cat "$M/data/f3")"
pass
