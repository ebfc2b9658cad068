#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The shim's probe of a TRUNCATE's tables on PostgreSQL's wire (issue 38),
# against a real PostgreSQL 15, psql under lgrun:
#  - three empty tables emptied, then one again, with the client's
#    client_min_messages at debug5: the server's notices for the probe's
#    own transaction come inside its answer and are handed to psql (which
#    prints them), psql reads its own answers and nothing else of the
#    probe's, and nothing is counted;
#  - what the probe cannot vouch for counts as before: a table whose
#    row-level security hides its rows from the role (the probe fails:
#    row_security off), an empty table emptied inside a transaction block
#    (no probe), a full table: three remote deletes, the trip at the third.
source "$(dirname "$0")/lib.sh"
need_cmd psql

PG_BIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
[ -n "$PG_BIN" ] && [ -x "$PG_BIN/initdb" ] || skip "needs PostgreSQL (make deps installs postgresql)"
PG_AS=()
PG_DIR=$T/pg
mkdir -p "$PG_DIR"
chmod 755 "$T"
if [ "$(id -u)" = 0 ]; then
	id postgres >/dev/null 2>&1 || skip "needs the postgres user (Debian's postgresql package)"
	chown postgres: "$PG_DIR"
	PG_AS=(runuser -u postgres --)
fi
"${PG_AS[@]}" "$PG_BIN/initdb" -D "$PG_DIR/data" --auth=trust -U postgres >"$T/initdb.log" 2>&1 ||
	fail "initdb: $(tail -n 3 "$T/initdb.log")"
PGPORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"${PG_AS[@]}" "$PG_BIN/postgres" -D "$PG_DIR/data" -p "$PGPORT" -k "$PG_DIR" \
	-c listen_addresses=127.0.0.1 -c fsync=off >"$T/pg.log" 2>&1 &
echo $! >>"$T/pids"
export PGHOST=127.0.0.1 PGPORT PGUSER=postgres PGDATABASE=postgres
for _ in $(seq 1 100); do psql -qtAc 'SELECT 1' >/dev/null 2>&1 && break; sleep 0.1; done
psql -qtAc 'SELECT 1' >/dev/null 2>&1 || fail "PostgreSQL did not start: $(tail -n 3 "$T/pg.log")"
lg_cleanup() {
	"${PG_AS[@]}" "$PG_BIN/pg_ctl" -D "$PG_DIR/data" stop -m immediate >/dev/null 2>&1
	kill $(cat "$T/pids" 2>/dev/null) 2>/dev/null
	chmod -R u+w "$T" 2>/dev/null
	rm -rf "$T"
}
trap 'lg_cleanup' EXIT

psql -q >"$T/setup.log" 2>&1 <<'SQL' || fail "setup: $(tail -n 3 "$T/setup.log")"
CREATE TABLE e1 (id int); CREATE TABLE e2 (id int); CREATE TABLE e3 (id int);
CREATE TABLE e4 (id int);
CREATE TABLE f1 AS SELECT generate_series(1, 10) AS id;
CREATE TABLE r1 (id int, owner text);
INSERT INTO r1 VALUES (1, 'postgres');
ALTER TABLE r1 ENABLE ROW LEVEL SECURITY;
CREATE POLICY mine ON r1 USING (owner = current_user);
CREATE ROLE bob LOGIN;
GRANT SELECT, TRUNCATE ON r1 TO bob;
SQL

# 1: empty tables, the probe's notices handed to psql
run_lg -vv -- psql -c "SET client_min_messages = debug5" -c "TRUNCATE e1, e2, e3" \
	-c "TRUNCATE e1" >"$T/1.out" 2>"$T/1.err"
assert_rc 0 "$RC" "empty tables: $(tail -n 5 "$T/1.err")"
assert_no_trip "empty tables"
[ "$(grep -c '^TRUNCATE TABLE' "$T/1.out")" = 2 ] || fail "empty tables: psql's answers: $(cat "$T/1.out")"
grep -q 'exists\|lost synchronization\|unexpected' "$T/1.out" "$T/1.err" &&
	fail "the probe's answer reached psql: $(grep 'exists\|lost synchronization\|unexpected' "$T/1.out" "$T/1.err")"
# the probe's transaction said by the server: psql's two, and the probe's
# one (e1 asked about once on the connection)
n=$(grep -c 'DEBUG:  StartTransaction' "$T/1.err")
[ "$n" = 3 ] || fail "the notices read during the probe were not handed to psql ($n transactions said, not 3)"
grep -q 'deleted off this host' "$T/1.err" && fail "an empty table was counted: $(grep 'deleted off' "$T/1.err")"
[ "$(grep -c 'made by the session: postgres://.*/e[123]$' "$T/1.err")" = 3 ] ||
	fail "the empty tables were not found empty: $(grep -i 'made by\|probe' "$T/1.err")"

# 2: what the probe cannot vouch for counts
run_lg -vv -- bash -c 'psql -U bob -c "TRUNCATE r1"; psql -c "BEGIN" -c "TRUNCATE e4" -c "COMMIT";
	psql -c "TRUNCATE f1"; psql -c "TRUNCATE e1"' >"$T/2.out" 2>"$T/2.err"
assert_rc 86 "$RC" "counted: $(tail -n 5 "$T/2.err")"
for t in r1 e4 f1; do
	grep -q "deleted off this host.*TRUNCATE TABLE postgres://.*/$t;" "$T/2.err" ||
		fail "TRUNCATE $t was not counted: $(grep 'deleted off\|made by' "$T/2.err")"
done
[ "$(psql -qtAc 'SELECT count(*) FROM r1')" = 0 ] || fail "bob's TRUNCATE r1 did not run"
pass
