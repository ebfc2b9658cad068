/* SPDX-License-Identifier: MIT */
/*
 * The quarantine's indexes read back (quarantine.h writes them): by lgctl
 * (list, gc, restore) and by lgrun, which expires old sessions by itself.
 */
#ifndef LG_QUARANTINE_INDEX_H
#define LG_QUARANTINE_INDEX_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

/* Fields of a line that older indexes lack (lgq_entry.have). */
enum {
	LGQ_HAVE_CTIME = 1 << 0,
	LGQ_HAVE_DEV = 1 << 1,
	LGQ_HAVE_KEPT = 1 << 2, /* kept_ino, kept_size and kept_ctime_ns */
	LGQ_HAVE_COPIED = 1 << 3, /* copied: a copy's (or a reflink's) */
};

/* One line of a session's quarantine index. */
struct lgq_entry {
	long long n, time_ns, atime_ns, mtime_ns, ctime_ns, size;
	long long start_ns; /* its run's start (0: not said) */
	long long turn; /* the agent's turn it was kept in (0: none said) */
	/* the session's own version from an earlier turn (a rewind's only) */
	bool own;
	/* the session's folder its kept file is in, as lgrun made it (0: not said) */
	long long folder_dev, folder_ino;
	long long ino; /* the original's inode number (0: unknown) */
	long long dev; /* its st_dev (makedev), when LGQ_HAVE_DEV */
	/* the kept file right after it was made, when LGQ_HAVE_KEPT */
	long long kept_ino, kept_size, kept_ctime_ns;
	long long copied; /* what its copy took anew, when LGQ_HAVE_COPIED */
	unsigned have;
	bool dir;
	unsigned mode, uid, gid;
	char op[16]; /* unlink, rmdir, rename, truncate, open_trunc, ... */
	/* path: the exact bytes (from path_b64 when the name is not UTF-8) */
	char *path, *kept, *dest;
	json_t *xattrs; /* a directory's {"name":"hex value"}, or NULL */
	bool made; /* a directory this restore created */
	bool forged; /* its line is not sealed (lgq_index.sealed): refused */
	/*
	 * kind "moved" (dir false, mode its type): where the session renamed
	 * it (path: its name before); done once a restore looked at it
	 */
	char *moved_to, *moved_from; /* from: its name at the rename */
	/* its name when the change ran, when not path (else NULL) */
	char *at_path;
	bool moved, done, back; /* back: this restore moved it */
	bool superseded; /* another version of its path is put back */
	bool would; /* a dry run would put it back */
	/* kind "made": a name the session made (ino: its inode, 0: unknown) */
	bool made_new;
	/* kind "appended" (size: before the first append), "mode" (mode) */
	bool appended, mode_only;
};
/* One run of a session id: its start_ns and (SESSION.runs) its end. */
struct lgq_run {
	long long start_ns, end_ns; /* end 0: no end line (lgrun died) */
};

/* The digests SESSION.runs seals (quarantine/seal.c), sorted: 32 hex. */
struct lgq_sealed {
	char (*d)[33];
	size_t n;
	bool any; /* the session's index is a sealed one: only these go */
};

struct lgq_index {
	struct lgq_entry *e;
	size_t n;
	/*
	 * Given (lgq_load_fd's caller): lines whose digest it does not seal
	 * are read with forged set, when it says the index is sealed
	 */
	const struct lgq_sealed *sealed;
	size_t forged, macs; /* lines refused; lines that carry a mac */
	struct lgq_run *runs; /* in the order their first line came */
	size_t nruns;
	long long max_n; /* the highest n of every line, wanted or not */
	long long max_turn; /* the highest turn of the entries read */
	long long start_ns; /* the session's start, when a line says (else 0) */
	long long newest_ns; /* the newest time_ns of every line */
};

/*
 * The entries of index file wanted: under one of paths (all when none),
 * kept since since_ns. 0, or -errno (ENOENT: no index).
 */
int lgq_load(struct lgq_index *x, const char *file, char **paths, size_t npaths,
	     long long since_ns);
/* The same from an open index (fd stays open and is not moved). */
int lgq_load_fd(struct lgq_index *x, int fd, char **paths, size_t npaths,
		long long since_ns);
void lgq_free(struct lgq_index *x);
/*
 * One entry's strings and xattrs released (an entry taken out of x).
 * Inline, so that undo/rewind.c's choice is tested alone (test_turns).
 */
static inline void lgq_entry_free(struct lgq_entry *e)
{
	free(e->path);
	free(e->kept);
	free(e->dest);
	free(e->moved_to);
	free(e->moved_from);
	free(e->at_path);
	json_decref(e->xattrs);
}

/*
 * A session id run again is another run (its lines carry its start_ns):
 * how many runs have entries, the last of them at *last (an index of
 * x->runs); lgq_keep_run leaves only the entries of the run that started
 * at start_ns (and lines of no run: a restore's set-asides).
 */
size_t lgq_runs_with_entries(const struct lgq_index *x, size_t *last);
/*
 * The digests sealed in a SESSION.runs open as fd (its lines' "lines"),
 * into s (sorted); s->any when a line had them. 0 or -errno.
 */
int lgq_sealed_read(struct lgq_sealed *s, int fd);
bool lgq_sealed_has(const struct lgq_sealed *s, const char *digest);
void lgq_sealed_free(struct lgq_sealed *s);
void lgq_keep_run(struct lgq_index *x, long long start_ns);

/*
 * What one session's index says it holds: bytes, the kept files' sizes
 * (what a restore puts back); disk, their allocated blocks; copied, of
 * those, what copies took anew (max_total's measure: a link or a reflink
 * holds the blocks its file had).
 */
struct lgq_held {
	char id[200];
	unsigned files, dirs;
	uint64_t bytes, disk, copied;
	long long newest_ns, oldest_ns;
	bool blocked;
};

/*
 * h's totals (not its blocked mark: the state file says that) written for
 * lgq_sessions, valid while the index open as index_fd keeps its size.
 * 0 or -errno.
 */
int lgq_held_write(const char *dir, const struct lgq_held *h, int index_fd);

/* The sessions of state dir dir with an index, oldest newest entry first. */
size_t lgq_sessions(const char *dir, struct lgq_held **out);

/*
 * Removes what session id kept, its folders and its index; adds to *freed
 * (optional) the size of the files whose last link it was. 0 or -errno:
 * -EBUSY, and nothing removed, while the session runs (its next keeps
 * need its folders and its index: lg_state_running).
 */
int lgq_drop(const char *dir, const char *id, uint64_t *freed);

/*
 * lgrun's own gc, at most once an hour per state dir: the sessions whose
 * newest entry (their index's mtime) is older than max_age_ms go, never a
 * blocked one, a running one, nor except (the session now ending). How
 * many went and the
 * bytes freed, into *sessions and *bytes; 0, or 1 when it was not due.
 */
int lgq_expire(const char *dir, uint64_t max_age_ms, const char *except,
	       unsigned *sessions, uint64_t *bytes);

#endif
