#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# --watch-output: the command's stdout and stderr pass through lgrun byte
# for byte (nothing lost at exit), and output that repeats itself is
# reported (warn by default). ANSI sequences and carriage-return redraws
# are removed before the check, so a progress bar is not a loop; a table of
# dashes and `yes | head` do repeat, and are reported as documented.
source "$(dirname "$0")/lib.sh"
need_cmd python3

head -c 3000000 /dev/urandom >"$T/blob"
run_lg --watch-output --session bytes -- bash -c 'cat "$0"; cat "$0" >&2' "$T/blob" >"$T/out" 2>"$T/err"
assert_rc 0 "$RC" "passthrough"
cmp -s "$T/blob" "$T/out" || fail "stdout changed on its way through lgrun"
grep -v '^lgrun:' "$T/err" | cmp -s "$T/blob" - || cmp -s "$T/blob" "$T/err" || fail "stderr changed"

run_lg --watch-output --session loop -- python3 -c '
for i in range(20): print("The build failed again, retrying the same step now.")' >"$T/out" 2>/dev/null
assert_rc 0 "$RC" "repeated lines warn, they do not stop the command"
[ "$(grep -c "retrying" "$T/out")" = 20 ] || fail "output lost"
grep -q '"session":"loop".*"event":"warn".*"reason":"output_repeat"' "$STATE/audit.jsonl" || fail "no output_repeat warning"

run_lg --watch-output --session bar -- python3 -c '
import sys, time
for i in range(101):
    sys.stdout.write("\r\x1b[32m[%-50s]\x1b[0m %3d%%" % ("#" * (i // 2), i)); sys.stdout.flush()
print()
print("done")' >/dev/null 2>&1
assert_rc 0 "$RC" "a progress bar"
grep -q '"session":"bar".*output_repeat' "$STATE/audit.jsonl" && fail "a progress bar redrawn in place is not repeated output"

run_lg --watch-output --session yes -- bash -c 'yes | head -n 500' >"$T/out" 2>/dev/null
assert_rc 0 "$RC" "yes | head"
[ "$(wc -l <"$T/out")" = 500 ] || fail "yes output lost"
grep -q '"session":"yes".*"reason":"output_repeat"' "$STATE/audit.jsonl" || fail "yes | head repeats, and is reported"
pass
