#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# lgctl report by turns (issue 40), on a real Claude Code session against
# the mock model, one shell command a turn: (1) an append, (2) an rm,
# (3) a new file, a rename and the rm of a pre-existing file with a hostile
# name (markup, an ESC byte, a byte that is not UTF-8): the 2nd delete,
# where lgrun decides a note for the model; (4) a new file and two rms:
# the 3rd delete trips. The HTML page and the text form (--text, -o FILE.txt) have one
# section per turn with its tool call, what it changed (paths relative to
# the session's folder), the note sent in full (the audit's steer text),
# the trip, its events (what matters shown, the routine folded in
# <details> with their number) and its rewind command, which works; the
# name is escaped, both stay valid UTF-8, no ESC byte. lgctl replay shows
# where each turn began and the trip's turn.
source "$(dirname "$0")/lib.sh"
need_cmd python3
need_agent claude

P=$T/work/proj
mkdir -p "$P/sub" "$T/steps"
BAD=$(printf 'a<script>&"b\033[31m\377.txt')
echo notes >"$P/notes.txt"
echo gone >"$P/gone.txt"
echo old >"$P/old.txt"
echo bad >"$P/$BAD"
echo a >"$P/sub/a"
echo b >"$P/sub/b"
echo 'echo more >>notes.txt' >"$T/steps/1.sh"
echo 'rm gone.txt' >"$T/steps/2.sh"
echo 'echo new >made.txt && mv old.txt renamed.txt && rm -- ./a\<script\>*' >"$T/steps/3.sh"
echo 'echo four >four.txt && rm sub/a sub/b' >"$T/steps/4.sh"
sleep 0.05 # pre-existing: older than the session

start_mock_llm --script shell_cmds 4 --cmd "sh $T/steps/{i}.sh"
agent_setup claude
agent_cmd claude "Do the steps." 20
cd "$P" || fail "no project"
run_lg --session rt -- timeout 120 "${AGENT_CMD[@]}" >"$T/rt.out" 2>&1
[ "$RC" = 86 ] || fail "the session ended with $RC, expected 86 (the trip at turn 4): $(tail -3 "$T/rt.out")"
[ ! -e "$P/gone.txt" ] && [ -e "$P/renamed.txt" ] && [ -e "$P/four.txt" ] && [ -e "$P/sub/a" ] ||
	fail "the steps did not run as planned: $(ls "$P" "$P/sub")"
grep '"event":"steer"' "$STATE/audit.jsonl" | grep -q '"turn":3' ||
	fail "no note for the model in turn 3: $(grep -o '"event":"[a-z_]*"[^}]*"turn":[0-9]*' "$STATE/audit.jsonl" | head)"

cd "$T" || fail "no $T"
"$LGCTL" --state-dir "$STATE" report rt -o "$T/rt.html" >"$T/out" || fail "report: $(cat "$T/out")"
grep -q "^report: $T/rt.html$" "$T/out" || fail "report said: $(cat "$T/out")"
"$LGCTL" --state-dir "$STATE" report rt --text >"$T/rt.txt" || fail "report --text"
"$LGCTL" --state-dir "$STATE" report rt -o "$T/rt2.txt" >"$T/out" || fail "report -o FILE.txt"
grep -q "^report: $T/rt2.txt$" "$T/out" || fail "report -o FILE.txt said: $(cat "$T/out")"
cmp -s "$T/rt.txt" "$T/rt2.txt" || fail "-o FILE.txt is not the text form: $(diff "$T/rt.txt" "$T/rt2.txt" | head -5)"
"$LGCTL" --state-dir "$STATE" replay rt >"$T/replay.txt"
[ $? = 1 ] || fail "replay rt: expected a trip (exit 1): $(cat "$T/replay.txt")"

python3 - "$T/rt.html" "$T/rt.txt" "$STATE/audit.jsonl" "$T/steps" "$P" "$T/replay.txt" <<'PY' || fail "the report by turns (above)"
import json, re, sys
from html.parser import HTMLParser

