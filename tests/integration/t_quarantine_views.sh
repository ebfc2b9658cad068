#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Every view of a file is covered (issue 27): what the tree removes or
# overwrites through a bind mount in its own mount namespace (unshare -m,
# bwrap --bind), or at a depth past PATH_MAX, is kept from the tree's own
# view (a copy, or a link where lgrun's mount is the same), recorded at its
# path in lgrun's view (with the tree's as tree_path), and restored there
# byte for byte by one lgctl restore.
source "$(dirname "$0")/lib.sh"
need_root "makes mount namespaces and bind mounts"
need_cmd unshare
need_cmd bwrap

# 1. unshare -m + mount --bind data project
mkdir -p "$T/data" "$T/project"
for i in 1 2 3; do head -c 3000 /dev/urandom >"$T/data/f$i"; done
cp -a "$T/data" "$T/orig"
sleep 0.05
run_lg --session bind1 -- unshare -m sh -c 'mount --bind "$0/data" "$0/project" && rm "$0/project/f1" "$0/project/f2" && echo session >"$0/project/f3"' "$T"
assert_rc 0 "$RC" "removals through a bind mount"
[ ! -e "$T/data/f1" ] && [ "$(cat "$T/data/f3")" = session ] || fail "the session's changes did not happen"
python3 - "$STATE/quarantine/bind1.jsonl" "$T" <<'PY' || fail "the index of bind1"
import json, sys
es = [json.loads(l) for l in open(sys.argv[1])]
t = sys.argv[2]
assert [(e["path"], e["tree_path"]) for e in es] == [
    (f"{t}/data/f{i}", f"{t}/project/f{i}") for i in (1, 2, 3)], es
PY
if grep '"session":"bind1"' "$STATE/audit.jsonl" | grep -q '"not_kept":[1-9]'; then
	fail "something was not kept"
fi
"$LGCTL" --state-dir "$STATE" restore bind1 >"$T/out" || fail "restore bind1: $(cat "$T/out")"
for i in 1 2 3; do cmp -s "$T/orig/f$i" "$T/data/f$i" || fail "f$i is not restored: $(cat "$T/out")"; done
[ -z "$(ls -A "$T/project")" ] || fail "restore wrote at the tree's path: $(ls "$T/project")"

# 2. bwrap --bind data /project (the usual sandbox of an agent)
mkdir -p "$T/w"
for i in 1 2; do printf 'bwrap %s\n' "$i" >"$T/w/g$i"; done
cp -a "$T/w" "$T/worig"
sleep 0.05
run_lg --session bind2 -- bwrap --dev-bind / / --bind "$T/w" /mnt sh -c 'rm /mnt/g1; : >/mnt/g2'
assert_rc 0 "$RC" "removals in bwrap"
[ ! -e "$T/w/g1" ] && [ ! -s "$T/w/g2" ] || fail "bwrap's changes did not happen"
"$LGCTL" --state-dir "$STATE" restore bind2 >"$T/out" || fail "restore bind2: $(cat "$T/out")"
cmp -s "$T/worig/g1" "$T/w/g1" && cmp -s "$T/worig/g2" "$T/w/g2" || fail "bwrap's files are not restored: $(cat "$T/out")"

# 3. rm -rf of a tree deeper than PATH_MAX
python3 - "$T/deep" <<'PY'
import os, sys
os.makedirs(sys.argv[1])
os.chdir(sys.argv[1])
for i in range(25):
    os.mkdir("d" * 200)
    os.chdir("d" * 200)
open("leaf", "w").write("deep data\n")
PY
sleep 0.05
run_lg --session deep1 --profile bulk-cleanup -- rm -rf "$T/deep/$(printf 'd%.0s' $(seq 200))"
assert_rc 0 "$RC" "rm -rf past PATH_MAX"
[ -z "$(ls -A "$T/deep")" ] || fail "rm -rf did not remove the tree"
grep '"session":"deep1"' "$STATE/audit.jsonl" | grep '"session_end"' | grep -q '"kept_files":1,"kept_dirs":25' ||
	fail "the deep tree is not kept: $(grep '"session":"deep1"' "$STATE/audit.jsonl" | grep session_end)"
"$LGCTL" --state-dir "$STATE" restore deep1 >"$T/out" || fail "restore deep1: $(tail -3 "$T/out")"
python3 - "$T/deep" <<'PY' || fail "the deep file is not back"
import os, sys
os.chdir(sys.argv[1])
for i in range(25):
    os.chdir("d" * 200)
assert open("leaf").read() == "deep data\n"
PY

# 4. The same name in lgrun's view is another file: the tree removes
# data/h1 through a bind mount at shadow/, where lgrun's view holds a
# file h1 of its own. lgrun links by its view's path, from the directory
# it opens: that is another directory (its inode), so the link is checked,
# found another inode, and the tree's own file is kept instead. lgrun's
# shadow/h1 is left alone.
mkdir -p "$T/hdata" "$T/shadow"
head -c 3000 /dev/urandom >"$T/hdata/h1" && cp "$T/hdata/h1" "$T/h1.orig"
echo "lgrun's view, not the tree's" >"$T/shadow/h1"
sleep 0.05
run_lg --session shadow1 -- unshare -m sh -c 'mount --bind "$0/hdata" "$0/shadow" && rm "$0/shadow/h1"' "$T"
assert_rc 0 "$RC" "a removal through a bind mount over a same-named file"
[ ! -e "$T/hdata/h1" ] || fail "the tree's removal did not happen"
[ "$(cat "$T/shadow/h1")" = "lgrun's view, not the tree's" ] || fail "lgrun's view's file changed"
python3 - "$STATE/quarantine/shadow1.jsonl" "$T" <<'PY' || fail "the index of shadow1"
import json, sys
es = [json.loads(l) for l in open(sys.argv[1])]
t = sys.argv[2]
assert [(e["path"], e.get("tree_path")) for e in es] == [
    (f"{t}/hdata/h1", f"{t}/shadow/h1")], es
assert open(es[0]["kept"], "rb").read() == open(f"{t}/h1.orig", "rb").read(), "kept the wrong file"
PY
"$LGCTL" --state-dir "$STATE" restore shadow1 >"$T/out" || fail "restore shadow1: $(cat "$T/out")"
cmp -s "$T/h1.orig" "$T/hdata/h1" || fail "h1 is not restored: $(cat "$T/out")"
[ "$(cat "$T/shadow/h1")" = "lgrun's view, not the tree's" ] || fail "restore wrote over lgrun's view's file"
pass
