#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# lgrun exits as the command did (128+N for a signal), and with its own
# documented codes for what went wrong before the command ran.
source "$(dirname "$0")/lib.sh"

run_lg -- bash -c 'exit 3'
assert_rc 3 "$RC" "exit status passthrough"
run_lg -- bash -c 'kill -TERM $$'
assert_rc 143 "$RC" "killed by SIGTERM"
run_lg -- /no/such/command 2>"$T/err"
assert_rc 127 "$RC" "command not found"
grep -q "cannot execute '/no/such/command'" "$T/err" || fail "not-found message"
printf 'x' >"$T/notexec"
run_lg -- "$T/notexec" 2>/dev/null
assert_rc 126 "$RC" "command not executable"
run_lg 2>/dev/null
assert_rc 125 "$RC" "no command"
run_lg --bogus -- true 2>/dev/null
assert_rc 125 "$RC" "unknown option"
"$LGRUN" --version | grep -q '^lgrun ' || fail "--version"
"$LGRUN" --help | grep -q -- '--observe' || fail "--help"
# Options that set config keys are read by those keys' parsers.
run_lg --timeout 5x -- true 2>"$T/err"
assert_rc 125 "$RC" "a bad --timeout"
grep -q -- "--timeout: budget.timeout: '5x' is not a duration" "$T/err" || fail "bad --timeout: $(cat "$T/err")"
run_lg --observe=yes -- true 2>"$T/err"
assert_rc 125 "$RC" "a value for a flag"
grep -q -- "option '--observe' takes no value" "$T/err" || fail "--observe=yes: $(cat "$T/err")"
run_lg -t 2>"$T/err"
assert_rc 125 "$RC" "-t without a value"
grep -q -- "option '-t' needs a value" "$T/err" || fail "-t: $(cat "$T/err")"
"$LGRUN" --help | grep -q '(budget.timeout)' || fail "--help does not name --timeout's key"

# SIGTERM to lgrun is forwarded to the tree.
"$LGRUN" --state-dir "$STATE" -- bash -c 'trap "echo got-term; exit 7" TERM; sleep 30 & wait' >"$T/out" &
lg=$!
sleep 0.5
kill -TERM $lg
wait $lg
RC=$?
assert_rc 7 "$RC" "SIGTERM forwarded to the command"
grep -q got-term "$T/out" || fail "the command did not see SIGTERM"

# A stdin/stdout pipeline works through lgrun unchanged.
out=$(printf 'a\nb\n' | "$LGRUN" --state-dir "$STATE" -- sort -r | tr -d '\n')
[ "$out" = "ba" ] || fail "stdin/stdout passthrough: '$out'"
pass
