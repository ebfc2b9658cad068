#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Rewriting a pre-existing file in place again and again (seek, truncate,
# write: state files, progress files) and repeated SQLite WAL checkpoints
# with the WAL held open by another process lose only the session's own
# writes after the first time: no trip.
source "$(dirname "$0")/lib.sh"
need_cmd python3

echo '{"step": 0}' >"$T/state.json"
python3 - "$T/db.sqlite" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1]); c.execute("pragma journal_mode=wal")
c.execute("create table t(x)"); c.executemany("insert into t values (?)", [(i,) for i in range(2000)])
c.commit(); c.close()
PY
# Another process keeps the database open, so its -wal file pre-exists.
python3 -c '
import sqlite3, sys, time
c = sqlite3.connect(sys.argv[1]); c.execute("select count(*) from t").fetchone()
c.execute("insert into t values (-1)"); c.commit()
open(sys.argv[2], "w").close(); time.sleep(60)' "$T/db.sqlite" "$T/held" &
holder=$!
trap 'kill $holder 2>/dev/null; lg_cleanup' EXIT
for _ in $(seq 1 100); do [ -e "$T/held" ] && break; sleep 0.05; done
[ -e "$T/db.sqlite-wal" ] || skip "sqlite did not keep a WAL file"
sleep 0.05

run_lg -- python3 - "$T/state.json" "$T/db.sqlite" <<'PY'
import json, sqlite3, sys
with open(sys.argv[1], "r+") as f:
    for step in range(1, 8):
        f.seek(0); f.truncate(); f.write(json.dumps({"step": step})); f.flush()
c = sqlite3.connect(sys.argv[2])
for i in range(5):
    c.execute("delete from t where x % 10 = ?", (i,))
    c.commit()
    c.execute("pragma wal_checkpoint(TRUNCATE)").fetchone()
c.close()
PY
assert_rc 0 "$RC" "in-place rewrites and WAL checkpoints"
assert_no_trip "rewrites"
grep -q '"step": 7' "$T/state.json" || fail "the state file was not rewritten"
pass
