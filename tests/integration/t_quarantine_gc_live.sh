#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A running session's quarantine is never collected (issue 39, item 7):
# lgctl quarantine gc --max-age 0 ID (and --force) on a live session says
# it is running and skips it; lgrun's own hourly expiry at another
# session's end skips it too, however old its index looks. The session's
# later keeps still work, and lgctl restore puts back all it removed.
source "$(dirname "$0")/lib.sh"

D=$T/data
mkfiles "$D" 4
sleep 0.05

# live SESSION FIRST SECOND: removes FIRST, waits for $T/go.SESSION (10 s
# at most), then removes SECOND; in the background, its pid in LIVE
LIVE=
trap '[ -n "$LIVE" ] && kill "$LIVE" 2>/dev/null && wait "$LIVE"; lg_cleanup' EXIT
live() {
	"$LGRUN" --state-dir "$STATE" --session "$1" -- sh -c \
		'rm "$0"; for i in $(seq 200); do [ -e "$1" ] && break; sleep 0.05; done; rm "$2"' \
		"$2" "$T/go.$1" "$3" 2>"$T/err.$1" &
	LIVE=$!
	for _ in $(seq 1 100); do
		[ -e "$2" ] || break
		sleep 0.05
	done
	[ ! -e "$2" ] || fail "$1 did not remove $2"
}
# finish SESSION: lets it remove its second file and end
finish() {
	touch "$T/go.$1"
	wait "$LIVE"
	assert_rc 0 "$?" "session $1"
	LIVE=
	grep -q "could not be kept" "$T/err.$1" && fail "$1's later keep failed: $(cat "$T/err.$1")"
	[ "$(grep -c '"kind":"file"' "$STATE/quarantine/$1.jsonl")" = 2 ] ||
		fail "$1's index: $(cat "$STATE/quarantine/$1.jsonl")"
}

# 1. gc --max-age 0 of a running session: skipped, and said.
live gclive "$D/f1" "$D/f2"
"$LGCTL" --state-dir "$STATE" quarantine list >"$T/list" || fail "quarantine list"
grep -Eq "^gclive .* running$" "$T/list" || fail "list does not show it running: $(cat "$T/list")"
"$LGCTL" --state-dir "$STATE" quarantine gc --max-age 0 gclive >"$T/gc" || fail "gc: $(cat "$T/gc")"
grep -q "session gclive is running: skipped" "$T/gc" || fail "gc of a running session: $(cat "$T/gc")"
"$LGCTL" --state-dir "$STATE" quarantine gc --force gclive >"$T/gc" || fail "gc --force: $(cat "$T/gc")"
grep -q "session gclive is running: skipped" "$T/gc" || fail "gc --force of a running session: $(cat "$T/gc")"
[ -e "$STATE/quarantine/gclive.jsonl" ] || fail "gc removed a running session's index"
finish gclive
"$LGCTL" --state-dir "$STATE" restore gclive >"$T/out" 2>&1 || fail "restore: $(cat "$T/out")"
[ "$(cat "$D/f1" "$D/f2")" = "$(printf 'data 1\ndata 2')" ] || fail "gclive's files did not come back: $(cat "$T/out")"
# ended, it goes
"$LGCTL" --state-dir "$STATE" quarantine gc --max-age 0 gclive >"$T/gc" || fail "gc after the end: $(cat "$T/gc")"
grep -q "removed   gclive" "$T/gc" || fail "an ended session was not collected: $(cat "$T/gc")"

# 2. lgrun's expiry, at another session's end: a running session whose
# index is 8 days old is left alone.
live exlive "$D/f3" "$D/f4"
touch -d '8 days ago' "$STATE/quarantine/exlive.jsonl"
touch -d '2 hours ago' "$STATE/quarantine/.expired"
run_lg --session other -v -- true 2>"$T/err"
grep -q "older session(s) expired" "$T/err" && fail "a running session was expired: $(cat "$T/err")"
[ -e "$STATE/quarantine/exlive.jsonl" ] || fail "the expiry removed a running session's index"
finish exlive
"$LGCTL" --state-dir "$STATE" restore exlive >"$T/out" 2>&1 || fail "restore: $(cat "$T/out")"
[ "$(cat "$D/f3" "$D/f4")" = "$(printf 'data 3\ndata 4')" ] || fail "exlive's files did not come back: $(cat "$T/out")"
pass
