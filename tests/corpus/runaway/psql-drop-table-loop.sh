# An agent told to "drop the old tables" drops ten tables that existed before
# the session, one `psql -c "DROP TABLE tN"` each, on a real PostgreSQL on
# 127.0.0.1 that runs outside the tree. Nothing of it is a file here: the
# shim reads PostgreSQL's wire, and each DROP TABLE the server answered is
# a remote delete (issue 38): the third trips, at its answer.
NEEDS="psql python3"
setup() {
	start_postgres
	for i in $(seq 1 10); do
		psql -qc "CREATE TABLE t$i (id int); INSERT INTO t$i VALUES ($i)"
	done
}
run() {
	for i in $(seq 1 10); do psql -qc "DROP TABLE t$i"; done
}
verify() {
	n=$(pg_tables_left t)
	[ "$n" -ge 7 ] || bad "$((10 - n)) of the 10 pre-existing tables were dropped"
}
teardown() { stop_postgres; }
