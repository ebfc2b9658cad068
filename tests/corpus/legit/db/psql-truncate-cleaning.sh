# A test suite against a test database made before the session (its tables
# there, empty): between its five tests it empties its three tables with
# TRUNCATE, as DatabaseCleaner's truncation strategy and Django's
# TransactionTestCase do. PostgreSQL's answer to a TRUNCATE cannot tell an
# empty table from a full one; the shim asks the server before the first
# INSERT into each table leaves whether it holds a row (issue 38): none
# does, so every row the cleanings empty is the session's own, and
# emptying a table the session emptied before is no loss either.
NEEDS="psql python3"
setup() {
	start_postgres
	psql -qc "CREATE TABLE users (id int); CREATE TABLE orders (id int); CREATE TABLE lines (id int)"
}
run() {
	set -e
	for t in 1 2 3 4 5; do
		psql -qc "INSERT INTO users VALUES ($t); INSERT INTO orders VALUES ($t); INSERT INTO lines VALUES ($t)"
		[ "$(psql -qtAc 'SELECT count(*) FROM users')" = 1 ]
		psql -qc "TRUNCATE users, orders, lines"
	done
	echo "suite ok"
}
verify() {
	grep -q "suite ok" "$OUT" || bad "the suite did not finish"
}
teardown() { stop_postgres; }
