#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Undo: what a session removed of pre-existing data before its trip is kept
# (a hard link, or a directory's metadata) and `lgctl restore` puts it back
# byte for byte with its mode and times, never over what exists again; a
# dry run changes nothing; the tree cannot reach the quarantine; a second
# filesystem gets its own folder; on_full decides what cannot be kept.
source "$(dirname "$0")/lib.sh"
need_root "mounts a tmpfs"

D=$T/tree
mkdir -p "$D/sub"
head -c 70000 /dev/urandom >"$D/a.bin"
printf 'second\n' >"$D/b.txt"
printf 'third\n' >"$D/c.txt"
printf 'in sub\n' >"$D/sub/s.txt"
chmod 640 "$D/a.bin"
chmod 600 "$D/b.txt"
chmod 750 "$D/sub"
xattr() { python3 -c 'import os, sys; os.setxattr(sys.argv[1], "user.lgtest", sys.argv[2].encode())' "$@"; }
getx() { python3 -c 'import os, sys; print(os.getxattr(sys.argv[1], "user.lgtest").decode())' "$1" 2>&1; }
xattr "$D/a.bin" "on a file" && xattr "$D/sub" "on a dir" || fail "no user xattrs on $T's filesystem"
touch -d '2021-03-04 05:06:07.123456789' "$D/a.bin" "$D/b.txt"
cp -a "$D" "$T/orig"
sleep 0.05

# 1. The loop trips at #3; #1 and #2 are kept and the operator is told.
run_lg --session undo1 -- bash -c 'for f in a.bin b.txt c.txt sub/s.txt; do rm "$0/$f"; done' "$D" 2>"$T/err"
assert_rc 86 "$RC" "the delete loop"
[ ! -e "$D/a.bin" ] && [ ! -e "$D/b.txt" ] || fail "#1 and #2 should be gone"
[ -e "$D/c.txt" ] || fail "#3 was removed"
grep -q "kept: 2 file(s), 70.0 KB; put it back with: lgctl restore undo1" "$T/err" ||
	fail "the trip does not say what is kept: $(cat "$T/err")"
grep '"event":"trip"' "$STATE/audit.jsonl" | grep -q '"kept_files":2' || fail "the trip record does not count what is kept"
[ "$(stat -c %a "$STATE/quarantine/undo1")" = 700 ] || fail "the quarantine folder is not 0700"
# each entry names the audit record that says the quarantine holds them;
# the session's records have ids of their own
python3 - "$STATE/quarantine/undo1.jsonl" "$STATE/audit.jsonl" <<'PY' || fail "audit ids"
import json, sys
entries = [json.loads(l) for l in open(sys.argv[1])]
recs = [json.loads(l) for l in open(sys.argv[2]) if l.strip()]
mine = [r for r in recs if r.get("session") == "undo1"]
ids = [r.get("id") for r in mine]
assert all(ids) and len(set(ids)) == len(ids), f"ids missing or repeated: {ids}"
assert ids[0] == "undo1#1", ids
byid = {r["id"]: r for r in mine}
assert len(entries) == 2, entries
for e in entries:
    r = byid.get(e.get("audit_id"))
    assert r and r["event"] == "quarantine", (e, ids)
    assert "lgctl restore undo1" in r["summary"] and r["index"] == sys.argv[1], r
assert [r["event"] for r in mine].count("quarantine") == 1, [r["event"] for r in mine]
PY

# 2. A dry run changes nothing and says what it would do.
"$LGCTL" --state-dir "$STATE" restore undo1 --dry-run >"$T/dry" || fail "dry run: $(cat "$T/dry")"
grep -q "would restore $D/a.bin" "$T/dry" || fail "dry run: $(cat "$T/dry")"
[ ! -e "$D/a.bin" ] && [ ! -e "$D/b.txt" ] || fail "the dry run restored something"

