/* SPDX-License-Identifier: MIT */
/*
 * "Is this file's exact content in its git repository's object database?",
 * answered without running git: the repository is found by walking up from
 * the file's directory (a .git directory, or a .git file with "gitdir:" for
 * worktrees and submodules, a worktree's "commondir"), the file is hashed as
 * git hashes a blob ("blob <size>\0" + content; a symlink's content is its
 * target; SHA-1, or SHA-256 under extensions.objectFormat), and the id is
 * looked up in the loose objects, the version 2 pack indexes (mapped, binary
 * search) and the alternates. Repositories found and their pack lists are
 * cached; a pack list is read again when objects/pack changes.
 *
 * Reads files only. Not thread-safe: one per notify thread.
 */
#ifndef LG_GITODB_H
#define LG_GITODB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Files larger than this are not hashed (then: not known to be stored). */
#define LG_GITODB_MAX_BYTES (64LL << 20)

struct lg_gitodb;

/* max_bytes: the largest file hashed; 0 for LG_GITODB_MAX_BYTES. */
struct lg_gitodb *lg_gitodb_new(int64_t max_bytes);
void lg_gitodb_free(struct lg_gitodb *db);

/*
 * path (absolute, normalised; the final component is not followed): 1 when
 * it is a regular file or a symlink whose blob is in the object database
 * of the repository whose work tree holds it, 0 when it was hashed and is
 * not there. -ENOENT: no repository (or no such file), -EFBIG: larger than
 * the limit, -EINVAL: not a file or symlink, other -errno: unreadable.
 */
int lg_gitodb_stored(struct lg_gitodb *db, const char *path);

/* 1 when path is inside a repository's work tree (found as above), else 0. */
int lg_gitodb_in_worktree(struct lg_gitodb *db, const char *path);

/*
 * The blob id of path as lowercase hex (41 or 65 bytes with the NUL), with
 * SHA-256 when sha256 is set. Length of the hex, or -errno as above.
 */
int lg_gitodb_blob_id(const char *path, int sha256, int64_t max_bytes,
		      char *hex, size_t size);

/*
 * Hashing uses the CPU's SHA instructions where it has them; off: the
 * portable code only (for tests and comparisons).
 */
void lg_gitodb_hash_accel(bool on);

/* For tests: how many pack index scans the cache has made so far. */
unsigned long lg_gitodb_pack_scans(const struct lg_gitodb *db);

#endif
