#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# lgctl rewind --turn K (issue 40), on what an agent's later turns do to
# what its earlier turns made: a folder made, appended to, edited by sed -i,
# renamed and chmodded, then removed; a file renamed twice and chmodded; a
# pre-existing file appended to, then overwritten; a symlink made, then
# removed; and a trip. The model (the mock) runs one shell command a turn
# through a real agent CLI under lgrun. For each K, the tree rewound equals
# a bare run of commands 1..K-1 on a copy of the starting tree (names,
# contents, modes, symlinks): rewinding a fresh session to K (Claude Code),
# and one session rewound to 6, 5, ..., 1 in a row (each CLI). Nothing a
# rewind takes away is destroyed: it is set aside in the quarantine.
source "$(dirname "$0")/lib.sh"
need_cmd python3

STEPS=(
	'mkdir d && echo a > d/x && echo p > p.txt'
	'echo b >> d/x && mv p.txt q.txt'
	'sed -i s/b/B/ d/x && mv d e && echo pre2 >> pre.txt && chmod 700 e'
	'rm -rf e && mv q.txt r.txt && chmod 600 r.txt'
	'echo c > pre.txt && mkdir -p f/g && echo z > f/g/z && ln -s r.txt link'
	'echo d >> r.txt; rm link; rm -rf f sub'
)
N=${#STEPS[@]}
mkdir -p "$T/steps" "$T/start/sub"
for i in "${!STEPS[@]}"; do echo "${STEPS[$i]}" >"$T/steps/$((i + 1)).sh"; done
echo pre >"$T/start/pre.txt"
printf '#!/bin/sh\n' >"$T/start/run.sh"
chmod 755 "$T/start/run.sh"
for i in $(seq 1 12); do echo "s$i" >"$T/start/sub/f$i"; done

manifest() { python3 "$TOOLS/manifest.py" "$1"; }
# The tree as commands 1..K-1 leave it, bare.
bare() { # K
	rm -rf "$T/bare"
	cp -a "$T/start" "$T/bare"
	(cd "$T/bare" && for i in $(seq 1 $(($1 - 1))); do sh "$T/steps/$i.sh"; done)
	manifest "$T/bare"
}
# A fresh project and a session of agent $1 over it, id $2: it trips at
# the last turn (rm -rf of sub/'s pre-existing files).
session() { # agent id
	rm -rf "$P"
	cp -a "$T/start" "$P"
	sleep 0.05 # pre-existing: older than the session
	(cd "$P" && "$LGRUN" --state-dir "$STATE" --session "$2" -- \
		timeout 120 "${AGENT_CMD[@]}" >"$T/$2.out" 2>&1)
	RC=$?
	[ "$RC" = 86 ] || fail "$1: the session ended with $RC, expected 86 (the trip at turn $N): $(tail -3 "$T/$2.out")"
	grep -q "lgctl rewind $2 --turn $N" "$T/$2.out" ||
		fail "$1: lgrun did not name the rewind of the tripping turn: $(grep lgrun: "$T/$2.out" | tail -3)"
	n=$(grep -c '"k":"model_call"' "$STATE/sessions/$2.events.jsonl")
	[ "$n" -ge "$N" ] || fail "$1: the recording has $n model calls, expected $N"
	grep -q "\"turn\":$N,\"k\":\"model_call\"" "$STATE/sessions/$2.events.jsonl" ||
		fail "$1: no model call of turn $N in the recording"
}
rewind_to() { # agent id K
	"$LGCTL" --state-dir "$STATE" rewind "$2" --turn "$3" >"$T/rw.out" 2>&1 ||
		fail "$1: rewind $2 --turn $3 exited $?: $(cat "$T/rw.out")"
	manifest "$P" >"$T/m.rw"
	bare "$3" >"$T/m.bare"
	diff "$T/m.bare" "$T/m.rw" >"$T/m.diff" ||
		fail "$1: rewound to turn $3, the tree differs from a bare run of turns 1..$(($3 - 1)) (< bare, > rewound):
$(cat "$T/m.diff")
$(cat "$T/rw.out")"
}

P=$T/work/proj
for agent in claude codex gemini; do
	need_agent "$agent"
	start_mock_llm --script shell_cmds "$N" --cmd "sh $T/steps/{i}.sh"
	agent_setup "$agent"
	agent_cmd "$agent" "Do the steps." 20
	if [ "$agent" = claude ]; then
		# each K from the session's end
		for K in $(seq "$N" -1 1); do
			session "$agent" "$agent-k$K"
			rewind_to "$agent" "$agent-k$K" "$K"
		done
		# a dry run changes nothing
		session "$agent" "$agent-dry"
		manifest "$P" >"$T/m.before"
		"$LGCTL" --state-dir "$STATE" rewind "$agent-dry" --turn 2 --dry-run >"$T/dry.out" 2>&1 ||
			fail "rewind --dry-run exited $?: $(cat "$T/dry.out")"
		manifest "$P" | diff "$T/m.before" - >/dev/null ||
			fail "rewind --dry-run changed the tree: $(cat "$T/dry.out")"
		grep -q "would" "$T/dry.out" || fail "rewind --dry-run said no plan: $(cat "$T/dry.out")"
	fi
	# one session, rewound again and again (what a user does)
	session "$agent" "$agent-seq"
	for K in $(seq "$N" -1 1); do
		rewind_to "$agent" "$agent-seq" "$K"
	done
	# nothing destroyed: what the rewinds took away is in the quarantine
	n=$(grep -c '"op":"set_aside"' "$STATE/quarantine/$agent-seq.jsonl")
	[ "$n" -ge 3 ] || fail "$agent: $n set-asides in the quarantine, expected the files the turns made"
	stop_mock_llm
done
pass
