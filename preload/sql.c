// SPDX-License-Identifier: MIT
/*
 * SQL statements and PostgreSQL's frontend messages, read for what they do
 * to data (sql.h). A statement is read as far as its first words and its
 * names: enough to tell a DROP TABLE from a SELECT, never a parser.
 */
#include <string.h>

#include "sql.h"

#define SQL_SCAN_MAX (64 * 1024) /* a statement read at most this far */

static bool ident_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '_' || c == '$' ||
	       (unsigned char)c >= 0x80;
}

static char lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

/* Past spaces and comments (-- to the line's end, nested-free block). */
static const char *skip_space(const char *p, const char *e)
{
	for (;;) {
		while (p < e && (*p == ' ' || *p == '\t' || *p == '\r' ||
				 *p == '\n' || *p == '\f'))
			p++;
		if (e - p >= 2 && p[0] == '-' && p[1] == '-') {
			while (p < e && *p != '\n')
				p++;
			continue;
		}
		if (e - p >= 2 && p[0] == '/' && p[1] == '*') {
			const char *c = p + 2;

			while (e - c >= 2 && !(c[0] == '*' && c[1] == '/'))
				c++;
			p = e - c >= 2 ? c + 2 : e;
			continue;
		}
		return p;
	}
}

/* The keyword kw (lowercase) at *p, as a whole word: moves past it. */
static bool word(const char **p, const char *e, const char *kw)
{
	const char *q = skip_space(*p, e);
	size_t k = strlen(kw);

	if ((size_t)(e - q) < k)
		return false;
	for (size_t i = 0; i < k; i++)
		if (lower(q[i]) != kw[i])
			return false;
	if (q + k < e && ident_char(q[k]))
		return false;
	*p = q + k;
	return true;
}

/* Any of the keywords (a NULL-terminated list): its index, or -1. */
static int word_of(const char **p, const char *e, const char *const *kws)
{
	for (int i = 0; kws[i]; i++)
		if (word(p, e, kws[i]))
			return i;
	return -1;
}

/*
 * A name at *p, maybe qualified ("s"."T", s.t, `t`), normalised into out:
 * unquoted parts lowercased, quotes removed, a leading "public." left out.
 */
static bool name(const char **p, const char *e, char *out, size_t size)
{
	const char *q = skip_space(*p, e);
	size_t n = 0, first_end = 0;
	unsigned parts = 0;

	for (;;) {
		if (q < e && (*q == '"' || *q == '`')) {
			char quote = *q++;

			for (; q < e; q++) {
				if (*q == quote) {
					if (q + 1 < e && q[1] == quote) {
						q++; /* a doubled quote */
					} else {
						break;
					}
				}
				if (n + 1 < size)
					out[n++] = *q;
			}
			if (q >= e)
				return false;
			q++;
		} else if (q < e && ident_char(*q) &&
			   !(*q >= '0' && *q <= '9')) {
			while (q < e && ident_char(*q)) {
				if (n + 1 < size)
					out[n++] = lower(*q);
				q++;
			}
		} else {
			return false;
		}
		if (!parts++)
			first_end = n;
		if (q < e && *q == '.' && parts < 3) {
			if (n + 1 < size)
				out[n++] = '.';
			q++;
			continue;
		}
		break;
	}
	out[n] = '\0';
	if (parts == 2 && first_end == 6 && memcmp(out, "public", 6) == 0)
		memmove(out, out + 7, n - 7 + 1);
	*p = q;
	return n > 0;
}

/*
 * Names separated by commas, into the statement's list. False when one
 * was left out (more than LG_SQL_NAMES) or written with MySQL's quotes.
 */
static bool names(const char **p, const char *e, struct lg_sql_stmt *st)
{
	bool all = true;

	do {
		char one[LG_SQL_NAME_MAX];
		const char *at = skip_space(*p, e);

		if (!name(p, e, one, sizeof(one)))
			return false;
		if (st->n < LG_SQL_NAMES) {
			st->raw[st->n].p = at;
			st->raw[st->n].n = (size_t)(*p - at);
			if (memchr(at, '`', st->raw[st->n].n))
				all = false;
			memcpy(st->names[st->n++], one, sizeof(one));
		} else {
			all = false;
		}
		*p = skip_space(*p, e);
		if (*p < e && **p == '*') /* TRUNCATE t * (descendants) */
			*p = skip_space(*p + 1, e);
	} while (*p < e && **p == ',' && (++*p, true));
	return all;
}

