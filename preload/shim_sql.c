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
 *
 * A TRUNCATE's answer cannot tell an empty table from a full one: before
 * a Query whose statements are all TRUNCATEs leaves, on a connection the
 * shim has followed from its startup and that is idle (the last message
 * the server sent was a ReadyForQuery outside a transaction, the program
 * sent nothing since), the shim asks the server itself on the same socket
 * which of the tables hold a row (lg_pg_truncate_probe) and reads the
 * whole answer before the program's Query goes: a table found empty is
 * the session's own, as one the session emptied, and its TRUNCATE is no
 * loss. The messages a server may send at any time (a notification, a
 * notice, a parameter's new value) that arrive meanwhile are the
 * program's: kept, and handed to its next reads. Anything else (an error,
 * an odd answer) leaves the tables counted as before.
 */
#include <stddef.h>

#include "shim_traffic.h"
#include "sql.h"

#define PG_CONNS 8 /* connections of one process read at once */
#define PG_QUEUE 8 /* statements waiting for their answers, per connection */
#define PG_PROBE_COLS 8 /* tables one probe asks about, at most */
#define PG_STASH 8192 /* the program's messages read during a probe */

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
	/*
	 * PostgreSQL's, followed from the startup: the last message the
	 * server sent was a ReadyForQuery and the program sent nothing since
	 * (ready), its transaction status (txn: 'I' idle, 'T', 'E'); lost:
	 * some of the stream went unread (a peek, a vectored read past its
	 * first buffer, bytes that are no message): never probed again
	 */
	bool ready, lost;
	char txn;
	unsigned nprobed; /* tables a probe asked about here, by digest */
	uint64_t probed[16];
	uint32_t stash_n, stash_off; /* the program's bytes a probe read */
	/* from here on, kept when the slot is taken: */
	bool probing; /* its stash being written: the slot is not reused */
	char stash[PG_STASH];
};

static struct pg_conn pg[PG_CONNS];
static unsigned pg_next;
/* a startup was seen: until then closes and reads take no lock here */
atomic_bool pg_seen;
/* some connection has stashed bytes its program has not read yet */
atomic_bool pg_stashed;
/* PostgreSQL connections by fd (== gen): their writes are all seen */
uint32_t pg_fd[FD_TRACK];
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

/* Is a stash left for a program to read? Lock held. */
static void stash_check(void)
{
	bool any = false;

	for (unsigned i = 0; i < PG_CONNS; i++)
		any |= pg[i].used == gen && pg[i].stash_n;
	atomic_store(&pg_stashed, any);
}

