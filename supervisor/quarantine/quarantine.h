/* SPDX-License-Identifier: MIT */
/*
 * The quarantine: what a session is about to destroy of pre-existing data,
 * kept before the operation is let through, so `lgctl restore` can put it
 * back. A removed file is kept by a hard link into a folder on the same
 * mount (one syscall, no copy); a removed directory by its metadata.
 *
 * Where: <folder>/<session>/ when a configured folder is on the target's
 * mount, else <state_dir>/quarantine/<session>/ when the state dir is, else
 * <mount top>/.lgrun-quarantine/<session>/, folders made 0700. The index of a session is one JSON line per entry in
 * <state_dir>/quarantine/<session>.jsonl (what, where it was, its inode's
 * facts, who and when), read by lgctl.
 */
#ifndef LG_QUARANTINE_H
#define LG_QUARANTINE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "guard/event.h"

#define LG_QUARANTINE_DIR ".lgrun-quarantine"

struct lg_quarantine;

/*
 * NULL when out of memory; the folders are made at the first entry.
 * max_bytes (0: none): what the session's copies may take (their
 * allocated bytes; a link takes nothing new).
 * folders ("DIR,DIR", or NULL): configured places, each used for the mount
 * it is on, before the state dir and the mount's top.
 */
struct lg_quarantine *lg_quarantine_new(const char *state_dir,
					const char *session, uint64_t max_bytes,
					const char *folders);
void lg_quarantine_free(struct lg_quarantine *q);

/*
 * What keeping may take of a disk. Per filesystem, the bytes this session
 * holds there by links (space its removals would have freed) plus what a
 * new entry adds never pass the free space above the floor: the smaller of
 * min_free and min_free_fraction of the filesystem. Below it, older ended
 * sessions' entries (never a blocked one's) are dropped first; then the
 * entry is not kept (-EDQUOT). max_total bounds what all sessions of the
 * state dir took by copies together (0: no bound; past it: -EOVERFLOW);
 * max_bytes (lg_quarantine_new) what this session's copies take.
 */
struct lg_quarantine_limits {
	uint64_t max_copy; /* a removal that cannot be linked: a copy */
	uint64_t min_free;
	double min_free_fraction;
	uint64_t max_total;
};
void lg_quarantine_set_limits(struct lg_quarantine *q,
			      const struct lg_quarantine_limits *l);

/* The session's start (real-time ns), written with every entry. */
void lg_quarantine_set_start(struct lg_quarantine *q, int64_t start_ns);

/*
 * The agent's turn from now on (issue 40): each line says the turn its
 * change ran in, so that a rewind undoes turns K and later.
 */
void lg_quarantine_set_turn(struct lg_quarantine *q, unsigned turn);
/*
 * While own is set, the lines added are the session's own versions (what
 * an earlier turn made or wrote, changed again): a rewind to a turn puts
 * them back, a restore of the whole session leaves them ("own": true).
 */
void lg_quarantine_set_own(struct lg_quarantine *q, bool own);

/*
 * The index's lines go through sp (spill.h): written in batches, and by
 * the watchdog if lgrun dies first. Without one, each line is written as
 * its entry is kept.
 */
struct lg_spill;
void lg_quarantine_set_spill(struct lg_quarantine *q, struct lg_spill *sp);
/*
 * The lines that wait, made and written to the index. 0 or -errno. The
 * held entries' lines are made without blocking a keep (the spill's own
 * locks): the main thread flushes without the session's lock, while the
 * notify thread keeps on.
 */
int lg_quarantine_flush(struct lg_quarantine *q);
/* The held entries fill half the spill's room: a flush is wanted soon. */
bool lg_quarantine_flush_wanted(const struct lg_quarantine *q);
/*
 * A held entry's line of the index (lib/spill.h's line function: the
 * watchdog makes the lines lgrun could not).
 */
char *lg_quarantine_line(const void *rec, size_t len, size_t *n);
/* Since when lines wait (lg_mono_ms), 0: none. */
uint64_t lg_quarantine_pending_since(const struct lg_quarantine *q);

