#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Bad config refuses to start (125) with file:line and what is wrong.
source "$(dirname "$0")/lib.sh"

check() { # name expected-stderr-regex ini-text
	printf '%b' "$3" >"$T/$1.ini"
	run_lg --config "$T/$1.ini" -- touch "$T/ran-$1" 2>"$T/err"
	assert_rc 125 "$RC" "config $1"
	[ ! -e "$T/ran-$1" ] || fail "config $1: the command ran"
	grep -Eq "$2" "$T/err" || fail "config $1: stderr '$(cat "$T/err")' does not match '$2'"
}
check unknown_key "$T/unknown_key.ini:3: unknown key 'max_op' in \[volumetric\]" '[volumetric]\nwindow = 60\nmax_op = 3\n'
check unknown_section "$T/unknown_section.ini:1: unknown section \[volumetrc\]" '[volumetrc]\nmax_ops = 3\n'
check bad_number "bad_number.ini:2: volumetric.max_ops: 'three' is not a whole number" '[volumetric]\nmax_ops = three\n'
check out_of_range "out_of_range.ini:2: volumetric.max_ops: 9999999 is out of range" '[volumetric]\nmax_ops = 9999999\n'
check bad_duration "bad_duration.ini:2: same_target.window: '5 parsecs' is not a duration" '[same_target]\nwindow = 5 parsecs\n'
check bad_action "bad_action.ini:2: budget.action: 'explode' is not an action" '[budget]\naction = explode\n'
check bad_syscall "bad_syscall.ini:2: guard.syscalls: unknown syscall 'unlnk'" '[guard]\nsyscalls = unlink, unlnk\n'
check syntax "syntax.ini:3: syntax error" '[guard]\nobserve = false\nthis line is wrong\n'
check agent_key "agent_key.ini:2: \[agent x\]: unknown key 'volumetric.max'" '[agent x]\nvolumetric.max = 3\n'
check decrypt_twice "decrypt_twice.ini:3: llm.decrypt: cannot read 'api.openai.com=http://127.0.0.1:9': .*each host once" '[llm]\nmode = proxy\ndecrypt = api.openai.com, api.openai.com=http://127.0.0.1:9\n'
check decrypt_format "decrypt_format.ini:2: llm.decrypt: cannot read 'llm.corp': .*the format anthropic, openai or gemini" '[llm]\ndecrypt = default, llm.corp\n'
check bad_prices "bad_prices.ini:2: llm.prices: cannot read the entry 'gpt-5\\*=cheap'" '[llm]\nprices = claude-*=3/15, gpt-5*=cheap\n'
check bad_variables "bad_variables.ini:2: llm.variables: cannot read 'MY_URL:cobol'" '[llm]\nvariables = MY_URL:cobol\n'
# a NUL byte inside a value (inih would have read "3" and dropped the rest)
check nul_byte "nul_byte.ini:3: a NUL byte in the line" '[volumetric]\nwindow = 60\nmax_ops = 3\0junk\n'
# paths lgrun writes are absolute, never resolved against the current dir
(cd "$T" && check rel_state "rel_state.ini:2: guard.state_dir: 'relative/dir' is not an absolute path" '[guard]\nstate_dir = relative/dir\n') || exit 1
[ ! -e "$T/relative" ] || fail "a relative guard.state_dir was made in the current directory"
(cd "$T" && check rel_audit "rel_audit.ini:2: guard.audit_log: 'a.jsonl' is not an absolute path" '[guard]\naudit_log = a.jsonl\n') || exit 1
# on the command line and in the environment, relative is where the user
# stands: made absolute once, at the start (lgctl reads it the same way)
(cd "$T" && "$LGRUN" --state-dir relative/dir -- touch "$T/ran-rel" 2>"$T/err"; echo "rc=$?" >"$T/rc")
grep -q "rc=0" "$T/rc" && [ -e "$T/ran-rel" ] && [ -d "$T/relative/dir/sessions" ] ||
	fail "a relative --state-dir: $(cat "$T/rc") $(cat "$T/err")"
(cd "$T" && "$LGCTL" --state-dir relative/dir status >"$T/st" 2>&1) || fail "lgctl, a relative --state-dir: $(cat "$T/st")"
(cd "$T" && LGRUN_STATE_DIR=rel2 "$LGRUN" -- true 2>"$T/err"; echo "rc=$?" >"$T/rc")
grep -q "rc=0" "$T/rc" && [ -d "$T/rel2/sessions" ] ||
	fail "a relative LGRUN_STATE_DIR: $(cat "$T/rc") $(cat "$T/err")"
# an empty --state-dir is not "the default"
"$LGRUN" --state-dir '' -- touch "$T/ran-empty" 2>"$T/err"
assert_rc 125 "$?" "--state-dir ''"
[ ! -e "$T/ran-empty" ] || fail "--state-dir '': the command ran"
grep -q "\-\-state-dir '': empty" "$T/err" || fail "--state-dir '': $(cat "$T/err")"
run_lg --config "$T/missing.ini" -- true 2>"$T/err"
assert_rc 125 "$RC" "missing config file"
grep -q "missing.ini: cannot open config" "$T/err" || fail "missing config message: $(cat "$T/err")"
run_lg --profile no-such-profile -- true 2>"$T/err"
assert_rc 125 "$RC" "unknown profile"
grep -q "profile 'no-such-profile' not found" "$T/err" || fail "unknown profile message"
run_lg --session 'bad/id' -- true 2>"$T/err"
assert_rc 125 "$RC" "bad session id"
# refused before anything is made for it: no state dir, no sessions/
"$LGRUN" --state-dir "$T/fresh" --session '../x' -- true 2>"$T/err"
assert_rc 125 "$?" "session id ../x"
grep -q "session id '../x' is not valid" "$T/err" || fail "session id ../x: $(cat "$T/err")"
[ ! -e "$T/fresh" ] || fail "an invalid --session made $(find "$T/fresh")"
# refused before anything was made: nothing written to fd 0 (a terminal
# opened read-write showed a stray "D", the watchdog's word, after the error)
: >"$T/stdin"
run_lg --bpf=bogus -- true 2>"$T/err" 0<>"$T/stdin"
assert_rc 125 "$RC" "bad --bpf"
[ ! -s "$T/stdin" ] || fail "an early error wrote '$(cat "$T/stdin")' to fd 0"
pass
