// SPDX-License-Identifier: MIT
/*
 * The session's quarantine: made and freed (lg_quarantine_new,
 * lg_quarantine_free), a removed file kept by a hard link, from lgrun's
 * view or the tree's own (lg_quarantine_link; a copy when no link can be
 * made), a directory's metadata (lg_quarantine_dir), the totals. The
 * entries' bookkeeping is entry.c's, the copies copy.c's.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "lib/cleanup.h"
#include "lib/clock.h"
#include "index.h"
#include "lib/json.h"
#include "quarantine_int.h"
#include "seal.h"

/* "DIR, DIR": each trimmed, without a trailing '/'. */
static int set_folders(struct lg_quarantine *q, const char *list)
{
	const char *p = list;

	while (p && *p && q->nfolders < MAX_FOLDERS) {
		size_t n;

		p += strspn(p, " \t");
		n = strcspn(p, ",");
		while (n > 1 &&
		       (p[n - 1] == ' ' || p[n - 1] == '\t' || p[n - 1] == '/'))
			n--;
		if (n && p[0] == '/') {
			q->folders[q->nfolders] = strndup(p, n);
			if (!q->folders[q->nfolders++])
				return -ENOMEM;
		}
		p = strchr(p, ',');
		p = p ? p + 1 : NULL;
	}
	return 0;
}

struct lg_quarantine *lg_quarantine_new(const char *state_dir,
					const char *session, uint64_t max_bytes,
					const char *folders)
{
	struct lg_quarantine *q = calloc(1, sizeof(*q));

	if (!q)
		return NULL;
	snprintf(q->state_dir, sizeof(q->state_dir), "%s", state_dir);
	snprintf(q->session, sizeof(q->session), "%s", session);
	snprintf(q->index, sizeof(q->index), "%s/quarantine/%s.jsonl",
		 state_dir, session);
	q->index_fd = -1;
	q->last_dir_fd = -1;
	q->others = -1;
	q->max_bytes = max_bytes;
	if (set_folders(q, folders) < 0) {
		lg_quarantine_free(q);
		return NULL;
	}
	return q;
}

void lg_quarantine_set_limits(struct lg_quarantine *q,
			      const struct lg_quarantine_limits *l)
{
	q->lim = *l;
}

void lg_quarantine_set_start(struct lg_quarantine *q, int64_t start_ns)
{
	q->start_ns = start_ns;
	lg_seal_start(start_ns);
}

unsigned lg_quarantine_lines(const struct lg_quarantine *q)
{
	return q ? q->seq : 0;
}

void lg_quarantine_set_turn(struct lg_quarantine *q, unsigned turn)
{
	if (q)
		q->turn = turn;
}

void lg_quarantine_set_own(struct lg_quarantine *q, bool own)
{
	if (q)
		q->own = own;
}

void lg_quarantine_set_spill(struct lg_quarantine *q, struct lg_spill *sp)
{
	q->spill = sp;
}

void lg_quarantine_free(struct lg_quarantine *q)
{
	if (!q)
		return;
	if (lg_quarantine_flush(q) == 0 && q->index_fd >= 0) {
		struct lgq_held h = { .files = q->files,
				      .dirs = q->dirs,
				      .bytes = q->bytes,
				      .disk = q->held,
				      .copied = q->copied,
				      .oldest_ns = q->oldest_ns,
				      .newest_ns = q->newest_ns };

		snprintf(h.id, sizeof(h.id), "%s", q->session);
		lgq_held_write(q->state_dir, &h, q->index_fd);
	}
	lg_closep(&q->index_fd);
	lg_closep(&q->last_dir_fd);
	for (size_t i = 0; i < q->nroots; i++) {
		lg_closep(&q->roots[i].bucket_fd);
		lg_closep(&q->roots[i].fd);
	}
	for (size_t i = 0; i < q->nfolders; i++)
		free(q->folders[i]);
	free(q);
}