/* What is about to go, and who removes it: for the index. */
struct lg_quarantine_who {
	enum lg_op op;
	pid_t pid;
	const char *exe;
	const char *audit_id; /* the session's audit record about it */
	uint64_t dev, ino; /* the inode the tree's view showed (makedev) */
	/*
	 * The target in the tree's view: its directory (O_PATH) and name, or
	 * at_dirfd -1. Used when the path does not reach it in lgrun's view.
	 */
	int at_dirfd;
	const char *at_name;
	/*
	 * With at_dirfd: the target's statx from it, taken just before
	 * (NULL: none), and its directory's device and inode (0: unknown).
	 * A link from lgrun's view of that very directory keeps that inode
	 * (the tree's renames wait for their own answer meanwhile): its
	 * check by a statx of the kept file is spared.
	 */
	const struct statx *st;
	uint64_t dir_dev, dir_ino;
	/*
	 * The name the file had before the session, when the session renamed
	 * it away before removing it (mv f junk/; rm junk/f): recorded as the
	 * entry's path (what a restore puts back), the removed name beside it.
	 */
	const char *origin;
};

/*
 * Keeps the file at path (absolute, in lgrun's view) before it is
 * removed: a hard link, checked to be who->ino (it takes no new space:
 * max_bytes and max_total do not count it). 0, or -errno: EXDEV when
 * no folder can be made on its mount, ESTALE when path is not that inode
 * in lgrun's view, EDQUOT at the free-space floor, or why the link failed;
 * a copy made instead fails as lg_quarantine_copy.
 */
int lg_quarantine_link(struct lg_quarantine *q, const char *path,
		       const struct lg_quarantine_who *who);

/*
 * Keeps the content of the file at path before it is truncated: a reflink
 * where the filesystem has them, else a copy of its data, its holes left
 * holes. max_copy bounds the data (allocated bytes, at most the size: a
 * 1 GiB file holding 4 KiB costs 4 KiB; larger: -EFBIG; 0: no copies).
 * 0 or -errno: as lg_quarantine_link, and ENOSPC when a copy would pass
 * max_bytes, EOVERFLOW max_total.
 */
int lg_quarantine_copy(struct lg_quarantine *q, const char *path,
		       const struct lg_quarantine_who *who, uint64_t max_copy);

/*
 * The run is over (the tree gone): its start and end, a line of
 * STATE_DIR/quarantine/SESSION.runs, so that a restore of this run, when
 * the session id runs again later, tells what changed after it. Written
 * only when the index exists. 0 or -errno.
 */
int lg_quarantine_end_run(struct lg_quarantine *q);

/*
 * A line of the index that keeps no data, for a restore to act on (st:
 * the inode's facts lgrun has, zeroed when none): kind "moved" (a
 * pre-existing file or folder renamed from from to now, path its name
 * before the session), "made" (a name the session made), "appended" (st's
 * size before the first append), "mode" (st's mode before the first
 * chmod). 0 or -errno.
 */
int lg_quarantine_note(struct lg_quarantine *q, const char *kind,
		       const char *path, const char *now, const char *from,
		       const struct statx *st,
		       const struct lg_quarantine_who *who);

/* Keeps a directory's metadata (mode, owner, times) before rmdir. */
int lg_quarantine_dir(struct lg_quarantine *q, const char *path,
		      const struct lg_quarantine_who *who);

/* How many lines the index has been given so far (a change kept or not). */
unsigned lg_quarantine_lines(const struct lg_quarantine *q);

/* The index's path (<state_dir>/quarantine/<session>.jsonl). */
const char *lg_quarantine_index(const struct lg_quarantine *q);

/* What is held so far (files and directories, bytes of the files). */
void lg_quarantine_totals(const struct lg_quarantine *q, unsigned *files,
			  unsigned *dirs, uint64_t *bytes);
/*
 * The disk space the kept files hold (their allocated blocks: a sparse
 * file's holes hold none) and, of it, what keeping took anew: the copies'
 * (max_bytes's and max_total's measure). A link or a reflink holds the
 * blocks the file had; the free-space floor bounds those.
 */
void lg_quarantine_disk(const struct lg_quarantine *q, uint64_t *held,
			uint64_t *copied);

/*
 * A path lgrun keeps a quarantine under (protected from the tree): any
 * .lgrun-quarantine, and q's configured folders (q may be NULL).
 */
bool lg_quarantine_path(const struct lg_quarantine *q, const char *path);

#endif
