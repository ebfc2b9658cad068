#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A session id run again is another run (issue 39 item 10): run 1 of
# --session nightly changes f1, the user then edits f1, run 2 of the same
# id does nothing. A restore of nightly must not take the user's f1 for
# the session's version (it set it aside, with 0 conflicts): it is a
# conflict, left as it is. With two runs that kept something, restore
# undoes the last one, --run 1 the first (a run that kept nothing has no
# line in the index: runs are numbered among those that kept something).
source "$(dirname "$0")/lib.sh"

P=$T/p
mkdir -p "$P"
echo original >"$P/f1"
echo two >"$P/f2"
sleep 0.05
run_lg --session nightly -- sh -c 'echo "run 1" >"$0/f1"' "$P"
assert_rc 0 "$RC" "run 1"
sleep 0.05
echo "the user's edit" >"$P/f1"
sleep 0.05
run_lg --session nightly -- true
assert_rc 0 "$RC" "run 2"
"$LGCTL" --state-dir "$STATE" restore nightly >"$T/out" 2>&1
[ "$(cat "$P/f1")" = "the user's edit" ] || fail "the user's edit was replaced: $(cat "$T/out")"
grep -q "^conflict  $P/f1 exists" "$T/out" || fail "no conflict said: $(cat "$T/out")"
grep -q "^set aside" "$T/out" && fail "the user's edit was set aside as the session's: $(cat "$T/out")"

# run 3 changes f2: restore undoes run 3 (f2 back), --run 1 is run 1's
sleep 0.05
run_lg --session nightly -- sh -c 'echo "run 3" >"$0/f2"' "$P"
"$LGCTL" --state-dir "$STATE" restore nightly >"$T/out3" 2>&1 || fail "restore of run 3: $(cat "$T/out3")"
[ "$(cat "$P/f2")" = two ] || fail "f2 not back: $(cat "$T/out3")"
grep -q "^run .*has 2 runs that kept something: restoring run 2 of them" "$T/out3" ||
	fail "which run is restored is not said: $(cat "$T/out3")"
[ "$(cat "$P/f1")" = "the user's edit" ] || fail "run 3's restore touched f1"
"$LGCTL" --state-dir "$STATE" restore --run 1 --dry-run nightly >"$T/out1" 2>&1
grep -q "^conflict  $P/f1 exists" "$T/out1" || fail "--run 1: $(cat "$T/out1")"
"$LGCTL" --state-dir "$STATE" restore --run 7 nightly >"$T/out7" 2>&1 && fail "--run 7 accepted"
grep -q "has 2 run(s) on record" "$T/out7" || fail "--run 7: $(cat "$T/out7")"
pass