# 3. Restore: byte-exact, mode and times.
# (no USER in the environment, as under a root shell or cron: the record
# still names who restored, from the uid)
env -u USER -u SUDO_USER "$LGCTL" --state-dir "$STATE" restore undo1 >"$T/out" || fail "restore: $(cat "$T/out")"
grep -q "2 file(s) restored, 0 conflict" "$T/out" || fail "restore said: $(cat "$T/out")"
for f in a.bin b.txt; do
	cmp -s "$T/orig/$f" "$D/$f" || fail "$f is not what it was"
	[ "$(stat -c '%a %Y %y' "$T/orig/$f")" = "$(stat -c '%a %Y %y' "$D/$f")" ] ||
		fail "$f: mode or times differ: $(stat -c '%a %y' "$D/$f")"
done
grep '"event":"restore"' "$STATE/audit.jsonl" | grep -q '"restored":2' || fail "no restore record"
grep '"event":"restore"' "$STATE/audit.jsonl" | grep -q "\"by\":\"$(id -un)\"" ||
	fail "the restore record does not name who restored: $(grep '"event":"restore"' "$STATE/audit.jsonl")"
[ "$(getx "$D/a.bin")" = "on a file" ] || fail "a.bin's xattr: $(getx "$D/a.bin")"
# again: nothing is missing, it was put back (the same inode is there)
"$LGCTL" --state-dir "$STATE" restore undo1 >"$T/out2" || fail "a second restore: $(cat "$T/out2")"
grep -q "^earlier   $D/a.bin (restored by an earlier lgctl restore)" "$T/out2" &&
	grep -q "0 file(s) restored, 0 conflict(s), 0 missing, 0 failed; 2 restored earlier" "$T/out2" ||
	fail "a second restore: $(cat "$T/out2")"

# 4. Conflicts are never overwritten; --to puts them elsewhere.
run_lg --session undo2 --observe -- rm -r "$D/sub" 2>/dev/null
assert_rc 0 "$RC" "observe rm -r"
printf 'new content\n' >"$T/newsub" && mkdir -p "$D/sub" && cp "$T/newsub" "$D/sub/s.txt"
"$LGCTL" --state-dir "$STATE" restore undo2 >"$T/out"
assert_rc 1 "$?" "a restore with a conflict"
grep -q "conflict  $D/sub/s.txt exists" "$T/out" || fail "no conflict reported: $(cat "$T/out")"
cmp -s "$T/newsub" "$D/sub/s.txt" || fail "a conflict was overwritten"
"$LGCTL" --state-dir "$STATE" restore undo2 --to "$T/elsewhere" >"$T/out" || fail "--to: $(cat "$T/out")"
cmp -s "$T/orig/sub/s.txt" "$T/elsewhere$D/sub/s.txt" || fail "--to did not restore the content"
[ "$(stat -c %a "$T/elsewhere$D/sub")" = 750 ] || fail "the directory's mode was not restored"
[ "$(getx "$T/elsewhere$D/sub")" = "on a dir" ] || fail "the directory's xattr: $(getx "$T/elsewhere$D/sub")"

# 4b. A rename over pre-existing data keeps it (mv new old, sed -i); the
# restore brings back the path as it was before the session.
printf 'original\n' >"$T/old"
sleep 0.05
run_lg --session undo9 -- bash -c 'echo new >"$0.new"; mv "$0.new" "$0"; sed -i s/new/newer/ "$0"' "$T/old"
assert_rc 0 "$RC" "mv and sed -i over a pre-existing file"
[ "$(cat "$T/old")" = newer ] || fail "the session's edits did not happen"
mv "$T/old" "$T/old.session"
"$LGCTL" --state-dir "$STATE" restore undo9 >"$T/out" || fail "restore after mv: $(cat "$T/out")"
[ "$(cat "$T/old")" = original ] || fail "not the original: $(cat "$T/old"); $(cat "$T/out")"
grep -q "^later .*$T/old: a later version stays" "$T/out" || fail "the later version is not named: $(cat "$T/out")"
# --newest: the version just before the last replacement (the session's 'new')
"$LGCTL" --state-dir "$STATE" restore undo9 --newest --to "$T/newest" >"$T/out" ||
	fail "restore --newest: $(cat "$T/out")"
[ "$(cat "$T/newest$T/old")" = new ] || fail "--newest: not the last version: $(cat "$T/out")"
grep -q "^earlier .*$T/old: an earlier version stays" "$T/out" || fail "--newest: the earlier one is not named: $(cat "$T/out")"

