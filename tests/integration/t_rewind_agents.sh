#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Rewind by turn (issue 40) with the three real agent CLIs (Claude Code,
# Codex, gemini-cli; pinned, `make agents`) against the mock model. The
# model (shell_seq) makes the CLI run one shell command a turn with its own
# shell tool: 1 an append, 2 an rm, 3 an overwrite with >, 4 a new file and
# a new folder, 5 an mv, 6 a sed -i, 7 an rm -rf of sub/, which trips the
# default delete rule (exit 86, the session blocked). Then
# `lgctl rewind SESSION --turn K` must leave the project exactly as a bare
# bash run of commands 1..K-1 leaves a fresh copy of the starting tree
# (names, contents, modes, symlink targets: manifest.py):
#  - one rewind after another on one session, K = 7 down to 1 (what users
#    do), a dry run before and in the middle changing nothing (the tree, the
#    quarantine's index);
#  - a first rewind to a middle turn (--turn 4, then --turn 1: the
#    starting tree);
#  - what turn 4 made is not in the tree after a rewind past it, and not
#    destroyed: the index says it was set aside and where it is kept;
#  - a file the user edited after the session (overwritten at turn 3) is a
#    conflict for --turn 2 (exit status not 0, the path named) and keeps
#    the user's content; the rest is rewound.
# Before any rewind: each CLI ran the six commands and was stopped at the
# seventh, and lgrun numbered the turns (the trip's audit record, the
# recording, the index lines). The CLIs keep their state in HOME,
# CODEX_HOME and TMPDIR, outside the project, so the whole project tree is
# compared, with one exception in that check before any rewind (mf): the
# empty folders .agents, .aws, .codex and .git at its top that Codex's
# sandbox (bwrap) makes as mount targets for each command and removes after
# it, left behind when lgrun stops Codex in the middle of turn 7's command.
# They are not the project's; but the session made them, and a rewind
# removes them: after a rewind they are compared as any other name.
# A CLI that is not installed is left out; with none, or any left out, the
# test skips (after running the others) saying which. RW_AGENTS="codex"
# runs only the CLIs named (while working on one).
source "$(dirname "$0")/lib.sh"
MANIFEST=$TOOLS/manifest.py

# The seven turns, one shell command each (turn i runs line i). Codex's
# exec_command refuses "rm -f style commands" ("Use a safer approach"):
# its turn 7 is `rm -r sub`, which removes the same files.
CMDS=(
	'echo more >> notes.txt'
	'rm old.log'
	"echo 'mode=fast' > config.txt"
	'mkdir newdir && echo new > newdir/new.txt && echo top > made.txt'
	'mv data.csv docs/data.csv'
	"sed -i 's/alpha/omega/' run.sh"
	'rm -rf sub'
)

# The starting tree: modes of their own (a 0755 script, 0600, 0640, a 0750
# folder), symlinks, and in sub/ more pre-existing files than the default
# [volumetric] max_ops (3 removals in 60s; turn 2's rm is the first).
mktree() {
	mkdir -p "$1/docs" "$1/sub/deep"
	printf 'first note\nsecond note\n' >"$1/notes.txt"
	printf 'log line\n' >"$1/old.log"
	printf 'mode=slow\nretries=3\n' >"$1/config.txt"
	printf '#!/bin/sh\necho alpha\n' >"$1/run.sh"
	printf 'id,value\n1,alpha\n' >"$1/data.csv"
	printf '# docs\n' >"$1/docs/readme.md"
	ln -s notes.txt "$1/latest"
	for i in 1 2 3 4 5 6; do printf 'sub file %s\n' "$i" >"$1/sub/f$i"; done
	printf 'deep\n' >"$1/sub/deep/g.txt"
	ln -s ../notes.txt "$1/sub/link"
	chmod 600 "$1/old.log" "$1/sub/f2"
	chmod 640 "$1/config.txt"
	chmod 755 "$1/run.sh"
	chmod 700 "$1/sub/f3"
	chmod 750 "$1/sub"
}
mktree "$T/start"
python3 "$MANIFEST" "$T/start" >"$T/start.m"

# The references: commands 1..K-1 run by bash on a fresh copy, for K = 1..7.
for k in 1 2 3 4 5 6 7; do
	cp -a "$T/start" "$T/ref$k"
	for ((i = 0; i < k - 1; i++)); do
		(cd "$T/ref$k" && bash -e -c "${CMDS[$i]}") || fail "reference: ${CMDS[$i]}"
	done
	python3 "$MANIFEST" "$T/ref$k" >"$T/ref$k.m"