/* A directory's extended attributes as {"name":"hex value",...}, or "". */
static void xattrs_json(const char *path, struct lg_json *out)
{
	char names[XATTR_MAX];
	unsigned char *value = malloc(XATTR_MAX);
	ssize_t n = llistxattr(path, names, sizeof(names));
	bool any = false;

	for (ssize_t o = 0; value && n > 0 && o < n;
	     o += (ssize_t)strlen(names + o) + 1) {
		ssize_t v = lgetxattr(path, names + o, value, XATTR_MAX);
		char hex[3];

		if (v < 0)
			continue;
		lg_json_append(out, any ? "," : "{", 1);
		lg_json_quote(out, names + o);
		lg_json_append(out, ":\"", 2);
		for (ssize_t k = 0; k < v; k++) {
			snprintf(hex, sizeof(hex), "%02x", value[k]);
			lg_json_append(out, hex, 2);
		}
		lg_json_append(out, "\"", 1);
		any = true;
	}
	if (any)
		lg_json_append(out, "}", 1);
	free(value);
}

/*
 * path linked to the spot: from the descriptor of its directory, opened
 * once for the files of one directory in a row (rm -r), which saves the
 * walks of the whole path; by the whole path when by_path.
 */
static int link_to(struct lg_quarantine *q, const char *path,
		   const struct lg_qspot *sp, bool by_path)
{
	if (!by_path && q->last_dir_fd < 0) {
		struct statx d;

		q->last_dir_fd = open(q->last_dir[0] ? q->last_dir : "/",
				      O_PATH | O_DIRECTORY | O_CLOEXEC);
		q->last_dir_dev = q->last_dir_ino = 0;
		if (q->last_dir_fd >= 0 &&
		    statx(q->last_dir_fd, "", AT_EMPTY_PATH, STATX_INO, &d) ==
			    0 &&
		    (d.stx_mask & STATX_INO)) {
			q->last_dir_dev =
				makedev(d.stx_dev_major, d.stx_dev_minor);
			q->last_dir_ino = d.stx_ino;
		}
	}
	if (!by_path && q->last_dir_fd >= 0) {
		if (linkat(q->last_dir_fd, strrchr(path, '/') + 1, sp->dirfd,
			   sp->name, 0) < 0)
			return -errno;
		return 1; /* from the directory's descriptor */
	}
	if (linkat(AT_FDCWD, path, sp->dirfd, sp->name, 0) < 0)
		return -errno;
	return 0;
}

/*
 * Linked from last_dir_fd, which is the very directory the tree's view
 * read who->st from (its device and inode): the kept file is that inode,
 * one link more. No statx of it: the tree cannot swap the name between
 * (its renames and removals wait for their answers, and this one's
 * is not given yet).
 */
static bool known_kept(const struct lg_quarantine *q,
		       const struct lg_quarantine_who *who, struct statx *st)
{
	if (!who->st || !who->dir_ino || !q->last_dir_ino ||
	    q->last_dir_ino != who->dir_ino ||
	    q->last_dir_dev != who->dir_dev ||
	    !lg_quarantine_same_inode(who->st, who) ||
	    (who->st->stx_mask & STATX_BASIC_STATS) != STATX_BASIC_STATS)
		return false;
	*st = *who->st;
	st->stx_nlink++;
	return true;
}

/*
 * The target linked from its directory as the tree sees it: a path past
 * PATH_MAX, or one lgrun's view does not reach, on a mount lgrun has too.
 */
static int link_at(struct lg_quarantine *q, const struct lg_quarantine_who *who,
		   struct lg_qspot *sp, struct statx *st)
{
	char top[PATH_MAX];
	struct statx d;
	struct lg_qroot *r;
	int e;

