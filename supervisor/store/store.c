// SPDX-License-Identifier: MIT
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#include <hiredis/hiredis.h>

#include "config/config.h"
#include "lib/cleanup.h"
#include "lib/clock.h"
#include "store.h"

#define RETRY_MS 1000 /* a lost store is tried again at most this often */
/*
 * This host's recent entries, replayed when a lost store is back (it may
 * have restarted empty): ZADD of a member it still has changes nothing.
 */
#define JOURNAL 1024

/*
 * The windows of one event: KEYS[1], KEYS[2]; ARGV w1, m1, w2, m2, age
 * (an empty member skips its window). Returns {n1, n2}. The server's
 * clock: supervisors on several hosts need not agree on theirs.
 */
static const char ADD2_LUA[] =
	"local t = redis.call('TIME')\n"
	"local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)\n"
	"local res = {-1, -1}\n"
	"for i = 1, 2 do\n"
	"  local w = tonumber(ARGV[2 * i - 1])\n"
	"  local m = ARGV[2 * i]\n"
	"  if m ~= '' then\n"
	"    redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', now - w)\n"
	"    redis.call('ZADD', KEYS[i], now - tonumber(ARGV[5]), m)\n"
	"    redis.call('PEXPIRE', KEYS[i], w)\n"
	"    res[i] = redis.call('ZCARD', KEYS[i])\n"
	"  end\n"
	"end\n"
	"return res\n";

/* KEYS[1] the window; ARGV window_ms, members... */
static const char FORGET_LUA[] =
	"local t = redis.call('TIME')\n"
	"local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)\n"
	"for i = 2, #ARGV do redis.call('ZREM', KEYS[1], ARGV[i]) end\n"
	"redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - tonumber(ARGV[1]))\n"
	"return redis.call('ZCARD', KEYS[1])\n";

struct jentry {
	char window[256];
	char member[48];
	uint64_t at_ms; /* our monotonic clock */
	uint64_t window_ms;
};

struct lg_store {
	char url[512], prefix[64], password_env[64], session[160], self[64];
	unsigned timeout_ms;
	bool fail_closed;
	char host[256], path[256];
	int port, db;
	redisContext *c, *sub;
	char forget_sha[48], add2_sha[48];
	bool up;
	uint64_t last_try_ms;
	struct jentry *journal;
	unsigned jhead, jn;
	void (*on_state)(void *ctx, bool up, const char *what);
	void *state_ctx;
	struct lg_shared_windows w;
	/*
	 * The store is used by the thread that feeds the guard (the shared
	 * windows, under the session's lock) and by the main thread (the
	 * kill channel, the trip's marker): every public function and window
	 * callback holds mu for its whole body (LG_HOLD; recursive, they call
	 * one another). A change of state is told to on_state after the
	 * outermost release, outside mu, so that the callback may take the
	 * session's lock without ever nesting it inside this one.
	 */
	pthread_mutex_t mu;
	unsigned depth;
	bool note_pending, note_up;
	char note[512];
};

static struct lg_store *lg_store_hold(const struct lg_store *cst)
{
	struct lg_store *st = (struct lg_store *)cst;

	pthread_mutex_lock(&st->mu);
	st->depth++;
	return st;
}

static void lg_store_release(struct lg_store **held)
{
	struct lg_store *st = *held;
	char note[sizeof(st->note)];
	bool tell = false, up = false;

	if (--st->depth == 0 && st->note_pending) {
		st->note_pending = false;
		tell = st->on_state != NULL;
		up = st->note_up;
		memcpy(note, st->note, sizeof(note));
	}
	pthread_mutex_unlock(&st->mu);
	if (tell)
		st->on_state(st->state_ctx, up, note);
}

static void drop(redisContext **c)
{
	if (*c)
		redisFree(*c);
	*c = NULL;
}

/* A command's reply, or NULL (then the connection is gone). */
static redisReply *cmd_argv(struct lg_store *st, redisContext *c, int argc,
			    const char **argv, const size_t *lens)
{
	redisReply *r;

	if (!c)
		return NULL;
	r = redisCommandArgv(c, argc, argv, lens);
	(void)st;
	if (r && c->err) {
		freeReplyObject(r);
		r = NULL;
	}
	return r;
}

LG_DEFINE_CLEANUP(redis_freep, redisContext *, redisFree)

/*
 * One setup command on a new connection: 0, or its error as "what: why"
 * (-errnum), the reply released either way.
 */
