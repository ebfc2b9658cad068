// SPDX-License-Identifier: MIT
/*
 * A database's wire (issue 38): PostgreSQL and MySQL (MariaDB) connections
 * of this process, from their startup message (MySQL: the handshake
 * response) on. MySQL's client sends one statement a COM_QUERY and waits
 * for its answer: an OK packet (rows affected, warnings) or an ERR. A Query or Parse whose statements destroy
 * or make data is held until the server answers it: a CommandComplete of
 * a DROP, TRUNCATE, DELETE of every row or ALTER TABLE ... DROP is a
 * remote delete the supervisor judges (a gate: the program reads on only
 * once it is judged, so a trip stops what comes next); of a CREATE, a
 * remote resource the session made. A notice "..., skipping" (DROP IF
 * EXISTS of nothing, CREATE IF NOT EXISTS of what was there) and an error
 * make nothing of it. TLS connections stay opaque (shim_traffic.c).
 */
#include "shim_traffic.h"
#include "sql.h"

#define PG_CONNS 8 /* connections of one process read at once */
#define PG_QUEUE 8 /* statements waiting for their answers, per connection */

struct pg_item {
	enum lg_sql_kind kind;
	bool database, if_exists;
	char tag[24];
	unsigned n;
	char names[LG_SQL_NAMES][LG_SQL_NAME_MAX];
	char text[160];
};

struct pg_conn {
	uint32_t used; /* == gen */
	int fd;
	bool mysql; /* MySQL's or MariaDB's protocol, not PostgreSQL's */
	char server[80]; /* "postgres://127.0.0.1:5432" */
	char db[64];
	unsigned nq;
	struct pg_item q[PG_QUEUE];
	bool tracking; /* counted in outstanding: answers are read */
	bool skipping; /* a notice said the next command did nothing */
	uint32_t skip; /* bytes of a message still to pass over */
	unsigned char hdr[5];
	unsigned hdr_n; /* a message's header cut by a read */
};

static struct pg_conn pg[PG_CONNS];
static unsigned pg_next;
/* a startup was seen: until then closes and reads take no lock here */
static atomic_bool pg_seen;
static pthread_mutex_t pg_lock = PTHREAD_MUTEX_INITIALIZER;

static struct pg_conn *pg_of(int fd)
{
	for (unsigned i = 0; i < PG_CONNS; i++)
		if (pg[i].used == gen && pg[i].fd == fd)
			return &pg[i];
	return NULL;
}

static void track(struct pg_conn *c, bool on)
{
	if (c->tracking == on)
		return;
	c->tracking = on;
	if (on)
		atomic_fetch_add(&outstanding, 1);
	else
		atomic_fetch_sub(&outstanding, 1);
}

void pg_forget(int fd)
{
	struct pg_conn *c;

	if (!atomic_load_explicit(&pg_seen, memory_order_relaxed))
		return;
	pthread_mutex_lock(&pg_lock);
	c = pg_of(fd);
	if (c) {
		track(c, false);
		c->used = 0;
	}
	pthread_mutex_unlock(&pg_lock);
}

/* "postgres://127.0.0.1:5432" of the peer ("mysql://..."). */
static void server_of(int fd, bool mysql, char *out, size_t size)
{
	const char *scheme = mysql ? "mysql" : "postgres";
	char host[INET6_ADDRSTRLEN] = "?";
	unsigned port = 0;

	peer_of(fd, host, sizeof(host), &port);
	if (strcmp(host, "unix") == 0) /* the server's socket on this host */
		snprintf(out, size, "%s://localhost:%s", scheme,
			 mysql ? "3306" : "5432");
	else
		snprintf(out, size, "%s://%s:%u", scheme, host, port);
}

static void startup(int fd, struct lg_span db, struct lg_span user, bool mysql)
{
	struct pg_conn *c;

	atomic_store(&pg_seen, true);
	pthread_mutex_lock(&pg_lock);
	c = pg_of(fd);
	if (!c) {
		c = &pg[pg_next++ % PG_CONNS];
		track(c, false);
	}
	memset(c, 0, sizeof(*c));
	c->used = gen;
	c->fd = fd;
	c->mysql = mysql;
	server_of(fd, mysql, c->server, sizeof(c->server));
	if (!db.n && !mysql) /* libpq's default: the user's name */
		db = user;
	snprintf(c->db, sizeof(c->db), "%.*s", (int)db.n, db.p);
	pthread_mutex_unlock(&pg_lock);
}

