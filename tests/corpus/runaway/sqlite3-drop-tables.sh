# An agent drops ten tables of a SQLite database that existed before the
# session, one `sqlite3 app.db "DROP TABLE tN"` each. The statements are
# read at each exec (issue 38); the database is a file of this host, kept
# at its first write: stopped at the third, and what the first two dropped
# comes back with lgctl restore.
NEEDS=sqlite3
setup() {
	for i in $(seq 1 10); do echo "CREATE TABLE t$i (id int); INSERT INTO t$i VALUES ($i);"; done |
		sqlite3 app.db
	manifest db app.db
}
run() {
	for i in $(seq 1 10); do sqlite3 app.db "DROP TABLE t$i"; done
}
verify() {
	n=$(sqlite3 app.db "SELECT count(*) FROM sqlite_master WHERE type = 'table'")
	[ "$n" -ge 7 ] || bad "$((10 - n)) of the 10 pre-existing tables were dropped"
	all_kept db # the file as it was before the session, whole
}