# 4c. A truncation and an O_TRUNC open (open_trunc on) keep the old content.
head -c 5000 /dev/urandom >"$T/tr1"
printf 'keep me\n' >"$T/tr2"
cp "$T/tr1" "$T/tr1.orig"
xattr "$T/tr1" "truncated"
printf '[guard]\nsyscalls = unlink, unlinkat, rmdir, truncate, ftruncate, rename, open_trunc\n' >"$T/otrunc.ini"
sleep 0.05
run_lg --session undo10 --config "$T/otrunc.ini" -- bash -c 'truncate -s 0 "$0"; echo replaced >"$1"' "$T/tr1" "$T/tr2"
assert_rc 0 "$RC" "a truncation and an O_TRUNC open"
[ ! -s "$T/tr1" ] && [ "$(cat "$T/tr2")" = replaced ] || fail "the session's truncations did not happen"
# In place: the session's versions (the inodes it truncated and rewrote,
# unchanged since) are set aside into the quarantine, the originals go back.
"$LGCTL" --state-dir "$STATE" restore undo10 >"$T/out" || fail "restore in place: $(cat "$T/out")"
cmp -s "$T/tr1.orig" "$T/tr1" || fail "the truncated content was not restored: $(cat "$T/out")"
[ "$(getx "$T/tr1")" = truncated ] || fail "the truncated file's xattr: $(getx "$T/tr1")"
[ "$(cat "$T/tr2")" = "keep me" ] || fail "the O_TRUNC open's old content was not restored"
grep -q "^set aside $T/tr1: the session's version (0 bytes)" "$T/out" &&
	grep -q "^set aside $T/tr2: the session's version (9 bytes)" "$T/out" || fail "the set-asides are not named: $(cat "$T/out")"
# the session's versions are entries in turn
"$LGCTL" --state-dir "$STATE" restore undo10 --newest --to "$T/session-versions" >"$T/out" || fail "--newest --to: $(cat "$T/out")"
[ -e "$T/session-versions$T/tr1" ] && [ ! -s "$T/session-versions$T/tr1" ] && [ "$(cat "$T/session-versions$T/tr2")" = replaced ] ||
	fail "the session's versions: $(cat "$T/out")"

# 5. The tree cannot reach the quarantine.
run_lg --session undo3 -- bash -c 'rm -rf "$0"/quarantine; rm -f "$0"/quarantine/undo1.jsonl; exit 0' "$STATE" 2>/dev/null
[ -f "$STATE/quarantine/undo1.jsonl" ] || fail "the tree removed the quarantine's index"

# 6. Another filesystem: its own folder at the mount's top.
mkdir -p "$T/mnt"
mount -t tmpfs -o size=8m lgtest "$T/mnt" || fail "cannot mount a tmpfs"
trap 'umount -l "$T/mnt" 2>/dev/null; lg_cleanup' EXIT
printf 'on tmpfs\n' >"$T/mnt/x"
printf 'on disk\n' >"$T/y"
sleep 0.05
run_lg --session undo4 -- rm "$T/mnt/x" "$T/y"
assert_rc 0 "$RC" "two removals on two filesystems"
[ -f "$T/mnt/.lgrun-quarantine/undo4/0/1" ] || fail "nothing kept on the tmpfs: $(ls -la "$T/mnt" "$T/mnt/.lgrun-quarantine" 2>&1)"
"$LGCTL" --state-dir "$STATE" restore undo4 >"$T/out" || fail "restore across filesystems: $(cat "$T/out")"
grep -q "on tmpfs" "$T/mnt/x" && grep -q "on disk" "$T/y" || fail "not both restored"

