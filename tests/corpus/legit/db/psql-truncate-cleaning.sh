# A test suite against a test database made before the session (its tables
# there, empty): between its five tests it empties its three tables with
# TRUNCATE, as DatabaseCleaner's truncation strategy and Django's
# TransactionTestCase do. Emptying them again after the first time is no
# loss (issue 38: a table the session emptied holds only its own rows). The
# first cleaning still counts three TRUNCATEs of pre-existing tables, which
# PostgreSQL's answer cannot tell from the emptying of full ones: a known
# false kill (a TRUNCATE of an empty table destroys nothing).
NEEDS="psql python3"
KNOWN=issue-38
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
