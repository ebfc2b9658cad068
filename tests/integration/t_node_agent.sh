#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Node (libuv tries io_uring first, uses a thread pool): it must keep working
# under lgrun (io_uring_setup fails with ENOSYS, libuv falls back), its own
# temp files must not count, and a delete loop must be stopped at #3.
source "$(dirname "$0")/lib.sh"
need_cmd node

mkdir -p "$T/own"
run_lg -- node "$FIXTURES/agent_cleanup.js" "$T/own" >"$T/out" 2>&1
assert_rc 0 "$RC" "node doing its own temp files: $(tail -3 "$T/out")"
grep -q done "$T/out" || fail "node did not finish"

mkfiles "$T/data" 6
run_lg -- node "$FIXTURES/agent_cleanup.js" "$T/data" >"$T/out" 2>&1
assert_rc 86 "$RC" "node delete loop"
for i in 3 4 5 6; do
	[ -e "$T/data/f$i" ] || fail "f$i was deleted by node"
done
grep -q '"exe":"node"' "$STATE/audit.jsonl" || fail "the trip record should name node"
pass
