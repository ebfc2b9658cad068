#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# harness.sh ENTRY DIR: runs one corpus entry in DIR (made by run.sh) and
# writes DIR/meta/result: KIND, STATUS, SECONDS, KNOWN, REASON separated by
# \037 (unit separator; tabs would merge empty fields).
#   setup   outside lgrun, in DIR/work (errexit on); what it makes predates
#           the session
#   run     under `lgrun --state-dir DIR/state LGRUN_ARGS -- bash -c run`
#   verify  outside lgrun, after it; prints the reason when it fails
# STATUS: ok / TRIPPED / FAILED (legit), stopped / NOT STOPPED (runaway),
# error (the entry itself is broken). Exit 77: skipped (meta/skip_reason).
set -u
ENTRY=$1
W=$2
CORPUS=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$CORPUS/../.." && pwd)
rel=${ENTRY#"$CORPUS"/}
KIND=${rel%%/*}
NAME=${rel#*/}
NAME=${NAME%.sh}

export CORPUS ROOT
export LGRUN=${LGRUN:-$ROOT/${B:-build}/bin/lgrun}
export FIXTURES=$ROOT/tests/fixtures
export FIXBIN=$ROOT/build/fixtures
export TOOLS=$FIXTURES/tools
export LLM=$FIXTURES/llm
export WORK=$W/work META=$W/meta STATE=$W/state
export OUT=$META/run.out ERR=$META/run.err
# In the sanitizer build a nested (ASan) lgrun starts with the shim already
# preloaded: tell ASan that is fine.
[ "${B:-build}" = build-san ] && export ASAN_OPTIONS=${ASAN_OPTIONS:-verify_asan_link_order=0}
[ -n "${CORPUS_PYBIN:-}" ] && export PATH=$CORPUS_PYBIN:$PATH
REAL_HOME=$HOME
export HOME=$W/home
export TMPDIR=$W/tmp
mkdir -p "$WORK" "$META" "$STATE" "$HOME" "$TMPDIR"
# The machine's settings stay out: the default config, no ambient session,
# no git or npm configuration but a neutral one.
unset LGRUN_CONFIG LGRUN_STATE_DIR LGRUN_SESSION LGRUN_AGENT LGRUN_SOCK LGRUN_FLOW \
	LGRUN_SUPERVISOR_PID ANTHROPIC_BASE_URL OPENAI_BASE_URL GOOGLE_GEMINI_BASE_URL \
	NPM_CONFIG_CACHE PIP_INDEX_URL PIP_FIND_LINKS PYTHONDONTWRITEBYTECODE
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=$HOME/.gitconfig GIT_TERMINAL_PROMPT=0
cat >"$GIT_CONFIG_GLOBAL" <<'EOF'
[user]
	name = lgrun corpus
	email = corpus@example.invalid
[init]
	defaultBranch = main
[commit]
	gpgsign = false
[advice]
	detachedHead = false
[gc]
	auto = 0
EOF
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1 npm_config_update_notifier=false \
	npm_config_fund=false npm_config_audit=false

# What an entry may set.
TIMEOUT=60
KNOWN=
NEEDS=
LGRUN_ARGS=()
EXPECT_RC=0
EXPECT_REASON=
# legit: the notes lgrun may give the model ([steer], issue 28), as
# "rule/reason ..." (each one decided in the recording); none by default
EXPECT_NOTES=

result() { # status reason
	printf '%s\037%s\037%s\037%s\037%s\n' "$KIND" "$1" "${SECS:-0.0}" "$KNOWN" "$2" >"$META/result"
}

teardown_all() {
	local rc=$? p
	set +e
	if [ "$PHASE" = setup ] && [ ! -s "$META/result" ] && [ "$rc" != 77 ]; then
		result error "setup failed (exit $rc): $(tail -n 3 "$META/setup.log" | tr '\n' ' ')"
	fi
	cd "$W" || true
	declare -F teardown >/dev/null && teardown >>"$META/setup.log" 2>&1
	if [ -f "$META/bg.pids" ]; then
		for p in $(cat "$META/bg.pids"); do kill -TERM -- "-$p" 2>/dev/null; done
		sleep 0.1
		for p in $(cat "$META/bg.pids"); do kill -KILL -- "-$p" 2>/dev/null; done
	fi
	exit "$rc"
}
PHASE=load
trap teardown_all EXIT

source "$CORPUS/lib.sh"
# shellcheck disable=SC1090
source "$ENTRY" || { result error "cannot load the entry"; exit 1; }
for fn in setup run verify; do
	declare -F "$fn" >/dev/null || { result error "the entry has no $fn function"; exit 1; }
done
[ -x "$LGRUN" ] || { result error "lgrun is not built: $LGRUN"; exit 1; }

PHASE=setup
cd "$WORK"
need_cmd $NEEDS
set -e
setup >"$META/setup.log" 2>&1
# the observe pass: the same entry, nothing denied or killed
[ "${CORPUS_OBSERVE:-}" = 1 ] && LGRUN_ARGS+=(--observe)
set +e
PHASE=run

cd "$WORK"
t0=$EPOCHREALTIME
timeout -k 5 "$TIMEOUT" "$LGRUN" --state-dir "$STATE" "${LGRUN_ARGS[@]}" \
	-- bash -c "$(declare -f run); run" </dev/null >"$OUT" 2>"$ERR"
RC=$?
SECS=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
PHASE=verify

cd "$WORK"
rm -f "$META/bad"
(verify) >"$META/verify.out" 2>&1
VRC=$?
[ -s "$META/bad" ] && [ "$VRC" = 0 ] && VRC=1
vmsg=$(grep -v '^[[:space:]]*$' "$META/verify.out" | tail -n 1)

# The trip record, if any: its reason and its summary.
trip=
[ -f "$STATE/audit.jsonl" ] && trip=$(grep -m1 '"event":"trip"' "$STATE/audit.jsonl")
reason=$(printf '%s' "$trip" | grep -oE '"reason":"[^"]*"' | head -n1 | cut -d'"' -f4)
summary=$(printf '%s' "$trip" | grep -oE '"summary":"([^"\\]|\\.)*"' | head -n1 | cut -d'"' -f4-)
summary=${summary%\"}

# What-if must agree with what happened: the session's recording replayed
# under its own config trips where the session did, or not at all.
LGCTL=${LGRUN%/lgrun}/lgctl
disagree=
for rec in "$STATE"/sessions/*.events.jsonl; do
	[ -e "$rec" ] || continue
	case $rec in *.events.old.jsonl) continue ;; esac
	sid=${rec##*/}
	sid=${sid%.events.jsonl}
	"$LGCTL" --state-dir "$STATE" replay "$sid" >"$META/replay.out" 2>&1
	prc=$?
	if [ "${CORPUS_OBSERVE:-}" = 1 ]; then
		# no trip record: the recording's would-trip is what replay must find
		grep -q "as recorded: the session would have tripped there" "$META/replay.out" && [ $prc = 1 ] ||
			{ grep -q "recorded: no trip" "$META/replay.out" && [ $prc = 0 ]; } ||
			disagree="the replay of $sid does not find the recorded would-trip (or finds one not recorded): $(tr '\n' ' ' <"$META/replay.out")"
	elif [ -n "$trip" ] && { [ $prc != 1 ] || ! grep -q "as recorded: the session tripped there" "$META/replay.out"; }; then
		disagree="the replay of $sid does not trip where the session did: $(tr '\n' ' ' <"$META/replay.out")"
	elif [ -z "$trip" ] && [ $prc != 0 ]; then
		disagree="the replay of $sid trips (exit $prc) where the session did not: $(tr '\n' ' ' <"$META/replay.out")"
	fi
done

if [ -n "$disagree" ]; then
	result error "$disagree"
elif [ "${CORPUS_OBSERVE:-}" = 1 ]; then
	# Observe mode: the recording's first would-trip (replayed, agreeing)
	# must be what the normal run does: stop a runaway, not a legit entry.
	would=$(grep -m1 -oE 'trips at event [0-9]+ \([0-9.]+s\): [a-z]+ by [a-z_]+ \([a-z_]+\)' "$META/replay.out")
	wreason=$(printf '%s' "$would" | sed -nE 's/.*\(([a-z_]+)\)$/\1/p')
	if [ "$KIND" = legit ]; then
		if [ -n "$would" ]; then result TRIPPED "observe: $would"; else result ok ""; fi
	elif [ -z "$would" ]; then
		result "NOT STOPPED" "observe: the guard would not have stopped it (no would-trip recorded)"
	elif [ -n "$EXPECT_REASON" ] && ! [[ $wreason =~ ^($EXPECT_REASON)$ ]]; then
		result "NOT STOPPED" "observe: would have stopped it by $wreason, expected $EXPECT_REASON"
	else
		result stopped "$wreason"
	fi
elif [ "$RC" = 124 ] || [ "$RC" = 137 ]; then
	st=$([ "$KIND" = legit ] && echo FAILED || echo "NOT STOPPED")
	result "$st" "still running after the entry's timeout (${TIMEOUT}s)"
elif [ "$KIND" = legit ]; then
	# the notes decided (the recording marks each): only the expected ones
	notes=$(cat "$STATE"/sessions/*.events.jsonl 2>/dev/null |
		grep -oE '"note":"[a-z_]+","note_reason":"[a-z_]+"' |
		sed -E 's/"note":"([a-z_]+)","note_reason":"([a-z_]+)"/\1\/\2/' | sort | tr '\n' ' ')
	notes=${notes% }
	if [ -n "$trip" ]; then
		result TRIPPED "$summary"
	elif [ "$notes" != "$EXPECT_NOTES" ]; then
		result NOTED "notes for the model: ${notes:-nothing} (expected: ${EXPECT_NOTES:-nothing})"
	elif [ "$RC" != "$EXPECT_RC" ]; then
		result FAILED "exit status $RC (expected $EXPECT_RC): $(tail -n 2 "$ERR" | tr '\n' ' ')"
	elif [ "$VRC" != 0 ]; then
		result FAILED "verify: ${vmsg:-failed}"
	else
		result ok ""
	fi
else
	if [ -z "$trip" ]; then
		result "NOT STOPPED" "exit status $RC, no trip record${vmsg:+; $vmsg}"
	elif [ "$RC" != 86 ]; then
		result "NOT STOPPED" "tripped ($reason) but lgrun exited $RC"
	elif [ -n "$EXPECT_REASON" ] && ! [[ $reason =~ ^($EXPECT_REASON)$ ]]; then
		result "NOT STOPPED" "stopped by $reason, expected $EXPECT_REASON: $summary"
	elif [ "$VRC" != 0 ]; then
		result "NOT STOPPED" "stopped too late: ${vmsg:-verify failed} ($summary)"
	else
		result stopped "$reason"
	fi
fi
exit 0
