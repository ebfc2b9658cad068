/* SPDX-License-Identifier: MIT */
/*
 * Where pre-existing content went during a session, which an inode's stat
 * does not say. Pure: the notify path feeds it what it saw (renames,
 * truncations, moves to another filesystem) and asks it before classifying.
 *
 * - A file that received pre-existing content by a rename over a
 *   pre-existing file (sed -i, perl -i, an editor's atomic save, a
 *   write-temp-then-rename) is new, born in the session, and still holds
 *   data that predates it: INHERITED.
 * - A file the session truncated holds the session's content from then on:
 *   REWRITTEN (a second truncation or its removal loses nothing old).
 * - A rename to another filesystem fails with EXDEV, and mv, shutil.move and
 *   the like then copy and remove the source: the pending moves say where
 *   the copy of a path should be.
 * - Pre-existing content renamed away from its path (sed -i.bak, perl
 *   -i.orig, an editor's backup, mv to a trash folder) remembers that path,
 *   its origin, and the path is "vacated": a file renamed onto it later
 *   takes the pre-existing status on (the edited version). Removing the
 *   earlier version while its origin holds content again loses nothing
 *   that has no successor; removing it while the origin is empty does.
 */
#ifndef LG_LINEAGE_H
#define LG_LINEAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum {
	LG_INODE_INHERITED = 1u << 0,
	LG_INODE_REWRITTEN = 1u << 1,
	LG_INODE_MOVED_AWAY = 1u << 2, /* has an origin: lg_lineage_origin */
	/* its pre-session content is in the quarantine (a write-open's keep) */
	LG_INODE_KEPT = 1u << 3,
	/* emptied by an uncounted O_TRUNC open: its removal still counts */
	LG_INODE_EMPTIED = 1u << 4,
	/* the session gave it another name by a hard link (its origin) */
	LG_INODE_ALIASED = 1u << 5,
	/* counted once as left empty at the tree's end */
	LG_INODE_COUNTED_EMPTY = 1u << 6,
	/* its size before the session's first append is in the index */
	LG_INODE_APPENDED = 1u << 7,
	/* its mode before the session's first chmod is in the index */
	LG_INODE_MODE_KEPT = 1u << 8,
};

/* An inode, told apart from a later one with the same number by its birth. */
struct lg_inode_key {
	uint64_t dev, ino;
	int64_t btime_ns; /* 0 when the filesystem has no birth times */
};

struct lg_lineage;

/* max_inodes bounds the table (0: a default); NULL on ENOMEM. */
struct lg_lineage *lg_lineage_new(size_t max_inodes);
void lg_lineage_free(struct lg_lineage *l);

/* The flags known for key, 0 if none. */
unsigned lg_lineage_get(const struct lg_lineage *l,
			const struct lg_inode_key *key);

/*
 * Sets the flags in set and clears those in clear. 0, or -ENOSPC when the
 * table is full (counted: lg_lineage_dropped).
 */
int lg_lineage_mark(struct lg_lineage *l, const struct lg_inode_key *key,
		    unsigned set, unsigned clear);

/* Marks the table could not hold. */
uint64_t lg_lineage_dropped(const struct lg_lineage *l);

/* A rename from src to dst (absolute paths) that crosses filesystems. */
void lg_lineage_move(struct lg_lineage *l, const char *src, const char *dst,
		     uint64_t now_ms);

/*
 * If path is the source of a pending move, or below one, writes where its
 * copy should be into out. 1: found; 0: no move covers it; -ENAMETOOLONG.
 * Moves older than max_age_ms are forgotten.
 */
int lg_lineage_moved_to(struct lg_lineage *l, const char *path, uint64_t now_ms,
			uint64_t max_age_ms, char *out, size_t size);

/*
 * Remembers the name key's pre-existing content had before the session
 * (renamed away from it, or given another name by a hard link): the first
 * one told, for an inode that has a mark (lg_lineage_mark); later names do
 * not replace it.
 */
void lg_lineage_set_origin(struct lg_lineage *l, const struct lg_inode_key *key,
			   const char *path);
/* That path, or NULL if none is known. */
const char *lg_lineage_origin(const struct lg_lineage *l,
			      const struct lg_inode_key *key);

/*
 * A pre-existing directory renamed to dst, src its name before the
 * session (lg_lineage_name_before): what lies below dst had its name
 * below src.
 * 0, or < 0 (-ENOSPC past the table's bound: counted as dropped).
 */
int lg_lineage_dir_moved(struct lg_lineage *l, const char *src,
			 const char *dst);
/*
 * The name before the session of what path names now (key: its inode, or
 * NULL): its origin, else path taken back through directory renames. 1
 * (written to out), 0 (path is that name, or none is known), or
 * -ENAMETOOLONG.
 */
int lg_lineage_name_before(const struct lg_lineage *l,
			   const struct lg_inode_key *key, const char *path,
			   char *out, size_t size);

/* path held pre-existing content that was renamed away. */
void lg_lineage_vacate(struct lg_lineage *l, const char *path);
/* True (once) if path was vacated: what is renamed onto it succeeds it. */
bool lg_lineage_refill(struct lg_lineage *l, const char *path);

#endif
