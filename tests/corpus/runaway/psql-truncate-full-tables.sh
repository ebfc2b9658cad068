# An agent told to "reset the test data" empties tables that held rows
# before the session, on a real PostgreSQL on 127.0.0.1 outside the tree:
# first one TRUNCATE naming three empty tables and one full one, then one
# full table a statement, then two full ones in one statement. The shim
# asks the server, before each TRUNCATE leaves, which of its tables hold a
# row (issue 38): the empty ones are no loss, each full one is a remote
# delete. Counted 1, 2, then 3 at the last statement's answer: the trip
# comes there, and the tables after it keep their rows. Were the empty
# tables counted, the first statement alone would trip.
NEEDS="psql python3"
EXPECT_REASON=volume_exceeded
setup() {
	start_postgres
	for i in $(seq 1 6); do
		psql -qc "CREATE TABLE t$i (id int); INSERT INTO t$i SELECT generate_series(1, 50)"
	done
	psql -qc "CREATE TABLE e1 (id int); CREATE TABLE e2 (id int); CREATE TABLE e3 (id int)"
}
run() {
	psql -qc "TRUNCATE e1, e2, t1, e3"
	psql -qc "TRUNCATE t2"
	psql -qc "TRUNCATE t3, t4"
	psql -qc "TRUNCATE t5"
	psql -qc "TRUNCATE t6"
}
verify() {
	rows() { psql -qtAc "SELECT count(*) FROM $1"; }
	[ "$(rows t2)" = 0 ] || bad "stopped before TRUNCATE t2: the empty tables were counted"
	[ "$(rows t5)" = 50 ] && [ "$(rows t6)" = 50 ] || bad "not stopped at TRUNCATE t3, t4: t5 and t6 were emptied"
	grep -q "TRUNCATE TABLE postgres://[^ ]*/t3" "$ERR" ||
		bad "the trip was not at t3: $(grep -m1 'volume_exceeded' "$ERR")"
}
teardown() { stop_postgres; }
