// SPDX-License-Identifier: MIT
/*
 * The archives the session wrote, and a removal of what one of them holds
 * (issue 41, class 1: `tar czf r.tgz r && rm -rf r`, one program archives,
 * another removes). A file made or renamed to a name with an archive's
 * suffix is remembered (lg_prov_archive_written, a ring of PROV_ARCHIVES);
 * a removal that would count asks whether one of them, still there,
 * born in the session, holds the file: a member of the same base name,
 * size and CRC-32 (lg_prov_archive_holds). What an archive holds is
 * archive.c's, read once per version of the archive.
 */
#include <zlib.h>

#include "archive.h"
#include "lib/cleanup.h"
#include "prov_int.h"

#define ARCHIVE_RETRY_MS 1000

void lg_prov_archive_written(struct lg_prov *s, const char *path)
{
	struct prov_archive *a;
	uint64_t h;

	if (!path || path[0] != '/' || !lg_archive_suffix(path) ||
	    strlen(path) >= sizeof(a->path))
		return;
	h = prov_hash(path);
	for (unsigned i = 0; i < PROV_ARCHIVES; i++)
		if (s->archives[i].path[0] && s->archives[i].hash == h &&
		    strcmp(s->archives[i].path, path) == 0)
			return; /* read again when its version changes */
	a = &s->archives[s->archives_next++ % PROV_ARCHIVES];
	lg_archive_index_free(a->ix);
	memset(a, 0, sizeof(*a));
	a->hash = h;
	snprintf(a->path, sizeof(a->path), "%s", path);
	s->archives_n += s->archives_n < PROV_ARCHIVES;
	lg_dbg("%s: an archive the session wrote, remembered", path);
}

void prov_archives_free(struct lg_prov *s)
{
	for (unsigned i = 0; i < PROV_ARCHIVES; i++) {
		lg_archive_index_free(s->archives[i].ix);
		s->archives[i].ix = NULL;
	}
}

/*
 * The archive at a's path as it is now: a regular file born in the
 * session (its facts into af), its index read for this version (dev, ino,
 * size, mtime) or NULL when it is none of the formats read, or is too big.
 */
static const struct lg_archive_index *
archive_now(struct lg_prov *s, struct prov_archive *a, struct lg_facts *af)
{
	const unsigned mask = STATX_TYPE | STATX_SIZE | STATX_MTIME |
			      STATX_INO | STATX_BTIME | STATX_CTIME;
	struct statx st, again;
	LG_AUTOCLOSE int fd = -1;
	int64_t mtime;
	uint64_t dev;
	int r;

	if (statx(AT_FDCWD, a->path, AT_SYMLINK_NOFOLLOW, mask, &st) != 0 ||
	    !S_ISREG(st.stx_mode) || st.stx_size == 0)
		return NULL;
	memset(af, 0, sizeof(*af));
	af->exists = af->is_reg = true;
	af->size = (int64_t)st.stx_size;
	af->has_btime = (st.stx_mask & STATX_BTIME) != 0;
	af->btime_ns = prov_ns(st.stx_btime);
	af->ctime_ns = prov_ns(st.stx_ctime);
	af->dev = makedev(st.stx_dev_major, st.stx_dev_minor);
	af->ino = st.stx_ino;
	/* an archive from before the session is no evidence of this one */
	if (lg_facts_preexisting(af, s->start_real_ns))
		return NULL;
	mtime = prov_ns(st.stx_mtime);
	dev = af->dev;
	if (a->read && a->dev == dev && a->ino == st.stx_ino &&
	    a->size == af->size && a->mtime_ns == mtime)
		return a->ix;
	/*
	 * An archive still being written (a tar in the background) changes
	 * at every look and fails to read (cut short): read again at most
	 * once per ARCHIVE_RETRY_MS, not at every removal.
	 */
	if (a->read && !a->ix && lg_mono_ms() - a->read_ms < ARCHIVE_RETRY_MS)
		return NULL;
	lg_archive_index_free(a->ix);
	a->ix = NULL;
	a->read = true;
	a->dev = dev;
	a->ino = st.stx_ino;
	a->size = af->size;
	a->mtime_ns = mtime;
	a->read_ms = lg_mono_ms();
	fd = open(a->path,
		  O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0 || statx(fd, "", AT_EMPTY_PATH, mask, &again) != 0 ||
	    again.stx_ino != st.stx_ino || again.stx_size != st.stx_size)
		return NULL;
	r = lg_archive_index_read(fd, af->size, NULL, &a->ix);
	if (r < 0)
		lg_dbg("%s: not read as an archive: %s", a->path,
		       r == -EFBIG ?
			       "over the size limit" :
		       r == -ETIME ?
			       "over the time limit" :
		       r == -EINVAL ?
			       "no archive of a known format, or corrupt" :
			       strerror(-r));
	else
		lg_dbg("%s: an archive (%s) of %zu members", a->path,
		       lg_archive_format_name(lg_archive_index_format(a->ix)),
		       lg_archive_index_count(a->ix));
	return a->ix;
}