static int setup_cmd(redisContext *c, redisReply *r, struct lg_error *err,
		     int errnum, const char *what)
{
	int e = 0;

	if (!r || r->type == REDIS_REPLY_ERROR)
		e = lg_error_set(err, errnum, "%s: %s", what,
				 r ? r->str : c->errstr);
	if (r)
		freeReplyObject(r);
	return e;
}

static int connect_one(struct lg_store *st, redisContext **out,
		       struct lg_error *err)
{
	struct timeval tv = { st->timeout_ms / 1000,
			      (st->timeout_ms % 1000) * 1000 };
	const char *pw = st->password_env[0] ? getenv(st->password_env) : NULL;
	LG_AUTO(redis_freep) redisContext *c = NULL;
	char what[PATH_MAX + 128];
	int e;

	c = st->path[0] ? redisConnectUnixWithTimeout(st->path, tv) :
			  redisConnectWithTimeout(st->host, st->port, tv);
	if (!c || c->err)
		return lg_error_set(err, ECONNREFUSED,
				    "cannot connect to %s: %s", st->url,
				    c ? c->errstr : "out of memory");
	redisSetTimeout(c, tv);
	if (pw && *pw) {
		snprintf(what, sizeof(what), "%s refused the password in $%s",
			 st->url, st->password_env);
		e = setup_cmd(c, redisCommand(c, "AUTH %s", pw), err, EACCES,
			      what);
		if (e)
			return e;
	}
	if (st->db) {
		snprintf(what, sizeof(what), "%s: cannot select database %d",
			 st->url, st->db);
		e = setup_cmd(c, redisCommand(c, "SELECT %d", st->db), err,
			      EINVAL, what);
		if (e)
			return e;
	}
	snprintf(what, sizeof(what), "%s does not answer PING", st->url);
	e = setup_cmd(c, redisCommand(c, "PING"), err, EIO, what);
	if (e)
		return e;
	*out = lg_steal_ptr(&c);
	return 0;
}

static int load_scripts(struct lg_store *st, struct lg_error *err)
{
	const char *src[2] = { FORGET_LUA, ADD2_LUA };
	char *sha[2] = { st->forget_sha, st->add2_sha };
	int e;

	for (int i = 0; i < 2; i++) {
		redisReply *r = redisCommand(st->c, "SCRIPT LOAD %s", src[i]);

		if (!r || r->type != REDIS_REPLY_STRING) {
			e = lg_error_set(err, EIO,
					 "%s: cannot load its scripts: %s",
					 st->url,
					 r && r->str ? r->str : st->c->errstr);
			if (r)
				freeReplyObject(r);
			return e;
		}
		snprintf(sha[i], sizeof(st->add2_sha), "%s", r->str);
		freeReplyObject(r);
	}
	return 0;
}

static void key(const struct lg_store *st, const char *what, char *out,
		size_t size)
{
	snprintf(out, size, "%s{%s}:%s", st->prefix, st->session, what);
}

static int subscribe(struct lg_store *st, struct lg_error *err)
{
	char ch[512];
	redisReply *r;
	int e;

	if (connect_one(st, &st->sub, err) < 0)
		return -ECONNREFUSED;
	key(st, "kill", ch, sizeof(ch));
	r = redisCommand(st->sub, "SUBSCRIBE %s", ch);
	if (!r) {
		e = lg_error_set(err, EIO, "%s: cannot subscribe: %s", st->url,
				 st->sub->errstr);
		drop(&st->sub);
		return e;
	}
	freeReplyObject(r);
	/* messages are read when epoll says so: never wait for one */
	{
		struct timeval tv = { 0, 1000 };

		redisSetTimeout(st->sub, tv);
	}
	return 0;
}

static void set_state(struct lg_store *st, bool up, const char *what)
{
	if (st->up == up)
		return;
	st->up = up;
	/* told after the outermost release (LG_HOLD) */
	st->note_pending = true;
	st->note_up = up;
	snprintf(st->note, sizeof(st->note), "%s", what);
}

static void lost(struct lg_store *st, const char *what)
{
	char msg[512];

	snprintf(msg, sizeof(msg), "%s: %s", what,
		 st->c && st->c->err ? st->c->errstr : "no answer");
	drop(&st->c);
	st->last_try_ms = lg_mono_ms();
	set_state(st, false, msg);
}

/*
 * One round trip adding ma to window wa and mb to wb (either NULL: not
 * that one), age_ms in the past. 0 and counts[] as the windows hold them
 * now, -1 an unexpected reply, -2 the connection is gone.
 */
