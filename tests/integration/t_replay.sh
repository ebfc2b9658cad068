#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What-if: lgrun records what its guard saw ([record] events, on by
# default); `lgctl replay` runs it through the guard again. Under the
# session's own config it finds the trip that happened, where it happened;
# under a raised threshold, none; an observe-mode session shows where it
# would have stopped; the run's options (--timeout) count as they did; a
# bounded recording says what it dropped; a broken line is skipped.
source "$(dirname "$0")/lib.sh"

replay() { # args...: output in $T/out, status in RC
	"$LGCTL" --state-dir "$STATE" replay "$@" >"$T/out" 2>&1
	RC=$?
}

# 1. The same config: the recorded trip, at the same event, same rule.
mkfiles "$T/data" 8
run_lg --session rp1 -- bash -c 'for i in 1 2 3 4 5 6 7 8; do rm "$0/f$i"; done' "$T/data" 2>/dev/null
assert_rc 86 "$RC" "the delete loop"
[ -f "$STATE/sessions/rp1.events.jsonl" ] || fail "no recording"
replay rp1
assert_rc 1 "$RC" "replay under the session's config: $(cat "$T/out")"
grep -q "trips at event 4 (.*): kill by volumetric (volume_exceeded): volume_exceeded, 3 deletes of pre-existing files" "$T/out" ||
	fail "not the recorded trip: $(cat "$T/out")"
grep -q "as recorded: the session tripped there" "$T/out" || fail "not compared with the recording: $(cat "$T/out")"
# the note to the model one step short ([steer], issue 28) is replayed too
grep -q "1 note(s) for the model (\[steer\]) before it; the first:" "$T/out" &&
	grep -q "decided at event 3 (.*): volumetric (volume_near): 2 deletes of pre-existing files" "$T/out" ||
	fail "the note at the 2nd removal is not replayed: $(cat "$T/out")"
# what the audit says was refused is what the replay refuses
want=$(python3 -c 'import json,sys; print([json.loads(l) for l in open(sys.argv[1]) if "\"event\":\"trip\"" in l][0]["summary"].split(": ",1)[1])' "$STATE/audit.jsonl")
grep -qF "$want" "$T/out" || fail "the replay's summary is not the trip's ($want): $(cat "$T/out")"

# 2. A raised threshold: no trip (and it says the recording stops there).
printf '[volumetric]\nmax_ops = 10\n' >"$T/high.ini"
replay rp1 --config "$T/high.ini"
assert_rc 0 "$RC" "replay with max_ops = 10: $(cat "$T/out")"
grep -q "no trip: every event passes" "$T/out" || fail "no-trip not said: $(cat "$T/out")"
grep -q "recorded: tripped at event 4" "$T/out" || fail "the recorded trip is not named: $(cat "$T/out")"

# 3. Observe mode, the tuning path: where it would have stopped.
mkfiles "$T/obs" 6
run_lg --session rp2 --observe -- bash -c 'rm "$0"/f*' "$T/obs" 2>/dev/null
assert_rc 0 "$RC" "observe mode"
replay rp2
assert_rc 1 "$RC" "replay of an observe session: $(cat "$T/out")"
grep -q "trips at event 4 .* by volumetric" "$T/out" && grep -q "observe mode" "$T/out" ||
	fail "observe replay: $(cat "$T/out")"
replay rp2 --config "$T/high.ini"
assert_rc 0 "$RC" "observe session, max_ops = 10: $(cat "$T/out")"

# 4. The run's options are part of what it ran under: --timeout trips again.
run_lg --session rp3 --timeout 1s -- sleep 3 2>/dev/null
[ "$RC" != 0 ] || fail "--timeout 1s did not stop sleep 3"
replay rp3
assert_rc 1 "$RC" "replay of a timed-out session: $(cat "$T/out")"
grep -q "by budget (timeout)" "$T/out" || fail "the timeout is not replayed: $(cat "$T/out")"

# 5. Bounded: past half of max_bytes the oldest part goes, and replay says so.
printf '[record]\nmax_bytes = 8K\n[volumetric]\nmax_ops = 1000\n[same_target]\nmax = 1000\n[budget]\nmax_destructive_ops = 0\n' >"$T/small.ini"
mkfiles "$T/many" 120
run_lg --session rp4 --config "$T/small.ini" -- rm -r "$T/many" 2>/dev/null
assert_rc 0 "$RC" "120 removals"
[ -f "$STATE/sessions/rp4.events.old.jsonl" ] || fail "no old part"
size=$(($(stat -c %s "$STATE/sessions/rp4.events.jsonl") + $(stat -c %s "$STATE/sessions/rp4.events.old.jsonl")))
[ "$size" -le $((8192 + 2048)) ] || fail "the recording is not bounded: $size bytes"
replay rp4 --config "$T/small.ini"
assert_rc 0 "$RC" "bounded replay: $(cat "$T/out")"
grep -q "oldest events were dropped" "$T/out" || fail "the dropped part is not said: $(cat "$T/out")"