# 7. What cannot be kept: on_full = allow lets it go and says so; deny refuses.
mkdir -p "$T/mnt2"
mount -t tmpfs -o size=8m lgtest2 "$T/mnt2" || fail "cannot mount a second tmpfs"
trap 'umount -l "$T/mnt" "$T/mnt2" 2>/dev/null; lg_cleanup' EXIT
: >"$T/mnt2/.lgrun-quarantine" # a file where its folder would go
printf 'a\n' >"$T/mnt2/p"
printf 'b\n' >"$T/mnt2/q"
sleep 0.05
# (no copies either: max_copy = 0, else a copy goes to the state dir)
printf '[quarantine]\nmax_copy = 0\n' >"$T/nocopy.ini"
run_lg --session undo5 --config "$T/nocopy.ini" -- rm "$T/mnt2/p" 2>"$T/err"
assert_rc 0 "$RC" "on_full = allow"
[ ! -e "$T/mnt2/p" ] || fail "on_full = allow refused the removal"
grep -q '"reason":"not_kept"' "$STATE/audit.jsonl" || fail "no audit line for what was not kept"
printf '[quarantine]\non_full = deny\nmax_copy = 0\n' >"$T/deny.ini"
run_lg --session undo6 --config "$T/deny.ini" -- rm "$T/mnt2/q" 2>"$T/err"
[ "$RC" != 0 ] || fail "on_full = deny let the removal through"
[ -e "$T/mnt2/q" ] || fail "on_full = deny: the file was removed"
grep -q "refused (on_full = deny)" "$T/err" || fail "no reason given: $(cat "$T/err")"
# a write-open of a pre-existing file beyond max_copy (issue 39 item 5):
# allowed and said by default; refused with on_full = refuse, untouched
head -c 2097152 /dev/urandom >"$T/big"
cp "$T/big" "$T/big.orig"
sleep 0.05
printf '[quarantine]
max_copy = 1M
' >"$T/small.ini"
run_lg --session undo6b --config "$T/small.ini" -- sh -c 'echo x >"$0"' "$T/big" 2>"$T/err"
assert_rc 0 "$RC" "a write-open beyond max_copy, on_full = allow"
grep -q "could not be kept in the quarantine (File too large): let through (on_full = allow)" "$T/err" ||
	fail "not said: $(cat "$T/err")"
cp "$T/big.orig" "$T/big"
sleep 0.05
printf '[quarantine]
max_copy = 1M
on_full = refuse
' >"$T/refuse.ini"
run_lg --session undo6c --config "$T/refuse.ini" -- sh -c 'echo x >"$0"' "$T/big" 2>"$T/err"
[ "$RC" != 0 ] || fail "on_full = refuse let the write-open through"
cmp -s "$T/big" "$T/big.orig" || fail "on_full = refuse: the file was written"
grep -q "could not be kept in the quarantine (File too large): refused (on_full = deny)" "$T/err" ||
	fail "no reason given: $(cat "$T/err")"

# 7a. A folder of one's own for that mount ([quarantine] folders): kept
# there, protected there, restored from there.
printf 'c\n' >"$T/mnt2/r"
printf '[quarantine]\nfolders = /nonexistent/x, %s/keep/\n' "$T/mnt2" >"$T/folders.ini"
sleep 0.05
run_lg --session undo12 --config "$T/folders.ini" -- bash -c 'rm "$0/r"; rm -rf "$0/keep" 2>/dev/null; exit 0' "$T/mnt2" 2>"$T/err"
assert_rc 0 "$RC" "a removal with a configured folder"
[ ! -e "$T/mnt2/r" ] || fail "the removal did not happen"
[ "$(cat "$T/mnt2/keep/undo12/0/1" 2>&1)" = c ] || fail "not kept in the configured folder: $(ls -laR "$T/mnt2" 2>&1; cat "$T/err")"
[ "$(stat -c %a "$T/mnt2/keep")" = 700 ] || fail "the configured folder is not 0700"
"$LGCTL" --state-dir "$STATE" restore undo12 >"$T/out" || fail "restore from a configured folder: $(cat "$T/out")"
[ "$(cat "$T/mnt2/r")" = c ] || fail "not restored from the configured folder"
printf '[quarantine]\nfolders = /ok, relative/dir\n' >"$T/badfolders.ini"
"$LGRUN" --state-dir "$STATE" --config "$T/badfolders.ini" -- true 2>"$T/err"
[ $? = 125 ] && grep -q "badfolders.ini:2: quarantine.folders: 'relative/dir' is not an absolute directory" "$T/err" ||
	fail "a relative folder: $(cat "$T/err")"

