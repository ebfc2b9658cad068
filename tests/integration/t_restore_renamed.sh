#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Names and moves undone (issue 27): content the session renamed away and
# then removed (mv f junk/; rm junk/f, a hidden name) goes back under the
# name it had before the session; pre-existing files moved over others
# (mv -f junk/* data/) go back to their own names (issue 39) and the
# originals are put back, by one restore.
source "$(dirname "$0")/lib.sh"

D=$T/data
mkdir -p "$D" "$T/junk"
for i in 1 2 3 4; do printf 'original %s\n' "$i" >"$D/f$i"; done
printf 'junk 3\n' >"$T/junk/f3"
printf 'junk 4\n' >"$T/junk/f4"
cp -a "$D" "$T/orig"
sleep 0.05
run_lg --session ren1 -- sh -c 'cd "$0"; mv data/f1 junk/old1; mv data/f2 data/.f2.hidden; rm junk/old1 data/.f2.hidden; mv -f junk/f3 junk/f4 data/' "$T"
assert_rc 0 "$RC" "renames, removals and moves over"
[ ! -e "$D/f1" ] && [ "$(cat "$D/f3")" = "junk 3" ] || fail "the session's moves did not happen"
python3 - "$STATE/quarantine/ren1.jsonl" "$T" <<'PY' || fail "the index"
import json, sys
es = {e["path"]: e for e in map(json.loads, open(sys.argv[1]))}
t = sys.argv[2]
assert es[f"{t}/data/f1"]["removed_as"] == f"{t}/junk/old1", es
assert es[f"{t}/data/f2"]["removed_as"] == f"{t}/data/.f2.hidden", es
assert es[f"{t}/data/f3"]["op"] == "rename", es
PY
"$LGCTL" --state-dir "$STATE" restore ren1 >"$T/out" || fail "restore: $(cat "$T/out")"
for i in 1 2 3 4; do
	cmp -s "$T/orig/f$i" "$D/f$i" || fail "f$i is not what it was: $(cat "$T/out")"
done
[ ! -e "$T/junk/old1" ] && [ ! -e "$D/.f2.hidden" ] || fail "restored under the junk names"
# junk/f3 and junk/f4 were there before the session: moved back (issue 39)
[ "$(cat "$T/junk/f3")" = "junk 3" ] && [ "$(cat "$T/junk/f4")" = "junk 4" ] ||
	fail "the files moved over are not back at their names: $(cat "$T/out")"
grep -q "^moved back $T/junk/f3 (from $D/f3)" "$T/out" || fail "no moved back: $(cat "$T/out")"
pass
