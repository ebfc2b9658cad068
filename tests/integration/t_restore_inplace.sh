#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# lgctl restore undoes a session in place: a truncated file, an O_TRUNC
# overwrite and a replacement the session made (sed -i) come back byte for
# byte with their mode, owner and modification time; the session's own
# versions are set aside into the quarantine, named, and restorable in
# turn; a path changed after the session is a conflict, left alone.
source "$(dirname "$0")/lib.sh"
need_root "gives the files to nobody and compares owners"

NU=$(id -u nobody) NG=$(id -g nobody)
D=$T/work
mkdir -p "$D"
head -c 3000 /dev/urandom >"$D/trunc.bin"
printf 'line one\nline two\n' >"$D/otrunc.txt"
printf 'alpha\nbeta\n' >"$D/sedi.txt"
printf 'mine\n' >"$D/later.txt"
printf 'not utf-8\n' >"$D/$(printf 'n\377me')"
chown "$NU:$NG" "$D"/*
chmod 640 "$D/trunc.bin"
chmod 604 "$D/otrunc.txt"
chmod 600 "$D/sedi.txt"
touch -d '2021-03-04 05:06:07.123456789' "$D"/*
cp -a "$D" "$T/orig"
# O_TRUNC opens kept (until the writer's default keeps them)
printf '[guard]\nsyscalls = unlink, unlinkat, rmdir, truncate, ftruncate, rename, open_trunc\n' >"$T/keep.ini"
sleep 0.05

run_lg --session ip1 --config "$T/keep.ini" -- bash -c '
	truncate -s 10 "$0/trunc.bin"
	echo overwritten >"$0/otrunc.txt"
	sed -i s/beta/gamma/ "$0/sedi.txt"
	echo session >"$0/later.txt"
	rm "$0"/n*me' "$D"
assert_rc 0 "$RC" "a session that truncates, overwrites and replaces"
[ "$(cat "$D/otrunc.txt")" = overwritten ] && grep -q gamma "$D/sedi.txt" || fail "the session's changes did not happen"
cp "$D/otrunc.txt" "$T/otrunc.session"
cp "$D/sedi.txt" "$T/sedi.session"
sleep 0.05
echo "after the session" >"$D/later.txt" # someone else's change

# 1. A dry run says the plan and changes nothing.
"$LGCTL" --state-dir "$STATE" restore ip1 --dry-run >"$T/dry"
assert_rc 1 "$?" "a dry run with a conflict"
grep -q "^would set aside $D/trunc.bin (the session's version, 10 bytes)" "$T/dry" &&
	grep -q "^would restore $D/trunc.bin (3000 bytes)" "$T/dry" || fail "dry run: $(cat "$T/dry")"
cmp -s "$T/otrunc.session" "$D/otrunc.txt" || fail "the dry run changed something"

# 2. In place: byte-exact, mode, owner, times; the bytes said are written.
"$LGCTL" --state-dir "$STATE" restore ip1 >"$T/out"
assert_rc 1 "$?" "a restore with one conflict"
for f in trunc.bin otrunc.txt sedi.txt; do
	[ "$(stat -c '%a %u %g %y' "$T/orig/$f")" = "$(stat -c '%a %u %g %y' "$D/$f")" ] ||
		fail "$f: mode, owner or time: $(stat -c '%a %u %g %y' "$D/$f") (was $(stat -c '%a %u %g %y' "$T/orig/$f")); $(cat "$T/out")"
	cmp -s "$T/orig/$f" "$D/$f" || fail "$f is not what it was: $(cat "$T/out")"
	grep -q "^set aside $D/$f: the session's version" "$T/out" || fail "$f's session version is not named: $(cat "$T/out")"
done
grep -q "^restored  $D/trunc.bin (3000 bytes)" "$T/out" || fail "the bytes written: $(cat "$T/out")"
grep -q "^restored  $D/otrunc.txt (18 bytes)" "$T/out" || fail "the bytes written: $(cat "$T/out")"

# 3. A path changed after the session is a conflict, left as it is.
grep -q "^conflict  $D/later.txt exists" "$T/out" || fail "no conflict: $(cat "$T/out")"
[ "$(cat "$D/later.txt")" = "after the session" ] || fail "a conflict was overwritten"
grep -q "4 file(s) restored, 1 conflict(s), 0 missing, 0 failed; 3 set aside" "$T/out" || fail "summary: $(cat "$T/out")"
grep '"event":"restore"' "$STATE/audit.jsonl" | grep -q '"set_aside":3' || fail "the restore record does not count the set-asides"

# 4. The session's versions are in the index: restorable, as any entry.
grep -c '"op":"set_aside"' "$STATE/quarantine/ip1.jsonl" | grep -qx 3 || fail "the set-asides are not indexed"
"$LGCTL" --state-dir "$STATE" restore ip1 --newest --to "$T/sv" "$D/otrunc.txt" "$D/sedi.txt" >"$T/out2" ||
	fail "restoring the set-asides: $(cat "$T/out2")"
cmp -s "$T/otrunc.session" "$T/sv$D/otrunc.txt" && cmp -s "$T/sedi.session" "$T/sv$D/sedi.txt" ||
	fail "the set-aside versions: $(cat "$T/out2")"

# 5. A name that is not UTF-8 comes back byte for byte.
[ "$(cat "$D/$(printf 'n\377me')")" = "not utf-8" ] || fail "the non-UTF-8 name: $(ls "$D" | od -c | head -3)"

# 6. Again: what was put back is there, nothing is done twice.
"$LGCTL" --state-dir "$STATE" restore ip1 "$D/trunc.bin" >"$T/out3" || fail "again: $(cat "$T/out3")"
grep -q "^earlier   $D/trunc.bin" "$T/out3" || fail "again: $(cat "$T/out3")"
cmp -s "$T/orig/trunc.bin" "$D/trunc.bin" || fail "a second restore changed trunc.bin"
pass
