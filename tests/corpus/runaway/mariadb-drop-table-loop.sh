# An agent drops ten tables that existed before the session, one `mariadb
# -e "DROP TABLE tN"` each, on a real MariaDB on 127.0.0.1 outside the
# tree. The shim reads MySQL's protocol (COM_QUERY and its OK answer): each
# DROP the server answered is a remote delete, the third trips (issue 38).
NEEDS="mariadb python3"
setup() {
	start_mariadb
	for i in $(seq 1 10); do my_cli shop -e "CREATE TABLE t$i (id int); INSERT INTO t$i VALUES ($i)"; done
}
run() {
	for i in $(seq 1 10); do mariadb -h 127.0.0.1 -P "$MY_PORT" -u root shop -e "DROP TABLE t$i"; done
}
verify() {
	n=$(my_cli -N shop -e "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'shop'")
	[ "$n" -ge 7 ] || bad "$((10 - n)) of the 10 pre-existing tables were dropped"
}
teardown() { stop_mariadb; }
