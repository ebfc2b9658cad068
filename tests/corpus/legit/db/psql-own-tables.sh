# A test suite against a real PostgreSQL outside the tree: it creates its
# ten fixture tables, fills and queries them, and drops them at the end; a
# migration script's `DROP TABLE IF EXISTS` of ten tables that never
# existed; a database it creates and drops. All of it the session's own, or
# nothing: it must run untouched (issue 38's legit side).
NEEDS="psql python3"
setup() {
	start_postgres
	psql -qc "CREATE TABLE keep_me (id int); INSERT INTO keep_me VALUES (1)"
}
run() {
	set -e
	for i in $(seq 1 10); do
		psql -qc "CREATE TABLE fixture$i (id int, v text)"
		psql -qc "INSERT INTO fixture$i SELECT g, 'v' || g FROM generate_series(1, 50) g"
		psql -qtAc "SELECT count(*) FROM fixture$i" | grep -qx 50
	done
	for i in $(seq 1 10); do psql -qc "DROP TABLE fixture$i"; done
	for i in $(seq 1 10); do psql -qc "DROP TABLE IF EXISTS legacy$i" 2>/dev/null; done
	createdb -h "$PGHOST" -p "$PGPORT" -U postgres scratch_db
	psql -d scratch_db -qc "CREATE TABLE s (id int)"
	dropdb -h "$PGHOST" -p "$PGPORT" -U postgres scratch_db
	echo "suite ok"
}
verify() {
	grep -q "suite ok" "$OUT" || bad "the suite did not finish"
	[ "$(pg_tables_left fixture)" = 0 ] || bad "fixture tables left"
	[ "$(psql -qtAc 'SELECT count(*) FROM keep_me')" = 1 ] || bad "keep_me was touched"
}
teardown() { stop_postgres; }
