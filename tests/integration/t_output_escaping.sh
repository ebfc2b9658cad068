#!/bin/bash
# SPDX-License-Identifier: MIT
# What lgrun writes stays valid and its own (issue 12): file names with bytes
# that are not UTF-8, terminal escape sequences, CR and newline are deleted
# until the guard trips. Every audit line is JSON (Python's json.loads), the
# exact bytes of a name are in <key>_b64, and neither lgrun's stderr (-vv
# included) nor lgctl status lets a name drive the terminal or forge a line.
. "$(dirname "$0")/lib.sh"
cd "$T" || fail "cd"
mkdir -p names
NAMES=(
	$'bad\xff\xfe'
	$'title\e]0;pwned\a'
	$'clear\e[2J\e[H'
	$'x\nlgrun: all clear, nothing was removed'
	$'cr\rlgrun: forged'
	$'c1\xc2\x9b31m'
)
for n in "${NAMES[@]}"; do printf 'data' >"names/$n"; done

# The agent's name comes from its command: an escape there too.
AGENT=$'ag\e[31mx'
ln -s "$(command -v sh)" "$T/$AGENT"
# Observe mode: every name is deleted and shown (-vv), every would_trip
# recorded.
run_lg -n -vv -s watch -- "$T/$AGENT" -c 'for f in names/*; do rm -- "$f" || exit 1; done' \
	2>"$T/err"
assert_rc 0 "$RC" "deleting files with hostile names (observe)"
for n in "${NAMES[@]}"; do printf 'data' >"names/$n"; done
run_lg -vv -s esc -- "$T/$AGENT" -c 'for f in names/*; do rm -- "$f" || exit 1; done' \
	2>"$T/err2"
assert_rc 86 "$RC" "deleting files with hostile names"

# Every line of the audit log is JSON, and UTF-8.
python3 - "$STATE/audit.jsonl" <<'EOF' || fail "audit.jsonl is not valid UTF-8 JSON"
import json, sys
raw = open(sys.argv[1], "rb").read()
raw.decode("utf-8")  # strict
for line in raw.splitlines():
    json.loads(line)
EOF

# The metrics file's labels (the agent's name) are UTF-8 text too.
python3 - "$STATE/lgrun.prom" <<'EOF' || fail "lgrun.prom has bytes a scraper rejects"
import sys
text = open(sys.argv[1], "rb").read().decode("utf-8")  # strict
assert not any(ord(c) < 0x20 and c != "\n" for c in text), text
assert 'agent="ag\ufffd[31mx"' in text, text
EOF

# The exact bytes of a name that is not UTF-8 are kept.
python3 - "$STATE/audit.jsonl" "$T/names" <<'EOF' || fail "no target_b64 with the exact name"
import base64, json, os, sys
want = os.path.join(os.fsencode(sys.argv[2]), b"bad\xff\xfe")
found = False
for line in open(sys.argv[1], encoding="utf-8"):
    rec = json.loads(line)
    for r in [rec] + rec.get("recent", []):
        if "target_b64" in r:
            assert "\ufffd" in r["target"], r
            if base64.b64decode(r["target_b64"]) == want:
                found = True
sys.exit(0 if found else 1)
EOF

# stderr: no raw control character, no line of ours forged by a name.
check_text() { # file what
	python3 - "$1" "$2" <<'EOF' || fail "$2: $(cat -v "$1" | head -20)"
import sys
data = open(sys.argv[1], "rb").read()
bad = [b for b in data if (b < 0x20 and b not in (0x0a, 0x09)) or b == 0x7f]
if bad:
    print("raw control bytes in %s: %r" % (sys.argv[2], sorted(set(bad))))
    sys.exit(1)
if b"\xc2\x9b" in data:
    print("a raw C1 control in %s" % sys.argv[2])
    sys.exit(1)
for line in data.split(b"\n"):
    if line.startswith(b"lgrun: all clear") or line.startswith(b"lgrun: forged"):
        print("a forged line in %s: %r" % (sys.argv[2], line))
        sys.exit(1)
EOF
}
check_text "$T/err" "lgrun's stderr (-vv, observe)"
check_text "$T/err2" "lgrun's stderr (-vv, a trip)"
grep -q 'x\\nlgrun: all clear' "$T/err" || fail "the newline in a name is not shown escaped"

"$LGCTL" --state-dir "$STATE" status >"$T/status" 2>&1 || fail "lgctl status"
check_text "$T/status" "lgctl status"
"$LGCTL" --state-dir "$STATE" status esc >"$T/status1" 2>&1 || fail "lgctl status ID"
check_text "$T/status1" "lgctl status ID"
grep -q 'u001b' "$T/status1" && fail "lgctl status shows a mangled escape (u001b)"
grep -q 'ag\\x1b\[31mx' "$T/status" || fail "lgctl status does not show the agent escaped: $(cat -v "$T/status")"

# A half line appended to the log does not swallow the next record.
printf '{"half":' >>"$STATE/audit.jsonl"
"$LGCTL" --state-dir "$STATE" reset esc >/dev/null 2>&1 || fail "reset"
tail -n 1 "$STATE/audit.jsonl" | python3 -c 'import json,sys; r=json.loads(sys.stdin.read()); assert r["event"] == "reset", r' ||
	fail "the reset record fused with a half line"
pass