/* A statement's target, one of its names: "postgres://h:p/db/t". */
static void target_of(const struct pg_conn *c, const struct pg_item *it,
		      unsigned i, char *out, size_t size)
{
	const char *dot = strchr(it->names[i], '.');

	if (it->database)
		snprintf(out, size, "%s/%s", c->server, it->names[i]);
	else if (c->mysql && dot) /* MySQL's "db.table" */
		snprintf(out, size, "%s/%.*s/%s", c->server,
			 (int)(dot - it->names[i]), it->names[i], dot + 1);
	else
		snprintf(out, size, "%s/%s/%s", c->server,
			 c->db[0] ? c->db : "?", it->names[i]);
}

static void frame_start(struct lg_wire_buf *w, const struct pg_conn *c,
			const struct pg_item *it)
{
	lg_wire_start(w, LG_W_GATE, 0);
	lg_wire_put_u32(w, LG_T_PROTO, c->mysql ? LG_P_MYSQL : LG_P_POSTGRES);
	lg_wire_put_str(w, LG_T_SYSTEM, c->mysql ? "mysql" : "postgres");
	lg_wire_put_str(w, LG_T_TOOL, it->tag);
	lg_wire_put_str(w, LG_T_ARGS, it->text);
}

/*
 * The statements of one Query or Parse that destroy or make data, queued
 * for their answers; a destroying one is asked about before it leaves
 * (a blocked session refuses it). Returns 0 or the errno.
 */
static int queue_sql(struct pg_conn *c, int fd, struct lg_span sql)
{
	const char *p = sql.p, *e = sql.p + sql.n;
	struct lg_sql_stmt st;
	struct pg_item *ask = NULL;

	while (lg_sql_next(&p, e, &st)) {
		struct pg_item *it;

		if (st.kind == LG_SQL_OTHER)
			continue;
		if (c->nq == PG_QUEUE) { /* the oldest had no answer */
			memmove(c->q, c->q + 1,
				(PG_QUEUE - 1) * sizeof(c->q[0]));
			c->nq--;
		}
		it = &c->q[c->nq++];
		it->kind = st.kind;
		it->database = st.database;
		it->if_exists = st.if_exists;
		memcpy(it->tag, st.tag, sizeof(it->tag));
		it->n = st.n;
		memcpy(it->names, st.names, sizeof(it->names));
		snprintf(it->text, sizeof(it->text), "%.*s",
			 (int)(st.text.n < 159 ? st.text.n : 159), st.text.p);
		if (st.kind == LG_SQL_DESTROY && !ask)
			ask = it;
	}
	if (c->nq)
		track(c, true);
	if (ask) {
		struct lg_wire_buf w;
		char target[256];
		struct pg_item copy = *ask;
		struct pg_conn cc = *c;

		target_of(&cc, &copy, 0, target, sizeof(target));
		pthread_mutex_unlock(&pg_lock);
		frame_start(&w, &cc, &copy);
		lg_wire_put_u32(&w, LG_T_OP, OP_REMOTE_DELETE);
		lg_wire_put_u32(&w, LG_T_DECISION, 1);
		lg_wire_put_u64(&w, LG_T_CHAN, (uint64_t)fd << 32);
		lg_wire_put_str(&w, LG_T_TARGET, target);
		{
			int r = gate(&w);

			pthread_mutex_lock(&pg_lock);
			return r;
		}
	}
	return 0;
}

/* MySQL's handshake response and commands. */
static bool my_outgoing(int fd, const char *p, size_t n, int *refuse)
{
	struct lg_span db, user, arg;
	struct pg_conn *c;
	int cmd;

	if (p[3] == 1) {
		if (!lg_my_handshake(p, n, &user, &db))
			return false;
		startup(fd, db, user, true);
		return true;
	}
	if (!atomic_load_explicit(&pg_seen, memory_order_relaxed) ||
	    !lg_my_command(p, n, &cmd, &arg))
		return false;
	pthread_mutex_lock(&pg_lock);
	c = pg_of(fd);
	if (!c || !c->mysql) {
		pthread_mutex_unlock(&pg_lock);
		return false;
	}
	if (cmd == 2) /* COM_INIT_DB: "use DB" */
		snprintf(c->db, sizeof(c->db), "%.*s",
			 (int)(arg.n < 63 ? arg.n : 63), arg.p);
	else
		*refuse = queue_sql(c, fd, arg);
	pthread_mutex_unlock(&pg_lock);
	return true;
}