/* A TRUNCATE's end: RESTART or CONTINUE IDENTITY, RESTRICT, nothing else. */
static bool truncate_tail(const char *p, const char *e)
{
	for (;;) {
		p = skip_space(p, e);
		if (p >= e)
			return true;
		if (word(&p, e, "restart") || word(&p, e, "continue")) {
			if (!word(&p, e, "identity"))
				return false;
		} else if (!word(&p, e, "restrict")) {
			return false; /* CASCADE empties tables it does not name */
		}
	}
}

/*
 * The end of the statement at p: its ';' outside quotes, dollar quotes,
 * comments and parentheses' strings, or e. *where: a WHERE at the top
 * level (outside parentheses); *drop: the top level's first DROP that
 * drops data (not DROP CONSTRAINT, DEFAULT, NOT NULL, IDENTITY,
 * EXPRESSION), or NULL; *as: a top-level AS (CREATE TABLE ... AS).
 */
static const char *statement_end(const char *p, const char *e, bool *where,
				 const char **drop, bool *as)
{
	int depth = 0;

	*where = *as = false;
	*drop = NULL;
	while (p < e) {
		const char *q = skip_space(p, e);

		if (q != p) {
			p = q;
			continue;
		}
		switch (*p) {
		case ';':
			if (depth <= 0)
				return p;
			p++;
			continue;
		case '(':
			depth++;
			p++;
			continue;
		case ')':
			depth--;
			p++;
			continue;
		case '\'':
		case '"':
		case '`': {
			char quote = *p++;

			while (p < e && *p != quote) {
				if (*p == '\\' && quote == '\'' && p + 1 < e)
					p++; /* E'..\'..', MySQL's escapes */
				p++;
			}
			p += p < e;
			continue;
		}
		case '$': { /* $tag$ ... $tag$ */
			const char *t = p + 1;

			while (t < e && ident_char(*t) && *t != '$')
				t++;
			if (t < e && *t == '$') {
				size_t k = (size_t)(t - p) + 1;
				const char *c = t + 1;

				while (c + k <= e && memcmp(c, p, k) != 0)
					c++;
				p = c + k <= e ? c + k : e;
				continue;
			}
			p++;
			continue;
		}
		default:
			break;
		}
		if (ident_char(*p)) {
			const char *w = p;

			if (depth == 0) {
				const char *x = p;
				static const char *const keep[] = {
					"constraint", "default",    "not",
					"identity",   "expression", NULL
				};

				if (word(&x, e, "where"))
					*where = true;
				else if (word(&x, e, "as"))
					*as = true;
				else if (!*drop && word(&x, e, "drop") &&
					 word_of(&x, e, keep) < 0)
					*drop = w;
			}
			while (p < e && ident_char(*p))
				p++;
			continue;
		}
		p++;
	}
	return e;
}

static void set_tag(struct lg_sql_stmt *st, const char *verb, const char *what)
{
	size_t n = strlen(verb);

	memcpy(st->tag, verb, n);
	if (what) {
		size_t k = strlen(what);

		st->tag[n++] = ' ';
		if (n + k >= sizeof(st->tag))
			k = sizeof(st->tag) - n - 1;
		memcpy(st->tag + n, what, k);
		n += k;
	}
	st->tag[n] = '\0';
}

/* The kinds of objects a DROP or CREATE names, as their tags spell them. */
static const char *const objects[] = { "table",	       "view",	   "index",
				       "schema",       "database", "sequence",
				       "materialized", NULL };
static const char *const object_tags[] = { "TABLE",
					   "VIEW",
					   "INDEX",
					   "SCHEMA",
					   "DATABASE",
					   "SEQUENCE",
					   "MATERIALIZED VIEW" };

