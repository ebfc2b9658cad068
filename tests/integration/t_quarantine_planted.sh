#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A quarantine folder planted by another local user is never used (issue
# 27): on a world-writable tmpfs, user nobody makes .lgrun-quarantine (0777,
# or 0700 of its own) before a root session. The session refuses it, says
# so, keeps no root-only file there (a removal is said to be not kept; an
# overwrite's copy goes to the state dir instead), and nobody can swap
# anything into what lgrun keeps.
source "$(dirname "$0")/lib.sh"
need_root "mounts a tmpfs and acts as user nobody"
id nobody >/dev/null 2>&1 || skip "needs a user nobody"

M=$T/fs
chmod 711 "$T" # nobody reaches the tmpfs
mkdir -p "$M"
mount -t tmpfs -o size=20m,mode=1777 tmpfs "$M" || skip "cannot mount a tmpfs"
trap 'umount -l "$M" 2>/dev/null; lg_cleanup' EXIT

for mode in 0777 0700; do
	rm -rf "${M:?}"/* "$M"/.lgrun-quarantine
	su -s /bin/sh nobody -c "mkdir -m $mode '$M/.lgrun-quarantine'" || fail "nobody cannot make the folder"
	printf 'root only %s\n' "$mode" >"$M/secret"
	printf 'rewritten %s\n' "$mode" >"$M/conf"
	chmod 600 "$M/secret" "$M/conf"
	sleep 0.05
	run_lg --session "planted$mode" -- sh -c 'rm "$0"; echo new >"$1"' "$M/secret" "$M/conf" 2>"$T/err"
	assert_rc 0 "$RC" "a removal and an overwrite beside a planted folder ($mode)"
	grep -q "quarantine: $M/.lgrun-quarantine is owned by uid $(id -u nobody) with mode $mode" "$T/err" ||
		fail "the planted folder is not refused ($mode): $(cat "$T/err")"
	[ -z "$(ls -A "$M/.lgrun-quarantine")" ] || fail "lgrun wrote into the planted folder: $(ls -lR "$M/.lgrun-quarantine")"
	python3 - "$STATE/quarantine/planted$mode.jsonl" "$STATE" "$mode" <<'PY' || fail "the copies in the state dir ($mode)"
import json, os, sys
idx, state, mode = sys.argv[1:]
es = {os.path.basename(e["path"]): e for e in map(json.loads, open(idx))}
assert sorted(es) == ["conf", "secret"], es
for name, text in (("secret", "root only"), ("conf", "rewritten")):
    k = es[name]["kept"]
    assert k.startswith(state + "/quarantine/"), k
    assert open(k).read() == f"{text} {mode}\n", open(k).read()
    st = os.stat(k)
    assert st.st_uid == 0 and st.st_mode & 0o777 == 0o600, oct(st.st_mode)
PY
	# both: the overwritten file's session version is set aside into the
	# state dir's folder too (copied there: another filesystem)
	"$LGCTL" --state-dir "$STATE" restore "planted$mode" >"$T/out" || fail "restore: $(cat "$T/out")"
	[ "$(cat "$M/secret")" = "root only $mode" ] && [ "$(stat -c '%U %a' "$M/secret")" = "root 600" ] ||
		fail "the removed file is not back as it was: $(cat "$T/out")"
	[ "$(cat "$M/conf")" = "rewritten $mode" ] || fail "the overwritten file is not back: $(cat "$T/out")"
	grep -q "^set aside $M/conf: the session's version (4 bytes) is in the quarantine as $STATE/quarantine/" "$T/out" ||
		fail "the session's version is not set aside: $(cat "$T/out")"
done

# With copies off, a removal there is not kept: said, and counted.
rm -rf "${M:?}"/* "$M"/.lgrun-quarantine
su -s /bin/sh nobody -c "mkdir -m 0777 '$M/.lgrun-quarantine'"
printf 'root only\n' >"$M/secret"
printf '[quarantine]\nmax_copy = 0\n' >"$T/nocopy.ini"
sleep 0.05
run_lg --session plantednocopy --config "$T/nocopy.ini" -- rm "$M/secret" 2>"$T/err"
assert_rc 0 "$RC" "a removal beside a planted folder, no copies"
grep -q "unlink of $M/secret could not be kept in the quarantine (the quarantine folder on its mount is refused)" "$T/err" ||
	fail "the removal is not said to be not kept: $(cat "$T/err")"
[ -z "$(ls -A "$M/.lgrun-quarantine")" ] || fail "lgrun wrote into the planted folder"
grep '"event":"session_end"' "$STATE/audit.jsonl" | tail -1 | grep -q '"not_kept":1' ||
	fail "the end record does not count what was not kept"
if grep '"session":"plantednocopy"' "$STATE/audit.jsonl" | grep -q '"event":"quarantine"'; then
	fail "a quarantine record says something is kept when nothing is"
fi

# lgrun's own folder, made by lgrun: used, 0700, root's
rm -rf "${M:?}"/* "$M"/.lgrun-quarantine
printf 'kept\n' >"$M/mine"
sleep 0.05
run_lg --session ownfolder -- rm "$M/mine"
assert_rc 0 "$RC" "a removal with lgrun's own folder"
[ "$(stat -c '%U %a' "$M/.lgrun-quarantine")" = "root 700" ] || fail "the folder: $(stat -c '%U %a' "$M/.lgrun-quarantine")"
[ "$(cat "$M"/.lgrun-quarantine/ownfolder/0/1)" = kept ] || fail "not kept in lgrun's own folder"
pass