static int eval_add2(struct lg_store *st, const char *wa, const char *ma,
		     uint64_t wa_ms, const char *wb, const char *mb,
		     uint64_t wb_ms, uint64_t age_ms, long counts[2])
{
	char ka[4400], kb[4400], w1[32], w2[32], age[32];
	const char *argv[10];
	size_t lens[10];
	redisReply *r;
	int ret = -1;

	counts[0] = counts[1] = -1;
	/* a missing window names the other's key (one hash slot either way) */
	key(st, wa ? wa : wb, ka, sizeof(ka));
	key(st, wb ? wb : wa, kb, sizeof(kb));
	snprintf(w1, sizeof(w1), "%llu", (unsigned long long)wa_ms);
	snprintf(w2, sizeof(w2), "%llu", (unsigned long long)wb_ms);
	snprintf(age, sizeof(age), "%llu", (unsigned long long)age_ms);
	argv[0] = "EVALSHA";
	argv[1] = st->add2_sha;
	argv[2] = "2";
	argv[3] = ka;
	argv[4] = kb;
	argv[5] = w1;
	argv[6] = wa ? ma : "";
	argv[7] = w2;
	argv[8] = wb ? mb : "";
	argv[9] = age;
	for (int i = 0; i < 10; i++)
		lens[i] = strlen(argv[i]);
	r = cmd_argv(st, st->c, 10, argv, lens);
	if (!r)
		return -2;
	if (r->type == REDIS_REPLY_ARRAY && r->elements == 2 &&
	    r->element[0]->type == REDIS_REPLY_INTEGER &&
	    r->element[1]->type == REDIS_REPLY_INTEGER) {
		counts[0] = (long)r->element[0]->integer;
		counts[1] = (long)r->element[1]->integer;
		ret = 0;
	}
	freeReplyObject(r);
	return ret;
}

/* Keeps an entry for a replay; 1 if it was kept. */
static unsigned journal_add(struct lg_store *st, const char *window,
			    const char *member, uint64_t window_ms)
{
	struct jentry *j;

	if (!st->journal)
		return 0;
	if (st->jn == JOURNAL) { /* full: the oldest goes */
		st->jhead = (st->jhead + 1) % JOURNAL;
		st->jn--;
	}
	j = &st->journal[(st->jhead + st->jn++) % JOURNAL];
	snprintf(j->window, sizeof(j->window), "%s", window);
	snprintf(j->member, sizeof(j->member), "%s", member);
	j->at_ms = lg_mono_ms();
	j->window_ms = window_ms;
	return 1;
}

/* Back after a loss: reconnect, then replay what was counted meanwhile. */
static bool retry(struct lg_store *st)
{
	char msg[600];
	unsigned replayed = 0;
	uint64_t now = lg_mono_ms();

	if (st->up)
		return true;
	if (now - st->last_try_ms < RETRY_MS)
		return false;
	st->last_try_ms = now;
	if (connect_one(st, &st->c, NULL) < 0 || load_scripts(st, NULL) < 0) {
		drop(&st->c);
		return false;
	}
	for (unsigned i = 0; i < st->jn; i++) {
		struct jentry *j = &st->journal[(st->jhead + i) % JOURNAL];

		long c[2];

		if (!j->window[0] || now - j->at_ms >= j->window_ms)
			continue;
		if (eval_add2(st, j->window, j->member, j->window_ms, NULL,
			      NULL, 0, now - j->at_ms, c) == -2) {
			lost(st, "the store went away again");
			return false;
		}
		replayed++;
	}
	if (!st->sub && subscribe(st, NULL) < 0)
		drop(&st->sub); /* kills from other hosts are not heard */
	snprintf(
		msg, sizeof(msg),
		"%s answers again; this host's %u entries of the last window were added to the shared windows again%s",
		st->url, replayed,
		st->sub ? "" : " (its kill channel could not be reopened)");
	set_state(st, true, msg);
	return true;
}

static int w_add2(void *ctx, const char *wa, const char *ma, uint64_t wa_ms,
		  const char *wb, const char *mb, uint64_t wb_ms,
		  long counts[2])
{
	struct lg_store *st = ctx;
	LG_HOLD(lg_store, st);
	unsigned journaled = 0;
	int r;

	counts[0] = counts[1] = -1;
	/* what fails closed is refused: not counted, not replayed */
	if (!st->fail_closed || st->up) {
		if (wa)
			journaled += journal_add(st, wa, ma, wa_ms);
		if (wb)
			journaled += journal_add(st, wb, mb, wb_ms);
	}
	if (!retry(st))
		return -1;
	r = eval_add2(st, wa, ma, wa_ms, wb, mb, wb_ms, 0, counts);
	if (r == -2) {
		lost(st, "the store stopped answering");
		if (st->fail_closed) /* refused: forget what was kept of it */
			st->jn -= journaled;
	}
	return r < 0 ? -1 : 0;
}