/* The CRC-32 of the removed file's bytes now, when they are f->size. */
static bool crc_of(const struct lg_event *ev, const struct lg_facts *f,
		   uint32_t *crc)
{
	static __thread unsigned char buf[1 << 16];
	LG_AUTOCLOSE int fd = -1;
	const int fl = O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY |
		       O_CLOEXEC;
	uLong c = crc32(0L, Z_NULL, 0);
	struct stat st;
	int64_t left = f->size;

	if (f->size > LG_ARCHIVE_INDEX_MAX)
		return false;
	fd = ev->at && ev->at_name && ev->at_name[0] && ev->at_dirfd >= 0 ?
		     openat(ev->at_dirfd, ev->at_name, fl) :
		     open(ev->target, fl);
	if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
	    st.st_ino != f->ino || st.st_size != f->size)
		return false;
	while (left > 0) {
		ssize_t n = read(fd, buf, sizeof(buf));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		c = crc32(c, buf, (uInt)n);
		left -= n;
	}
	*crc = (uint32_t)c;
	return left == 0;
}

bool lg_prov_archive_holds(struct lg_prov *s, const struct lg_event *ev,
			   const struct lg_facts *f, struct lg_facts *archive)
{
	char base[NAME_MAX + 1];
	const char *end, *start;
	bool crc_read = false, crc_ok = false;
	uint32_t crc = 0;

	/* most sessions write no archive: nothing read */
	if (!s->archives_n)
		return false;
	if (!(ev->op == LG_OP_UNLINK && f->is_reg && f->size > 0) &&
	    !(ev->op == LG_OP_RMDIR && f->is_dir))
		return false;
	end = ev->target + strlen(ev->target);
	while (end > ev->target && end[-1] == '/')
		end--;
	for (start = end; start > ev->target && start[-1] != '/'; start--)
		;
	if (end == start || (size_t)(end - start) >= sizeof(base))
		return false;
	memcpy(base, start, (size_t)(end - start));
	base[end - start] = '\0';
	for (unsigned i = 0; i < PROV_ARCHIVES; i++) {
		struct prov_archive *a = &s->archives[i];
		const struct lg_archive_index *ix;
		struct lg_facts af;

		if (!a->path[0] || !(ix = archive_now(s, a, &af)))
			continue;
		if (af.dev == f->dev && af.ino == f->ino)
			continue; /* the archive itself */
		if (f->is_dir) {
			if (!lg_archive_index_dir(ix, base))
				continue;
		} else {
			if (!lg_archive_index_sized(ix, base, f->size))
				continue;
			if (!crc_read) {
				crc_read = true;
				crc_ok = crc_of(ev, f, &crc);
			}
			if (!crc_ok ||
			    !lg_archive_index_holds(ix, base, f->size, crc))
				continue;
		}
		/* the archive holds pre-existing content now */
		*archive = af;
		lg_dbg("%s: its content lives on in %s, an archive the session wrote",
		       ev->target, a->path);
		return true;
	}
	return false;
}
