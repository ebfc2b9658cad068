// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cleanup.h"
#include "clock.h"
#include "spill.h"

struct lg_spill {
	size_t size; /* of the whole mapping */
	size_t cap; /* of buf */
	/*
	 * buf[0, head) waits for the file at path. head is stored after the
	 * bytes it covers (release): the watchdog reads whole lines only.
	 */
	_Atomic size_t head;
	uint64_t since_ms;
	char path[PATH_MAX];
	char buf[];
};

struct lg_spill *lg_spill_new(size_t cap)
{
	size_t size = sizeof(struct lg_spill) + cap;
	struct lg_spill *sp = mmap(NULL, size, PROT_READ | PROT_WRITE,
				   MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (sp == MAP_FAILED)
		return NULL;
	sp->size = size;
	sp->cap = cap;
	atomic_init(&sp->head, 0);
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

int lg_spill_flush(struct lg_spill *sp, int fd)
{
	size_t n = atomic_load_explicit(&sp->head, memory_order_relaxed);
	int r;

	if (!n)
		return 0;
	r = write_all(fd, sp->buf, n);
	if (r < 0)
		return r;
	/*
	 * Dying right here, lgrun leaves the watchdog lines the file has:
	 * read once all the same (a line is read once, by its bytes).
	 */
	atomic_store_explicit(&sp->head, 0, memory_order_release);
	sp->since_ms = 0;
	return 0;
}

int lg_spill_add(struct lg_spill *sp, int fd, const char *path,
		 const char *line, size_t len)
{
	size_t head = atomic_load_explicit(&sp->head, memory_order_relaxed);

	if (head && strcmp(sp->path, path) != 0) {
		int r = lg_spill_flush(sp, fd); /* another file's lines: out */

		if (r < 0)
			return r;
		head = 0;
	}
	if (head + len > sp->cap) {
		int r = lg_spill_flush(sp, fd);

		if (r < 0)
			return r;
		head = 0;
		if (len > sp->cap)
			return write_all(fd, line, len);
	}
	if (!head) {
		snprintf(sp->path, sizeof(sp->path), "%s", path);
		sp->since_ms = lg_mono_ms();
	}
	memcpy(sp->buf + head, line, len);
	atomic_store_explicit(&sp->head, head + len, memory_order_release);
	return 0;
}

uint64_t lg_spill_since(const struct lg_spill *sp)
{
	return sp && atomic_load_explicit(&sp->head, memory_order_relaxed) ?
		       sp->since_ms :
		       0;
}

long lg_spill_salvage(struct lg_spill *sp)
{
	size_t n = sp ? atomic_load_explicit(&sp->head, memory_order_acquire) :
			0;
	LG_AUTOCLOSE int fd = -1;
	int r;

	if (!n || !sp->path[0])
		return 0;
	fd = open(sp->path, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	r = write_all(fd, sp->buf, n);
	if (r < 0)
		return r;
	atomic_store_explicit(&sp->head, 0, memory_order_release);
	return (long)n;
}
