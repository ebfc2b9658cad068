#!/bin/bash
# SPDX-License-Identifier: MIT
# Routine SQLite maintenance must not trip the guard with the default config:
# deleting half the rows of a WAL-mode database made before the session,
# VACUUM, and a TRUNCATE checkpoint. SQLite shrinks the main file with
# ftruncate (to a smaller, non-zero size) and truncates the -wal file to 0
# bytes on a TRUNCATE checkpoint; it unlinks -wal/-shm when the last
# connection closes.
# Phase 1: the database was closed cleanly before the session, so -wal and
# -shm are born in the session. Phase 2: an "app" process has held the
# database open since before the session, so -wal and -shm are pre-existing
# and the checkpoint truncates a pre-existing -wal to 0 bytes.
source "$(dirname "$0")/lib.sh"
need_cmd python3
PY=$(python3 -c 'import sys; print(sys.executable)') || skip "python3 does not run"
"$PY" -c 'import sqlite3' 2>/dev/null || skip "python3 has no sqlite3 module"

ROWS=4000

mkdb() { # path
	"$PY" - "$1" "$ROWS" <<-'EOF' || fail "fixture: creating $1"
		import sqlite3, sys
		db = sqlite3.connect(sys.argv[1])
		assert db.execute("PRAGMA journal_mode=WAL").fetchone()[0] == "wal"
		db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT, payload BLOB)")
		db.executemany("INSERT INTO t VALUES (?, ?, ?)",
		               ((i, f"row {i}", bytes(200)) for i in range(1, int(sys.argv[2]) + 1)))
		db.commit()
		db.close()
	EOF
}
mkdb "$T/clean.db"
mkdb "$T/held.db"

# The "app": holds held.db open with a committed write in its WAL (its own
# autocheckpoint off, so the WAL stays non-empty) until told to stop.
"$PY" - "$T/held.db" "$T/stop" "$T/ready" <<-'EOF' &
	import os, sqlite3, sys, time
	db = sqlite3.connect(sys.argv[1], isolation_level=None)
	db.execute("PRAGMA wal_autocheckpoint=0")
	db.execute("UPDATE t SET name = name || ' (seen)' WHERE id <= 10")
	open(sys.argv[3], "w").close()
	# Bounded, so it cannot outlive a test that was killed outright.
	deadline = time.time() + 120
	while not os.path.exists(sys.argv[2]) and time.time() < deadline:
	    time.sleep(0.05)
	db.close()
EOF
HOLDER=$!
stop_holder() {
	[ -n "$HOLDER" ] || return 0
	touch "$T/stop"
	wait "$HOLDER" 2>/dev/null
	HOLDER=
}
# Never leave the holder polling for a stop file that cleanup deleted.
trap 'stop_holder; lg_cleanup' EXIT
for _ in $(seq 100); do [ -e "$T/ready" ] && break; sleep 0.1; done
[ -e "$T/ready" ] || { stop_holder; fail "fixture: holder did not start"; }
[ -s "$T/held.db-wal" ] || { stop_holder; fail "fixture: held.db-wal missing or empty"; }
[ ! -e "$T/clean.db-wal" ] || { stop_holder; fail "fixture: clean.db-wal should be gone"; }
# The maintenance job run under lgrun.
cat >"$T/maint.py" <<'EOF'
import sqlite3, sys
for path in sys.argv[1:]:
    db = sqlite3.connect(path, isolation_level=None)
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    db.execute("DELETE FROM t WHERE id % 2 = 0")
    db.execute("VACUUM")
    busy, log, done = db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
    assert busy == 0, f"{path}: checkpoint busy"
    db.close()
EOF
PAGES0=$("$PY" -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("PRAGMA page_count").fetchone()[0])' "$T/clean.db")
sleep 1 # birth times strictly older than the session start

run_lg -- "$PY" "$T/maint.py" "$T/clean.db" "$T/held.db"
RC1=$RC
[ -s "$T/held.db-wal" ] && WAL_AFTER=nonempty || WAL_AFTER=empty
stop_holder
RC=$RC1
assert_no_trip "sqlite delete/vacuum/checkpoint"
assert_rc 0 "$RC" "sqlite delete/vacuum/checkpoint"

for db in clean held; do
	out=$("$PY" - "$T/$db.db" <<-'EOF'
		import sqlite3, sys
		db = sqlite3.connect(sys.argv[1])
		print(db.execute("SELECT count(*), min(id) % 2, max(id) % 2 FROM t").fetchone(),
		      db.execute("PRAGMA journal_mode").fetchone()[0],
		      db.execute("PRAGMA integrity_check").fetchone()[0])
	EOF
	)
	[ "$out" = "($((ROWS / 2)), 1, 1) wal ok" ] || fail "$db.db: got '$out'"
done
# VACUUM really rewrote the clean database: half the rows, fewer pages.
PAGES1=$("$PY" -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("PRAGMA page_count").fetchone()[0])' "$T/clean.db")
[ "$PAGES1" -lt "$PAGES0" ] || fail "clean.db: VACUUM did not shrink it ($PAGES0 -> $PAGES1 pages)"
# The TRUNCATE checkpoint emptied the pre-existing -wal of the held database.
[ "$WAL_AFTER" = empty ] || fail "held.db-wal was not truncated by the checkpoint"

pass