# 6. A broken line is counted and skipped; [record] events = false records nothing.
cp "$STATE/sessions/rp1.events.jsonl" "$T/keep.jsonl"
sed -i '3i {"t": broken' "$STATE/sessions/rp1.events.jsonl"
replay rp1
assert_rc 1 "$RC" "replay with a broken line: $(cat "$T/out")"
grep -q "1 line(s) of the recording were not understood" "$T/out" || fail "the broken line is not counted: $(cat "$T/out")"
printf '[record]\nevents = false\n' >"$T/off.ini"
run_lg --session rp5 --config "$T/off.ini" -- true
[ ! -e "$STATE/sessions/rp5.events.jsonl" ] || fail "[record] events = false recorded"
replay rp5
assert_rc 2 "$RC" "replay without a recording"
grep -q "no recording of session 'rp5'" "$T/out" || fail "$(cat "$T/out")"
# ids that are not session ids never make paths
for cmd in replay suggest report; do
	"$LGCTL" --state-dir "$STATE" $cmd ../../etc/passwd >"$T/out" 2>&1
	[ $? = 2 ] && grep -q "'../../etc/passwd' is not a valid session id" "$T/out" || fail "$cmd took a path for an id: $(cat "$T/out")"
done

# 6b. A target that came back leaves the window, and the replay sees it so:
# only the answer "it came back" is recorded (every other ask replays as
# "still gone", the answer it had), and both agree there was no trip.
mkfiles "$T/back" 3
run_lg --session rp6 -- bash -c 'rm "$0/f1"; rm "$0/f2"; echo again >"$0/f1"; rm "$0/f3"' "$T/back" 2>/dev/null
assert_rc 0 "$RC" "a removal whose target came back is no step toward the trip"
[ "$(grep -c '"k":"restored".*"answer":true' "$STATE/sessions/rp6.events.jsonl")" = 1 ] ||
	fail "the answer 'it came back' is not recorded once: $(grep restored "$STATE/sessions/rp6.events.jsonl")"
! grep -q '"answer":false' "$STATE/sessions/rp6.events.jsonl" ||
	fail "'still gone' answers are recorded: $(grep -c '"answer":false' "$STATE/sessions/rp6.events.jsonl")"
replay rp6
assert_rc 0 "$RC" "the replay of a session whose target came back: $(cat "$T/out")"
grep -q "no trip: every event passes" "$T/out" || fail "$(cat "$T/out")"
# without the answer, the replay would have tripped there
grep -v '"k":"restored"' "$STATE/sessions/rp6.events.jsonl" >"$T/noans.jsonl"
cp "$T/noans.jsonl" "$STATE/sessions/rp6.events.jsonl"
replay rp6
assert_rc 1 "$RC" "the replay without the recorded answer: $(cat "$T/out")"

# 7. suggest: from legit sessions (observed), thresholds that pass them all
# with the margin; the fragment loads as a config and every session replays
# under it without a trip.
for n in 5 4 7; do
	mkfiles "$T/sg$n" "$n"
	run_lg --session sg$n --observe -- bash -c 'rm "$0"/f*' "$T/sg$n" 2>/dev/null
done
"$LGCTL" --state-dir "$STATE" suggest sg5 sg4 sg7 >"$T/frag.ini" 2>"$T/err" || fail "suggest: $(cat "$T/err")"
grep -q "^max_ops = 12$" "$T/frag.ini" && grep -q "^; 8 passes them all (it was 3; first needed by sg5)$" "$T/frag.ini" ||
	fail "not the thresholds expected (7 removals need max_ops 8, +50%): $(cat "$T/frag.ini")"
run_lg --config "$T/frag.ini" -- true
assert_rc 0 "$RC" "lgrun with the suggested fragment as its config"
for n in 5 4 7; do
	replay sg$n --config "$T/frag.ini"
	assert_rc 0 "$RC" "sg$n under the suggestion: $(cat "$T/out")"
done
"$LGCTL" --state-dir "$STATE" suggest sg7 --margin 0 >"$T/frag0.ini" || fail "suggest --margin 0"
grep -q "^max_ops = 8$" "$T/frag0.ini" || fail "margin 0: the least value that passes: $(cat "$T/frag0.ini")"
"$LGCTL" --state-dir "$STATE" suggest sg7 --margin lots >/dev/null 2>"$T/err"
[ $? = 2 ] && grep -q "not a fraction" "$T/err" || fail "a bad margin: $(cat "$T/err")"
pass
