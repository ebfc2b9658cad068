/* SPDX-License-Identifier: MIT */
/*
 * Decides what a destructive attempt would destroy, from facts the notify
 * loop gathered (stat of the target, the program doing it). Pure.
 */
#ifndef LG_CLASSIFY_H
#define LG_CLASSIFY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "event.h"

struct lg_ignore_rule {
	char *program; /* basename of the executable, NULL = any program */
	char *glob;
	char lit[48]; /* lg_glob_literal() of glob: a cheap strstr prefilter */
	uint64_t bytes; /* lg_glob_bytes() of glob: a path lacking one of
			   them cannot match (0: nothing known) */
};

/* Fills a rule; the strings are copied. 0 or -ENOMEM. */
int lg_ignore_rule_init(struct lg_ignore_rule *r, const char *program,
			const char *glob);
void lg_ignore_rule_free(struct lg_ignore_rule *r);

struct lg_facts {
	bool exists;
	bool has_btime; /* the filesystem records birth times */
	int64_t btime_ns; /* birth time, CLOCK_REALTIME */
	int64_t ctime_ns; /* fallback when there is no birth time */
	int64_t mtime_ns; /* when the content was last written */
	int64_t size;
	unsigned nlink; /* hard links to the target (0: unknown) */
	uint64_t dev, ino; /* the inode (st_dev as makedev() encodes it) */
	uint64_t mnt_id; /* its mount (statx STATX_MNT_ID), 0: unknown */
	/*
	 * What lgrun saw happen to this inode during the session (lineage.h):
	 * it took the place of pre-existing content by a rename over it
	 * (inherited), or the session truncated it (rewritten).
	 */
	bool inherited, rewritten;
	/*
	 * The session emptied this pre-existing file (an O_TRUNC open that
	 * was not counted: its content is kept): removing it now destroys
	 * that content, empty as it looks.
	 */
	bool emptied;
	/*
	 * Set by the session: the source of a move to another filesystem
	 * whose copy was found at the destination.
	 */
	bool moved;
	/*
	 * Set by the session: pre-existing content renamed away from its path
	 * in the session, and that path holds content again.
	 */
	bool superseded;
	/*
	 * Set by the session: a known compressor removes this regular file
	 * while its content lives on, transformed, in a sibling the session
	 * just wrote (lg_transform_suffix, lg_transform_magic,
	 * lg_transform_sibling_fresh), or a known archiver removes it while
	 * it writes an archive that holds it (lg_archiver, lg_archive_holds).
	 */
	bool transformed;
	/*
	 * Set by the session: the path is part of a Python virtual
	 * environment's own layout (lg_venv_root): regenerable, like
	 * node_modules/.
	 */
	bool regenerable;
	/*
	 * Set by the session (provenance/regen.c): a build tool's clean verb
	 * removes what is its own output by its evidence (guard/clean.h),
	 * which the project's git does not track (issue 41).
	 */
	bool cleaned;
	/*
	 * A memo: lg_classify found no ignore rule for this path and op,
	 * without a program (exe NULL), and need not match the rules again
	 * for this removal (the session classifies it twice).
	 */
	bool unignored;
	/*
	 * Set by the session: an agent's tool delete named this path moments
	 * ago (lg_tool_value_names); the removal is that decision's.
	 */
	bool tool_deleted;
	/*
	 * Set by the session: the name this pre-existing inode had before the
	 * session, when the tree named it otherwise since (a rename, its
	 * directory's, a hard link). The ignore rules judge that name: data
	 * renamed into build/ or to f.o is still data (NULL: path is it).
	 */
	const char *name_before;
	unsigned mode; /* its type and permissions (st_mode) */
	bool is_dir;
	bool is_symlink;
	bool is_reg;
	/*
	 * A block device (rdev its number, makedev()). Read by the edge at
	 * an open for writing: blockdev_data, it holds pre-existing data (a
	 * signature lg_blockdev_holds knows or other bytes in its head, or
	 * it is mounted, or held by another device), which blockdev_holds
	 * says ("an ext4 filesystem": a static string); blockdev_seq, the
	 * kernel's disk sequence number (a loop device attached to another
	 * file gets a new one; 0: unknown); blockdev_probed, its head was
	 * read (an empty device is known empty).
	 */
	bool is_blockdev, blockdev_data, blockdev_probed;
	uint64_t rdev, blockdev_seq;
	const char *blockdev_holds;
	bool fd_deleted; /* ftruncate on a file that is already unlinked */
	bool nonempty_dir; /* rmdir will fail with ENOTEMPTY */
	/*
	 * Asked only about git's own removals outside .git that would count
	 * otherwise: > 0 when the target (a file or symlink) has its exact
	 * content in its repository's object database, or (rmdir) is an
	 * empty directory in a repository's work tree. NULL: never.
	 */
	int (*git_recoverable)(void *ctx, enum lg_op op, const char *path);
	void *git_ctx;
};