/* DROP [MATERIALIZED] kind [CONCURRENTLY] [IF EXISTS] names */
static void drop(const char *p, const char *e, struct lg_sql_stmt *st)
{
	int k = word_of(&p, e, objects);

	if (k < 0 || (k == 6 && !word(&p, e, "view")))
		return;
	word(&p, e, "concurrently");
	if (word(&p, e, "if"))
		st->if_exists = word(&p, e, "exists");
	names(&p, e, st);
	if (!st->n)
		return;
	st->kind = LG_SQL_DESTROY;
	st->database = k == 4;
	set_tag(st, "DROP", object_tags[k]);
}

/* CREATE [OR REPLACE] [TEMP ...] [UNIQUE] kind [IF NOT EXISTS] name */
static void create(const char *p, const char *e, bool as,
		   struct lg_sql_stmt *st)
{
	static const char *const mods[] = { "or",	"replace",   "global",
					    "local",	"temporary", "temp",
					    "unlogged", "unique",    NULL };
	int k;

	while (word_of(&p, e, mods) >= 0)
		;
	k = word_of(&p, e, objects);
	if (k < 0 || (k == 6 && !word(&p, e, "view")))
		return;
	word(&p, e, "concurrently");
	if (word(&p, e, "if")) {
		word(&p, e, "not");
		st->if_exists = word(&p, e, "exists");
	}
	if (k == 3 && word(&p, e, "authorization"))
		return; /* the schema is named after a role */
	if (k == 2 && word(&p, e, "on"))
		return; /* an index without a name */
	if (!name(&p, e, st->names[0], sizeof(st->names[0])))
		return;
	st->n = 1;
	st->kind = LG_SQL_CREATE;
	st->database = k == 4;
	/* CREATE TABLE t AS SELECT ...: the server answers "SELECT n" */
	if ((k == 0 || k == 6) && as)
		set_tag(st, "SELECT", NULL);
	else
		set_tag(st, "CREATE", object_tags[k]);
}

static void classify(const char *p, const char *e, bool where,
		     const char *dropw, bool as, struct lg_sql_stmt *st)
{
	if (word(&p, e, "drop")) {
		drop(p, e, st);
	} else if (word(&p, e, "truncate")) {
		word(&p, e, "table");
		word(&p, e, "only");
		st->exact = names(&p, e, st) && truncate_tail(p, e);
		if (st->n) {
			st->kind = LG_SQL_DESTROY;
			set_tag(st, "TRUNCATE", "TABLE");
		} else {
			st->exact = false;
		}
	} else if (word(&p, e, "delete")) {
		if (where || !word(&p, e, "from"))
			return;
		word(&p, e, "only");
		if (!name(&p, e, st->names[0], sizeof(st->names[0])))
			return;
		st->n = 1;
		st->kind = LG_SQL_DESTROY;
		set_tag(st, "DELETE", NULL);
	} else if (word(&p, e, "insert")) {
		const char *at;

		if (!word(&p, e, "into"))
			return;
		at = skip_space(p, e);
		if (!name(&p, e, st->names[0], sizeof(st->names[0])))
			return;
		st->n = 1;
		st->raw[0].p = at;
		st->raw[0].n = (size_t)(p - at);
		st->fills = true;
		st->exact = !memchr(at, '`', st->raw[0].n);
	} else if (word(&p, e, "alter")) {
		if (!word(&p, e, "table") || !dropw)
			return;
		if (word(&p, e, "if"))
			word(&p, e, "exists");
		word(&p, e, "only");
		if (!name(&p, e, st->names[0], sizeof(st->names[0])))
			return;
		st->n = 1;
		st->kind = LG_SQL_DESTROY;
		set_tag(st, "ALTER", "TABLE");
	} else if (word(&p, e, "create")) {
		create(p, e, as, st);
	}
}

bool lg_sql_next(const char **pp, const char *e, struct lg_sql_stmt *out)
{
	const char *p = *pp, *end, *dropw;
	bool where, as;

	if (e - p > SQL_SCAN_MAX)
		e = p + SQL_SCAN_MAX;
	for (;;) {
		p = skip_space(p, e);
		if (p >= e) {
			*pp = e;
			return false;
		}
		if (*p != ';')
			break;
		p++;
	}
	memset(out, 0, sizeof(*out));
	end = statement_end(p, e, &where, &dropw, &as);
	out->text.p = p;
	out->text.n = (size_t)(end - p);
	classify(p, end, where, dropw, as, out);
	*pp = end < e ? end + 1 : e;
	return true;
}

