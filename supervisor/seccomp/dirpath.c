// SPDX-License-Identifier: MIT
/*
 * A resolved directory's display path (where.h): read from its fd through
 * lgrun's /proc/self/fd, remembered per notify thread by the directory's
 * identity (where_dir_path); lg_where_moved, lg_where_forget.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lib/clock.h"
#include "where_int.h"

/*
 * Our /proc/self/fd, opened once: readlinkat(it, "N") skips the walk of
 * "/proc/self" (a symlink made on every lookup), 1.1 of the 2.7 us a
 * readlink("/proc/self/fd/N") costs on every notification.
 */
static int self_fds = -1;

static void open_self_fds(void)
{
	self_fds = open("/proc/self/fd", O_PATH | O_DIRECTORY | O_CLOEXEC);
}

static ssize_t fd_path(int fd, char *buf, size_t size)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	char name[16];

	pthread_once(&once, open_self_fds);
	snprintf(name, sizeof(name), "%d", fd);
	if (self_fds >= 0)
		return readlinkat(self_fds, name, buf, size);
	{
		char link[40];

		snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
		return readlink(link, buf, size);
	}
}

/*
 * The display paths of the directories a notify thread resolved last. rm -r
 * removes a folder's files one after another, and the readlink of
 * /proc/self/fd/N that names the folder is a procfs walk and a d_path
 * (1.8 us on the development VM, against 0.3 us for the statx that says
 * which directory it is, itself often already made by getfd_of). An entry
 * is a directory's identity (device, inode, birth time, mount) and the path
 * read for it. It holds while no rename was seen in the tree since
 * (lg_where_moved) and for at most DIRCACHE_MS: a rename by a process
 * outside the tree, which lgrun does not see, shows within that time, as
 * it would have shown a moment later to a readlink anyway.
 *
 * An inode number freed and reused names another directory: the birth
 * time tells them apart, but filesystems stamp it from a coarse clock (a
 * directory removed and another made in the same tick of ext4 share it).
 * So a directory born less than DIRCACHE_YOUNG_NS ago (more than any
 * tick) is not remembered: one that takes its number later is born later,
 * in another tick. Without a birth time (some filesystems) nothing is.
 */
#define DIRCACHE 8
#define DIRCACHE_MS 100
#define DIRCACHE_YOUNG_NS 50000000LL
struct dir_entry {
	uint64_t ino, mnt, gen, at_ms;
	int64_t btime_sec;
	uint32_t btime_nsec, dev_major, dev_minor;
	size_t len;
	char path[PATH_MAX];
};
static __thread struct dir_entry *dircache;
static __thread unsigned dircache_next;
static atomic_ulong moved_gen = 1;

void lg_where_moved(void)
{
	atomic_fetch_add(&moved_gen, 1);
}

static bool same_dir(const struct dir_entry *e, const struct statx *st)
{
	return e->ino == st->stx_ino && e->mnt == st->stx_mnt_id &&
	       e->btime_sec == st->stx_btime.tv_sec &&
	       e->btime_nsec == st->stx_btime.tv_nsec &&
	       e->dev_major == st->stx_dev_major &&
	       e->dev_minor == st->stx_dev_minor;
}

static bool cacheable(const struct statx *st)
{
	return (st->stx_mask & DIR_ID_MASK) == DIR_ID_MASK;
}

/* The cached path of the directory st identifies, or NULL. */
static const struct dir_entry *dir_cached(const struct statx *st, uint64_t now)
{
	unsigned long gen = atomic_load(&moved_gen);

	if (!dircache || !cacheable(st))
		return NULL;
	for (int i = 0; i < DIRCACHE; i++) {
		const struct dir_entry *e = &dircache[i];

		if (e->gen == gen && now - e->at_ms < DIRCACHE_MS &&
		    same_dir(e, st))
			return e;
	}
	return NULL;
}

/* gen: the rename generation read before the path was. */
static void dir_remember(const struct statx *st, const char *path, size_t len,
			 unsigned long gen, uint64_t now)
{
	struct timespec real;
	struct dir_entry *e;

	if (!cacheable(st) || len >= sizeof(e->path) ||
	    clock_gettime(CLOCK_REALTIME_COARSE, &real) < 0 ||
	    (int64_t)st->stx_btime.tv_sec * 1000000000LL +
			    st->stx_btime.tv_nsec >
		    (int64_t)real.tv_sec * 1000000000LL + real.tv_nsec -
			    DIRCACHE_YOUNG_NS)
		return;
	if (!dircache && !(dircache = calloc(DIRCACHE, sizeof(*dircache))))
		return;
	e = &dircache[dircache_next++ % DIRCACHE];
	e->ino = st->stx_ino;
	e->mnt = st->stx_mnt_id;
	e->btime_sec = st->stx_btime.tv_sec;
	e->btime_nsec = st->stx_btime.tv_nsec;
	e->dev_major = st->stx_dev_major;
	e->dev_minor = st->stx_dev_minor;
	e->gen = gen;
	e->at_ms = now;
	e->len = len;
	memcpy(e->path, path, len + 1);
}

void lg_where_forget(void)
{
	free(dircache);
	dircache = NULL;
}

/*
 * A directory of another mount namespace (a sandbox the agent starts,
 * Codex's bwrap) reads back as that namespace's path, "/newroot/tmp/p"
 * for what lgrun reaches as "/tmp/p" (a bind mount of the same folder):
 * the shortest tail of it that is that very directory in lgrun's view
 * replaces it, so that records and the undo name what lgrun can reach.
 * Unchanged when no tail is (the sandbox's own folders). Its new length.
 */
static size_t in_our_view(char *path, size_t len, const struct statx *st)
{
	struct statx o;

	if (!cacheable(st))
		return len;
	for (char *p = path; p && *p == '/'; p = strchr(p + 1, '/')) {
		if (statx(AT_FDCWD, p, AT_STATX_DONT_SYNC, STATX_INO, &o) ==
			    0 &&
		    o.stx_ino == st->stx_ino &&
		    o.stx_dev_major == st->stx_dev_major &&
		    o.stx_dev_minor == st->stx_dev_minor) {
			if (p == path)
				return len;
			len -= (size_t)(p - path);
			memmove(path, p, len + 1);
			return len;
		}
		if (p[1] == '\0')
			break;
	}
	return len;
}

/* The directory's path, from the cache or its fd; its length, or -1. */
ssize_t where_dir_path(struct lg_where *w, struct statx *st)
{
	unsigned long gen = atomic_load(&moved_gen);
	uint64_t now = lg_mono_ms();
	const struct dir_entry *e;
	ssize_t r;

	if (!cacheable(st) &&
	    statx(w->dirfd, "", AT_EMPTY_PATH, DIR_ID_MASK, st) < 0)
		st->stx_mask = 0;
	e = dir_cached(st, now);
	if (e) {
		memcpy(w->path, e->path, e->len + 1);
		return (ssize_t)e->len;
	}
	r = fd_path(w->dirfd, w->path, sizeof(w->path) - 1);
	if (r <= 0 || (size_t)r >= sizeof(w->path) - 1 || w->path[0] != '/')
		return -1;
	w->path[r] = '\0';
	r = (ssize_t)in_our_view(w->path, (size_t)r, st);
	dir_remember(st, w->path, (size_t)r, gen, now);
	return r;
}