static long w_add(void *ctx, const char *window, const char *member,
		  uint64_t window_ms)
{
	long c[2];

	return w_add2(ctx, window, member, window_ms, NULL, NULL, 0, c) < 0 ?
		       -1 :
		       c[0];
}

static long w_forget(void *ctx, const char *window, const char *const *members,
		     size_t n, uint64_t window_ms)
{
	struct lg_store *st = ctx;
	LG_HOLD(lg_store, st);
	const char *argv[5 + 64];
	size_t lens[5 + 64];
	char k[4400], w[32];
	redisReply *r;
	long count = -1;
	int argc = 0;

	for (unsigned i = 0; i < st->jn; i++) {
		struct jentry *j = &st->journal[(st->jhead + i) % JOURNAL];

		for (size_t m = 0; m < n; m++)
			if (strcmp(j->member, members[m]) == 0 &&
			    strcmp(j->window, window) == 0)
				j->window[0] = '\0';
	}
	if (!st->up || !st->c)
		return -1;
	key(st, window, k, sizeof(k));
	snprintf(w, sizeof(w), "%llu", (unsigned long long)window_ms);
	argv[argc++] = "EVALSHA";
	argv[argc++] = st->forget_sha;
	argv[argc++] = "1";
	argv[argc++] = k;
	argv[argc++] = w;
	for (size_t i = 0; i < n && i < 64; i++)
		argv[argc++] = members[i];
	for (int i = 0; i < argc; i++)
		lens[i] = strlen(argv[i]);
	r = cmd_argv(st, st->c, argc, argv, lens);
	if (!r) {
		lost(st, "the store stopped answering");
		return -1;
	}
	if (r->type == REDIS_REPLY_INTEGER)
		count = (long)r->integer;
	freeReplyObject(r);
	return count;
}

static void w_reset(void *ctx, const char *window)
{
	struct lg_store *st = ctx;
	LG_HOLD(lg_store, st);
	char k[4400];
	const char *argv[2] = { "DEL", k };
	size_t lens[2];
	redisReply *r;

	for (unsigned i = 0; i < st->jn; i++) {
		struct jentry *j = &st->journal[(st->jhead + i) % JOURNAL];

		if (strcmp(j->window, window) == 0)
			j->window[0] = '\0'; /* counting starts over */
	}
	if (!st->up || !st->c)
		return;
	key(st, window, k, sizeof(k));
	lens[0] = 3;
	lens[1] = strlen(k);
	r = cmd_argv(st, st->c, 2, argv, lens);
	if (!r)
		lost(st, "the store stopped answering");
	else
		freeReplyObject(r);
}

int lg_store_open(struct lg_store **out, const struct lg_store_cfg *cfg,
		  struct lg_error *err)
{
	struct lg_store *st = calloc(1, sizeof(*st));
	int r;

	*out = NULL;
	if (!st)
		return lg_error_set(err, ENOMEM, "out of memory");
	{
		pthread_mutexattr_t a;

		pthread_mutexattr_init(&a);
		pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
		pthread_mutex_init(&st->mu, &a);
		pthread_mutexattr_destroy(&a);
	}
	snprintf(st->url, sizeof(st->url), "%s", cfg->url ? cfg->url : "");
	snprintf(st->prefix, sizeof(st->prefix), "%s",
		 cfg->prefix ? cfg->prefix : "lgrun:");
	snprintf(st->password_env, sizeof(st->password_env), "%s",
		 cfg->password_env ? cfg->password_env : "");
	snprintf(st->session, sizeof(st->session), "%s", cfg->session);
	snprintf(st->self, sizeof(st->self), "%s", cfg->self);
	st->timeout_ms = cfg->timeout_ms ? cfg->timeout_ms : 200;
	st->fail_closed = cfg->fail_closed;
	st->journal = calloc(JOURNAL, sizeof(*st->journal));
	r = lg_store_url_parse(st->url, st->host, sizeof(st->host), &st->port,
			       st->path, sizeof(st->path), &st->db, err);
	if (r == 0)
		r = connect_one(st, &st->c, err);
	if (r == 0)
		r = load_scripts(st, err);
	if (r == 0)
		r = subscribe(st, err);
	if (r < 0) {
		lg_store_free(st);
		return r;
	}
	st->up = true;
	st->w = (struct lg_shared_windows){ w_add,  w_forget, w_reset,
					    w_add2, st,	      st->self };
	*out = st;
	return 0;
}

