#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Nothing a session overwrites is lost (issue 27): with the default config
# the content from before the session of every pre-existing file the tree
# opens for writing is kept once, before the open runs (a reflink or a
# copy, with the original's mode and times), and never counted. Each class
# of in-place change is checked against the kept copy, byte for byte.
# Plain reads, appends, new files and ignored paths cost nothing; the
# session's writes to lgrun's own state are refused.
source "$(dirname "$0")/lib.sh"
need_cmd python3
need_cmd fallocate
need_cmd shred

D=$T/data
mkdir -p "$D" "$T/junk"
classes="redirect colon cpnull cpdir pyw dd rplusb mmap shred punch collapse zero trunc excl shrink"
for c in $classes; do head -c 65536 /dev/urandom >"$D/$c"; done
printf 'junk\n' >"$T/junk/cpdir"
printf 'log line\n' >"$D/app.log"
printf 'read me\n' >"$D/readonly"
printf 'twice\n' >"$D/twice"
printf 'object\n' >"$D/x.o"
chmod 640 "$D/pyw"
touch -d '2021-03-04 05:06:07.123456789' "$D/dd"
cp -a "$D" "$T/orig"
sleep 0.05

# Three of these empty a file and leave it so (colon, cpnull, trunc): that
# destroys their data (counted: trunc at once, the two others when the tree
# is over), three in a minute. Three more cut 64 KiB of data to a few bytes
# (redirect, cpdir, pyw): stubs, counted as emptying is (issue 41). The
# rest are overwrites, never counted: with max_ops raised, no trip.
printf '[volumetric]\nmax_ops = 10\n' >"$T/ten.ini"
run_lg --session kw --config "$T/ten.ini" -- bash -c '
cd "$0"
echo new >redirect
: >colon
cp /dev/null cpnull
cp -r ../junk/. .
python3 -c "open(\"pyw\", \"w\").write(\"python\")"
dd if=/dev/zero of=dd bs=1 count=100 seek=10 conv=notrunc 2>/dev/null
python3 -c "f = open(\"rplusb\", \"r+b\"); f.seek(5); f.write(b\"XYZ\")"
python3 -c "
import mmap
with open(\"mmap\", \"r+b\") as f:
    m = mmap.mmap(f.fileno(), 0)
    m[0:4] = b\"MMAP\"
    m.flush()
"
shred -n 1 shred
fallocate --punch-hole -o 0 -l 4096 punch
fallocate --collapse-range -o 0 -l 4096 collapse
fallocate --zero-range -o 0 -l 4096 zero
truncate -s 0 trunc
python3 -c "import os; fd = os.open(\"excl\", os.O_WRONLY | os.O_EXCL); os.write(fd, b\"EXCL\")"
python3 -c "import os; os.truncate(\"shrink\", 100)"
cat readonly >/dev/null
echo more >>app.log
echo one >twice
echo two >twice
echo made >made-now
echo again >made-now
echo obj >x.o
' "$D"
assert_rc 0 "$RC" "the in-place writes"
assert_no_trip "overwrites are never counted"
grep '"session":"kw"' "$STATE/audit.jsonl" | grep '"event":"session_end"' |
	grep -q '"left_empty":5' ||
	fail "the two files left empty and the three stubs are not counted at the end: $(grep '"session":"kw"' "$STATE/audit.jsonl" | tail -1)"
# the writes happened
[ "$(cat "$D/redirect")" = new ] && [ ! -s "$D/colon" ] && [ "$(cat "$D/cpdir")" = junk ] &&
	[ "$(cat "$D/pyw")" = python ] || fail "the session's writes did not happen"
cmp -s "$D/dd" "$T/orig/dd" && fail "dd did not change the file"

IDX=$STATE/quarantine/kw.jsonl
[ -f "$IDX" ] || fail "no quarantine index"
python3 - "$IDX" "$T/orig" "$D" "$classes" <<'PY' || fail "the kept copies"
import json, os, sys
idx, orig, data, classes = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4].split()
lines = [json.loads(l) for l in open(idx)]
# what the session made is a name in the index (kind made), nothing kept
made = {os.path.basename(e["path"]) for e in lines if e["kind"] == "made"}
assert "made-now" in made, made
entries = [e for e in lines if e["kind"] == "file"]
by = {}
for e in entries:
    by.setdefault(os.path.basename(e["path"]), []).append(e)
