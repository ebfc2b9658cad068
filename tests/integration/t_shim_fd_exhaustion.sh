#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# With its descriptors used up, lgrun refuses further shim connections and
# keeps working: no spin, the command finishes, the refusals are counted.
# 200 processes alive at once, each holding its shim's connection: they
# sleep until all are started and are then stopped. (With each sleeping 2 s,
# a slow start let the first ones end before the last began, and lgrun never
# ran out: a fresh-clone CI run counted 279 connections and no refusal.)
source "$(dirname "$0")/lib.sh"
need_cmd python3

# lgrun itself gets a small fd limit (it raises only up to the hard limit).
(ulimit -n 64; ulimit -Hn 64; "$LGRUN" --state-dir "$STATE" --session fds -- python3 -c '
import subprocess, sys
ps = [subprocess.Popen(["sleep", "60"]) for _ in range(200)]
for p in ps: p.terminate()
for p in ps: p.wait()
print("done")') >"$T/out" 2>&1
RC=$?
assert_rc 0 "$RC" "many processes with a small descriptor limit: $(tail -3 "$T/out")"
grep -q done "$T/out" || fail "the command did not finish"
[ "$(session_field fds shim_refused)" -ge 1 ] || fail "no refusal counted: $(tail -1 "$STATE/sessions/fds.json")"
# said once, not once per refused process
[ "$(grep -c "a shim connection was refused" "$T/out")" = 1 ] ||
	fail "the refusal should be said once: $(grep -c "a shim connection was refused" "$T/out") lines"
pass