page_b, text_b = open(sys.argv[1], "rb").read(), open(sys.argv[2], "rb").read()
steps, proj = sys.argv[4], sys.argv[5]
replay = open(sys.argv[6]).read()
for name, b in (("page", page_b), ("text", text_b)):
    b.decode("utf-8")  # strict: valid UTF-8
    assert b"\x1b" not in b, "an ESC byte in the %s" % name
page, text = page_b.decode(), text_b.decode()
notes = [json.loads(l) for l in open(sys.argv[3])
         if '"event":"steer"' in l and '"session":"rt"' in l]
assert notes, "no steer record"

class P(HTMLParser):
    """Each turn's section: its calls, change rows, note texts, trip,
    events that matter, folded events (summary and rows), rewind."""
    def __init__(s):
        super().__init__(convert_charrefs=True)
        s.turns, s.cur, s.stack, s.scripts = {}, None, [], 0
    def handle_starttag(s, tag, a):
        a = dict(a); c = a.get("class", "")
        if tag == "script": s.scripts += 1
        if tag == "section" and "turn" in c.split():
            s.cur = s.turns.setdefault(int(a["data-turn"]), {
                "calls": [], "changes": [], "notes": [], "trip": "",
                "matters": 0, "folded": None, "folded_rows": 0,
                "summary": "", "rewind": "", "row": None})
        s.stack.append((tag, c, a))
        u = s.cur
        if u is None: return
        if tag == "details" and "folded" in c: u["folded"] = int(a["data-folded"])
        if tag == "tr" and "change" in c.split(): u["row"] = []
        if tag == "tr" and s.inside("table", "events") and not s.inside("thead"):
            if s.inside("details"): u["folded_rows"] += 1
            else: u["matters"] += 1
    def inside(s, tag, cls=None):
        return any(t == tag and (cls is None or cls in c.split()) for t, c, _ in s.stack)
    def handle_endtag(s, tag):
        while s.stack:
            t, c, a = s.stack.pop()
            if t == tag: break
        if tag == "section": s.cur = None
        if tag == "tr" and s.cur and s.cur["row"] is not None:
            s.cur["changes"].append(tuple(x.strip() for x in s.cur["row"])); s.cur["row"] = None
    def handle_data(s, d):
        u = s.cur
        if u is None: return
        if s.inside("ol", "calls"): u["calls"].append(d)
        if u["row"] is not None and s.stack and s.stack[-1][0] == "td": u["row"].append(d)
        elif u["row"] is not None and s.inside("td") and u["row"]: u["row"][-1] += d
        if s.inside("pre", "note-text"): u["notes"].append(d)
        if s.inside("p", "trip"): u["trip"] += d
        if s.inside("summary") and s.inside("details", "folded"): u["summary"] += d
        if s.inside("p", "rewind") and s.inside("code"): u["rewind"] += d

p = P(); p.feed(page)
assert p.scripts == 1, "a <script> element from the session's strings (%d)" % p.scripts
t = p.turns
assert {1, 2, 3, 4} <= set(t) and max(t) == 4, "turn sections: %s" % sorted(t)
for k in (1, 2, 3, 4):
    u = t[k]
    assert u["rewind"] == "lgctl rewind rt --turn %d" % k, (k, u["rewind"])
    assert "".join(u["calls"]).strip().endswith("sh %s/%d.sh" % (steps, k)), (k, u["calls"])
    assert "Bash" in "".join(u["calls"]), (k, u["calls"])
    if u["folded"] is not None:
        assert u["folded"] == u["folded_rows"], (k, u["folded"], u["folded_rows"])
        assert "%d routine event(s) folded" % u["folded"] in u["summary"], (k, u["summary"])