for c in classes + ["twice"]:
    es = by.get(c)
    assert es, f"{c}: not kept"
    assert len(es) == 1, f"{c}: kept {len(es)} times"
    e = es[0]
    want = open(os.path.join(orig, c), "rb").read()
    got = open(e["kept"], "rb").read()
    assert got == want, f"{c}: the kept copy is not the content from before"
    st, ost = os.stat(e["kept"]), os.stat(os.path.join(orig, c))
    assert st.st_mode == ost.st_mode, f"{c}: mode {oct(st.st_mode)} != {oct(ost.st_mode)}"
    assert st.st_mtime_ns == ost.st_mtime_ns, f"{c}: mtime"
    assert e["kept_size"] == len(want) and e["kept_ino"] == st.st_ino, f"{c}: kept facts {e}"
    assert e["start_ns"] > 0 and e["ctime_ns"] > 0 and e["dev"] > 0, e
for c in ["readonly", "app.log", "made-now", "x.o"]:
    assert c not in by, f"{c} was kept: {by[c]}"
ops = {os.path.basename(e["path"]): e["op"] for e in entries}
assert ops["redirect"] == "open_trunc" and ops["dd"] == "open_write", ops
# truncate(1) opens for writing first: kept then, once
assert ops["trunc"] == "open_write", ops
# O_EXCL without O_CREAT opens an existing file all the same
assert ops["excl"] == "open_write", ops
# truncate(2) by its path, to a length > 0: no open first
assert ops["shrink"] == "shrink", ops
PY
grep '"event":"session_end"' "$STATE/audit.jsonl" | grep -q '"kept_writes":16' ||
	fail "the end record does not count the kept writes: $(grep session_end "$STATE/audit.jsonl")"

# One restore undoes every class in place: content, mode and times.
"$LGCTL" --state-dir "$STATE" restore kw >"$T/restore.out" || fail "restore: $(cat "$T/restore.out")"
for c in $classes twice; do
	cmp -s "$T/orig/$c" "$D/$c" || fail "$c is not restored byte for byte: $(cat "$T/restore.out")"
	[ "$(stat -c '%a %Y' "$T/orig/$c")" = "$(stat -c '%a %Y' "$D/$c")" ] ||
		fail "$c: mode or mtime $(stat -c '%a %y' "$D/$c"), was $(stat -c '%a %y' "$T/orig/$c")"
done
grep -q "^set aside $D/dd: the session's version" "$T/restore.out" || fail "the session's versions are not set aside: $(cat "$T/restore.out")"

# The tree cannot forge its own quarantine: writes there are refused.
run_lg --session kw2 -- python3 -c '
import sys
try:
    open(sys.argv[1], "r+").write("{}")
    print("written")
except OSError as e:
    print("refused", e.errno)
' "$IDX" >"$T/kw2.out" 2>"$T/kw2.err"
grep -q "^refused 1$" "$T/kw2.out" || fail "a write to the index: $(cat "$T/kw2.out" "$T/kw2.err")"
grep -q "refused a write to $IDX by python3" "$T/kw2.err" || fail "the refusal is not said: $(cat "$T/kw2.err")"
python3 -c 'import json,sys; [json.loads(l) for l in open(sys.argv[1])]' "$IDX" ||
	fail "the index was altered by a session"

# keep_writes = false: nothing leaves the kernel for a write
printf 'off\n' >"$T/off"
printf '[quarantine]\nkeep_writes = false\n' >"$T/off.ini"
sleep 0.05
run_lg --session kw3 --config "$T/off.ini" -- sh -c 'echo changed >"$0"' "$T/off"
assert_rc 0 "$RC" "keep_writes off"
[ ! -e "$STATE/quarantine/kw3.jsonl" ] || fail "keep_writes = false kept: $(cat "$STATE/quarantine/kw3.jsonl")"
pass
