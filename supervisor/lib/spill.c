// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cleanup.h"
#include "clock.h"
#include "spill.h"

struct lg_spill {
	size_t size; /* of the whole mapping */
	size_t cap; /* of the lines' room, and of each records' room */
	lg_spill_line_fn line;
	/*
	 * lines[0, head) and the records in recs[k][0, held[k]) wait for the
	 * file at path. Each is stored after the bytes it covers (release):
	 * the child reads whole lines and whole records only.
	 *
	 * Records go into recs[act]; a settle (lg_spill_settle) turns act over
	 * to the other room, then makes the lines of the one it left without
	 * m: the writer holds on into the other room meanwhile. What the two
	 * rooms hold is older in the one that is not act.
	 */
	_Atomic size_t head, held[2];
	unsigned act;
	bool wanted; /* past half a room: a settle was asked for */
	uint64_t since_ms;
	/* m: the fields above and lines[]; settling: one settle at a time */
	pthread_mutex_t m, settling;
	char path[PATH_MAX];
	char *lines, *recs[2]; /* in the mapping, after this header */
};

/* A record in recs: its length, then its bytes, 8-aligned. */
struct rec {
	size_t len;
	unsigned char bytes[];
};

#define REC_SIZE(n) ((sizeof(struct rec) + (n) + 7) & ~(size_t)7)

