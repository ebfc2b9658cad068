# An agent told to "drop the old tables" drops ten tables that existed before
# the session, one `psql -c "DROP TABLE tN"` each, on a real PostgreSQL on
# 127.0.0.1 that runs outside the tree. Nothing of it is a file here: what
# lgrun can see is the command line at exec and the wire (issue 38, where
# the default config sees nothing today).
NEEDS="psql python3"
KNOWN=issue-38
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
