/* SPDX-License-Identifier: MIT */
/*
 * A database's wire, read where lgrun can read it (issue 38): the
 * PostgreSQL frontend protocol's startup, Query and Parse messages, and
 * what an SQL statement does to data: destroys it (DROP, TRUNCATE, DELETE
 * without WHERE, ALTER TABLE ... DROP), makes it (CREATE), or neither.
 * Pure, bounded, no allocation: the shim calls it on a process's writes.
 */
#ifndef LG_SQL_H
#define LG_SQL_H

#include <stdbool.h>
#include <stddef.h>

#include "recog.h"

enum lg_sql_kind {
	LG_SQL_OTHER, /* reads, inserts, updates with a WHERE, ... */
	LG_SQL_DESTROY, /* drops, truncates, deletes every row, drops a column */
	LG_SQL_CREATE, /* makes a table, schema, database, view or index */
};

#define LG_SQL_NAMES 4 /* names one statement acts on, at most */
#define LG_SQL_NAME_MAX 96

struct lg_sql_stmt {
	enum lg_sql_kind kind;
	/*
	 * The command tag the server answers it with ("DROP TABLE",
	 * "TRUNCATE TABLE", "DELETE", "ALTER TABLE", "CREATE TABLE",
	 * "SELECT" for CREATE TABLE ... AS); what pairs it with its answer.
	 */
	char tag[24];
	/* "database" for DROP or CREATE DATABASE: the name is a database */
	bool database;
	/*
	 * DROP ... IF EXISTS, CREATE ... IF NOT EXISTS: a server may answer
	 * it having done nothing (MySQL says so only by a warning)
	 */
	bool if_exists;
	unsigned n; /* names */
	/*
	 * The objects, normalised: unquoted parts lowercased, quotes
	 * removed, a "public." schema left out ("t1", "sales.orders").
	 */
	char names[LG_SQL_NAMES][LG_SQL_NAME_MAX];
	struct lg_span raw[LG_SQL_NAMES]; /* the names, as written */
	/*
	 * A TRUNCATE that empties its names and nothing else: all of them
	 * held (no more than LG_SQL_NAMES), no CASCADE, no MySQL quotes, no
	 * word after them but RESTART or CONTINUE IDENTITY and RESTRICT
	 */
	bool exact;
	/*
	 * INSERT INTO names[0] (kind LG_SQL_OTHER: it destroys nothing);
	 * exact when the name is PostgreSQL's
	 */
	bool fills;
	struct lg_span text; /* the statement, as written */
};

/*
 * The next statement of an SQL text at *p (statements end at a ';' outside
 * quotes and comments): false at the end. *p moves past it.
 */
bool lg_sql_next(const char **p, const char *e, struct lg_sql_stmt *out);

/*
 * The probe of a Query's SQL whose statements are all exact TRUNCATEs or
 * INSERTs INTO a named table (nothing else: another statement before one
 * could fill what it empties or writes into): one row telling, for each
 * table they name (in order, each once), whether it holds a row. Into
 * out, NUL-terminated:
 *   SET LOCAL row_security = off;
 *   SELECT EXISTS (SELECT 1 FROM <name as written> TABLESAMPLE SYSTEM (100)), ...
 * row_security off makes a table whose policies would hide rows an error,
 * not an empty answer; TABLESAMPLE makes a view (whose query could do
 * anything) or a foreign table an error. The names, normalised as names[]
 * of lg_sql_stmt, into names (room for max). Returns how many (the row's
 * columns), at most max; 0: no probe.
 */
unsigned lg_pg_probe(const char *sql, size_t n, unsigned max,
		     char (*names)[LG_SQL_NAME_MAX], char *out, size_t size);

/*
 * PostgreSQL's startup message (protocol 3.0): its database and user
 * parameters (n == 0 when absent). False for anything else, an SSLRequest
 * or a cancel request included.
 */
bool lg_pg_startup(const char *p, size_t n, struct lg_span *database,
		   struct lg_span *user);

/*
 * The SQL text of the frontend message at p ('Q' Query, 'P' Parse) and
 * the length of the whole message (*len, its type byte included): true for
 * those two, whole or cut by the buffer's end (sql then holds what is
 * here). False for another message, or bytes that are not one.
 */
bool lg_pg_query(const char *p, size_t n, struct lg_span *sql, size_t *len);

/*
 * MySQL's and MariaDB's client protocol: a packet is 3 bytes of length,
 * a sequence number, its payload. The client's handshake response (the
 * protocol 4.1 one, sequence 1): its user and database (n == 0: none).
 */
bool lg_my_handshake(const char *p, size_t n, struct lg_span *user,
		     struct lg_span *database);
/*
 * A command packet (sequence 0) at p: COM_QUERY (3) gives its SQL,
 * COM_INIT_DB (2, the mysql client's "use") its database; *cmd is the
 * command. False for anything else.
 */
bool lg_my_command(const char *p, size_t n, int *cmd, struct lg_span *arg);
/*
 * The server's answer at p: 1 an OK packet (its affected rows and
 * warnings), -1 an ERR packet, 0 anything else (a result set).
 */
int lg_my_answer(const char *p, size_t n, unsigned long long *affected,
		 unsigned *warnings);

#endif