# 7b. Past max_bytes nothing more is copied: let through, said, counted.
# (A removal's link takes no new space: max_bytes does not count it,
# t_quarantine_links.)
head -c 20000 /dev/urandom >"$T/big1"
head -c 20000 /dev/urandom >"$T/big2"
printf '[quarantine]\nmax_bytes = 30K\n' >"$T/max.ini"
sleep 0.05
run_lg --session undo8 --config "$T/max.ini" -- sh -c 'for f; do printf X | dd of="$f" bs=1 seek=3 conv=notrunc status=none; done' sh "$T/big1" "$T/big2" 2>"$T/err"
assert_rc 0 "$RC" "copies past max_bytes"
grep -q "max_bytes reached" "$T/err" || fail "max_bytes: $(cat "$T/err")"
grep '"event":"session_end"' "$STATE/audit.jsonl" | grep '"session":"undo8"' | grep '"kept_files":1,"kept_dirs":0,"kept_bytes":20000,' | grep -q '"not_kept":1' ||
	fail "the end record does not count what was kept: $(grep undo8 "$STATE/audit.jsonl" | tail -1)"

# 8. A static binary's removals are kept too (the seccomp path).
if [ -x "$FIXBIN/rmloop-static" ]; then
	mkfiles "$T/st" 2
	sleep 0.05
	run_lg --session undo7 -- "$FIXBIN/rmloop-static" "$T/st/f1" "$T/st/f2"
	"$LGCTL" --state-dir "$STATE" restore undo7 >"$T/out" || fail "static: $(cat "$T/out")"
	[ "$(cat "$T/st/f1" "$T/st/f2")" = "$(printf 'data 1\ndata 2')" ] || fail "the static binary's removals were not kept"
fi
# 8b. Ten processes removing at once: every removed file is kept.
for k in $(seq 1 10); do mkfiles "$T/par/d$k" 20; done
( cd "$T/par" && find . -type f | sort >"$T/par.list" )
printf '[volumetric]\nmax_ops = 100000\n[same_target]\nmax = 100000\n[budget]\nmax_destructive_ops = 0\n' >"$T/par.ini"
sleep 0.05
run_lg --session undo11 --config "$T/par.ini" -- bash -c 'for k in $(seq 1 10); do rm -rf "$0/d$k" & done; wait' "$T/par"
assert_rc 0 "$RC" "ten parallel rm -rf"
[ -z "$(ls -A "$T/par")" ] || fail "the parallel removals did not all happen"
"$LGCTL" --state-dir "$STATE" restore undo11 >"$T/out" || fail "parallel restore: $(tail -3 "$T/out")"
( cd "$T/par" && find . -type f | sort >"$T/par.back" )
cmp -s "$T/par.list" "$T/par.back" || fail "not every file came back: $(diff "$T/par.list" "$T/par.back" | head)"
for k in 1 10; do [ "$(cat "$T/par/d$k/f20")" = "data 20" ] || fail "d$k/f20 content"; done

# 9. list and gc: ages and sizes; a blocked session is kept unless forced.
"$LGCTL" --state-dir "$STATE" quarantine list >"$T/list" || fail "quarantine list"
grep -Eq "^undo8 +1 +0 +20.0 KB +[0-9.]+ KB +[0-9.]+ KB +[0-9]+[smh] +[0-9]+[smh] +-$" "$T/list" || fail "list: $(cat "$T/list")"
grep -q "^undo1 .*blocked$" "$T/list" || fail "list does not show undo1 blocked: $(cat "$T/list")"
sleep 1.1
"$LGCTL" --state-dir "$STATE" quarantine gc --max-age 1s >"$T/gc" || fail "gc: $(cat "$T/gc")"
grep -q "kept      undo1: the session is blocked" "$T/gc" || fail "gc removed a blocked session: $(cat "$T/gc")"
grep -q "removed   undo8: 1 file(s)" "$T/gc" || fail "gc did not remove an old session: $(cat "$T/gc")"
[ ! -e "$STATE/quarantine/undo8.jsonl" ] && [ ! -e "$STATE/quarantine/undo8" ] &&
	[ ! -e "$STATE/quarantine/undo8.held" ] || fail "gc left undo8 behind"
