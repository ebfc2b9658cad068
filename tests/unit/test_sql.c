// SPDX-License-Identifier: MIT
/*
 * Unit tests for preload/sql.c: what an SQL statement does to data, and
 * PostgreSQL's startup, Query and Parse messages (issue 38).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "../../preload/sql.h"

/* The statements of text, one line each: "KIND TAG name,name" or "-". */
static void stmts(const char *text, char *out, size_t size)
{
	const char *p = text, *e = text + strlen(text);
	struct lg_sql_stmt st;
	size_t n = 0;

	out[0] = '\0';
	while (lg_sql_next(&p, e, &st) && n < size) {
		if (st.kind == LG_SQL_OTHER) {
			n += (size_t)snprintf(out + n, size - n, "-\n");
			continue;
		}
		n += (size_t)snprintf(out + n, size - n, "%s%s %s ",
				      st.kind == LG_SQL_DESTROY ? "destroy" :
								  "create",
				      st.database ? " db" : "", st.tag);
		for (unsigned i = 0; i < st.n; i++)
			n += (size_t)snprintf(out + n, size - n, "%s%s",
					      i ? "," : "", st.names[i]);
		n += (size_t)snprintf(out + n, size - n, "\n");
	}
}

#define CHECK(text, want)                        \
	do {                                     \
		char got_[1024];                 \
		stmts(text, got_, sizeof(got_)); \
		assert_string_equal(got_, want); \
	} while (0)

static void test_destroying(void **state)
{
	(void)state;
	CHECK("DROP TABLE t1", "destroy DROP TABLE t1\n");
	CHECK("drop table if exists public.T1, \"Mixed\".\"Case\" cascade;",
	      "destroy DROP TABLE t1,Mixed.Case\n");
	CHECK("DROP SCHEMA sales CASCADE", "destroy DROP SCHEMA sales\n");
	CHECK("DROP DATABASE IF EXISTS shop WITH (FORCE)",
	      "destroy db DROP DATABASE shop\n");
	CHECK("DROP MATERIALIZED VIEW mv",
	      "destroy DROP MATERIALIZED VIEW mv\n");
	CHECK("DROP INDEX CONCURRENTLY i", "destroy DROP INDEX i\n");
	CHECK("TRUNCATE orders, lines",
	      "destroy TRUNCATE TABLE orders,lines\n");
	CHECK("truncate table only orders *",
	      "destroy TRUNCATE TABLE orders\n");
	CHECK("DELETE FROM orders", "destroy DELETE orders\n");
	CHECK("ALTER TABLE t DROP COLUMN c", "destroy ALTER TABLE t\n");
	CHECK("ALTER TABLE IF EXISTS ONLY t DROP c", "destroy ALTER TABLE t\n");
	CHECK("-- a comment; DROP TABLE x\n/* DROP TABLE y */ DROP TABLE z",
	      "destroy DROP TABLE z\n");
}

static void test_not_destroying(void **state)
{
	(void)state;
	CHECK("DELETE FROM orders WHERE id = 3", "-\n");
	CHECK("delete from t using u where t.id = u.id", "-\n");
	CHECK("ALTER TABLE t DROP CONSTRAINT c", "-\n");
	CHECK("ALTER TABLE t ALTER COLUMN c DROP NOT NULL", "-\n");
	CHECK("ALTER TABLE t ALTER COLUMN c DROP DEFAULT", "-\n");
	CHECK("ALTER TABLE t ADD COLUMN c int", "-\n");
	CHECK("SELECT 'DROP TABLE x; DROP TABLE y'", "-\n");
	CHECK("SELECT $$ ; DROP TABLE a $$", "-\n");
	CHECK("INSERT INTO t VALUES (1)", "-\n");
	CHECK("UPDATE t SET a = 1", "-\n");
	CHECK("DROP ROLE bob", "-\n");
	CHECK("", "");
	CHECK(" ; ;", "");
}