struct lg_spill *lg_spill_new(size_t cap, lg_spill_line_fn line)
{
	size_t size = sizeof(struct lg_spill) + 3 * cap;
	struct lg_spill *sp = mmap(NULL, size, PROT_READ | PROT_WRITE,
				   MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (sp == MAP_FAILED)
		return NULL;
	sp->size = size;
	sp->cap = cap;
	sp->line = line;
	sp->lines = (char *)(sp + 1);
	sp->recs[0] = sp->lines + cap;
	sp->recs[1] = sp->recs[0] + cap;
	atomic_init(&sp->head, 0);
	atomic_init(&sp->held[0], 0);
	atomic_init(&sp->held[1], 0);
	pthread_mutex_init(&sp->m, NULL);
	pthread_mutex_init(&sp->settling, NULL);
	return sp;
}

void lg_spill_free(struct lg_spill *sp)
{
	if (!sp)
		return;
	pthread_mutex_destroy(&sp->m);
	pthread_mutex_destroy(&sp->settling);
	munmap(sp, sp->size);
}

/* All of buf[0, n) to fd, however many writes it takes. */
static int write_all(int fd, const char *buf, size_t n)
{
	while (n) {
		ssize_t w = write(fd, buf, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -EIO;
		buf += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Under m. */
static void waiting(struct lg_spill *sp, const char *path)
{
	if (!sp->since_ms) {
		snprintf(sp->path, sizeof(sp->path), "%s", path);
		sp->since_ms = lg_mono_ms();
	}
}

/* Under m: nothing waits any more. */
static void maybe_done(struct lg_spill *sp)
{
	if (!atomic_load_explicit(&sp->head, memory_order_relaxed) &&
	    !atomic_load_explicit(&sp->held[0], memory_order_relaxed) &&
	    !atomic_load_explicit(&sp->held[1], memory_order_relaxed))
		sp->since_ms = 0;
}

/* Under m: the lines written to fd (records held are not). */
static int write_lines(struct lg_spill *sp, int fd)
{
	size_t n = atomic_load_explicit(&sp->head, memory_order_relaxed);
	int r;

	if (!n)
		return 0;
	r = write_all(fd, sp->lines, n);
	if (r < 0)
		return r;
	/*
	 * Dying right here, the writer leaves the child lines the file has:
	 * read once all the same (a line is read once, by its bytes).
	 */
	atomic_store_explicit(&sp->head, 0, memory_order_release);
	maybe_done(sp);
	return 0;
}

/* Under m. */
static int add_line(struct lg_spill *sp, int fd, const char *path,
		    const char *line, size_t len)
{
	size_t head = atomic_load_explicit(&sp->head, memory_order_relaxed);

	if (head + len > sp->cap) {
		int r = write_lines(sp, fd);

		if (r < 0)
			return r;
		head = 0;
		if (len > sp->cap)
			return write_all(fd, line, len);
	}
	waiting(sp, path);
	memcpy(sp->lines + head, line, len);
	atomic_store_explicit(&sp->head, head + len, memory_order_release);
	return 0;
}

int lg_spill_add(struct lg_spill *sp, int fd, const char *path,
		 const char *line, size_t len)
{
	int r;

	pthread_mutex_lock(&sp->m);
	r = add_line(sp, fd, path, line, len);
	pthread_mutex_unlock(&sp->m);
	return r;
}

int lg_spill_hold(struct lg_spill *sp, const char *path, const void *rec,
		  size_t len)
{
	size_t held;
	struct rec *r;
	int ret = 0;

	pthread_mutex_lock(&sp->m);
	held = atomic_load_explicit(&sp->held[sp->act], memory_order_relaxed);
	r = (struct rec *)(sp->recs[sp->act] + held);
	if (held + REC_SIZE(len) > sp->cap) {
		ret = -ENOSPC;
	} else {
		waiting(sp, path);
		r->len = len;
		memcpy(r->bytes, rec, len);
		held += REC_SIZE(len);
		atomic_store_explicit(&sp->held[sp->act], held,
				      memory_order_release);
		if (held > sp->cap / 2 && !sp->wanted) {
			sp->wanted = true;
			ret = 1;
		}
	}
	pthread_mutex_unlock(&sp->m);
	return ret;
}

/*
 * The records of room k made into lines, without m: the writer holds into
 * the other room meanwhile. Under settling.
 */
/* Where a record's line goes: the file at fd; wrote counts its bytes. */
struct sink {
	int fd;
	long wrote;
};

/*
 * Room k's records made into lines, in order, each handed to put (which
 * returns 0, or -errno to stop). Returns put's error, or 0.
 */
static int each_line(struct lg_spill *sp, unsigned k,
		     int (*put)(struct lg_spill *sp, struct sink *to,
				const char *line, size_t n),
		     struct sink *to)
{
	size_t held = atomic_load_explicit(&sp->held[k], memory_order_acquire);

	for (size_t at = 0; at < held;) {
		const struct rec *r = (const struct rec *)(sp->recs[k] + at);
		size_t n = 0;
		LG_AUTOFREE char *line = sp->line(r->bytes, r->len, &n);
		int err;

		at += REC_SIZE(r->len);
		if (line && (err = put(sp, to, line, n)) < 0)
			return err;
	}
	return 0;
}

/* The writer's: a line into the lines' room, under m. */
static int put_locked(struct lg_spill *sp, struct sink *to, const char *line,
		      size_t n)
{
	int err;

	pthread_mutex_lock(&sp->m);
	err = add_line(sp, to->fd, sp->path, line, n);
	pthread_mutex_unlock(&sp->m);
	return err;
}

/*
 * The records of room k made into lines, without m: the writer holds into
 * the other room meanwhile. Under settling.
 */
static int settle_room(struct lg_spill *sp, int fd, unsigned k)
{
	struct sink to = { fd, 0 };
	int err = each_line(sp, k, put_locked, &to);

	/*
	 * Dying before this, the writer leaves the child lines and the
	 * records they were made from: each read once.
	 */
	pthread_mutex_lock(&sp->m);
	atomic_store_explicit(&sp->held[k], 0, memory_order_release);
	maybe_done(sp);
	pthread_mutex_unlock(&sp->m);
	return err;
}

int lg_spill_settle(struct lg_spill *sp, int fd)
{
	unsigned k;
	int err;

	pthread_mutex_lock(&sp->settling);
	pthread_mutex_lock(&sp->m);
	k = sp->act;
	sp->act ^= 1; /* empty: every settle empties the room it leaves */
	sp->wanted = false;
	pthread_mutex_unlock(&sp->m);
	err = settle_room(sp, fd, k);
	pthread_mutex_unlock(&sp->settling);
	return err;
}

int lg_spill_flush(struct lg_spill *sp, int fd)
{
	int r = lg_spill_settle(sp, fd);

	if (r < 0)
		return r;
	pthread_mutex_lock(&sp->m);
	r = write_lines(sp, fd);
	pthread_mutex_unlock(&sp->m);
	return r;
}

bool lg_spill_wanted(struct lg_spill *sp)
{
	bool w;

	if (!sp)
		return false;
	pthread_mutex_lock(&sp->m);
	w = sp->wanted;
	pthread_mutex_unlock(&sp->m);
	return w;
}

uint64_t lg_spill_since(struct lg_spill *sp)
{
	uint64_t t;

	if (!sp)
		return 0;
	pthread_mutex_lock(&sp->m);
	t = sp->since_ms;
	pthread_mutex_unlock(&sp->m);
	return t;
}

/* The child's: a line written to the file at once. */
static int put_now(struct lg_spill *sp, struct sink *to, const char *line,
		   size_t n)
{
	int err = write_all(to->fd, line, n);

	(void)sp;
	if (!err)
		to->wrote += (long)n;
	return err;
}

long lg_spill_salvage(struct lg_spill *sp)
{
	size_t n = sp ? atomic_load_explicit(&sp->head, memory_order_acquire) :
			0;
	struct sink to = { -1, 0 };
	unsigned older;
	int r;

	if (!sp ||
	    (!n && !atomic_load(&sp->held[0]) && !atomic_load(&sp->held[1])) ||
	    !sp->path[0])
		return 0;
	to.fd = open(sp->path, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW);
	if (to.fd < 0)
		return -errno;
	r = write_all(to.fd, sp->lines, n);
	if (!r) {
		to.wrote += (long)n;
		atomic_store_explicit(&sp->head, 0, memory_order_release);
	}
	/* the room that is not act holds the older records */
	older = sp->act ^ 1;
	for (unsigned i = 0; i < 2 && !r; i++) {
		unsigned k = i ? older ^ 1 : older;

		r = each_line(sp, k, put_now, &to);
		if (!r)
			atomic_store_explicit(&sp->held[k], 0,
					      memory_order_release);
	}
	close(to.fd);
	return r < 0 ? r : to.wrote;
}
