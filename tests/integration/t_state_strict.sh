#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A state dir that another user owns or prepared is refused, as ssh's
# StrictModes refuses a home (issue 39, item 11): root appends its audit
# records, markers and recordings there, and would write wherever that user
# pointed. Each case: lgrun refuses to start (125), says what to fix, runs
# nothing and writes nothing through what was planted:
#  1. the state dir is nobody's; a folder above it is nobody's; it is open
#     to everyone;
#  2. audit.jsonl is nobody's symlink to a root-only file;
#  3. sessions is a symlink; the session's killed marker is a symlink;
#  4. quarantine/ was made first by nobody (every keep would have failed);
#  5. the state dir itself is a symlink; a configured audit_log is one;
#  6. lgctl doctor says lgrun refuses it;
#  7. a root-owned symlink above it (as /var/run) and a fresh dir are fine.
source "$(dirname "$0")/lib.sh"
need_root "plants another user's files (nobody's) in the state dir"
id nobody >/dev/null 2>&1 || skip "needs a user nobody"
NU=$(id -u nobody)

refused() { # what expected-stderr-regex lgrun-args...
	local what=$1 re=$2
	shift 2
	rm -f "$T/ran"
	"$LGRUN" "$@" -- touch "$T/ran" 2>"$T/err"
	RC=$?
	assert_rc 125 "$RC" "$what: $(cat "$T/err")"
	[ ! -e "$T/ran" ] || fail "$what: the command ran"
	grep -Eq "$re" "$T/err" || fail "$what: stderr '$(cat "$T/err")' does not match '$re'"
}

# 1. Whose the dir and the folders above it are, and who may write them.
S=$T/s1 && mkdir -m 750 "$S" && chown nobody "$S"
refused "a state dir of nobody's" "$S belongs to uid $NU: .*chown it, or choose another --state-dir" --state-dir "$S"
[ -z "$(ls -A "$S")" ] || fail "lgrun wrote into nobody's state dir: $(ls -A "$S")"
mkdir -m 755 "$T/up" && chown nobody "$T/up"
refused "a folder above it nobody's" "$T/up belongs to uid $NU" --state-dir "$T/up/state"
[ ! -e "$T/up/state" ] || fail "lgrun made its state dir under nobody's folder"
S=$T/s1w && mkdir -m 777 "$S"
refused "a state dir open to everyone" "$S is writable by everyone \(mode 0777\).*chmod go-w $S" --state-dir "$S"

# 2. audit.jsonl: nobody's symlink to a root-only file.
S=$T/s2 && mkdir -m 750 "$S"
echo "root only" >"$T/rootonly" && chmod 600 "$T/rootonly"
ln -s "$T/rootonly" "$S/audit.jsonl" && chown -h nobody "$S/audit.jsonl"
refused "audit.jsonl a symlink" "$S/audit.jsonl is a symlink: remove it, or choose another --state-dir" --state-dir "$S"
[ "$(cat "$T/rootonly")" = "root only" ] || fail "lgrun appended through the audit.jsonl symlink: $(cat "$T/rootonly")"
rm "$S/audit.jsonl" && : >"$S/audit.jsonl" && chown nobody "$S/audit.jsonl"
refused "audit.jsonl nobody's" "$S/audit.jsonl belongs to uid $NU" --state-dir "$S"

# 3. sessions a symlink; the session's killed marker a symlink.
S=$T/s3 && mkdir -m 750 "$S" "$T/elsewhere"
ln -s "$T/elsewhere" "$S/sessions"
refused "sessions a symlink" "$S/sessions is a symlink: remove it" --state-dir "$S"
[ -z "$(ls -A "$T/elsewhere")" ] || fail "lgrun wrote through the sessions symlink: $(ls -A "$T/elsewhere")"
rm "$S/sessions" && mkdir -m 750 "$S/sessions"
ln -s "$T/rootonly" "$S/sessions/mark.killed"
refused "a killed marker a symlink" "$S/sessions/mark.killed is a symlink" --state-dir "$S" --session mark

# 4. quarantine/ made first by nobody: refused at the start, loudly.
S=$T/s4 && mkdir -m 750 "$S"
su -s /bin/sh nobody -c "mkdir -m 700 '$S/quarantine'" 2>/dev/null ||
	{ mkdir -m 700 "$S/quarantine" && chown nobody "$S/quarantine"; }
refused "a quarantine/ of nobody's" "$S/quarantine belongs to uid $NU, not to this user \(uid 0\) nor root: remove it" --state-dir "$S"

# 5. The state dir a symlink; a configured audit_log a symlink.
mkdir -m 750 "$T/real"
ln -s "$T/real" "$T/s5"
refused "the state dir a symlink" "$T/s5 is a symlink: name the folder itself" --state-dir "$T/s5"
[ -z "$(ls -A "$T/real")" ] || fail "lgrun wrote through the state dir's symlink"
ln -s "$T/rootonly" "$T/audit-link"
printf '[guard]\naudit_log = %s\n' "$T/audit-link" >"$T/a.ini"
refused "audit_log a symlink" "$T/audit-link is a symlink" --state-dir "$T/s6" -c "$T/a.ini"
[ "$(cat "$T/rootonly")" = "root only" ] || fail "lgrun appended through audit_log's symlink"

# 6. lgctl doctor says why.
"$LGCTL" --state-dir "$T/s2" doctor --no-canary >"$T/out" 2>&1
grep -q "^  missing   state dir: lgrun refuses it: $T/s2/audit.jsonl belongs to uid $NU" "$T/out" ||
	fail "lgctl doctor: $(grep 'state dir' "$T/out")"

# 7. A root-owned symlink above the dir (as /var/run) is followed; a fresh
#    dir is made, and lgrun runs.
ln -s "$T/real" "$T/rootlink"
"$LGRUN" --state-dir "$T/rootlink/state" -- touch "$T/ran" 2>"$T/err"
assert_rc 0 "$?" "a root-owned symlink above the state dir: $(cat "$T/err")"
[ -e "$T/ran" ] && [ -d "$T/real/state/sessions" ] || fail "the state dir was not made through root's symlink"
"$LGCTL" --state-dir "$T/rootlink/state" doctor --no-canary >"$T/out" 2>&1
grep -q "^  ok        state dir: $T/rootlink/state, this user's, mode 0750" "$T/out" ||
	fail "lgctl doctor on a good dir: $(grep 'state dir' "$T/out")"
pass