/*
 * Pre-existing data: an inode born (or, without birth times, changed)
 * before the start, or one that inherited pre-existing content by a rename;
 * not once the session has truncated it (written it from scratch).
 */
bool lg_facts_preexisting(const struct lg_facts *f, int64_t session_start_ns);

/*
 * For truncation what is lost is the content: it must predate the session
 * too. Decided from what lgrun saw, not from the modification time (a
 * touch or a one-byte append would reset it): a file the session has not
 * truncated yet still holds bytes from before the start. One the session
 * truncated and rewrote (a WAL checkpoint, a state file updated with
 * ftruncate + write) loses only its own writes the next time.
 */
bool lg_facts_content_preexisting(const struct lg_facts *f,
				  int64_t session_start_ns);

/* The first rule that covers path for program exe, or NULL. */
const struct lg_ignore_rule *lg_ignored(const struct lg_ignore_rule *rules,
					size_t n, const char *path,
					const char *exe);

/* True when a program-scoped rule's glob covers path: the program matters. */
bool lg_ignored_by_program_rule(const struct lg_ignore_rule *rules, size_t n,
				enum lg_op op, const char *path);

/*
 * True when the program doing op changes its class: a program-scoped ignore
 * rule covers path, or git's removal could be recoverable. The caller then
 * reads the program and classifies with it.
 */
bool lg_classify_needs_program(const struct lg_ignore_rule *rules, size_t n,
			       enum lg_op op, const struct lg_facts *f,
			       const char *path);

/* A component of path is ".git": git's own data, never "recoverable". */
bool lg_path_in_git_dir(const char *path);

/*
 * git removed a pre-existing file outside .git whose content its object
 * database does not hold (reset --hard, checkout -- f over changes, clean):
 * the committed content git may write at that path next is not the lost
 * content coming back, so it must not pass for an overwrite.
 */
bool lg_classify_lost_by_git(enum lg_op op, enum lg_class cls, const char *path,
			     const char *exe);

/*
 * Transforms. A compressor writes the transformed file, then removes the
 * original: gzip f writes f.gz, gzip -d f.gz writes f. The i-th suffix
 * exe (a program's basename) writes or reads, NULL past the last; NULL at
 * i = 0 when exe is not a known compressor.
 */
const char *lg_transform_suffix(const char *exe, size_t i);
/*
 * Do the first n bytes of a file named ...suffix start as that format
 * does? (Brotli has no magic: any non-empty head.)
 */
bool lg_transform_magic(const char *suffix, const unsigned char *head,
			size_t n);
/* How recently the sibling must have been written (its change time). */
#define LG_TRANSFORM_FRESH_NS (120LL * 1000000000LL)
/*
 * The sibling holds the content: a regular, non-empty file born in the
 * session and changed in the last LG_TRANSFORM_FRESH_NS before now_ns.
 */
bool lg_transform_sibling_fresh(const struct lg_facts *sib,
				int64_t session_start_ns, int64_t now_ns);

/*
 * A stub (issue 41): a pre-existing file's body replaced by a few bytes
 * ("# TODO", "pass"), the data gone as if emptied. A file of at least
 * LG_STUB_FROM bytes cut to at most LG_STUB_MAX bytes and at most a
 * 1/LG_STUB_RATIO of what it held; 0 bytes is emptying, not a stub.
 */
#define LG_STUB_FROM 1024
#define LG_STUB_MAX 256
#define LG_STUB_RATIO 16
bool lg_stub_of(int64_t before, int64_t now);

/*
 * Archivers. tar --remove-files, zip -m, 7z a -sdel put files in an archive,
 * then remove them: the content lives on in the archive. By the program's
 * name (tar, gtar, bsdtar, zip, 7z, 7za, 7zz, 7zr); the content test is the
 * archive the session found the program writing.
 */
bool lg_archiver(const char *exe);
/*
 * zip and 7z write the archive (a temporary file renamed into place) and
 * close it before they remove: the session finds it by its name in the
 * command line (zip adds .zip, 7z .7z to a name without a suffix). tar and
 * bsdtar hold theirs open while they remove.
 */