static void test_creating(void **state)
{
	(void)state;
	CHECK("CREATE TABLE t1 (id int)", "create CREATE TABLE t1\n");
	CHECK("create temp table if not exists s.t (a int)",
	      "create CREATE TABLE s.t\n");
	CHECK("CREATE TABLE c AS SELECT * FROM t", "create SELECT c\n");
	CHECK("CREATE DATABASE scratch", "create db CREATE DATABASE scratch\n");
	CHECK("CREATE SCHEMA IF NOT EXISTS app", "create CREATE SCHEMA app\n");
	CHECK("CREATE UNIQUE INDEX i ON t (a)", "create CREATE INDEX i\n");
	CHECK("CREATE INDEX ON t (a)", "-\n");
	CHECK("CREATE OR REPLACE VIEW v AS SELECT 1", "create CREATE VIEW v\n");
	CHECK("CREATE TABLE t (id int); INSERT INTO t VALUES (1); DROP TABLE t",
	      "create CREATE TABLE t\n-\ndestroy DROP TABLE t\n");
}

/* The probe of sql, or "" when there is none; its column count checked. */
static void probe(const char *sql, unsigned cols, const char *want)
{
	char out[512], names[8][LG_SQL_NAME_MAX];
	unsigned got =
		lg_pg_probe(sql, strlen(sql), 8, names, out, sizeof(out));

	if (got != cols)
		print_error("%s: %u names, not %u\n", sql, got, cols);
	assert_int_equal(got, cols);
	assert_string_equal(out, want);
}

#define PROBE_HEAD "SET LOCAL row_security = off; SELECT "
#define EX(t) "EXISTS (SELECT 1 FROM " t " TABLESAMPLE SYSTEM (100))"

static void test_truncate_probe(void **state)
{
	char small[40], names[8][LG_SQL_NAME_MAX];

	(void)state;
	/* the names exactly as written, in order, across statements */
	probe("TRUNCATE users, orders, lines", 3,
	      PROBE_HEAD EX("users") ", " EX("orders") ", " EX("lines"));
	probe("truncate table ONLY \"Sales\".\"Or\"\"ders\" restart identity;"
	      " TRUNCATE public.t * RESTRICT",
	      2, PROBE_HEAD EX("\"Sales\".\"Or\"\"ders\"") ", " EX("public.t"));
	probe("TRUNCATE t CONTINUE IDENTITY;", 1, PROBE_HEAD EX("t"));
	/* INSERTs: the tables they write into first, each once */
	probe("INSERT INTO users VALUES (1); insert into Orders (id) "
	      "SELECT 1; INSERT INTO users VALUES (2); TRUNCATE users, lines",
	      3, PROBE_HEAD EX("users") ", " EX("Orders") ", " EX("lines"));
	probe("INSERT INTO s.\"T\" AS x DEFAULT VALUES", 1,
	      PROBE_HEAD EX("s.\"T\""));
	probe("INSERT INTO `t` VALUES (1)", 0, "");
	probe("INSERT t VALUES (1)", 0, "");
	probe("WITH x AS (SELECT 1) INSERT INTO t SELECT * FROM x", 0, "");
	probe("INSERT INTO t VALUES (1); UPDATE t SET id = 2", 0, "");
	/* CASCADE empties tables it does not name */
	probe("TRUNCATE t CASCADE", 0, "");
	probe("TRUNCATE t RESTART IDENTITY CASCADE", 0, "");
	/* another statement before or after: it could fill a table */
	probe("ALTER TABLE old RENAME TO t; TRUNCATE t", 0, "");
	probe("COPY t FROM STDIN; TRUNCATE t", 0, "");
	probe("TRUNCATE t; SELECT 1", 0, "");
	/* a DELETE's answer counts its rows: no probe */
	probe("DELETE FROM t", 0, "");
	probe("DROP TABLE t", 0, "");
	/* more names than a statement holds, or than the probe's columns */
	probe("TRUNCATE a, b, c, d, e", 0, "");
	probe("TRUNCATE a, b, c; TRUNCATE d, e, f; TRUNCATE g, h, i", 0, "");
	probe("TRUNCATE a, b, c; TRUNCATE a, b, c; TRUNCATE d, e", 5,
	      PROBE_HEAD EX("a") ", " EX("b") ", " EX("c") ", " EX("d") ", " EX(
		      "e"));
	/* what is not a name as PostgreSQL writes one */
	probe("TRUNCATE `t`", 0, "");
	probe("TRUNCATE U&\"d\\0061t\"", 0, "");
	probe("TRUNCATE t x", 0, "");
	probe("TRUNCATE ONLY a, ONLY b", 0, "");
	probe("TRUNCATE \"unterminated", 0, "");
	probe("TRUNCATE (SELECT 1)", 0, "");
	probe("", 0, "");
	/* too long for the room: none */
	assert_int_equal(lg_pg_probe("TRUNCATE users", 14, 8, names, small,
				     sizeof(small)),
			 0);
	assert_string_equal(small, "");
}

