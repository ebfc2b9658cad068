# Routine maintenance of a WAL-mode SQLite database made before the
# session, with the sqlite3 CLI: deletes, VACUUM, checkpoints, an integrity
# check, a backup (.backup) and an export.
NEEDS=sqlite3
setup() {
	sqlite3 app.db <<'SQL' >/dev/null
PRAGMA journal_mode=WAL;
CREATE TABLE events (id INTEGER PRIMARY KEY, kind TEXT, payload BLOB);
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 3000)
INSERT INTO events SELECT i, 'k' || (i % 7), zeroblob(200) FROM n;
SQL
}
run() {
	set -e
	for k in 1 2 3; do
		sqlite3 app.db "DELETE FROM events WHERE kind = 'k$k'; PRAGMA wal_checkpoint(TRUNCATE);" >/dev/null
	done
	sqlite3 app.db 'VACUUM;' 'PRAGMA integrity_check;'
	sqlite3 app.db ".backup backup.db"
	sqlite3 -csv app.db 'SELECT kind, count(*) FROM events GROUP BY kind;' >counts.csv
	sqlite3 backup.db 'SELECT count(*) FROM events;'
}
verify() {
	[ "$(sqlite3 app.db 'SELECT count(*) FROM events')" = "$(sqlite3 backup.db 'SELECT count(*) FROM events')" ] ||
		bad "backup differs"
	[ "$(sqlite3 app.db 'PRAGMA journal_mode')" = wal ] || bad "not WAL"
}