done
cmp -s "$T/start.m" "$T/ref1.m" || fail "reference: turn 1 is not the starting tree"

# mf NAME DIR: DIR's manifest, less Codex's empty mount targets (above):
# only for the tree the session left
mf() {
	if [ "$1" = codex ]; then
		python3 "$MANIFEST" "$2" | grep -vE '^\.(agents|aws|codex|git) D 0o[0-7]+$'
	else
		python3 "$MANIFEST" "$2"
	fi
}

FAILS=()
# bad WHAT: one failure, said now and listed at the end; the test goes on.
bad() {
	FAILS+=("$*")
	echo "FAIL: $*"
}

# the manifest's lines at or below sub/, or all the others
sub_lines() { grep -E '^sub( |/)' "$1"; }
not_sub() { grep -vE '^sub( |/)' "$1"; }

# session NAME ID: the seven turns in $T/p/ID, a copy of the starting tree,
# under lgrun (session ID); sets P. 1 when the session is not as it should
# be before any rewind (said).
session() {
	local name=$1 id=$2 out
	P=$T/p/$id
	out=$T/$id.out
	mkdir -p "$T/p"
	cp -a "$T/start" "$P"
	# A temporary folder of its own: Codex removes the mount-target markers
	# a killed Codex left in $TMPDIR (codex-bwrap-synthetic-mount-targets-0),
	# pre-existing files to the next session, which would trip on them.
	# A home of its own too (from agent_setup's, $T/home, which no session
	# uses): the next Codex removes a killed one's arg0 helper folder and
	# shell snapshot in CODEX_HOME, two more pre-existing files.
	export TMPDIR=$T/tmp/$id HOME=$T/h/$id
	export CODEX_HOME=$HOME/.codex
	mkdir -p "$TMPDIR" "$T/h"
	cp -a "$T/home" "$HOME"
	sleep 0.05 # pre-existing: born before the session starts
	python3 "$MANIFEST" "$P" | cmp -s - "$T/start.m" || fail "fixture: the copy of the starting tree differs"
	start_mock_llm --script shell_seq "$T/cmds.$name"
	agent_cmd "$name" "Carry out the plan, one step at a time."
	cd "$P" || fail "no $P"
	run_lg --session "$id" -vv -- timeout 90 "${AGENT_CMD[@]}" >"$out" 2>&1
	cd "$T" || fail "no $T"
	stop_mock_llm
	if [ "$RC" != 86 ]; then
		bad "$name ($id): exit status $RC, expected 86 (stopped at turn 7); $(tail -3 "$out")
  the proxy saw:
$(proxy_view "$out")"
		return 1
	fi
	# the model's calls: the seven commands in order, one a response
	if ! python3 - "$MOCK_LOG" "$T/cmds.$name" >"$T/py.out" 2>&1 <<-'PY'; then
		import json, sys
		want = [l.rstrip("\n") for l in open(sys.argv[2]) if l.strip()]
		got = []
		for l in open(sys.argv[1]):
		    c = json.loads(l).get("call")
		    if c:
		        got.append(c["args"].get("command", c["args"].get("cmd")))
		if got != want:
		    sys.exit(f"calls made: {got}")
	PY
		bad "$name ($id): the model's calls: $(tail -1 "$T/py.out")"
		return 1
	fi
	# turns 1..6 done, turn 7 stopped part of the way
	mf "$name" "$P" >"$T/$id.m"
	if ! diff <(not_sub "$T/ref7.m") <(not_sub "$T/$id.m") >"$T/$id.diff"; then
		bad "$name ($id): after the session the tree is not commands 1..6's: $(head -12 "$T/$id.diff")"
		return 1
	fi
	local left all
	left=$(sub_lines "$T/$id.m" | wc -l)
	all=$(sub_lines "$T/start.m" | wc -l)
	if ! sub_lines "$T/$id.m" | grep -qx 'sub D 0o750' || [ "$left" -ge "$all" ] ||
		[ -n "$(comm -13 <(sub_lines "$T/start.m") <(sub_lines "$T/$id.m"))" ]; then
		bad "$name ($id): sub/ after the trip: $(sub_lines "$T/$id.m" | tr '\n' ';')"
		return 1
	fi
	# lgrun numbered the turns: the trip at turn 7, the recording's turns
	# 1..7 (one call each), each change of the project in the index with
	# the turn of its command
	grep '"event":"trip"' "$STATE/audit.jsonl" | grep "\"session\":\"$id\"" |
		grep '"rule":"volumetric"' | grep -q '"turn":7,' ||
		bad "$name ($id): no volumetric trip record with \"turn\":7: $(grep '"event":"trip"' "$STATE/audit.jsonl" | grep "\"session\":\"$id\"" | cut -c1-300)"
	if ! python3 - "$STATE/sessions/$id.events.jsonl" "$STATE/quarantine/$id.jsonl" "$P" \
		>"$T/py.out" 2>&1 <<-'PY'; then
		import json, sys
		rec = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
		turns = [(e.get("turn"), e.get("tool_calls")) for e in rec
		         if e.get("k") == "turn" and e.get("tool_calls")]
		assert turns == [(i, 1) for i in range(1, 8)], f"the recording's turns: {turns}"
		idx = [json.loads(l) for l in open(sys.argv[2]) if l.strip()]
		p = sys.argv[3] + "/"
		want = {"notes.txt": 1, "old.log": 2, "config.txt": 3, "newdir": 4,
		        "newdir/new.txt": 4, "made.txt": 4, "data.csv": 5, "run.sh": 6}
		got = {}
		for e in idx:
		    if e.get("path", "").startswith(p):
		        got.setdefault(e["path"][len(p):], set()).add(e.get("turn"))
		bad = []
		for f, t in want.items():
		    if got.get(f) != {t}:
		        elsewhere = sorted({e["path"] for e in idx if e.get("path", "").endswith("/" + f)
		                            and not e["path"].startswith(p)})
		        bad.append(f"{f}: turns {got.get(f)} in the index, expected {t}"
		                   + (f" (lines at {elsewhere})" if elsewhere else ""))
		bad += [f"{f}: turns {t} in the index, expected 7" for f, t in got.items()
		        if f.startswith("sub/") and t != {7}]
		sys.exit("; ".join(bad) if bad else 0)
	PY
		bad "$name ($id): the turns: $(tail -1 "$T/py.out")"
	fi
	return 0
}