/* s into out at *k, if it fits (*k past size once it did not). */
static void put(char *out, size_t size, size_t *k, const char *s, size_t n)
{
	if (*k + n < size)
		memcpy(out + *k, s, n);
	*k += n;
}

unsigned lg_pg_probe(const char *sql, size_t n, unsigned max,
		     char (*names)[LG_SQL_NAME_MAX], char *out, size_t size)
{
	static const char head[] = "SET LOCAL row_security = off; SELECT ";
	const char *p = sql, *e = sql + n;
	struct lg_sql_stmt st;
	unsigned cols = 0;
	size_t k = 0;

	if (!size)
		return 0;
	if (n > SQL_SCAN_MAX)
		goto none; /* lg_sql_next would not read it all */
	put(out, size, &k, head, sizeof(head) - 1);
	while (lg_sql_next(&p, e, &st)) {
		if (!st.exact ||
		    !(st.fills || (st.kind == LG_SQL_DESTROY &&
				   strcmp(st.tag, "TRUNCATE TABLE") == 0)))
			goto none;
		for (unsigned i = 0; i < st.n; i++) {
			bool again = false;

			for (unsigned j = 0; j < cols && !again; j++)
				again = strcmp(names[j], st.names[i]) == 0;
			if (again)
				continue;
			if (cols == max)
				goto none;
			memcpy(names[cols], st.names[i], LG_SQL_NAME_MAX);
			put(out, size, &k,
			    cols ? ", EXISTS (SELECT 1 FROM " :
				   "EXISTS (SELECT 1 FROM ",
			    cols ? 24 : 22);
			put(out, size, &k, st.raw[i].p, st.raw[i].n);
			put(out, size, &k, " TABLESAMPLE SYSTEM (100))", 26);
			cols++;
		}
	}
	if (!cols || k >= size)
		goto none;
	out[k] = '\0';
	return cols;
none:
	out[0] = '\0';
	return 0;
}

static uint32_t be32(const char *p)
{
	const unsigned char *u = (const unsigned char *)p;

	return (uint32_t)u[0] << 24 | (uint32_t)u[1] << 16 |
	       (uint32_t)u[2] << 8 | u[3];
}

bool lg_pg_startup(const char *p, size_t n, struct lg_span *database,
		   struct lg_span *user)
{
	const char *q, *e;
	uint32_t len;

	database->n = user->n = 0;
	if (n < 9)
		return false;
	len = be32(p);
	/* protocol 3.0; an SSLRequest or a cancel has another code */
	if (len < 9 || len > 10000 || len > n || be32(p + 4) != 0x00030000u ||
	    p[len - 1] != '\0')
		return false;
	e = p + len - 1;
	for (q = p + 8; q < e;) {
		const char *k = q, *v, *ve;

		v = memchr(k, '\0', (size_t)(e - k));
		if (!v || v == k)
			break;
		v++;
		ve = memchr(v, '\0', (size_t)(e - v) + 1);
		if (!ve)
			return false;
		if ((size_t)(v - k) == 9 && memcmp(k, "database", 8) == 0) {
			database->p = v;
			database->n = (size_t)(ve - v);
		} else if ((size_t)(v - k) == 5 && memcmp(k, "user", 4) == 0) {
			user->p = v;
			user->n = (size_t)(ve - v);
		}
		q = ve + 1;
	}
	return true;
}

bool lg_pg_query(const char *p, size_t n, struct lg_span *sql, size_t *len)
{
	const char *s, *e, *z;
	uint32_t l;

	if (n < 6 || (p[0] != 'Q' && p[0] != 'P'))
		return false;
	l = be32(p + 1);
	if (l < 5 || l > (1u << 30))
		return false;
	*len = (size_t)l + 1;
	e = p + (*len < n ? *len : n);
	s = p + 5;
	if (p[0] == 'P') { /* the statement's name first */
		z = memchr(s, '\0', (size_t)(e - s));
		if (!z)
			return false;
		s = z + 1;
	}
	z = memchr(s, '\0', (size_t)(e - s));
	if (!z && *len <= n)
		return false; /* whole, and no end to its text: not ours */
	sql->p = s;
	sql->n = (size_t)((z ? z : e) - s);
	return true;
}