bool pg_outgoing(int fd, const char *p, size_t n, int *refuse)
{
	struct lg_span db, user;
	struct pg_conn *c;
	bool ours;

	*refuse = 0;
	if (p[0] == '\0' && lg_pg_startup(p, n, &db, &user)) {
		startup(fd, db, user, false);
		return true;
	}
	if (lg_recog_my_packet(p, n) && my_outgoing(fd, p, n, refuse))
		return true;
	if ((p[0] != 'Q' && p[0] != 'P') ||
	    !atomic_load_explicit(&pg_seen, memory_order_relaxed))
		return false;
	pthread_mutex_lock(&pg_lock);
	c = pg_of(fd);
	if (c && c->mysql)
		c = NULL;
	ours = c != NULL;
	/* the frontend's messages of this write: Parse, Bind, Execute, Sync */
	while (c && n >= 5 && !*refuse) {
		struct lg_span sql;
		size_t len;

		if (lg_pg_query(p, n, &sql, &len))
			*refuse = queue_sql(c, fd, sql);
		else if (p[0] >= 'A' && p[0] <= 'Z')
			len = 1 + ((size_t)(unsigned char)p[1] << 24 |
				   (size_t)(unsigned char)p[2] << 16 |
				   (size_t)(unsigned char)p[3] << 8 |
				   (unsigned char)p[4]);
		else
			break;
		if (len < 5 || len >= n)
			break;
		p += len;
		n -= len;
		c = pg_of(fd); /* the lock was let go while it was asked */
	}
	pthread_mutex_unlock(&pg_lock);
	return ours;
}

/* The first queued statement a CommandComplete of tag answers, or -1. */
static int answered(const struct pg_conn *c, const char *tag, size_t n)
{
	for (unsigned i = 0; i < c->nq; i++) {
		size_t k = strlen(c->q[i].tag);

		if (n >= k && memcmp(tag, c->q[i].tag, k) == 0 &&
		    (n == k || tag[k] == ' '))
			return (int)i;
	}
	return -1;
}

/*
 * A CommandComplete: what its statement did, told to the supervisor.
 * Called with pg_lock held; lets go of it while it waits.
 */
/*
 * What a statement the server carried out did, told to the supervisor:
 * each of its objects destroyed, or made. Called with pg_lock held; lets
 * go of it while it waits.
 */
static int report(struct pg_conn *c, int fd, const struct pg_item *ip)
{
	struct pg_item it = *ip;
	struct pg_conn cc = *c;
	int r = 0;

	pthread_mutex_unlock(&pg_lock);
	for (unsigned k = 0; k < it.n && !r; k++) {
		struct lg_wire_buf w;
		char target[256];

		target_of(&cc, &it, k, target, sizeof(target));
		frame_start(&w, &cc, &it);
		lg_wire_put_u64(&w, LG_T_CHAN, (uint64_t)fd << 32);
		if (it.kind == LG_SQL_CREATE) {
			lg_wire_put_str(&w, LG_T_MADE, target);
		} else {
			lg_wire_put_u32(&w, LG_T_OP, OP_REMOTE_DELETE);
			lg_wire_put_u32(&w, LG_T_DECISION, 1);
			lg_wire_put_u32(&w, LG_T_STATUS, 0);
			lg_wire_put_str(&w, LG_T_TARGET, target);
		}
		r = gate(&w);
	}
	pthread_mutex_lock(&pg_lock);
	return r;
}

/* A CommandComplete: what its statement did. Lock held. */
static int complete(struct pg_conn *c, int fd, const char *tag, size_t n)
{
	struct pg_item it;
	bool skipped = c->skipping;
	int i = answered(c, tag, n);

	c->skipping = false;
	if (i < 0)
		return 0;
	it = c->q[i];
	memmove(c->q, c->q + i + 1,
		(c->nq - (unsigned)i - 1) * sizeof(c->q[0]));
	c->nq -= (unsigned)i + 1;
	if (skipped) /* DROP IF EXISTS of nothing, CREATE IF NOT EXISTS */
		return 0;
	/* "DELETE 0": no row was there */
	if (strcmp(it.tag, "DELETE") == 0 && n >= 8 &&
	    memcmp(tag, "DELETE 0", 8) == 0 && (n == 8 || tag[8] == '\0'))
		return 0;
	return report(c, fd, &it);
}