changes = {k: [c[:2] for c in t[k]["changes"]] for k in t}
assert ("appended to", "notes.txt") in changes[1], changes[1]
assert ("removed", "gone.txt") in changes[2], changes[2]
assert ("created", "made.txt") in changes[3], changes[3]
assert ("renamed", "old.txt \u2192 renamed.txt") in changes[3], changes[3]
shown = 'a<script>&"b\\x1b[31m\\xff.txt'
assert ("removed", shown) in changes[3], changes[3]
# in the project (relative; the agent's own files elsewhere are absolute)
inside = {k: [c for c in v if not c[1].startswith("/")] for k, v in changes.items()}
assert inside[4] == [("created", "four.txt")], changes[4]  # sub/a refused
assert inside[1] == [("appended to", "notes.txt")], changes[1]
assert inside[2] == [("removed", "gone.txt")], changes[2]
# folded: the agent's own routine events (its session_owned files, results)
assert sum(u["folded"] or 0 for u in t.values()) > 0, "nothing folded"
# what matters: each delete of pre-existing data (the note's, the kill)
assert [t[k]["matters"] for k in (1, 2, 3, 4)] == [0, 1, 1, 1], [t[k]["matters"] for k in t]
assert re.search(r'<tr class="kill"><td>[0-9.]+</td><td>seccomp</td><td>destructive</td><td>unlink</td><td>sub/a</td>', page)
# the note sent in turn 3, in full (controls shown as the terminal's escapes)
want = [n["text"].replace("\x1b", "\\x1b") for n in notes if n.get("turn") == 3]
got = "".join(t[3]["notes"])
assert want and want[0] == got, "the note of turn 3:\n%r\nwant\n%r" % (got, want[:1])
assert not t[1]["notes"] and not t[2]["notes"], "a note in turns 1-2"
assert "Tripped in this turn" in t[4]["trip"] and "volume_exceeded" in t[4]["trip"], t[4]["trip"]
assert not t[3]["trip"], t[3]["trip"]
# escaped: the name's markup never reaches the page as markup
assert "<script>&" not in page and 'a&lt;script&gt;&amp;&quot;b\\x1b[31m\\xff.txt' in page

# the text form: the same turns
for k in (1, 2, 3, 4):
    assert re.search(r"^== Turn %d  .*\+[0-9.]+s ==$" % k, text, re.M), "no turn %d in the text" % k
    assert "rewind: lgctl rewind rt --turn %d\n" % k in text, k
    assert "    Bash: sh %s/%d.sh\n" % (steps, k) in text, k
assert re.search(r"^    removed +gone\.txt$", text, re.M), "the text's turn 2"
assert re.search(r"^    renamed +old\.txt -> renamed\.txt$", text, re.M), "the text's rename"
assert re.search(r"^    removed +a<script>&\"b\\x1b\[31m\\xff\.txt$", text, re.M), "the hostile name in the text"
first = want[0].split("\n")[0]
assert "    | " + first + "\n" in text, "the note's first line in the text"
assert re.search(r"^  TRIPPED in this turn", text, re.M)
assert re.search(r"^  events: \d+ that matter; \d+ routine, folded \(", text, re.M)

# replay: where each turn began, the trip's turn
assert "turns: 4 " in replay, replay
for k in (1, 2, 3, 4):
    assert re.search(r"^  turn %d at [0-9.]+s, 1 call\(s\): Bash: sh %s/%d\.sh" % (k, re.escape(steps), k), replay, re.M), (k, replay)
assert re.search(r"^  turn 4 .*<- trips in it$", replay, re.M), replay
assert re.search(r"^  trips at event \d+ \([0-9.]+s\): [a-z]+ by [a-z_]+ \([a-z_]+\) in turn 4: ", replay, re.M), replay
assert "not understood" not in replay, replay
PY

# the rewind the page names for turn 3 puts the project back as it was
args=$(grep '^  rewind: lgctl rewind rt --turn 3$' "$T/rt.txt" | sed 's/^  rewind: lgctl //')
[ -n "$args" ] || fail "no rewind command for turn 3 in the text"
# shellcheck disable=SC2086 # the command's words
"$LGCTL" --state-dir "$STATE" $args >"$T/rw.out" 2>&1 || fail "$args: $(cat "$T/rw.out")"
[ -e "$P/old.txt" ] && [ ! -e "$P/renamed.txt" ] && [ ! -e "$P/made.txt" ] && [ -e "$P/$BAD" ] &&
	[ -e "$P/sub/a" ] && [ ! -e "$P/gone.txt" ] && [ ! -e "$P/four.txt" ] ||
	fail "rewound to turn 3: $(ls "$P" "$P/sub" | cat -v)"
pass
