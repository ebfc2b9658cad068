#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The regression corpus: legitimate workloads that must run untouched under
# the default config, and runaways that must be stopped (see docs/precision.md).
#
#   tests/corpus/run.sh [-k] [-v] [PATTERN...]
#     PATTERN  run only entries whose KIND/NAME contains it (e.g. git, legit/)
#     -k       keep every entry's directory (they are kept on failure anyway)
#     -v       show the logs of every entry, not only of failures
#     --observe  run every entry with lgrun --observe: the guard's would-trips
#              (from the session's recording, replayed) must be the trips of
#              the normal run: a runaway is caught, a legit entry is not
#
# One line per entry, a summary line, then "N passed, N failed" (CI reads
# it). Exits 1 when an entry failed (known ones do not fail the run).
set -u
CORPUS=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$CORPUS/../.." && pwd)
KEEP=0
VERBOSE=0
pats=()
for a in "$@"; do
	case $a in
	-k) KEEP=1 ;;
	-v) VERBOSE=1 ;;
	--observe) export CORPUS_OBSERVE=1 ;;
	-h | --help) sed -n '3,15p' "$0"; exit 0 ;;
	*) pats+=("$a") ;;
	esac
done

entries=()
while IFS= read -r f; do
	rel=${f#"$CORPUS"/}
	if [ ${#pats[@]} -gt 0 ]; then
		hit=0
		for p in "${pats[@]}"; do [[ $rel == *"$p"* ]] && hit=1; done
		[ $hit = 1 ] || continue
	fi
	entries+=("$f")
done < <(find "$CORPUS/legit" "$CORPUS/runaway" -name '*.sh' -type f | LC_ALL=C sort)
[ ${#entries[@]} -gt 0 ] || { echo "corpus: no entry matches ${pats[*]}"; exit 1; }

# python3 resolved once: a version manager's shim (pyenv) costs 0.3 s a
# call, and the entries start Python a hundred times.
if [ -z "${CORPUS_PYBIN:-}" ] && py=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null); then
	export CORPUS_PYBIN=${py%/*}
fi
LGRUN=${LGRUN:-$ROOT/${B:-build}/bin/lgrun}
[ -x "$LGRUN" ] || { echo "corpus: lgrun is not built ($LGRUN): run make"; exit 1; }

legit_ok=0 legit_tripped=0 legit_failed=0 run_stopped=0 run_not=0
known=0 fixed=0 skipped=0 passed=0 failed=0 errors=0
failed_names=() fixed_names=()
start_all=$EPOCHREALTIME

show_logs() { # dir
	local f
	for f in setup.log run.err run.out verify.out; do
		[ -s "$1/meta/$f" ] || continue
		echo "      --- $f"
		tail -n 8 "$1/meta/$f" | sed 's/^/      /'
	done
}

for f in "${entries[@]}"; do
	rel=${f#"$CORPUS"/}
	kind=${rel%%/*}
	name=${rel#*/}
	name=${name%.sh}
	W=$(mktemp -d "${TMPDIR:-/tmp}/lgcorpus.XXXXXX")
	# Bounded whatever the entry does: its own timeout covers the session,
	# this one setup and verify too.
	tmo=$(sed -n 's/^TIMEOUT=\([0-9]*\).*/\1/p' "$f" | head -n1)
	timeout -k 5 $((${tmo:-60} + 180)) bash "$CORPUS/harness.sh" "$f" "$W" >"$W/harness.log" 2>&1
	hrc=$?
	if [ $hrc = 77 ]; then
		status=skip secs=- kn='' reason=$(cat "$W/meta/skip_reason" 2>/dev/null)
	elif [ -s "$W/meta/result" ]; then
		IFS=$'\037' read -r _ status secs kn reason <"$W/meta/result"
	else
		status=error secs=- kn=
		reason="the harness ended without a result (exit $hrc): $(tail -n 2 "$W/harness.log" | tr '\n' ' ')"
	fi
	ok=0
	case $status in
	ok) legit_ok=$((legit_ok + 1)); ok=1 ;;
	stopped) run_stopped=$((run_stopped + 1)); ok=1 ;;
	TRIPPED) legit_tripped=$((legit_tripped + 1)) ;;
	FAILED | NOTED) legit_failed=$((legit_failed + 1)) ;;
	"NOT STOPPED") run_not=$((run_not + 1)) ;;
	skip) ok=2 ;;
	*) errors=$((errors + 1)) ;;
	esac
	shown=$status
	if [ $ok = 2 ]; then
		skipped=$((skipped + 1))
		[ -n "${LG_SKIPS:-}" ] && printf 'corpus %s/%s: %s\n' "$kind" "$name" "$reason" >>"$LG_SKIPS"
	elif [ -n "$kn" ] && [ $ok = 1 ]; then
		# Marked as a known failure, but it passed: say so until the mark goes.
		shown="FIXED?" fixed=$((fixed + 1)) passed=$((passed + 1))
		fixed_names+=("$name")
		reason="marked known=$kn but it passed${reason:+ ($reason)}: drop the mark once it passes every run"
	elif [ -n "$kn" ] && [ "$status" != error ]; then
		shown=known known=$((known + 1))
		reason="$kn: $status: $reason"
	elif [ $ok = 1 ]; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
		failed_names+=("$kind/$name")
	fi
	[ "$secs" = - ] || secs="${secs}s"
	line=$(printf '%-8s %-12s %-34s %6s' "$kind" "$shown" "$name" "$secs")
	echo "$line${reason:+  $reason}"
	if { [ $ok = 0 ] && [ -z "$kn" ]; } || [ $VERBOSE = 1 ]; then
		show_logs "$W"
		echo "      (kept: $W)"
	elif [ $KEEP = 1 ]; then
		echo "      (kept: $W)"
	else
		chmod -R u+w "$W" 2>/dev/null
		rm -rf "$W"
	fi
done

total=$(awk -v a="$start_all" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.0f", b - a }')
extra="$known known, $skipped skipped"
[ $fixed = 0 ] || extra="$extra, $fixed FIXED? (${fixed_names[*]})"
[ $errors = 0 ] || extra="$extra, $errors broken"
lf=
[ $legit_failed = 0 ] || lf=" / $legit_failed failed"
echo "corpus: legit $legit_ok ok / $legit_tripped tripped$lf, runaway $run_stopped stopped / $run_not not ($extra; ${total}s)"
[ $failed = 0 ] || echo "failed: ${failed_names[*]}"
echo "$passed passed, $failed failed"
[ $failed = 0 ]
