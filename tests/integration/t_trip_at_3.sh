#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The main job: a shell loop deleting pre-existing files is stopped at #3,
# files #3..#n survive, the trip is audited and the session is marked killed.
source "$(dirname "$0")/lib.sh"

mkfiles "$T/data" 8
run_lg --session trip3 -- bash -c 'for i in 1 2 3 4 5 6 7 8; do rm "$0/f$i"; done' "$T/data" 2>"$T/err"
assert_rc 86 "$RC" "lgrun on a delete loop"
[ ! -e "$T/data/f1" ] && [ ! -e "$T/data/f2" ] || fail "deletes #1 and #2 should have happened"
for i in 3 4 5 6 7 8; do
	[ -e "$T/data/f$i" ] || fail "f$i was deleted: the loop was not stopped at #3"
done
[ "$(audit_count trip)" = 1 ] || fail "expected exactly one trip record"
grep -q '"summary":"session_killed: volume_exceeded, 3 deletes' "$STATE/audit.jsonl" ||
	fail "the audit summary does not say what happened"
grep -q "\"target\":\"$T/data/f3\"" "$STATE/audit.jsonl" || fail "the refused target is not in the record"
# Every recent event names the program that did it, the first ones too.
python3 - "$STATE/audit.jsonl" <<'PY' || fail "a recent event does not name its program"
import json, sys
trip = [json.loads(l) for l in open(sys.argv[1]) if '"event":"trip"' in l][0]
exes = [e.get("exe") for e in trip["recent"]]
assert len(exes) == 3 and all(x == "rm" for x in exes), exes
PY
# The fields log pipelines read in Falco's alerts, next to lgrun's own.
python3 - "$STATE/audit.jsonl" "$(hostname)" <<'PY' || fail "the Falco-style fields"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
trip = [r for r in recs if r["event"] == "trip"][0]
assert trip["priority"] == "Critical" and trip["source"] == "lgrun", trip
assert trip["output"] == trip["summary"] and trip["hostname"] == sys.argv[2], trip
assert trip["tags"] == ["lgrun", "trip", "volumetric"], trip["tags"]
of = trip["output_fields"]
assert of["proc.name"] == "rm" and of["evt.type"] == "unlink" and of["fd.name"] == trip["target"], of
assert of["lgrun.session"] == "trip3" and of["proc.pid"] == trip["pid"], of
end = [r for r in recs if r["event"] == "session_end"][0]
assert end["priority"] == "Warning" and end["output"] == end["summary"], end
for r in recs:  # every record of the session
    assert {"time", "priority", "output", "source", "hostname", "output_fields"} <= r.keys(), r
PY
# docs/audit.md's jq one-liner: what stopped which agent where
out=$(jq -r 'select(.priority == "Critical") | "\(.time) \(.hostname) \(.output_fields["lgrun.agent"]): \(.output)"' "$STATE/audit.jsonl")
[[ $out == *" $(hostname) bash: session_killed: volume_exceeded, 3 deletes"* ]] || fail "the jq one-liner: $out"
[ -f "$STATE/sessions/trip3.killed" ] || fail "the session is not marked killed"
grep -q "lgctl reset trip3" "$T/err" || fail "stderr does not tell the operator how to reset"
grep -q 'lgrun_trips_total{agent="bash",reason="volume_exceeded"} 1' "$STATE/lgrun.prom" ||
	fail "the trip counter was not written"
pass