	/* a mount of the tree's own namespace is none of lgrun's */
	if (statx(who->at_dirfd, "", AT_EMPTY_PATH, STATX_MNT_ID, &d) < 0 ||
	    !(d.stx_mask & STATX_MNT_ID) ||
	    lg_quarantine_mount_top(d.stx_mnt_id, top, sizeof(top)) < 0)
		return -EXDEV;
	r = lg_quarantine_root_of_mount(q, d.stx_mnt_id,
					"(a directory of the tree)");
	if (!r)
		return -EXDEV;
	q->last_root = r;
	q->last_dir[0] = '\0';
	lg_closep(&q->last_dir_fd);
	e = lg_quarantine_place_in(q, r, sp, false);
	if (e)
		return e;
	if (linkat(who->at_dirfd, who->at_name, sp->dirfd, sp->name, 0) < 0)
		return -errno;
	if (statx(sp->dirfd, sp->name, AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS,
		  st) == 0 &&
	    lg_quarantine_same_inode(st, who))
		return 0;
	unlinkat(sp->dirfd, sp->name, 0);
	return -ESTALE;
}

/* A failure a copy from the tree's view can still make up for. */
static bool copy_instead(int e)
{
	return e != -ENOSPC && e != -EDQUOT && e != -EOVERFLOW && e != -EIO &&
	       e != -EFBIG && e != -EINVAL;
}

static int link_by_path(struct lg_quarantine *q, const char *path,
			const struct lg_quarantine_who *who);

int lg_quarantine_link(struct lg_quarantine *q, const char *path,
		       const struct lg_quarantine_who *who)
{
	int e = link_by_path(q, path, who);

	/*
	 * Not reachable as a link (another mount namespace, a bind mount, a
	 * refused folder, a path past PATH_MAX): a link from the tree's own
	 * view, else a copy of it, bounded like a truncation's.
	 */
	if (e && who->at_dirfd >= 0 && copy_instead(e)) {
		int c = lg_quarantine_copy(q, path, who, q->lim.max_copy);

		/* too large to copy (or no copies): why no link was made */
		if (c != -EFBIG)
			e = c;
	}
	return e;
}

static int link_by_path(struct lg_quarantine *q, const char *path,
			const struct lg_quarantine_who *who)
{
	struct lg_qspot sp;
	struct statx st;
	bool at = false;
	int e = 0;

	if (path[0] != '/' && who->at_dirfd < 0)
		return -EINVAL;
	/*
	 * Linked by its path in lgrun's view (the tree's mounts may be
	 * copies of lgrun's, which a link cannot cross), then checked to be
	 * the inode the tree is about to remove. A failure by the cached
	 * descriptors (the directory moved, the folder went) is tried again
	 * by the whole path.
	 */
	for (int by_path = 0; by_path < 2; by_path++) {
		e = path[0] == '/' ?
			    lg_quarantine_place(q, path, &sp, by_path) :
			    -EXDEV;
		if (e && who->at_dirfd >= 0 && copy_instead(e)) {
			int l = link_at(q, who, &sp, &st);

			at = !l;
			if (at)
				break; /* linked from the tree's view */
			if (l != -EXDEV)
				e = l; /* else: why lgrun's own view failed */
		}
		if (e)
			return e;
		e = link_to(q, path, &sp, by_path);
		if (e < 0)
			continue;
		if (e == 1 && known_kept(q, who, &st)) {
			e = 0;
			break;
		}
		e = 0;
		if (statx(sp.dirfd, sp.name, AT_SYMLINK_NOFOLLOW,
			  STATX_BASIC_STATS, &st) == 0 &&
		    lg_quarantine_same_inode(&st, who))
			break;
		unlinkat(sp.dirfd, sp.name, 0);
		e = -ESTALE;
	}
	if (e)
		return e;
	/*
	 * A link takes no new space (not counted by max_bytes nor max_total:
	 * the blocks were the file's already), but it holds what the removal
	 * would have freed, which the free-space floor bounds.
	 */
	if (st.stx_nlink <= 2) /* the removal would free it */
		e = lg_quarantine_room(q, q->last_root,
				       (uint64_t)st.stx_blocks * 512, false);
	if (!e)
		e = lg_quarantine_commit(q, path, &sp, &st, NULL, who,
					 at ? PATH_VIEW : PATH_RIGHT, 0);
	if (e) {
		if (e != -EIO) /* commit removed it */
			unlinkat(sp.dirfd, sp.name, 0);
		return e;
	}
	if (st.stx_nlink <= 2)
		lg_quarantine_account(q, (uint64_t)st.stx_blocks * 512, true);
	return 0;
}

