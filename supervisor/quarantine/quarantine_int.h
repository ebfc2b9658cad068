/* SPDX-License-Identifier: MIT */
/*
 * Inside the quarantine (quarantine.h): the session's state, shared by
 * quarantine.c (the session's quarantine, links, directories), copy.c
 * (copies), entry.c (an entry's spot, the path it records, its record in
 * the index), folders.c (the folder per mount: which one, made and
 * checked from fds; a target's path in lgrun's view) and space.c (what
 * keeping may take of a disk). Calls go quarantine.c -> copy.c ->
 * entry.c.
 */
#ifndef LG_QUARANTINE_INT_H
#define LG_QUARANTINE_INT_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "quarantine.h"

#define MAX_ROOTS 16
#define MAX_FOLDERS 16
#define XATTR_MAX 65536 /* names or values of one inode kept at most */

/* A folder of this session on one mount (in lgrun's view). */
struct lg_qroot {
	uint64_t mnt_id;
	char path[PATH_MAX];
	int err; /* it could not be made: -errno, said once */
	int fd; /* the session's folder there, checked (trusted_at), or -1 */
	uint64_t dev,
		ino; /* that folder's, as lgrun made it (restore checks) */
	int bucket_fd; /* the open entries' folder (O_PATH), or -1 */
	unsigned bucket;
	/* its filesystem's space: read at most every SPACE_MS */
	uint64_t linked; /* bytes this session holds there by links */
	uint64_t avail, floor, since; /* free, the floor, kept since read */
	uint64_t read_ms;
};

struct lg_quarantine {
	char state_dir[PATH_MAX], session[200], index[PATH_MAX + 256];
	int index_fd; /* <state_dir>/quarantine/<session>.jsonl, or -1 */
	/* its lines on their way (NULL: one write each) */
	struct lg_spill *spill;
	struct lg_qroot roots[MAX_ROOTS];
	size_t nroots;
	/* the last directory's root: rm -r removes a folder's files in a row */
	char last_dir[PATH_MAX];
	struct lg_qroot *last_root;
	int last_dir_fd; /* last_dir, opened O_PATH when a link needs it */
	uint64_t last_dir_dev, last_dir_ino; /* last_dir_fd's directory */
	unsigned seq, files, dirs;
	uint64_t commit_dev,
		commit_ino; /* the entry being committed's folder */
	bool seq_known; /* seq read from the index of an earlier run */
	/*
	 * bytes: the kept files' sizes (what a restore puts back); held:
	 * their allocated blocks; copied: of those, what copies took anew
	 * (what max_bytes bounds: a link or a reflink holds blocks the file
	 * had already)
	 */
	uint64_t bytes, held, copied, max_bytes;
	int64_t start_ns;
	unsigned turn; /* the agent's turn now (lg_quarantine_set_turn) */
	bool own; /* lines of the session's own versions (lg_quarantine_set_own) */
	long long oldest_ns, newest_ns; /* the entries' times */
	struct lg_quarantine_limits lim;
	/* what the other sessions of the state dir hold (-1: not read yet) */
	int64_t others;
	uint64_t evicted_ms; /* the last time older sessions were dropped */
	/* [quarantine] folders: configured, used on their own mounts */
	char *folders[MAX_FOLDERS];
	size_t nfolders;
};

/* This session's folder on the mount that holds path (cached by its dir). */
struct lg_qroot *lg_quarantine_root_for(struct lg_quarantine *q,
					const char *path);
/* This session's folder on mount mnt (dir: a directory there, for words). */
struct lg_qroot *lg_quarantine_root_of_mount(struct lg_quarantine *q,
					     uint64_t mnt, const char *dir);
/* Where mount mnt_id is mounted, in lgrun's view; -ENOENT: not in it. */
int lg_quarantine_mount_top(uint64_t mnt_id, char *out, size_t size);
int lg_quarantine_mkdir_0700(const char *path);
/*
 * The absolute path, in lgrun's view, of name in the directory at_dirfd
 * (which may be a mount of the tree's own namespace, or deeper than
 * PATH_MAX). 0, or -errno when lgrun's view has no name for it.
 */
int lg_quarantine_view_path(int at_dirfd, const char *name, char *out,
			    size_t size);
/*
 * Room on r's filesystem for size more bytes, new space when copy (a
 * copy), else held (a link, a reflink): 0, -EDQUOT or -EOVERFLOW.
 */
int lg_quarantine_room(struct lg_quarantine *q, struct lg_qroot *r,
		       uint64_t size, bool copy);
/* What an entry of size bytes took of the last root's filesystem. */
void lg_quarantine_account(struct lg_quarantine *q, uint64_t size, bool link);

/* Where the next entry goes: its folder (open), its name there, its path. */
struct lg_qspot {
	uint64_t root_dev, root_ino; /* the session's folder it is in */
	int dirfd;
	char name[16];
	char kept[PATH_MAX + 32];
};

/*
 * The spot of the next entry, in the session's folder on path's mount, or
 * on r's (entry.c); afresh reopens its folder (a retry after a failure).
 */
int lg_quarantine_place(struct lg_quarantine *q, const char *path,
			struct lg_qspot *sp, bool afresh);
/* The numbering after an earlier run's entries (once per run). */
void lg_quarantine_seq_start(struct lg_quarantine *q);
int lg_quarantine_place_in(struct lg_quarantine *q, struct lg_qroot *r,
			   struct lg_qspot *sp, bool afresh);
/* st is the inode the tree was about to remove or change (who's). */
bool lg_quarantine_same_inode(const struct statx *st,
			      const struct lg_quarantine_who *who);
/* The path an entry records (lg_quarantine_recorded). */
enum { PATH_RIGHT, PATH_CHECK, PATH_VIEW };
const char *lg_quarantine_recorded(const char *path,
				   const struct lg_quarantine_who *who, int how,
				   char *buf, size_t size, const char **tree);
/*
 * An entry made at sp->kept: into the index, and counted (else removed).
 * copied: the bytes a copy took anew (0: a link, a reflink).
 */
int lg_quarantine_commit(struct lg_quarantine *q, const char *path,
			 const struct lg_qspot *sp, const struct statx *st,
			 const struct statx *ks,
			 const struct lg_quarantine_who *who, int how,
			 uint64_t copied);
/*
 * The entry's record, held for the index (else its line written); copied:
 * a copy's new bytes, or -1 (a link, a directory: none written).
 */
int lg_quarantine_index_add(struct lg_quarantine *q, const char *kind,
			    const char *path, const char *tree,
			    const char *kept, const struct statx *st,
			    const struct statx *ks,
			    const struct lg_quarantine_who *who,
			    const char *xattrs, long long copied);
/* What a copy of st takes: its allocated bytes, at most its size. */
uint64_t lg_quarantine_alloc(const struct statx *st);

#endif
