#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Removals that are not counted but still take pre-existing data off its
# path are kept first (issue 29): a compressor's originals (class
# transformed) and an MCP filesystem server's unlink of the path its
# delete_file got (class tool_deleted, the tool delete counted once). The
# recording says the class, and one lgctl restore puts every original back
# byte for byte. A venv's own files are regenerable (class ignored): not
# counted, like node_modules/, but kept all the same (issue 39), and put
# back with the rest.
source "$(dirname "$0")/lib.sh"
need_cmd python3
need_cmd gzip
need_cmd xz

D=$T/tree
mkdir -p "$D/logs" "$D/proj"
for i in 1 2 3 4 5; do seq 1 $((i * 300)) >"$D/logs/app$i.log"; done
for i in 1 2; do printf 'stale %s\n' $i >"$D/proj/old$i.csv"; done
python3 -m venv --without-pip "$D/venv" || skip "python3 -m venv does not work"
cp -a "$D" "$T/orig"
sleep 0.05

# 1. Five originals gzipped, two xz'ed back and forth, two MCP deletes.
run_lg --session unc1 -- bash -c '
set -e
gzip "$0"/logs/app1.log "$0"/logs/app2.log "$0"/logs/app3.log
xz "$0"/logs/app4.log "$0"/logs/app5.log
python3 - "$1" "$0/proj" <<PY
import json, subprocess, sys
srv = subprocess.Popen([sys.executable, sys.argv[1] + "/mcp_fs_server.py", "--root", sys.argv[2]],
                       stdin=subprocess.PIPE, stdout=subprocess.PIPE)
def call(i, name, args):
    srv.stdin.write((json.dumps({"jsonrpc": "2.0", "id": i, "method": "tools/call",
                                 "params": {"name": name, "arguments": args}}) + "\n").encode())
    srv.stdin.flush()
    r = json.loads(srv.stdout.readline())
    assert not r["result"]["isError"], r
call(1, "delete_file", {"path": "old1.csv"})
call(2, "delete_file", {"path": sys.argv[2] + "/old2.csv"})
PY
rm -rf "$0/venv"
' "$D" "$TOOLS" >"$T/out" 2>"$T/err"
assert_rc 0 "$RC" "compressing, two MCP deletes and a venv's removal: $(tail -3 "$T/err")"
assert_no_trip "unc1"
REC=$STATE/sessions/unc1.events.jsonl
[ -f "$REC" ] || fail "no recording"
python3 - "$REC" "$D" <<'PY' || fail "the recorded classes"
import json, sys
evs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
d = sys.argv[2]
cls = {}
for ev in evs:
    if ev.get("k") == "destructive" and ev.get("target"):
        cls.setdefault(ev["target"], []).append(ev.get("cls"))
for i in range(1, 6):
    assert cls.get(f"{d}/logs/app{i}.log") == ["transformed"], (i, cls.get(f"{d}/logs/app{i}.log"))
for i in (1, 2):
    assert cls.get(f"{d}/proj/old{i}.csv") == ["tool_deleted"], (i, cls.get(f"{d}/proj/old{i}.csv"))
tool = [t for t in cls if t.startswith("path=")]
assert len(tool) == 2 and all(cls[t] == ["destroy"] for t in tool), tool
venv = [c for t, cs in cls.items() if t.startswith(d + "/venv") for c in cs]
assert venv and all(c in ("ignored", "no_data", "harmless") for c in venv), set(venv)
PY

# 2. Kept: the five originals and the two deleted files; the venv's files
# too (issue 39: every pre-existing name is kept, whatever counts).
n=$(grep '"kind":"file"' "$STATE/quarantine/unc1.jsonl" | grep -vc '"path":"[^"]*/venv')
[ "$n" = 7 ] || fail "the quarantine holds $n entries outside the venv, expected 7: $(cut -c1-200 "$STATE/quarantine/unc1.jsonl")"
grep -q '"path":"[^"]*/venv/pyvenv.cfg"' "$STATE/quarantine/unc1.jsonl" ||
	fail "the venv's pyvenv.cfg was not kept"

# 3. One restore puts them back, byte for byte.
"$LGCTL" --state-dir "$STATE" restore unc1 >"$T/restore" 2>&1 || fail "restore: $(cat "$T/restore")"
for f in logs/app1.log logs/app2.log logs/app3.log logs/app4.log logs/app5.log proj/old1.csv proj/old2.csv venv/pyvenv.cfg; do
	cmp -s "$T/orig/$f" "$D/$f" || fail "$f not restored: $(cat "$T/restore")"
done
pass
