#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Runs the libFuzzer targets: tests/fuzz/run.sh [--merge] SECONDS NAME...
# Each starts from its committed corpus (tests/fuzz/corpus/NAME) and its
# seeds, works in $B/fuzz/corpus-NAME, and must not crash, leak or time out.
# --merge (make fuzz-long) folds what it found into the committed corpus,
# minimized (libFuzzer's -merge=1 keeps only inputs that add coverage).
# A crash leaves its input in $B/fuzz/ (crash-*, leak-*, timeout-*) and the
# log's tail on stdout.
set -u
cd "$(dirname "$0")/../.."
B=${B:-build}
merge=false
[ "${1:-}" = --merge ] && { merge=true; shift; }
secs=$1
shift
declare -A maxlen=([wire]=8300 [llm]=4096 [text]=1024 [zbody]=4096 [ws]=4096
	[path]=4096 [recog]=4096 [config]=4096 [archive]=16384)
declare -A what=([wire]="the shim's wire decoder" [llm]="the model API parsers"
	[text]="the JSON and terminal text writers, the egress request head"
	[zbody]="the zstd body decoder" [ws]="the websocket frame reader"
	[path]="the path resolver and globs" [recog]="the shim's HTTP/JSON-RPC recognisers"
	[config]="the config loader" [archive]="the archives' index")
declare -A seeds=([wire]=tests/fuzz/seeds [llm]=tests/fuzz/seeds-llm
	[zbody]=tests/fuzz/seeds-zbody [ws]=tests/fuzz/seeds-ws [config]=conf
	[archive]=tests/fuzz/seeds-archive)
failed=0
for name in "$@"; do
	bin=$B/fuzz/fuzz_$name
	work=$B/fuzz/corpus-$name
	keep=tests/fuzz/corpus/$name
	log=$B/fuzz/log-$name.txt
	mkdir -p "$work" "$keep"
	dirs=("$work" "$keep")
	[ -n "${seeds[$name]:-}" ] && dirs+=("${seeds[$name]}")
	if ! (cd "$B/fuzz" && "$OLDPWD/$bin" -max_total_time="$secs" -timeout=10 \
		-rss_limit_mb=2048 -max_len="${maxlen[$name]}" -print_final_stats=1 \
		"${dirs[@]/#/$OLDPWD/}") >"$log" 2>&1; then
		tail -40 "$log"
		echo "fuzz ($name): ${what[$name]} FAILED; the input is in $B/fuzz/ (see $log)"
		failed=1
		continue
	fi
	runs=$(grep -o "stat::number_of_executed_units: *[0-9]*" "$log" | grep -o "[0-9]*$")
	cov=$(grep -o "cov: [0-9]*" "$log" | tail -1)
	echo "fuzz ($name): ${what[$name]}: ${runs:-?} runs in ${secs}s, ${cov:-cov: ?}, no crash"
	if $merge; then
		tmp=$(mktemp -d)
		"$bin" -merge=1 -max_len="${maxlen[$name]}" "$tmp" "$keep" "$work" >>"$log" 2>&1 &&
			rm -rf "$keep" && mv "$tmp" "$keep" && chmod 755 "$keep"
		echo "fuzz ($name): corpus $keep: $(ls "$keep" | wc -l) inputs"
	fi
done
exit $failed