int lg_quarantine_dir(struct lg_quarantine *q, const char *path,
		      const struct lg_quarantine_who *who)
{
	char at[64 + NAME_MAX], view[2 * PATH_MAX];
	const char *from = path, *tree = NULL;
	struct statx st;
	int e;

	/* by path in lgrun's view, else from the tree's (past PATH_MAX...) */
	e = path[0] == '/' ? statx(AT_FDCWD, path, AT_SYMLINK_NOFOLLOW,
				   STATX_BASIC_STATS, &st) :
			     -1;
	if ((e < 0 || !lg_quarantine_same_inode(&st, who)) &&
	    who->at_dirfd >= 0) {
		snprintf(at, sizeof(at), "/proc/self/fd/%d/%s", who->at_dirfd,
			 who->at_name);
		from = at;
		e = statx(AT_FDCWD, at, AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS,
			  &st);
		path = lg_quarantine_recorded(path, who, PATH_VIEW, view,
					      sizeof(view), &tree);
	}
	if (e < 0)
		return path[0] == '/' ? -errno : -EINVAL;
	if (!lg_quarantine_same_inode(&st, who))
		return -ESTALE;
	if (who->origin && who->origin[0] == '/' && strcmp(who->origin, path)) {
		tree = path; /* removed as: the name it was renamed to */
		path = who->origin;
	}
	{
		struct lg_json x = { 0 };

		xattrs_json(from, &x);
		lg_quarantine_seq_start(q);
		q->seq++;
		e = lg_quarantine_index_add(q, "dir", path, tree, NULL, &st,
					    NULL, who, x.buf ? x.buf : "", -1);
		lg_json_free(&x);
	}
	if (e) {
		q->seq--;
		return e;
	}
	q->dirs++;
	return 0;
}

int lg_quarantine_note(struct lg_quarantine *q, const char *kind,
		       const char *path, const char *now, const char *from,
		       const struct statx *st,
		       const struct lg_quarantine_who *who)
{
	int e;

	if (path[0] != '/' || (now && now[0] != '/'))
		return -EINVAL;
	lg_quarantine_seq_start(q); /* numbered after an earlier run's */
	q->seq++;
	/* no file kept: a rename's kept slot says where it was renamed from */
	e = lg_quarantine_index_add(q, kind, path, now, from, st, NULL, who,
				    NULL, -1);
	if (e)
		q->seq--;
	return e;
}

int lg_quarantine_end_run(struct lg_quarantine *q)
{
	char p[PATH_MAX + 256], line[96];
	int fd, n, e = 0;

	/* sealed, or put back as it was: what the tree wrote there is gone */
	if (lg_seal_on())
		return lg_seal_write(lg_real_ns());
	if (!q || q->index_fd < 0)
		return 0; /* nothing kept: no run to close */
	/* SESSION.jsonl -> SESSION.runs, beside it */
	n = snprintf(p, sizeof(p), "%.*s.runs",
		     (int)(strlen(q->index) - strlen(".jsonl")), q->index);
	if (n < 0 || (size_t)n >= sizeof(p))
		return -ENAMETOOLONG;
	fd = open(p, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC,
		  0600);
	if (fd < 0)
		return -errno;
	n = snprintf(line, sizeof(line),
		     "{\"start_ns\":%lld,\"end_ns\":%lld}\n",
		     (long long)q->start_ns, (long long)lg_real_ns());
	if (write(fd, line, (size_t)n) != n)
		e = -EIO;
	close(fd);
	return e;
}

const char *lg_quarantine_index(const struct lg_quarantine *q)
{
	return q->index;
}

void lg_quarantine_totals(const struct lg_quarantine *q, unsigned *files,
			  unsigned *dirs, uint64_t *bytes)
{
	*files = q ? q->files : 0;
	*dirs = q ? q->dirs : 0;
	*bytes = q ? q->bytes : 0;
}

void lg_quarantine_disk(const struct lg_quarantine *q, uint64_t *held,
			uint64_t *copied)
{
	*held = q ? q->held : 0;
	*copied = q ? q->copied : 0;
}