/*
 * MySQL's answer to the one command it waits for (its client sends one
 * statement a query): OK, with its affected rows and warnings, did what
 * the statement says, unless a warning says an IF EXISTS found nothing
 * (or an IF NOT EXISTS something) or no row was deleted; ERR, nothing.
 * Lock held.
 */
static int my_answer(struct pg_conn *c, int fd, const char *p, size_t n)
{
	unsigned long long affected;
	unsigned warnings;
	int a = lg_my_answer(p, n, &affected, &warnings);
	struct pg_item it = c->q[0];

	c->nq = 0;
	track(c, false);
	if (a != 1)
		return 0;
	if (it.if_exists && warnings)
		return 0;
	if (strcmp(it.tag, "DELETE") == 0 && !affected)
		return 0;
	return report(c, fd, &it);
}

/* A NoticeResponse's message ends in ", skipping": it did nothing. */
static bool notice_skips(const char *p, size_t n)
{
	const char *e = p + n;

	while (p < e && *p) {
		char field = *p++;
		const char *z = memchr(p, '\0', (size_t)(e - p));

		if (!z)
			return false;
		if (field == 'M' && z - p >= 10 &&
		    memcmp(z - 10, ", skipping", 10) == 0)
			return true;
		p = z + 1;
	}
	return false;
}

/* One whole backend message (type, body). Lock held. */
static int backend(struct pg_conn *c, int fd, char type, const char *b,
		   size_t n)
{
	switch (type) {
	case 'C': {
		const char *z = memchr(b, '\0', n);

		return complete(c, fd, b, z ? (size_t)(z - b) : n);
	}
	case 'N':
		if (notice_skips(b, n))
			c->skipping = true;
		return 0;
	case 'E':
		c->skipping = false;
		return 0;
	case 'Z': /* ready for the next query: what was asked is answered */
		c->nq = 0;
		c->skipping = false;
		track(c, false);
		return 0;
	default:
		return 0;
	}
}

bool pg_incoming(int fd, const char *p, size_t n, int *refuse)
{
	struct pg_conn *c;

	*refuse = 0;
	if (!atomic_load_explicit(&pg_seen, memory_order_relaxed))
		return false;
	pthread_mutex_lock(&pg_lock);
	c = pg_of(fd);
	if (!c || !c->tracking) {
		pthread_mutex_unlock(&pg_lock);
		return c != NULL;
	}
	if (c->mysql) {
		if (c->nq)
			*refuse = my_answer(c, fd, p, n);
		pthread_mutex_unlock(&pg_lock);
		return true;
	}
	while (n && !*refuse && c->used == gen && c->fd == fd) {
		uint32_t len;

		if (c->skip) { /* the rest of a message read before */
			size_t k = n < c->skip ? n : c->skip;

			c->skip -= (uint32_t)k;
			p += k;
			n -= k;
			continue;
		}
		if (c->hdr_n || n < 5) { /* a header cut by the read */
			size_t k = 5 - c->hdr_n < n ? 5 - c->hdr_n : n;

			memcpy(c->hdr + c->hdr_n, p, k);
			c->hdr_n += (unsigned)k;
			p += k;
			n -= k;
			if (c->hdr_n < 5)
				break;
			c->hdr_n = 0;
			len = (uint32_t)c->hdr[1] << 24 |
			      (uint32_t)c->hdr[2] << 16 |
			      (uint32_t)c->hdr[3] << 8 | c->hdr[4];
			/* its body comes in this read or later: not read */
			c->skip = len >= 4 ? len - 4 : 0;
			continue;
		}
		len = (uint32_t)(unsigned char)p[1] << 24 |
		      (uint32_t)(unsigned char)p[2] << 16 |
		      (uint32_t)(unsigned char)p[3] << 8 | (unsigned char)p[4];
		if (len < 4)
			break; /* not PostgreSQL's: stop reading it */
		if ((size_t)len + 1 > n) { /* cut: only its start is here */
			c->skip = (uint32_t)(len + 1 - n);
			break;
		}
		*refuse = backend(c, fd, p[0], p + 5, len - 4);
		p += len + 1;
		n -= len + 1;
	}
	pthread_mutex_unlock(&pg_lock);
	return true;
}