static void test_pg_messages(void **state)
{
	static const char startup[] = "\0\0\0\x22\0\x03\0\0user\0alice\0"
				      "database\0shop\0\0";
	static const char ssl[] = "\0\0\0\x08\x04\xd2\x16\x2f";
	static const char q[] = "Q\0\0\0\x11"
				"DROP TABLE t\0";
	static const char parse[] = "P\0\0\0\x17s1\0DELETE FROM t\0\0\0";
	struct lg_span db, user, sql;
	size_t len;

	(void)state;
	assert_true(lg_pg_startup(startup, sizeof(startup) - 1, &db, &user));
	assert_int_equal(db.n, 4);
	assert_memory_equal(db.p, "shop", 4);
	assert_int_equal(user.n, 5);
	assert_false(lg_pg_startup(ssl, sizeof(ssl) - 1, &db, &user));
	assert_false(lg_pg_startup(startup, 20, &db, &user)); /* cut */
	assert_true(lg_pg_query(q, sizeof(q) - 1, &sql, &len));
	assert_int_equal(len, sizeof(q) - 1);
	assert_int_equal(sql.n, 12);
	assert_memory_equal(sql.p, "DROP TABLE t", 12);
	assert_true(lg_pg_query(parse, sizeof(parse) - 1, &sql, &len));
	assert_int_equal(sql.n, 13);
	assert_memory_equal(sql.p, "DELETE FROM t", 13);
	assert_false(lg_pg_query("GET / HTTP/1.1\r\n", 16, &sql, &len));
	assert_false(lg_pg_query("Q\0\0\0\x02", 5, &sql, &len));
}

static void test_my_messages(void **state)
{
	/* handshake response 4.1: caps (PROTOCOL_41 | CONNECT_WITH_DB |
	 * SECURE_CONNECTION), max packet, charset, 23 zeros, user, auth, db */
	static const char hs[] =
		"\x2d\0\0\x01"
		"\x08\x82\0\0"
		"\0\0\0\x01"
		"\x21"
		"\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0"
		"root\0"
		"\x02xy"
		"shop\0";
	static const char q[] = "\x0d\0\0\0\x03"
				"DROP TABLE t";
	static const char use[] = "\x05\0\0\0\x02shop";
	static const char ok[] = "\x07\0\0\x01\0\x05\0\x02\0\x01\0";
	static const char err[] = "\x05\0\0\x01\xff\x1a\x04#4";
	struct lg_span user, db, arg;
	unsigned long long aff;
	unsigned warn;
	int cmd;

	(void)state;
	assert_true(lg_recog_my_packet(hs, sizeof(hs) - 1));
	assert_true(lg_my_handshake(hs, sizeof(hs) - 1, &user, &db));
	assert_int_equal(user.n, 4);
	assert_memory_equal(user.p, "root", 4);
	assert_int_equal(db.n, 4);
	assert_memory_equal(db.p, "shop", 4);
	assert_false(lg_my_handshake(q, sizeof(q) - 1, &user, &db));
	assert_true(lg_my_command(q, sizeof(q) - 1, &cmd, &arg));
	assert_int_equal(cmd, 3);
	assert_int_equal(arg.n, 12);
	assert_memory_equal(arg.p, "DROP TABLE t", 12);
	assert_true(lg_my_command(use, sizeof(use) - 1, &cmd, &arg));
	assert_int_equal(cmd, 2);
	/* more bytes than the packet says: not one packet */
	assert_false(lg_my_command(q, sizeof(q), &cmd, &arg));
	assert_int_equal(lg_my_answer(ok, sizeof(ok) - 1, &aff, &warn), 1);
	assert_int_equal(aff, 5);
	assert_int_equal(warn, 1);
	assert_int_equal(lg_my_answer(err, sizeof(err) - 1, &aff, &warn), -1);
	assert_int_equal(lg_my_answer("\x01\0\0\x01\x02", 5, &aff, &warn), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_destroying),
		cmocka_unit_test(test_not_destroying),
		cmocka_unit_test(test_creating),
		cmocka_unit_test(test_truncate_probe),
		cmocka_unit_test(test_pg_messages),
		cmocka_unit_test(test_my_messages),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
