#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A tree that works in a mount namespace of its own (Codex's bwrap sandbox
# binds the project into a new root): a folder read back there is named as
# lgrun reaches it, so the undo's records name paths a restore can act on
# (issue 40: Codex's rewinds were named /newroot/tmp/...). Needs root
# (unshare -m, mount --bind).
source "$(dirname "$0")/lib.sh"
need_root "a mount namespace of the tree's own"
need_cmd unshare
P=$T/proj
mkdir -p "$P" "$T/nr"
echo data >"$P/pre.txt"
echo more >"$P/app.txt"
sleep 0.05
run_lg --session ns -- unshare -m sh -c "
	mount --bind / '$T/nr' || exit 9
	cd '$T/nr$P' || exit 8
	echo new >made.txt && mkdir made.d && echo x >>app.txt && rm pre.txt"
assert_rc 0 "$RC" "a tree in a mount namespace of its own"
idx=$STATE/quarantine/ns.jsonl
[ -f "$idx" ] || fail "nothing recorded for the undo"
grep -q "\"path\":\"$T/nr" "$idx" && fail "a record names the namespace's path: $(grep "$T/nr" "$idx" | head -2)"
for f in made.txt made.d app.txt pre.txt; do
	grep -q "\"path\":\"$P/$f\"" "$idx" || fail "no record of $P/$f: $(cut -c1-200 "$idx")"
done
"$LGCTL" --state-dir "$STATE" restore ns >"$T/out" 2>&1 || fail "restore: $(cat "$T/out")"
[ "$(cat "$P/pre.txt")" = data ] || fail "pre.txt not restored: $(cat "$T/out")"
[ "$(cat "$P/app.txt")" = more ] || fail "app.txt not cut back: $(cat "$T/out")"
[ ! -e "$P/made.txt" ] && [ ! -e "$P/made.d" ] || fail "what the tree made is still there: $(cat "$T/out")"
pass
