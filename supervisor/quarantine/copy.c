// SPDX-License-Identifier: MIT
/*
 * A bounded copy of a file for the quarantine (lg_quarantine_copy): a
 * truncation's or a write's target, or a removal's that no link can
 * reach. A reflink where the filesystem makes one, else its data copied
 * with its holes left holes (max_copy judges the data, not the size); the
 * original's extended attributes, owner, mode and times on the copy.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "lib/cleanup.h"
#include "quarantine_int.h"

/* in's extended attributes onto out (what may be set: user.* at least). */
static void copy_xattrs(int in, int out)
{
	char names[XATTR_MAX], *value = malloc(XATTR_MAX);
	ssize_t n = flistxattr(in, names, sizeof(names));

	for (ssize_t o = 0; value && n > 0 && o < n;
	     o += (ssize_t)strlen(names + o) + 1) {
		ssize_t v = fgetxattr(in, names + o, value, XATTR_MAX);

		if (v >= 0 &&
		    fsetxattr(out, names + o, value, (size_t)v, 0) < 0) {
			/* security.* without the right: the rest still goes */
		}
	}
	free(value);
}

/*
 * The bytes of [off, end) of in at the same offsets of out: in the kernel
 * (copy_file_range), else across filesystems (the state dir's folder) by
 * sendfile at out's position. 0 or -errno; a file shorter than it was
 * ends the range (what there is).
 */
static int copy_range(int in, int out, uint64_t off, uint64_t end)
{
	while (off < end) {
		loff_t a = (loff_t)off, b = (loff_t)off;
		ssize_t n = copy_file_range(in, &a, out, &b,
					    (size_t)(end - off), 0);

		if (n < 0 && (errno == EXDEV || errno == EOPNOTSUPP ||
			      errno == EINVAL || errno == ENOSYS)) {
			off_t o = (off_t)off;

			n = lseek(out, o, SEEK_SET) < 0 ?
				    -1 :
				    sendfile(out, in, &o, (size_t)(end - off));
		}
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		off += (uint64_t)n;
	}
	return 0;
}

/*
 * in's content into out (empty). A sparse file (fewer blocks than its
 * size) has its data copied extent by extent (SEEK_DATA, SEEK_HOLE) and
 * its holes left holes, so a 1 GiB file holding 4 KiB takes 4 KiB, and
 * out ends at in's size; a filesystem that cannot say where data is calls
 * the whole file data. Any other file is copied whole, as one extent (no
 * syscall more for the common case).
 */
static int copy_data(int in, int out, uint64_t size, bool sparse)
{
	uint64_t at = 0;

	if (!sparse)
		return copy_range(in, out, 0, size);
	while (at < size) {
		off_t d = lseek(in, (off_t)at, SEEK_DATA), h;
		int e;

		if (d < 0 && errno == ENXIO)
			break; /* a hole up to the end */
		if (d < 0) {
			d = (off_t)at; /* not known: data */
			h = (off_t)size;
		} else {
			h = lseek(in, d, SEEK_HOLE);
			if (h < 0 || (uint64_t)h > size)
				h = (off_t)size;
		}
		if ((uint64_t)d >= size)
			break;
		e = copy_range(in, out, (uint64_t)d, (uint64_t)h);
		if (e)
			return e;
		at = (uint64_t)h;
	}
	/* the apparent size, a trailing hole included */
	return ftruncate(out, (off_t)size) < 0 ? -errno : 0;
}

/*
 * What a copy of st takes of a disk: its allocated blocks (a sparse
 * file's holes take none), never more than its size (blocks allocated
 * past its end, fallocate's KEEP_SIZE, are not copied).
 */
uint64_t lg_quarantine_alloc(const struct statx *st)
{
	uint64_t a = (uint64_t)st->stx_blocks * 512;

	if (!(st->stx_mask & STATX_BLOCKS))
		return st->stx_size; /* not said: all data */
	return a < st->stx_size ? a : st->stx_size;
}

