// SPDX-License-Identifier: MIT
#include "gitodb_int.h"
#include "lib/cleanup.h"
#include "lib/sha.h"

/* Git's blob ids, by lib/sha.c's SHA-1 and SHA-256. */

void lg_gitodb_hash_accel(bool on)
{
	lg_sha_accel(on);
}

void to_hex(const uint8_t *id, size_t len, char *hex)
{
	lg_hex(id, len, hex);
}

/*
 * The blob id of dir/name, read through dfd (the directory as already
 * resolved): a symlink's blob is its target, a regular file's its bytes,
 * read once (with lfs, their SHA-256 too, in the same pass). A file that
 * changes size while it is read has no id.
 */
int gitodb_hash_at(int dfd, const char *name, bool sha256, bool lfs,
		   int64_t max, uint8_t *buf, size_t bufsize, struct digest *d)
{
	struct lg_sha h, l;
	struct stat st;
	char hdr[32];
	int64_t left;
	LG_AUTOCLOSE int fd = -1;
	int n;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	lg_sha_init(&h, sha256);
	if (S_ISLNK(st.st_mode)) {
		char target[PATH_MAX];
		ssize_t len = readlinkat(dfd, name, target, sizeof(target));

		if (len < 0)
			return -errno;
		if ((size_t)len == sizeof(target))
			return -ENAMETOOLONG;
		n = snprintf(hdr, sizeof(hdr), "blob %zd", len);
		lg_sha_update(&h, hdr, (size_t)n + 1);
		lg_sha_update(&h, target, (size_t)len);
		lg_sha_final(&h, d->id);
		d->size = len;
		d->has_lfs = false;
		return 0;
	}
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	if (st.st_size > max)
		return -EFBIG;
	/* O_NONBLOCK: a FIFO swapped in since the stat must not block us. */
	fd = openat(dfd, name,
		    O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/*
	 * No second stat: a file replaced since is read as it is now, and
	 * one that changed size is caught by the read below.
	 */
	n = snprintf(hdr, sizeof(hdr), "blob %lld", (long long)st.st_size);
	lg_sha_update(&h, hdr, (size_t)n + 1);
	if (lfs)
		lg_sha_init(&l, true);
	/* Ask for one byte more than is left: a short read is the end. */
	for (left = st.st_size;;) {
		size_t want = (uint64_t)left + 1 < bufsize ? (size_t)left + 1 :
							     bufsize;
		ssize_t got = read(fd, buf, want);

		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			return -errno;
		if (got > left || (got == 0 && left))
			return -EAGAIN; /* it grew or shrank under us */
		if (got == 0)
			break;
		lg_sha_update(&h, buf, (size_t)got);
		if (lfs)
			lg_sha_update(&l, buf, (size_t)got);
		left -= got;
		if (!left && (size_t)got < want)
			break; /* the byte asked for beyond the size: none */
	}
	lg_sha_final(&h, d->id);
	if (lfs)
		lg_sha_final(&l, d->lfs);
	d->has_lfs = lfs;
	d->size = st.st_size;
	return 0;
}