[ -e "$STATE/quarantine/undo1.jsonl" ] || fail "gc removed the blocked session's index"
"$LGCTL" --state-dir "$STATE" quarantine gc --force undo1 >"$T/gc" || fail "gc --force: $(cat "$T/gc")"
[ ! -e "$STATE/quarantine/undo1.jsonl" ] || fail "gc --force kept undo1"

# 10. lgrun expires old sessions by itself (max_age), at most hourly, never
# a blocked one.
head -c 3000 /dev/urandom >"$T/old1" && head -c 10 /dev/urandom >"$T/old2a"
printf 'x\n' >"$T/old2b" && printf 'y\n' >"$T/old2c" && printf 'z\n' >"$T/recent1"
sleep 0.05
run_lg --session old1 -- rm "$T/old1"
run_lg --session recent1 -- rm "$T/recent1"
run_lg --session old2 -- bash -c 'rm "$0" "$1" "$2"' "$T/old2a" "$T/old2b" "$T/old2c"
assert_rc 86 "$RC" "the blocked session to be"
touch -d '8 days ago' "$STATE/quarantine/old1.jsonl" "$STATE/quarantine/old2.jsonl"
touch -d '2 hours ago' "$STATE/quarantine/.expired"
run_lg --session fresh -v -- true 2>"$T/err"
grep -q "quarantine: 1 older session(s) expired (quarantine.max_age), 3.0 KB freed" "$T/err" ||
	fail "no expiry: $(cat "$T/err")"
[ ! -e "$STATE/quarantine/old1.jsonl" ] && [ ! -e "$STATE/quarantine/old1" ] || fail "old1 was not expired"
[ -e "$STATE/quarantine/old2.jsonl" ] || fail "a blocked session was expired"
[ -e "$STATE/quarantine/recent1.jsonl" ] || fail "a recent session was expired"
touch -d '8 days ago' "$STATE/quarantine/recent1.jsonl"
run_lg --session fresh2 -v -- true 2>"$T/err"
[ -e "$STATE/quarantine/recent1.jsonl" ] || fail "expired twice within the hour"

# 11. A session's totals are written when it ends (<id>.held), so the next
# sessions' first keep reads one small file per session, not every index
# and a stat of each kept file. They hold while the index keeps its size:
# a restore appends to it, and the totals are read from the index again.
head -c 2000 /dev/urandom >"$T/held1" && head -c 3000 /dev/urandom >"$T/held2"
run_lg --session held -- rm "$T/held1" "$T/held2"
assert_rc 0 "$RC" "two removals"
H="$STATE/quarantine/held.held"
[ -f "$H" ] || fail "no totals written at the session's end"
grep -q '"files":2,"dirs":0,"bytes":5000,' "$H" || fail "totals: $(cat "$H")"
"$LGCTL" --state-dir "$STATE" quarantine list >"$T/list" || fail "quarantine list"
grep -Eq "^held +2 +0 +5.0 KB " "$T/list" || fail "list from the totals: $(cat "$T/list")"
# they are what lgctl and the next lgrun read: changed, the list says it
sed -i 's/"bytes":5000,/"bytes":7777777,/' "$H"
"$LGCTL" --state-dir "$STATE" quarantine list >"$T/list" || fail "quarantine list"
grep -Eq "^held +2 +0 +7.[48] MB " "$T/list" || fail "the totals were not read: $(cat "$T/list")"
# a restore appends to the index: the totals no longer hold, the index says
"$LGCTL" --state-dir "$STATE" restore held >"$T/out" 2>&1 || fail "restore: $(cat "$T/out")"
[ -f "$T/held1" ] && [ -f "$T/held2" ] || fail "restore did not bring them back"
"$LGCTL" --state-dir "$STATE" quarantine list >"$T/list" || fail "quarantine list"
grep -Eq "^held +0 +0 +0 B " "$T/list" || fail "stale totals read after a restore: $(cat "$T/list")"
pass