void lg_store_free(struct lg_store *st)
{
	if (!st)
		return;
	drop(&st->c);
	drop(&st->sub);
	free(st->journal);
	pthread_mutex_destroy(&st->mu);
	free(st);
}

const struct lg_shared_windows *lg_store_windows(struct lg_store *st)
{
	return &st->w;
}

bool lg_store_up(const struct lg_store *st)
{
	LG_HOLD(lg_store, st);
	return st && st->up;
}

bool lg_store_check(struct lg_store *st)
{
	LG_HOLD(lg_store, st);
	return st && retry(st);
}

void lg_store_on_state(struct lg_store *st,
		       void (*fn)(void *ctx, bool up, const char *what),
		       void *ctx)
{
	LG_HOLD(lg_store, st);
	st->on_state = fn;
	st->state_ctx = ctx;
}

int lg_store_killed(struct lg_store *st, char *record, size_t size)
{
	LG_HOLD(lg_store, st);
	char k[512];
	redisReply *r;
	int ret = 0;

	if (!retry(st))
		return -EIO;
	key(st, "killed", k, sizeof(k));
	r = redisCommand(st->c, "GET %s", k);
	if (!r) {
		lost(st, "the store stopped answering");
		return -EIO;
	}
	if (r->type == REDIS_REPLY_STRING) {
		snprintf(record, size, "%s", r->str);
		ret = 1;
	}
	freeReplyObject(r);
	return ret;
}

int lg_store_mark_killed(struct lg_store *st, const char *record,
			 const char *summary)
{
	LG_HOLD(lg_store, st);
	char k[512], ch[512], msg[1024];
	redisReply *r;

	if (!retry(st))
		return -EIO;
	key(st, "killed", k, sizeof(k));
	key(st, "kill", ch, sizeof(ch));
	r = redisCommand(st->c, "SET %s %s", k, record);
	if (!r) {
		lost(st, "the store stopped answering");
		return -EIO;
	}
	freeReplyObject(r);
	/* "SELF<TAB>summary": a supervisor ignores its own message */
	snprintf(msg, sizeof(msg), "%s\t%s", st->self, summary);
	r = redisCommand(st->c, "PUBLISH %s %s", ch, msg);
	if (!r) {
		lost(st, "the store stopped answering");
		return -EIO;
	}
	freeReplyObject(r);
	return 0;
}

int lg_store_reset(struct lg_store *st)
{
	LG_HOLD(lg_store, st);
	char k[512];
	redisReply *r;

	if (!retry(st))
		return -EIO;
	key(st, "killed", k, sizeof(k));
	r = redisCommand(st->c, "DEL %s", k);
	if (!r) {
		lost(st, "the store stopped answering");
		return -EIO;
	}
	freeReplyObject(r);
	return 0;
}

int lg_store_sub_fd(const struct lg_store *st)
{
	LG_HOLD(lg_store, st);
	return st && st->sub ? st->sub->fd : -1;
}

int lg_store_sub_read(struct lg_store *st, char *summary, size_t size)
{
	LG_HOLD(lg_store, st);
	void *reply = NULL;
	int found = 0;

	if (!st->sub)
		return -ENOTCONN;
	if (redisBufferRead(st->sub) != REDIS_OK) {
		drop(&st->sub);
		return -ECONNRESET;
	}
	while (redisGetReplyFromReader(st->sub, &reply) == REDIS_OK && reply) {
		redisReply *r = reply;

		/* ["message", channel, "SELF\tsummary"] */
		if (r->type == REDIS_REPLY_ARRAY && r->elements == 3 &&
		    r->element[2]->type == REDIS_REPLY_STRING) {
			const char *m = r->element[2]->str;
			const char *tab = strchr(m, '\t');
			size_t sl = strlen(st->self);

			if (tab && !((size_t)(tab - m) == sl &&
				     strncmp(m, st->self, sl) == 0)) {
				snprintf(summary, size, "%s", tab + 1);
				found = 1;
			}
		}
		freeReplyObject(r);
		reply = NULL;
	}
	return found;
}
