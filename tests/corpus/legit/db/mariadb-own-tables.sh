# A test suite against a real MariaDB outside the tree: it creates its five
# fixture tables and drops them, a migration's DROP TABLE IF EXISTS of five
# tables that never existed, a DELETE of every row of an empty table, and a
# database it creates and drops. All of it the session's own, or nothing
# (issue 38's legit side, MySQL's protocol).
NEEDS="mariadb python3"
setup() {
	start_mariadb
	my_cli shop -e "CREATE TABLE keep_me (id int); INSERT INTO keep_me VALUES (1); CREATE TABLE empty_one (id int)"
}
run() {
	set -e
	for i in $(seq 1 5); do mariadb -h 127.0.0.1 -P "$MY_PORT" -u root shop -e "CREATE TABLE fixture$i (id int); INSERT INTO fixture$i VALUES ($i)"; done
	for i in $(seq 1 5); do mariadb -h 127.0.0.1 -P "$MY_PORT" -u root shop -e "DROP TABLE fixture$i"; done
	for i in $(seq 1 5); do mariadb -h 127.0.0.1 -P "$MY_PORT" -u root shop -e "DROP TABLE IF EXISTS legacy$i"; done
	for i in 1 2 3; do mariadb -h 127.0.0.1 -P "$MY_PORT" -u root shop -e "DELETE FROM empty_one"; done
	mariadb -h 127.0.0.1 -P "$MY_PORT" -u root -e "CREATE DATABASE scratch"
	mariadb -h 127.0.0.1 -P "$MY_PORT" -u root scratch -e "CREATE TABLE a (id int); DROP TABLE a"
	mariadb -h 127.0.0.1 -P "$MY_PORT" -u root -e "DROP DATABASE scratch"
	echo "suite ok"
}
verify() {
	grep -q "suite ok" "$OUT" || bad "the suite did not finish"
	[ "$(my_cli -N shop -e 'SELECT count(*) FROM keep_me')" = 1 ] || bad "keep_me was touched"
}
teardown() { stop_mariadb; }
