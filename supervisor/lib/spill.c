// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
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
	size_t cap; /* of the lines' room, and of the records' */
	lg_spill_line_fn line;
	/*
	 * lines[0, head) and the records in recs[0, held) wait for the file
	 * at path. Each is stored after the bytes it covers (release): the
	 * child reads whole lines and whole records only.
	 */
	_Atomic size_t head, held;
	uint64_t since_ms;
	char path[PATH_MAX];
	char *lines, *recs; /* in the mapping, after this header */
};

/* A record in recs: its length, then its bytes, 8-aligned. */
struct rec {
	size_t len;
	unsigned char bytes[];
};

#define REC_SIZE(n) ((sizeof(struct rec) + (n) + 7) & ~(size_t)7)

struct lg_spill *lg_spill_new(size_t cap, lg_spill_line_fn line)
{
	size_t size = sizeof(struct lg_spill) + 2 * cap;
	struct lg_spill *sp = mmap(NULL, size, PROT_READ | PROT_WRITE,
				   MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (sp == MAP_FAILED)
		return NULL;
	sp->size = size;
	sp->cap = cap;
	sp->line = line;
	sp->lines = (char *)(sp + 1);
	sp->recs = sp->lines + cap;
	atomic_init(&sp->head, 0);
	atomic_init(&sp->held, 0);
	return sp;
}

void lg_spill_free(struct lg_spill *sp)
{
	if (sp)
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

static void waiting(struct lg_spill *sp, const char *path)
{
	if (!sp->since_ms) {
		snprintf(sp->path, sizeof(sp->path), "%s", path);
		sp->since_ms = lg_mono_ms();
	}
}

/* The lines written to fd (records held are not). */
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
	if (!atomic_load_explicit(&sp->held, memory_order_relaxed))
		sp->since_ms = 0;
	return 0;
}

int lg_spill_add(struct lg_spill *sp, int fd, const char *path,
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

int lg_spill_hold(struct lg_spill *sp, const char *path, const void *rec,
		  size_t len)
{
	size_t held = atomic_load_explicit(&sp->held, memory_order_relaxed);
	struct rec *r = (struct rec *)(sp->recs + held);

	if (held + REC_SIZE(len) > sp->cap)
		return -ENOSPC;
	waiting(sp, path);
	r->len = len;
	memcpy(r->bytes, rec, len);
	atomic_store_explicit(&sp->held, held + REC_SIZE(len),
			      memory_order_release);
	return 0;
}

int lg_spill_settle(struct lg_spill *sp, int fd)
{
	size_t held = atomic_load_explicit(&sp->held, memory_order_relaxed);
	int err = 0;

	for (size_t at = 0; at < held;) {
		const struct rec *r = (const struct rec *)(sp->recs + at);
		size_t n = 0;
		LG_AUTOFREE char *line = sp->line(r->bytes, r->len, &n);

		at += REC_SIZE(r->len);
		if (line && !err)
			err = lg_spill_add(sp, fd, sp->path, line, n);
	}
	atomic_store_explicit(&sp->held, 0, memory_order_release);
	if (!atomic_load_explicit(&sp->head, memory_order_relaxed))
		sp->since_ms = 0;
	return err;
}

int lg_spill_flush(struct lg_spill *sp, int fd)
{
	int r = lg_spill_settle(sp, fd);

	return r < 0 ? r : write_lines(sp, fd);
}

uint64_t lg_spill_since(const struct lg_spill *sp)
{
	return sp ? sp->since_ms : 0;
}

long lg_spill_salvage(struct lg_spill *sp)
{
	size_t n = sp ? atomic_load_explicit(&sp->head, memory_order_acquire) :
			0;
	size_t held =
		sp ? atomic_load_explicit(&sp->held, memory_order_acquire) : 0;
	LG_AUTOCLOSE int fd = -1;
	long wrote = 0;
	int r;

	if ((!n && !held) || !sp->path[0])
		return 0;
	fd = open(sp->path, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	r = write_all(fd, sp->lines, n);
	if (r < 0)
		return r;
	wrote += (long)n;
	for (size_t at = 0; at < held;) {
		const struct rec *rc = (const struct rec *)(sp->recs + at);
		size_t len = 0;
		LG_AUTOFREE char *line = sp->line(rc->bytes, rc->len, &len);

		at += REC_SIZE(rc->len);
		if (!line)
			continue;
		r = write_all(fd, line, len);
		if (r < 0)
			return r;
		wrote += (long)len;
	}
	atomic_store_explicit(&sp->head, 0, memory_order_release);
	atomic_store_explicit(&sp->held, 0, memory_order_release);
	return wrote;
}
