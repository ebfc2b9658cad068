#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Runs every tests/integration/t_*.sh (or the ones named) with real processes
# under lgrun. A test exits 0 (pass), 77 (skip, says why) or anything else (fail).
set -u
cd "$(dirname "$0")/../.."
pass=0 failn=0 skipn=0 failed=""
tests=("$@")
[ ${#tests[@]} -gt 0 ] || tests=(tests/integration/t_*.sh)
for t in "${tests[@]}"; do
	name=$(basename "$t" .sh)
	start=$EPOCHREALTIME
	out=$(timeout 300 bash "$t" 2>&1)
	rc=$?
	secs=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
	case $rc in
	0) pass=$((pass + 1)); printf '  ok    %-32s %5ss\n' "$name" "$secs" ;;
	77) skipn=$((skipn + 1)); printf '  skip  %-32s %s\n' "$name" "$(echo "$out" | grep -m1 SKIP)"
	    # make check lists every skip at its end, with the reason
	    [ -n "${LG_SKIPS:-}" ] && printf 'integration %s: %s\n' "$name" \
		    "$(echo "$out" | grep -m1 SKIP | sed 's/^SKIP: //')" >>"$LG_SKIPS" ;;
	*) failn=$((failn + 1)); failed="$failed $name"
	   printf '  FAIL  %-32s (exit %d)\n' "$name" "$rc"
	   echo "$out" | tail -n 25 | sed 's/^/        /' ;;
	esac
done
echo "integration: $pass passed, $failn failed, $skipn skipped"
[ $failn = 0 ] || { echo "failed:$failed"; exit 1; }