bool lg_archiver_by_name(const char *exe);
/* How much of an archive's head lg_archive_holds() reads: tar's magic. */
#define LG_ARCHIVE_HEAD 264
struct lg_archive {
	struct lg_facts f; /* the archive's (nlink: 0 when it was removed) */
	const unsigned char *head; /* its first n bytes (LG_ARCHIVE_HEAD) */
	size_t n;
	/*
	 * Held open for writing by a process the remover feeds through a
	 * pipe (tar -z runs gzip so): what the compressor has not flushed
	 * yet is not in the file, which may still be empty.
	 */
	bool piped;
	/*
	 * Found by its name (lg_archiver_by_name): when the remover started;
	 * the archive must have been written since. 0: held open by it.
	 */
	int64_t since_ns;
};
/*
 * Does the archive the session found hold a removed file of file_size
 * bytes, as far as can be seen cheaply? A regular file still linked, born
 * in the session, written in the last LG_TRANSFORM_FRESH_NS, in a format exe
 * writes (tar's ustar, compressed by one of the compressors, zip, 7z); an
 * uncompressed tar at least file_size long (GNU tar removes a file once the
 * record holding it is written). Empty only when piped.
 */
bool lg_archive_holds(const char *exe, const struct lg_archive *a,
		      int64_t file_size, int64_t session_start_ns,
		      int64_t now_ns);

/*
 * Does a zip's central directory (its n bytes) list path, by its name in
 * the archive (zip stores the path it was given: a tail of path at a '/',
 * a directory's with a '/' after it)?
 */
bool lg_zip_lists(const unsigned char *cd, size_t n, const char *path);

/*
 * tar -z before its archive exists. GNU tar forks a child that creates the
 * archive, then runs the compressor (through /bin/sh) with it as its
 * output; the child's open waits in lgrun's queue behind the first
 * removals of tar, which feeds it through a pipe. The session reads what
 * the child is blocked in. The compressor it runs, into out (size bytes),
 * from its executable's name exe and its command line argv (n bytes,
 * NUL-separated): a compressor itself; tar's own child, before it runs the
 * compressor, by tar's options (-z, -j, -J, -Z, --gzip, --xz, --zstd...,
 * -I PROG; "*" for -a, which picks by the archive's suffix); a shell's
 * -c command's program (sh -c gzip).
 */
bool lg_archive_compressor(const char *exe, const char *argv, size_t n,
			   char *out, size_t size);
/*
 * Is path (an open's, creating or truncating for writing) named as what
 * compressor writes: its suffix (.gz, .xz, .zst...) or a compressed tar's
 * short one (.tgz, .txz, .tbz2...); "*": any of them. A name without such a
 * suffix (/dev/null, a fifo named out) is no archive in the making.
 */
bool lg_archive_named_for(const char *compressor, const char *path);
/*
 * At most so many removals of one archiver pass on an archive still in the
 * making (tar's first one or two: the open is answered right after them).
 */
#define LG_ARCHIVE_PENDING_MAX 3

/*
 * Virtual environments. The i-th directory (from the nearest) that would
 * make path part of a virtual environment's own layout, if it holds a
 * pyvenv.cfg: path is that directory itself (op rmdir), its pyvenv.cfg
 * or .gitignore, or lies under its bin/, lib/, lib64/, include/, share/
 * (Scripts/, Lib/, Include/ on Windows' layout). Written into root; 1, or
 * 0 past the last (or when it does not fit). A venv made at a project's
 * root leaves the project's own files (src/, docs/) outside it.
 */
int lg_venv_root(enum lg_op op, const char *path, size_t i, char *root,
		 size_t size);

/*
 * Tool deletes. Does value, a path the agent handed its tool (absolute,
 * relative to wherever the server resolves it, or a file:// URI), name
 * path (absolute, normalised)? An absolute value must be path; a relative
 * one must be path's last components. A value that climbs (..) names
 * nothing.
 */
bool lg_tool_value_names(const char *value, const char *path);
/*
 * An HTTP request's path (query left out) to its last segment,
 * percent-decoded: what a file service maps to a file. 0, or -EINVAL
 * (none, or it decodes to '/' or NUL or "..").
 */
int lg_url_last_segment(const char *url, char *out, size_t size);

/*
 * Block devices. How much of a device's head lg_blockdev_holds() reads: up
 * to btrfs's superblock (64 KiB) and a swap signature of 64 KiB pages.
 */
#define LG_BLOCKDEV_HEAD (68 * 1024)
/*
 * What the first n bytes of a block device say it holds, for the records
 * ("an ext4 filesystem", "a GPT partition table", "a LUKS volume"): the
 * signatures blkid would find first (ext2/3/4, XFS, btrfs, swap, FAT,
 * NTFS, exFAT, LUKS, LVM, md RAID, ISO 9660, squashfs, F2FS, EROFS, a
 * GPT or an MBR with a partition); "data lgrun does not recognise" for
 * any other byte that is not zero; NULL when all n are zero (an empty
 * device).
 */
const char *lg_blockdev_holds(const unsigned char *head, size_t n);

enum lg_class lg_classify(enum lg_op op, const struct lg_facts *f,
			  const char *path, const char *exe,
			  const struct lg_ignore_rule *rules, size_t nrules,
			  int64_t session_start_ns);

#endif
