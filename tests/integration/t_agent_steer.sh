#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Steer before stopping (issue 28), with the three real agent CLIs (Claude
# Code, Codex, gemini-cli) against the mock model through lgrun's proxy: the
# model asks the agent to remove five pre-existing files one a turn
# (shell_rm). At the 2nd removal (volumetric's steer level, one short of
# its action) lgrun adds its note to the next model request, after the tool
# results:
#  - a model that obeys the note (shell_rm 5 obey) stops and asks its user:
#    the session ends on its own, exit 0, no trip, three files left;
#  - a deaf model goes on and is stopped at #3 (exit 86, volume_exceeded),
#    the note having reached it first;
#  - under a higher limit (steer_at = 2), the note is in every later
#    request of the conversation.
# Each placement is a steer audit record, and the obedient run decides no
# other note. CLIs not installed are skipped.
source "$(dirname "$0")/lib.sh"

ran=0
steer_one() { # NAME
	local name=$1 n
	AGENT_BIN=$(agent_bin "$name") || { echo "skip $name: not installed (make agents)"; return; }
	ran=$((ran + 1))
	rm -rf "$T/work"
	mkdir -p "$T/work/d"
	for i in 1 2 3 4 5; do printf 'stale %s\n' "$i" >"$T/work/d/f$i"; done
	agent_setup "$name"
	sleep 0.05

	# 1. an obedient model: told at #2, it stops; nothing is killed
	start_mock_llm --script shell_rm 5 obey --dir d
	agent_cmd "$name" "Remove the stale files in the directory d."
	run_lg --session "$name-obey" -vv -- timeout 90 "${AGENT_CMD[@]}" >"$T/$name-obey.out" 2>"$T/$name-obey.err"
	[ "$RC" = 0 ] || fail "$name, an obedient model: exit status $RC, expected 0: $(tail -5 "$T/$name-obey.out" "$T/$name-obey.err")"
	grep '"event":"trip"' "$STATE/audit.jsonl" | grep -q "\"session\":\"$name-obey\"" &&
		fail "$name, an obedient model was stopped"
	[ -e "$T/work/d/f3" ] && [ ! -e "$T/work/d/f2" ] ||
		fail "$name, an obedient model: f1, f2 should be gone and f3 there: $(ls "$T/work/d")"
	n=$(python3 -c '
import json, sys
print(sum(1 for l in open(sys.argv[1]) if l.strip() and json.loads(l).get("lgrun_notes")))
' "$MOCK_LOG")
	[ "$n" -ge 1 ] || fail "$name: no model request carried lgrun's note: $(cut -c1-300 "$MOCK_LOG")"
	grep "\"session\":\"$name-obey\"" "$STATE/audit.jsonl" | grep '"event":"steer"' |
		grep -q '"rule":"volumetric","reason":"volume_near"' ||
		fail "$name: no steer record: $(grep "\"session\":\"$name-obey\"" "$STATE/audit.jsonl" | cut -c1-300)"
	# no other note, none decided: the removals were the only thing worth
	# one (Codex's shell fails to open /dev/tty at each command, which is
	# no file it patches: no failures warning, no note to rewrite it)
	others=$(grep "\"session\":\"$name-obey\"" "$STATE/audit.jsonl" | grep -E '"event":"(steer|warn)"' |
		grep -v '"rule":"volumetric","reason":"volume_near"' | grep -E '"rule":"(failures|greeting|output_repeat|repeat|same_target|budget)"')
	[ -z "$others" ] || fail "$name, an obedient model: another note or warning: $(echo "$others" | cut -c1-400)"
	grep -q "I will not remove more files" "$T/$name-obey.out" ||
		fail "$name did not print the model's answer: $(tail -3 "$T/$name-obey.out")"
	stop_mock_llm

	# 2. the note stays: told at #2 (steer_at) under a limit it never
	# reaches, every later request of the conversation carries it again
	# (run before the deaf one: a killed Codex leaves its sandbox's mount
	# targets in TMPDIR, and the next Codex removes them)
	for i in 1 2 3 4 5; do printf 'stale %s\n' "$i" >"$T/work/d/f$i"; done
	printf '[volumetric]\nmax_ops = 10\nsteer_at = 2\n' >"$T/stays.ini"
	sleep 0.05
	start_mock_llm --script shell_rm 5 --dir d
	run_lg --session "$name-stays" --config "$T/stays.ini" -- timeout 90 "${AGENT_CMD[@]}" >"$T/$name-stays.out" 2>"$T/$name-stays.err"
	[ "$RC" = 0 ] || fail "$name, the note stays: exit status $RC: $(tail -5 "$T/$name-stays.out" "$T/$name-stays.err")"
	python3 -c '
import json, sys
notes = [json.loads(l).get("lgrun_notes") for l in open(sys.argv[1]) if l.strip()]
first = next(i for i, n in enumerate(notes) if n)
assert len(notes) - first >= 3 and all(n == 1 for n in notes[first:]), notes
' "$MOCK_LOG" || fail "$name: the note is not in every later request: $(cut -c1-200 "$MOCK_LOG")"
	# what it says comes next is true to the limit: 8 steps from #2 to 10
	grep "\"session\":\"$name-stays\"" "$STATE/audit.jsonl" | grep '"event":"steer"' |
		grep -q "Next: 8 more removals of pre-existing data within the rule's window, and at the last of them lgrun stops this whole session" ||
		fail "$name: the note does not say how far the limit is: $(grep "\"session\":\"$name-stays\"" "$STATE/audit.jsonl" | grep '"event":"steer"' | cut -c1-600)"
	stop_mock_llm

	# 3. a deaf model: told at #2, stopped at #3
	for i in 1 2 3 4 5; do printf 'stale %s\n' "$i" >"$T/work/d/f$i"; done
	sleep 0.05
	start_mock_llm --script shell_rm 5 --dir d
	run_lg --session "$name-deaf" -vv -- timeout 90 "${AGENT_CMD[@]}" >"$T/$name-deaf.out" 2>"$T/$name-deaf.err"
	[ "$RC" = 86 ] || fail "$name, a deaf model: exit status $RC, expected 86: $(tail -5 "$T/$name-deaf.out" "$T/$name-deaf.err")"
	grep '"event":"trip"' "$STATE/audit.jsonl" | grep "\"session\":\"$name-deaf\"" |
		grep -q '"reason":"volume_exceeded"' || fail "$name, a deaf model: no volume_exceeded trip"
	[ -e "$T/work/d/f3" ] || fail "$name, a deaf model: the 3rd removal was let through"
	python3 -c '
import json, sys
reqs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
assert any(r.get("lgrun_notes") for r in reqs), "no request carried the note"
' "$MOCK_LOG" || fail "$name, a deaf model: the note did not reach it before the kill"
	stop_mock_llm
}

for a in claude codex gemini; do steer_one "$a"; done
[ "$ran" -gt 0 ] || skip "needs an agent CLI (pinned, from npm): run make agents"
pass