void pg_forget(int fd)
{
	struct pg_conn *c;

	if (!atomic_load_explicit(&pg_seen, memory_order_relaxed))
		return;
	if (fd >= 0 && fd < FD_TRACK)
		pg_fd[fd] = 0;
	pthread_mutex_lock(&pg_lock);
	c = pg_of(fd);
	if (c) {
		track(c, false);
		c->used = 0;
		c->stash_n = c->stash_off = 0;
		stash_check();
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
	for (unsigned i = 0; !c && i < PG_CONNS; i++) {
		c = &pg[pg_next++ % PG_CONNS];
		if (c->probing && i + 1 < PG_CONNS)
			c = NULL; /* another thread writes its stash */
	}
	track(c, false);
	memset(c, 0, offsetof(struct pg_conn, probing));
	c->used = gen;
	if (!mysql && fd >= 0 && fd < FD_TRACK)
		pg_fd[fd] = gen;
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

static int report(struct pg_conn *c, int fd, const struct pg_item *ip);

/* n bytes of fd into buf (NULL: passed over), waiting as long as it takes. */
static bool take(int fd, char *buf, size_t n)
{
	char skip[256];

	while (n) {
		size_t want = buf ? n : (n < sizeof(skip) ? n : sizeof(skip));
		ssize_t r = real.recv(fd, buf ? buf : skip, want, MSG_DONTWAIT);
		struct pollfd pf = { .fd = fd, .events = POLLIN };

		if (r > 0) {
			n -= (size_t)r;
			if (buf)
				buf += r;
			continue;
		}
		if (r == 0)
			return false; /* the server is gone */
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			return false;
		/*
		 * No time limit: the probe waits for what the program's own
		 * TRUNCATE would wait for (a lock), and its answer must be
		 * read whole or the program would read it as its own
		 */
		if (poll(&pf, 1, -1) < 0 && errno != EINTR)
			return false;
	}
	return true;
}

/* The whole of buf written to fd. */
static bool give(int fd, const char *buf, size_t n)
{
	while (n) {
		ssize_t r = real.send(fd, buf, n, MSG_NOSIGNAL | MSG_DONTWAIT);
		struct pollfd pf = { .fd = fd, .events = POLLOUT };

		if (r > 0) {
			buf += r;
			n -= (size_t)r;
			continue;
		}
		if (r < 0 && errno == EINTR)
			continue;
		if (r == 0 || (errno != EAGAIN && errno != EWOULDBLOCK))
			return false;
		if (poll(&pf, 1, -1) < 0 && errno != EINTR)
			return false;
	}
	return true;
}

static uint32_t be32(const unsigned char *u)
{
	return (uint32_t)u[0] << 24 | (uint32_t)u[1] << 16 |
	       (uint32_t)u[2] << 8 | u[3];
}

enum probe_end {
	PROBE_ANSWERED, /* *empty: which tables held no row */
	PROBE_NONE, /* no answer that tells: count as before */
	PROBE_BROKEN, /* the stream is no longer the program's: cut it */
};

/*
 * The probe sent on fd and its answer read up to its ReadyForQuery: the
 * SET's CommandComplete, one RowDescription, one DataRow of cols booleans
 * ('t': the table holds a row), the SELECT's CommandComplete. Messages a
 * server sends at any time (NotificationResponse, NoticeResponse,
 * ParameterStatus) are the program's: copied to stash (*stashed bytes,
 * PG_STASH at most). Called without pg_lock.
 */
static enum probe_end probe(int fd, const char *sql, unsigned cols,
			    unsigned *empty, char *stash, uint32_t *stashed)
{
	char msg[5 + 1024], row[2 + PG_PROBE_COLS * 5];
	size_t n = strlen(sql);
	unsigned done = 0, failed = 0;
	bool have_row = false;

	*empty = 0;
	*stashed = 0;
	if (n + 6 > sizeof(msg))
		return PROBE_NONE;
	msg[0] = 'Q';
	msg[1] = (char)((n + 5) >> 24);
	msg[2] = (char)((n + 5) >> 16);
	msg[3] = (char)((n + 5) >> 8);
	msg[4] = (char)(n + 5);
	memcpy(msg + 5, sql, n + 1);
	if (!give(fd, msg, n + 6))
		return PROBE_BROKEN;
	for (;;) {
		unsigned char h[5];
		uint32_t len;

		if (!take(fd, (char *)h, 5))
			return PROBE_BROKEN;
		len = be32(h + 1);
		if (len < 4 || len > (1u << 30))
			return PROBE_BROKEN;
		len -= 4;
		switch (h[0]) {
		case 'A': /* the program's, whenever they come */
		case 'N':
		case 'S':
			if (*stashed + 5 + (size_t)len > PG_STASH)
				return PROBE_BROKEN;
			memcpy(stash + *stashed, h, 5);
			if (!take(fd, stash + *stashed + 5, len))
				return PROBE_BROKEN;
			*stashed += 5 + len;
			continue;
		case 'Z': {
			char status;

			if (len != 1 || !take(fd, &status, 1))
				return PROBE_BROKEN;
			if (failed || done != 4 || !have_row || status != 'I')
				return PROBE_NONE;
			return PROBE_ANSWERED;
		}
		case 'C':
		case 'T':
			done++;
			if (!take(fd, NULL, len))
				return PROBE_BROKEN;
			continue;
		case 'D':
			done++;
			if (len != 2 + cols * 5 || have_row) {
				failed++;
				if (!take(fd, NULL, len))
					return PROBE_BROKEN;
				continue;
			}
			if (!take(fd, row, len))
				return PROBE_BROKEN;
			have_row = true;
			if ((unsigned)((unsigned char)row[0] << 8 |
				       (unsigned char)row[1]) != cols) {
				failed++;
				continue;
			}
			for (unsigned i = 0; i < cols; i++) {
				const char *v = row + 2 + i * 5;

				if (be32((const unsigned char *)v) != 1 ||
				    (v[4] != 't' && v[4] != 'f'))
					failed++;
				else if (v[4] == 'f')
					*empty |= 1u << i;
			}
			continue;
		default: /* an error, or what a SELECT never answers */
			failed++;
			if (!take(fd, NULL, len))
				return PROBE_BROKEN;
			continue;
		}
	}
}

/* Has a probe asked about name on this connection? Lock held. */
static bool probed(const struct pg_conn *c, const char *name)
{
	uint64_t h = lg_wire_hash(0, name, strlen(name));

	for (unsigned i = 0; i < c->nprobed && i < 16; i++)
		if (c->probed[i] == h)
			return true;
	return false;
}

/*
 * Before a Query of TRUNCATEs and INSERTs leaves on an idle connection:
 * the tables it names that hold no row are the session's from now on
 * (what it writes there, or empties, is its own), told to the supervisor
 * as made. 0, or the errno the program's write fails with (the probe
 * broke the stream: cut). Called with pg_lock held; lets go of it.
 */
static int probe_first(struct pg_conn *c, int fd, struct lg_span sql)
{
	char q[1024], names[PG_PROBE_COLS][LG_SQL_NAME_MAX], one;
	unsigned cols =
		lg_pg_probe(sql.p, sql.n, PG_PROBE_COLS, names, q, sizeof(q));
	unsigned empty = 0, fresh = 0;
	uint32_t stashed = 0;
	enum probe_end end;
	int e = errno, r = 0;

	for (unsigned i = 0; i < cols; i++)
		fresh += !probed(c, names[i]);
	/* asked before (what it said was told), or the program has yet to
	 * read what the last probe kept for it */
	if (!fresh || c->stash_n)
		return 0;
	/* nothing unread: the server said all it had to before */
	if (real.recv(fd, &one, 1, MSG_PEEK | MSG_DONTWAIT) >= 0 ||
	    (errno != EAGAIN && errno != EWOULDBLOCK)) {
		errno = e;
		return 0;
	}
	/*
	 * No lock held while it waits (a lock of another connection of this
	 * process could be what the server waits for); the slot is kept
	 */
	c->probing = true;
	pthread_mutex_unlock(&pg_lock);
	end = probe(fd, q, cols, &empty, c->stash, &stashed);
	pthread_mutex_lock(&pg_lock);
	c->probing = false;
	c = pg_of(fd);
	if (c && stashed) {
		c->stash_off = 0;
		c->stash_n = stashed;
		atomic_store(&pg_stashed, true);
	}
	errno = e;
	if (!c)
		return 0;
	if (end == PROBE_BROKEN) {
		c->lost = true;
		shutdown(fd, SHUT_RDWR);
		return ECONNRESET;
	}
	if (end != PROBE_ANSWERED)
		return 0;
	c->txn = 'I';
	for (unsigned i = 0; i < cols && !r; i++) {
		struct pg_item it = { .kind = LG_SQL_CREATE, .n = 1 };

		if (!probed(c, names[i]))
			c->probed[c->nprobed++ % 16] =
				lg_wire_hash(0, names[i], strlen(names[i]));
		if (!(empty >> i & 1))
			continue;
		snprintf(it.tag, sizeof(it.tag), "EMPTY TABLE");
		memcpy(it.names[0], names[i], LG_SQL_NAME_MAX);
		snprintf(it.text, sizeof(it.text), "%.*s",
			 (int)(sql.n < 159 ? sql.n : 159), sql.p);
		r = report(c, fd, &it); /* lets go of the lock meanwhile */
		c = pg_of(fd);
		if (!c)
			break;
	}
	return r;
}

bool pg_outgoing(int fd, const char *p, size_t n, int *refuse)
{
	struct lg_span db, user, whole = { NULL, 0 };
	struct pg_conn *c;
	size_t qlen;
	bool ours, idle;

	*refuse = 0;
	if (p[0] == '\0' && lg_pg_startup(p, n, &db, &user)) {
		startup(fd, db, user, false);
		return true;
	}
	if (lg_recog_my_packet(p, n) && my_outgoing(fd, p, n, refuse))
		return true;
	if (!atomic_load_explicit(&pg_seen, memory_order_relaxed))
		return false;
	pthread_mutex_lock(&pg_lock);
	c = pg_of(fd);
	if (c && c->mysql)
		c = NULL;
	ours = c != NULL;
	if (c) { /* the program speaks: the server will answer */
		idle = c->ready && c->txn == 'I' && !c->lost;
		c->ready = false;
		/* one whole Query, alone in its write */
		if (idle && p[0] == 'Q' && lg_pg_query(p, n, &whole, &qlen) &&
		    qlen != n)
			whole.p = NULL;
		if (!idle || p[0] != 'Q')
			whole.p = NULL;
	}
	if (p[0] != 'Q' && p[0] != 'P')
		c = NULL;
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
	c = pg_of(fd);
	if (c && whole.p && !*refuse)
		*refuse = probe_first(c, fd, whole);
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
		c->ready = true;
		c->txn = n == 1 ? b[0] : '?';
		track(c, false);
		return 0;
	default:
		return 0;
	}
}

/* A message type PostgreSQL's backend sends. */
static bool backend_type(char t)
{
	return t && strchr("123ACDEGHIKNRSTVWZcdnstv", t);
}

bool pg_incoming(int fd, const char *p, size_t n, bool whole, int *refuse)
{
	struct pg_conn *c;

	*refuse = 0;
	if (!atomic_load_explicit(&pg_seen, memory_order_relaxed))
		return false;
	pthread_mutex_lock(&pg_lock);
	c = pg_of(fd);
	if (!c || (c->mysql && !c->tracking)) {
		pthread_mutex_unlock(&pg_lock);
		return c != NULL;
	}
	if (c->mysql) {
		if (c->nq)
			*refuse = my_answer(c, fd, p, n);
		pthread_mutex_unlock(&pg_lock);
		return true;
	}
	if (!whole) /* bytes of the stream this read does not show */
		c->lost = true;
	/* PostgreSQL's: every message followed, from the startup on */
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
			if (len < 4 || !backend_type((char)c->hdr[0])) {
				c->lost = true;
				break;
			}
			/* its body comes in this read or later: not read */
			c->skip = len - 4;
			c->ready = false;
			if (c->hdr[0] == 'Z') /* its status unseen */
				*refuse = backend(c, fd, 'Z', NULL, 0);
			continue;
		}
		len = (uint32_t)(unsigned char)p[1] << 24 |
		      (uint32_t)(unsigned char)p[2] << 16 |
		      (uint32_t)(unsigned char)p[3] << 8 | (unsigned char)p[4];
		if (len < 4 || !backend_type(p[0])) {
			c->lost = true; /* not PostgreSQL's: stop reading it */
			break;
		}
		if ((size_t)len + 1 > n) { /* cut: only its start is here */
			c->skip = (uint32_t)(len + 1 - n);
			c->ready = false;
			if (p[0] == 'Z') /* its status unseen */
				*refuse = backend(c, fd, 'Z', NULL, 0);
			break;
		}
		/* what a server sends at any time leaves it as ready as it was */
		if (p[0] != 'A' && p[0] != 'N' && p[0] != 'S')
			c->ready = false;
		*refuse = backend(c, fd, p[0], p + 5, len - 4);
		p += len + 1;
		n -= len + 1;
	}
	pthread_mutex_unlock(&pg_lock);
	return true;
}

ssize_t pg_unstash(int fd, const struct iovec *iov, int cnt, bool peek)
{
	struct pg_conn *c;
	ssize_t got = 0;

	pthread_mutex_lock(&pg_lock);
	c = pg_of(fd);
	if (!c || c->stash_off == c->stash_n) {
		pthread_mutex_unlock(&pg_lock);
		return -1;
	}
	for (int i = 0; i < cnt && c->stash_off + (uint32_t)got < c->stash_n;
	     i++) {
		size_t k = c->stash_n - c->stash_off - (size_t)got;

		if (k > iov[i].iov_len)
			k = iov[i].iov_len;
		memcpy(iov[i].iov_base, c->stash + c->stash_off + got, k);
		got += (ssize_t)k;
	}
	if (!peek)
		c->stash_off += (uint32_t)got;
	if (c->stash_off == c->stash_n) {
		c->stash_off = c->stash_n = 0;
		stash_check();
	}
	pthread_mutex_unlock(&pg_lock);
	return got;
}
