#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# lgctl report: one self-contained HTML page of a session (nothing fetched),
# loaded in headless Chromium: its script runs without a console error, the
# DOM has the trip marker on the window chart and the max_ops threshold
# line, the events and the quarantine; a screenshot is taken. A session
# without a trip has no marker.
source "$(dirname "$0")/lib.sh"
need_cmd chromium

chrome() { # args...: headless, a profile of its own, root allowed
	timeout 90 chromium --headless --no-sandbox --disable-gpu --no-first-run \
		--user-data-dir="$T/chrome" --enable-logging=stderr --v=0 "$@"
}

mkfiles "$T/d" 6
run_lg --session rep1 -- bash -c 'for f in "$0"/f*; do rm "$f"; done' "$T/d" 2>/dev/null
assert_rc 86 "$RC" "the delete loop"
"$LGCTL" --state-dir "$STATE" report rep1 -o "$T/rep1.html" >"$T/out" || fail "report: $(cat "$T/out")"
grep -q "^report: $T/rep1.html$" "$T/out" || fail "report said: $(cat "$T/out")"
# self-contained: no file, script, style or image from anywhere else
grep -Eq '(src|href)=' "$T/rep1.html" && fail "the page refers to something outside: $(grep -Eo '(src|href)="[^"]*"' "$T/rep1.html")"

chrome --dump-dom "file://$T/rep1.html" >"$T/dom.html" 2>"$T/console.log" || fail "chromium could not load the page"
grep -Ei 'CONSOLE.*(Uncaught|Error)' "$T/console.log" && fail "console errors: $(grep -Ei 'CONSOLE' "$T/console.log")"
python3 - "$T/dom.html" <<'PY' || fail "the report's DOM: $(head -c 600 "$T/dom.html")"
import re, sys
from html.parser import HTMLParser
class P(HTMLParser):
    def __init__(s):
        super().__init__(); s.ids = {}; s.cls = {}; s.rows = {}; s.table = None; s.body = {}
        s.details = None
    def handle_starttag(s, tag, a):
        a = dict(a)
        if tag == "body": s.body = a
        if "id" in a: s.ids[a["id"]] = (tag, a)
        for c in a.get("class", "").split(): s.cls.setdefault(c, []).append((tag, a))
        if tag == "details": s.details = a.get("class", a.get("id"))
        if tag == "table":
            s.table = a.get("id") or ("folded-events" if s.details == "folded" else a.get("class", "").split()[0])
        if tag == "tr" and s.table: s.rows[s.table] = s.rows.get(s.table, 0) + 1
    def handle_endtag(s, tag):
        if tag == "details": s.details = None
p = P(); p.feed(open(sys.argv[1]).read())
assert p.body.get("data-ready") == "1", "the page's script did not run to its end"
assert p.ids["trip-marker"][0] == "line", "no trip marker on the window chart"
th = p.cls["threshold-line"]
assert len(th) == 1 and th[0][1]["data-max"] == "3", th
assert p.ids["trip-marker"][1]["x1"] == p.ids["trip-marker-timeline"][1]["x1"]
# no model seen: one section with no turn numbering, its events that
# matter shown (the 3 unlinks), the routine one folded (the flow's call)
assert p.ids["turn-0"][0] == "section" and "turn-1" not in p.ids, p.ids.keys()
assert p.rows["events"] == 1 + 3, p.rows            # header, 3 unlinks
assert p.rows["folded-events"] == 1 + 1, p.rows     # header, the call
assert p.cls["folded"][0][1]["data-folded"] == "1", p.cls["folded"]
assert p.rows["quarantine"] == 1 + 2, p.rows        # header, the two kept
page = open(sys.argv[1]).read()
assert "Tripped at" in page and "No turns: no model was seen" in page
assert "<summary>1 routine event(s) folded (call 1)</summary>" in page
assert re.search(r"<td>call</td><td></td><td>to rep1</td>", page), "the flow call does not say to whom: %s" % re.findall(r"<tr class=[^>]*><td>0[^\n]*?</tr>", page)[:1]
assert re.search(r"<details[^>]*>.*<td>call</td>.*</details>", page, re.S), "the call is not folded"
assert "<code>lgctl restore rep1 --since DUR</code>" in page and "lgctl rewind" not in page
assert "<p class=\"trip\">Tripped in this turn" not in page  # no turns

PY
chrome --window-size=1100,1400 --screenshot="$T/rep1.png" "file://$T/rep1.html" >/dev/null 2>&1
[ "$(head -c 8 "$T/rep1.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] || fail "no PNG screenshot"
[ "$(stat -c %s "$T/rep1.png")" -gt 20000 ] || fail "the screenshot is nearly empty"
# the quarantine's entries say whether they are still held: held, then
# gone once restored (and the page stops offering the restore)
[ "$(grep -c '<td class="held">held</td>' "$T/rep1.html")" = 2 ] || fail "the kept files are not shown as held"
grep -q "Put it back: <code>lgctl restore rep1</code>" "$T/rep1.html" || fail "no restore line while files are held"
# the note decided at the 2nd delete ([steer], issue 28)
grep -q '<p id="steer">lgrun decided 1 note(s) for the model before acting' "$T/rep1.html" ||
	fail "the report does not show the note: $(grep -o '<p id="outcome".*' "$T/rep1.html" | head -3)"
"$LGCTL" --state-dir "$STATE" restore rep1 >/dev/null || fail "restore rep1"
"$LGCTL" --state-dir "$STATE" report rep1 -o "$T/rep1b.html" >/dev/null || fail "report after the restore"
[ "$(grep -c '<td class="gone">gone: restored or collected</td>' "$T/rep1b.html")" = 2 ] ||
	fail "restored entries are not shown as gone"
grep -q "Put it back" "$T/rep1b.html" && fail "the page offers a restore of nothing"

# no trip: no marker, the outcome says so
run_lg --session rep2 -- bash -c 'mkdir "$0/new" && echo x >"$0/new/y" && rm "$0/new/y"' "$T"
"$LGCTL" --state-dir "$STATE" report rep2 -o "$T/rep2.html" >/dev/null || fail "report rep2"
chrome --dump-dom "file://$T/rep2.html" >"$T/dom2.html" 2>/dev/null
grep -q 'id="trip-marker"' "$T/dom2.html" && fail "a trip marker without a trip"
grep -q 'No trip (0 warning(s))' "$T/dom2.html" || fail "rep2's outcome: $(grep -o '<p id="outcome"[^<]*' "$T/dom2.html")"
grep -q 'id="quarantine-empty"' "$T/dom2.html" || fail "rep2 kept something?"
"$LGCTL" --state-dir "$STATE" report nosuch >"$T/out" 2>&1
[ $? = 2 ] && grep -q "no recording of session 'nosuch'" "$T/out" || fail "a missing session: $(cat "$T/out")"
pass
