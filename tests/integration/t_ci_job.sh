#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The CI recipe's script (ci/lgrun-job.sh, docs/ci.md's GitHub Actions and
# GitLab CI jobs run it): an agent stopped by the guard fails the job with
# 86 and leaves the audit, the recording, status, replay and alerts; a
# legitimate one passes and leaves the same.
source "$(dirname "$0")/lib.sh"

job() { # artifacts dir, command...
	local dir=$1
	shift
	(cd "$T" && LGRUN="$LGRUN" LGCTL="$LGCTL" LGRUN_ARTIFACTS="$dir" LGRUN_SESSION=job-${dir##*/} \
		GITHUB_ACTIONS=true bash "$LG_ROOT/ci/lgrun-job.sh" -- "$@" >"$dir.out" 2>"$dir.err")
	RC=$?
}

mkfiles "$T/data" 6
job "$T/a1" bash -c 'for f in "$0"/f*; do rm "$f"; done' "$T/data"
assert_rc 86 "$RC" "the job of a runaway agent"
for f in audit.jsonl job-a1.events.jsonl status.txt replay.txt report.html alerts.txt; do
	[ -s "$T/a1/$f" ] || fail "no artifact $f: $(ls "$T/a1")"
done
grep -q '"event":"trip"' "$T/a1/audit.jsonl" || fail "no trip in the audit artifact"
grep -q "as recorded: the session tripped there" "$T/a1/replay.txt" || fail "replay: $(cat "$T/a1/replay.txt")"
grep -q "^session_killed: volume_exceeded, 3 deletes" "$T/a1/alerts.txt" || fail "alerts: $(cat "$T/a1/alerts.txt")"
grep -q "^::error::lgrun stopped the agent: session_killed: volume_exceeded" "$T/a1.out" ||
	fail "no GitHub annotation: $(cat "$T/a1.out")"
grep -q '"profile":"ci"' "$T/a1/job-a1.events.jsonl" || fail "not run under --profile ci"

job "$T/a2" bash -c 'echo building; mkdir -p "$0/out"; echo x >"$0/out/y"' "$T"
assert_rc 0 "$RC" "the job of a legitimate agent"
grep -q "no trip: every event passes" "$T/a2/replay.txt" || fail "replay: $(cat "$T/a2/replay.txt")"
[ ! -s "$T/a2/alerts.txt" ] || fail "alerts for a legitimate job: $(cat "$T/a2/alerts.txt")"
grep -q "^building$" "$T/a2.out" || fail "the command's output did not reach the job's log"
pass