static uint32_t le24(const char *p)
{
	const unsigned char *u = (const unsigned char *)p;

	return (uint32_t)u[0] | (uint32_t)u[1] << 8 | (uint32_t)u[2] << 16;
}

bool lg_my_handshake(const char *p, size_t n, struct lg_span *user,
		     struct lg_span *database)
{
	const unsigned char *u = (const unsigned char *)p;
	const char *q, *e, *z;
	uint32_t caps, len;

	user->n = database->n = 0;
	if (n < 4 + 33 || p[3] != 1)
		return false;
	len = le24(p);
	if ((size_t)len + 4 != n)
		return false;
	caps = (uint32_t)u[4] | (uint32_t)u[5] << 8 | (uint32_t)u[6] << 16 |
	       (uint32_t)u[7] << 24;
	if (!(caps & 0x200)) /* CLIENT_PROTOCOL_41 */
		return false;
	for (int i = 4 + 9; i < 4 + 32; i++) /* 23 bytes of filler (10.x: the
						 last 4 are MariaDB's caps) */
		if (i < 4 + 28 && u[i])
			return false;
	e = p + n;
	q = p + 4 + 32;
	if (q >= e) /* an SSLRequest: TLS follows */
		return true;
	z = memchr(q, '\0', (size_t)(e - q));
	if (!z)
		return false;
	user->p = q;
	user->n = (size_t)(z - q);
	q = z + 1;
	if (q >= e)
		return true;
	if (caps & 0x200000) { /* auth data, length-encoded */
		unsigned char l = (unsigned char)*q;

		if (l >= 0xfb)
			return true;
		q += 1 + l;
	} else if (caps & 0x8000) { /* CLIENT_SECURE_CONNECTION */
		q += 1 + (unsigned char)*q;
	} else {
		z = memchr(q, '\0', (size_t)(e - q));
		if (!z)
			return true;
		q = z + 1;
	}
	if ((caps & 0x8) && q < e) { /* CLIENT_CONNECT_WITH_DB */
		z = memchr(q, '\0', (size_t)(e - q));
		if (z) {
			database->p = q;
			database->n = (size_t)(z - q);
		}
	}
	return true;
}

bool lg_my_command(const char *p, size_t n, int *cmd, struct lg_span *arg)
{
	uint32_t len;

	if (n < 5 || p[3] != 0 || (p[4] != 3 && p[4] != 2))
		return false;
	len = le24(p);
	/* one packet a write (what follows it would not be one) */
	if (len < 1 || (size_t)len + 4 < n)
		return false;
	*cmd = p[4];
	arg->p = p + 5;
	arg->n = ((size_t)len + 4 <= n ? (size_t)len + 4 : n) - 5;
	return true;
}

/* A length-encoded integer at *q (advanced), or false. */
static bool lenenc(const unsigned char **q, const unsigned char *e,
		   unsigned long long *v)
{
	const unsigned char *u = *q;
	int k;

	if (u >= e)
		return false;
	if (*u < 0xfb) {
		*v = *u;
		*q = u + 1;
		return true;
	}
	k = *u == 0xfc ? 2 : *u == 0xfd ? 3 : *u == 0xfe ? 8 : 0;
	if (!k || e - u < k + 1)
		return false;
	*v = 0;
	for (int i = k; i >= 1; i--)
		*v = *v << 8 | u[i];
	*q = u + 1 + k;
	return true;
}

int lg_my_answer(const char *p, size_t n, unsigned long long *affected,
		 unsigned *warnings)
{
	const unsigned char *u = (const unsigned char *)p, *q, *e;
	unsigned long long id;
	uint32_t len;

	*affected = 0;
	*warnings = 0;
	if (n < 5)
		return 0;
	len = le24(p);
	if ((size_t)len + 4 > n || len < 1)
		return 0;
	if (u[4] == 0xff)
		return -1;
	if (u[4] != 0x00 || len < 7)
		return 0;
	q = u + 5;
	e = u + 4 + len;
	if (!lenenc(&q, e, affected) || !lenenc(&q, e, &id) || e - q < 4)
		return 0;
	*warnings = (unsigned)q[2] | (unsigned)q[3] << 8;
	return 1;
}