int lg_quarantine_copy(struct lg_quarantine *q, const char *path,
		       const struct lg_quarantine_who *who, uint64_t max_copy)
{
	LG_AUTOCLOSE int in = -1;
	LG_AUTOCLOSE int out = -1;
	struct lg_qspot sp;
	struct statx st, ks;
	uint64_t cost, copied;
	bool reflink;
	int e;

	if (path[0] != '/' && who->at_dirfd < 0)
		return -EINVAL;
	/*
	 * From the tree's view when the edge gave it (its mount namespace,
	 * a path past PATH_MAX), else by the path in lgrun's. A regular file
	 * only: opening a device or a fifo is not harmless.
	 */
	if (who->at_dirfd >= 0 ?
		    statx(who->at_dirfd, who->at_name, AT_SYMLINK_NOFOLLOW,
			  STATX_TYPE, &st) < 0 :
		    statx(AT_FDCWD, path, AT_SYMLINK_NOFOLLOW, STATX_TYPE,
			  &st) < 0)
		return -errno;
	if (!S_ISREG(st.stx_mode))
		return -ESTALE;
	in = who->at_dirfd >= 0 ?
		     openat(who->at_dirfd, who->at_name,
			    O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK) :
		     open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (in < 0)
		return -errno;
	if (statx(in, "", AT_EMPTY_PATH, STATX_BASIC_STATS, &st) < 0)
		return -errno;
	if (!lg_quarantine_same_inode(&st, who) || !S_ISREG(st.stx_mode))
		return -ESTALE;
	/* judged by what a copy takes: a sparse file's data, not its size */
	cost = lg_quarantine_alloc(&st);
	if (cost > max_copy)
		return -EFBIG;
	for (int afresh = 0; out < 0 && afresh < 2; afresh++) {
		e = path[0] == '/' ? lg_quarantine_place(q, path, &sp, afresh) :
				     -EXDEV;
		if (e) {
			/*
			 * No folder of ours on its mount (refused, read-only,
			 * none can be made): a copy can go to the state dir's.
			 */
			char alt[PATH_MAX + 32];

			snprintf(alt, sizeof(alt), "%s/-", q->state_dir);
			e = lg_quarantine_place(q, alt, &sp, afresh);
		}
		if (e)
			return e;
		out = openat(sp.dirfd, sp.name,
			     O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	}
	if (out < 0)
		return -errno;
	/*
	 * A reflink takes no new space (it holds the blocks the file had,
	 * as a removal's link does): only the free-space floor bounds it.
	 * A copy takes its data's bytes: max_bytes and max_total too.
	 */
	reflink = ioctl(out, FICLONE, in) == 0;
	if (!reflink && q->max_bytes && q->copied + cost > q->max_bytes)
		e = -ENOSPC;
	else
		e = lg_quarantine_room(q, q->last_root, cost, !reflink);
	if (!e && !reflink)
		e = copy_data(in, out, st.stx_size, cost < st.stx_size);
	if (!e) {
		struct timespec t[2] = {
			{ st.stx_atime.tv_sec, st.stx_atime.tv_nsec },
			{ st.stx_mtime.tv_sec, st.stx_mtime.tv_nsec }
		};

		copy_xattrs(in, out);
		/*
		 * The copy carries the original's owner, mode and times, so a
		 * restore takes them from the file, never from the index's text
		 * (its folder is 0700: a setuid copy is out of anyone's reach).
		 */
		if (geteuid() == 0 && fchown(out, st.stx_uid, st.stx_gid) < 0) {
			/* kept all the same; the index says the owner */
		}
		fchmod(out, st.stx_mode & 07777);
		futimens(out, t);
		/* the copy's own identity, for the restore's check */
		if (statx(out, "", AT_EMPTY_PATH, STATX_BASIC_STATS, &ks) < 0)
			e = -errno;
	}
	if (e) {
		unlinkat(sp.dirfd, sp.name, 0);
		return e;
	}
	copied = reflink ? 0 : (uint64_t)ks.stx_blocks * 512;
	e = lg_quarantine_commit(q, path, &sp, &st, &ks, who, PATH_CHECK,
				 copied);
	if (!e)
		lg_quarantine_account(q, cost, reflink);
	return e;
}
