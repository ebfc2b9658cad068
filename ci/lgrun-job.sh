#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A CI job's step: run COMMAND (an agent) under `lgrun --profile ci` and
# leave the evidence in $LGRUN_ARTIFACTS (default ./lgrun-artifacts) for the
# job to keep: the audit log, the session's recording, `lgctl status`,
# `lgctl replay` and `lgctl report` (report.html) of it, and alerts.txt
# (the trips and denials, one a line).
# Exits with COMMAND's status, or lgrun's 86 when the guard stopped it.
#
#   ci/lgrun-job.sh [--] COMMAND [ARGS...]
#   LGRUN, LGCTL: the binaries (default: lgrun, lgctl on PATH)
#   LGRUN_SESSION: the session id (default: ci-<the CI's job or run id>)
set -u
[ "${1:-}" = -- ] && shift
[ $# -gt 0 ] || { echo "usage: ci/lgrun-job.sh [--] COMMAND [ARGS...]" >&2; exit 2; }
out=${LGRUN_ARTIFACTS:-lgrun-artifacts}
state=$out/state
session=${LGRUN_SESSION:-ci-${CI_JOB_ID:-${GITHUB_RUN_ID:-$$}}}
lgrun=${LGRUN:-lgrun}
lgctl=${LGCTL:-lgctl}
mkdir -p "$out"

"$lgrun" --state-dir "$state" --profile ci --session "$session" -- "$@"
rc=$?

cp "$state/audit.jsonl" "$out/audit.jsonl" 2>/dev/null || : >"$out/audit.jsonl"
cp "$state/sessions/$session".events*.jsonl "$out/" 2>/dev/null
"$lgctl" --state-dir "$state" status "$session" >"$out/status.txt" 2>&1
"$lgctl" --state-dir "$state" replay "$session" >"$out/replay.txt" 2>&1
"$lgctl" --state-dir "$state" report "$session" -o "$out/report.html" >/dev/null 2>&1
grep -E '"priority":"(Critical|Error)"' "$out/audit.jsonl" |
	sed -E 's/.*"output":"(([^"\\]|\\.)*)".*/\1/' >"$out/alerts.txt"
if [ "$rc" = 86 ]; then
	msg="lgrun stopped the agent: $(head -n 1 "$out/alerts.txt")"
	# an annotation on GitHub, a plain line elsewhere
	if [ -n "${GITHUB_ACTIONS:-}" ]; then echo "::error::$msg"; else echo "$msg" >&2; fi
fi
exit "$rc"