# rewind NAME ID K [ARGS...]: lgctl rewind ID --turn K; its output in
# RWOUT ($T/ID.K.rw, or .dry), its exit status in RWRC.
rewind() {
	local id=$2 k=$3
	shift 3
	RWOUT=$T/$id.$k.rw
	[ "${1:-}" = --dry-run ] && RWOUT=$T/$id.$k.dry
	"$LGCTL" --state-dir "$STATE" rewind "$id" --turn "$k" "$@" >"$RWOUT" 2>&1
	RWRC=$?
}

# rewound NAME ID K: rewind ID to turn K, which must succeed and leave the
# tree as the reference's; 1 if not (said).
rewound() {
	local name=$1 id=$2 k=$3
	rewind "$@"
	python3 "$MANIFEST" "$P" >"$T/$id.$k.m"
	if [ "$RWRC" != 0 ] || ! diff "$T/ref$k.m" "$T/$id.$k.m" >"$T/$id.$k.diff"; then
		bad "$name ($id): rewind --turn $k: exit status $RWRC; the tree differs from commands 1..$((k - 1))'s (< expected, > found):
$(sed 's/^/    /' "$T/$id.$k.diff" | head -20)
  lgctl rewind said:
$(sed 's/^/    /' "$RWOUT" | tail -25)"
		return 1
	fi
	echo "ok: $name ($id): rewind --turn $k"
}

# dry NAME ID K: a dry run changes nothing: not the tree, not the
# quarantine's index and its files.
dry() {
	local name=$1 id=$2 k=$3 before after
	before=$(python3 "$MANIFEST" "$P"; md5sum "$STATE/quarantine/$id".*)
	rewind "$name" "$id" "$k" --dry-run
	after=$(python3 "$MANIFEST" "$P"; md5sum "$STATE/quarantine/$id".*)
	[ "$RWRC" = 0 ] || bad "$name ($id): rewind --turn $k --dry-run: exit status $RWRC: $(tail -5 "$RWOUT")"
	[ "$before" = "$after" ] ||
		bad "$name ($id): rewind --turn $k --dry-run changed something: $(diff <(echo "$before") <(echo "$after") | head -10)"
	grep -q '^would ' "$RWOUT" || bad "$name ($id): the dry run says nothing it would do: $(tail -5 "$RWOUT")"
}

