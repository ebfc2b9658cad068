#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A root tree can undo the read-only bind over lgrun's state and append to
# its quarantine index (issue 39 item 12): a later root lgctl restore must
# not believe what lgrun did not write. Each line lgrun writes is signed
# with a key of the run that lives only in its memory; at the run's end the
# digests of the lines that verify are sealed in SESSION.runs (rewritten
# from what it held at the run's start); restore believes only those.
# Here "the tree" writes from outside lgrun while the session runs, as a
# root agent past the bind would.
source "$(dirname "$0")/lib.sh"
need_cmd python3

P=$T/p
mkdir -p "$P" "$T/secret"
chmod 700 "$T/secret"
for i in 1 2 3 4; do echo "data $i" >"$P/f$i"; done
echo "root's own" >"$T/secret/keep"
sleep 0.05

# the session removes two files, then waits while "the tree" forges
"$LGRUN" --state-dir "$STATE" --session forge1 -- sh -c 'rm "$0/f1" "$0/f2"; sleep 2' "$P" &
LG=$!
IDX=$STATE/quarantine/forge1.jsonl
for _ in $(seq 100); do [ "$(grep -c '"kind":"file"' "$IDX" 2>/dev/null)" = 2 ] && break; sleep 0.05; done
[ "$(grep -c '"kind":"file"' "$IDX")" = 2 ] || fail "the two removals are not in the index"
grep -q '"mac":"[0-9a-f]\{64\}"}$' "$IDX" || fail "the index lines are not signed"
# a running session's index is not sealed yet: restore refuses it
"$LGCTL" --state-dir "$STATE" restore forge1 >"$T/live" 2>&1 && fail "a running session was restored: $(cat "$T/live")"
grep -q "is running" "$T/live" || fail "not said why: $(cat "$T/live")"
python3 - "$IDX" "$T" "$STATE/quarantine/forge1.runs" <<'PY'
import json, os, sys, hashlib
idx, t, runs = sys.argv[1:4]
lines = open(idx).read().splitlines()
e = json.loads(lines[0])
# a planted file in the session's own quarantine folder
kept = os.path.join(os.path.dirname(e["kept"]), "999")
open(kept, "w").write("the tree's content\n")
os.chmod(kept, 0o600)
forged = []
# 1. a copy of a genuine line, mac and all, its path into root's folder
f1 = dict(e, path=t + "/secret/keep", kept=kept, n=98)
forged.append(json.dumps(f1, separators=(",", ":")))
# 2. a genuine line with only its path changed (the mac left as it was)
forged.append(lines[1].replace(json.loads(lines[1])["path"], t + "/secret/planted"))
# 3. an unsigned line
f3 = dict(e, path=t + "/secret/unsigned", kept=kept, n=99)
f3.pop("mac", None)
forged.append(json.dumps(f3, separators=(",", ":")))
with open(idx, "a") as f:
    f.write("\n".join(forged) + "\n")
# and their digests "sealed" in SESSION.runs before lgrun's end
d = [hashlib.sha256(l.encode()).hexdigest()[:32] for l in forged]
with open(runs, "a") as f:
    f.write(json.dumps({"start_ns": 1, "end_ns": 2, "lines": d}) + "\n")
PY
wait $LG
"$LGCTL" --state-dir "$STATE" restore forge1 >"$T/out" 2>&1
[ "$(cat "$T/secret/keep")" = "root's own" ] || fail "a forged line overwrote root's file: $(cat "$T/out")"
[ ! -e "$T/secret/planted" ] && [ ! -e "$T/secret/unsigned" ] || fail "a forged line wrote into root's folder: $(cat "$T/out")"
[ "$(grep -c "^refused   $T/secret/.*not one lgrun sealed" "$T/out")" = 3 ] || fail "the forged lines are not refused: $(cat "$T/out")"
for i in 1 2; do [ "$(cat "$P/f$i")" = "data $i" ] || fail "f$i not restored: $(cat "$T/out")"; done
grep -q '"start_ns":1,' "$STATE/quarantine/forge1.runs" && fail "what the tree wrote into SESSION.runs survived the run's end"

# a session that keeps nothing, for which "the tree" writes an index and
# seals its digests itself: lgrun's end puts SESSION.runs back as it was
# (none), and restore believes nothing of it
"$LGRUN" --state-dir "$STATE" --session forge3 -- sleep 1.5 &
LG=$!
sleep 0.5
python3 - "$STATE/quarantine" "$T" "$IDX" <<'PY'
import json, os, sys, hashlib
q, t, real = sys.argv[1:4]
e = json.loads(open(real).read().splitlines()[0])
e.update(session="forge3", path=t + "/secret/own")
e.pop("mac", None)
line = json.dumps(e, separators=(",", ":"))
open(q + "/forge3.jsonl", "w").write(line + "\n")
d = hashlib.sha256(line.encode()).hexdigest()[:32]
open(q + "/forge3.runs", "w").write(json.dumps({"start_ns": 1, "end_ns": 2, "lines": [d]}) + "\n")
PY
wait $LG
[ ! -e "$STATE/quarantine/forge3.runs" ] || fail "the tree's SESSION.runs survived a run that kept nothing: $(cat "$STATE/quarantine/forge3.runs")"
"$LGCTL" --state-dir "$STATE" restore forge3 >"$T/out3" 2>&1 && fail "a planted index was restored: $(cat "$T/out3")"
grep -q "not sealed by lgrun" "$T/out3" || fail "not said: $(cat "$T/out3")"
[ ! -e "$T/secret/own" ] || fail "a planted index wrote into root's folder"

# a line lgrun's watchdog writes after lgrun died is sealed too
mkdir -p "$T/q"
for i in 1 2; do echo "lost $i" >"$T/q/g$i"; done
sleep 0.05
"$LGRUN" --state-dir "$STATE" --session forge2 -- bash -c 'rm "$0/g1" "$0/g2" && kill -9 $LGRUN_SUPERVISOR_PID; sleep 30' "$T/q" 2>/dev/null
for _ in $(seq 100); do [ -s "$STATE/quarantine/forge2.runs" ] && break; sleep 0.05; done
"$LGCTL" --state-dir "$STATE" restore forge2 >"$T/out2" 2>&1 || fail "restore after lgrun died: $(cat "$T/out2")"
[ "$(cat "$T/q/g1" "$T/q/g2")" = "lost 1
lost 2" ] || fail "not restored after lgrun died: $(cat "$T/out2")"
pass