# set_aside NAME ID: what turn 4 made (made.txt, newdir/new.txt) is gone
# from the tree after a rewind past turn 4, and the index says where it was
# set aside (op set_aside, lgctl restore, undo/put.c), with its content there.
set_aside() {
	local name=$1 id=$2
	if [ -e "$P/made.txt" ] || [ -e "$P/newdir" ]; then
		bad "$name ($id): what turn 4 made is still in the tree"
	fi
	if ! python3 - "$STATE/quarantine/$id.jsonl" "$P" >"$T/py.out" 2>&1 <<-'PY'; then
		import json, os, sys
		idx = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
		for f, body in (("made.txt", "top\n"), ("newdir/new.txt", "new\n")):
		    p = os.path.join(sys.argv[2], f)
		    e = [e for e in idx if e.get("op") == "set_aside" and e.get("path") == p]
		    assert len(e) == 1, f"{f}: {len(e)} set_aside lines in the index"
		    k = e[0].get("kept", "")
		    assert os.path.isfile(k) and open(k).read() == body, f"{f}: not kept as {k}"
	PY
		bad "$name ($id): what turn 4 made is not in the quarantine: $(tail -1 "$T/py.out")"
	fi
}

# every rewind of one CLI
rewinds() {
	local name=$1 k id
	agent_setup "$name"
	printf '%s\n' "${CMDS[@]}" >"$T/cmds.$name"
	[ "$name" = codex ] && sed -i 's/^rm -rf sub$/rm -r sub/' "$T/cmds.$name"

	# 1. one rewind after another, K = 7 down to 1; dry runs between
	id=$name-chain
	if session "$name" "$id"; then
		dry "$name" "$id" 3
		for k in 7 6 5; do rewound "$name" "$id" "$k"; done
		dry "$name" "$id" 2
		for k in 4 3 2 1; do
			rewound "$name" "$id" "$k"
			[ "$k" = 4 ] && set_aside "$name" "$id"
		done
	fi

	# 2. a first rewind to turn 4, then to turn 1: the starting tree
	id=$name-mid
	if session "$name" "$id"; then
		rewound "$name" "$id" 4 && set_aside "$name" "$id"
		rewound "$name" "$id" 1
	fi

	# 3. the user edits config.txt (overwritten at turn 3) after the
	# session: --turn 2 reports the conflict, keeps the user's content
	id=$name-edited
	if session "$name" "$id"; then
		printf 'mode=mine\n' >"$P/config.txt"
		rewind "$name" "$id" 2
		python3 "$MANIFEST" "$P" >"$T/$id.m"
		[ "$RWRC" != 0 ] ||
			bad "$name ($id): a rewind over a file edited since: exit status 0; $(tail -5 "$RWOUT")"
		grep -q "conflict.*$P/config.txt" "$RWOUT" ||
			bad "$name ($id): the conflict on config.txt is not said: $(tail -8 "$RWOUT")"
		[ "$(cat "$P/config.txt")" = mode=mine ] ||
			bad "$name ($id): the user's config.txt is not kept: $(cat "$P/config.txt")"
		diff <(grep -v '^config.txt ' "$T/ref2.m") <(grep -v '^config.txt ' "$T/$id.m") >"$T/$id.diff" ||
			bad "$name ($id): rewind --turn 2 with a conflict: the rest differs from command 1's: $(head -10 "$T/$id.diff")"
	fi
}

ran=() missing=()
for name in ${RW_AGENTS:-claude codex gemini}; do
	if ! AGENT_BIN=$(agent_bin "$name"); then
		missing+=("$name")
		continue
	fi
	ran+=("$name")
	rewinds "$name"
done
[ ${#ran[@]} -gt 0 ] || skip "needs the claude, codex and gemini CLIs (pinned, from npm): run make agents"
[ ${#FAILS[@]} = 0 ] || fail "${#FAILS[@]} failure(s):
$(printf '%s\n' "${FAILS[@]}")"
[ ${#missing[@]} = 0 ] ||
	skip "ran ${ran[*]}: passed; needs the ${missing[*]} CLI(s) (pinned, from npm): run make agents"
pass "${ran[*]}: rewinds to turns 7..1 one after another, a first rewind to turn 4, set-asides, a conflict"
