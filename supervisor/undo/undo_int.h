/* SPDX-License-Identifier: MIT */
/*
 * Inside the undo engine (undo.h), what its files share. run.c is
 * lg_undo_run and its phases; it calls down into index.c (the index and the
 * quarantine opened and trusted, read as the index's owner, each line's
 * kept file checked) and put.c (one entry put back, the session's
 * version set aside), which calls index.c for a line's folder and for
 * the set-aside's index line; all three walk paths with walk.c and say
 * what they do through say.c; rewind.c (rewind.h, pure) picks a rewind's
 * entries for run.c. Nothing calls back up.
 */
#ifndef LG_UNDO_INT_H
#define LG_UNDO_INT_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>

#include "lib/error.h"
#include "quarantine/index.h"
#include "undo.h"

/* A folder of the session's quarantine (<top>/<session>/<bucket>). */
struct folder {
	char *path; /* the bucket's */
	int fd; /* the bucket, O_PATH, or -errno */
	int sfd; /* <top>/<session>, O_PATH (set-asides go there) */
	struct lg_error why; /* why it is refused, when fd < 0 */
};

struct restore {
	const struct lg_undo_ask
		*ask; /* what was asked, and to whom it is said */
	struct lgq_index x;
	const char *to, *id, *state_dir;
	bool dry, newest, force;
	bool keep_new; /* --keep-new: what the session made stays */
	bool trust_unsigned; /* --trust-unsigned: an unsealed index believed */
	unsigned run; /* --run N (0: the last that kept anything) */
	/* lgctl rewind --turn K (issue 40): turns K and later undone */
	bool rewind;
	long long turn;
	const char *verb; /* "restore" or "rewind", for messages */
	/* an earlier rewind of the same paths: to turn rewound, at rewound_ns */
	long long rewound, rewound_ns;
	struct lgq_sealed sealed; /* SESSION.runs's digests: what is believed */
	/* the run restored: its start, its end line's time, the next's start */
	long long run_start, run_end, next_start;
	uid_t owner; /* the index's owner: whose credentials restore uses */
	gid_t owner_gid;
	int top; /* "/" or --to DIR (O_PATH) */
	int qfd; /* <state dir>/quarantine (O_PATH) */
	int ifd; /* the index, opened for appending set-asides, or -1 */
	long long start_ns, end_ns; /* the session's (end: see session_times) */
	struct folder *f;
	size_t nf;
	unsigned restored, conflicts, missing, failed, earlier, refused,
		changed, set_aside, moved, made_gone, noted;
};

/*
 * A phase of lg_undo_run answers GO_ON when the undo goes on; any other
 * answer is lgctl's exit status (undo.h), the reason said.
 */
enum { GO_ON = -1 };

/* Which entries are asked for, and the index they are in. */
struct request {
	long long since_ns;
	char **paths; /* ask's, or a rewind's folder (own_paths) */
	size_t npaths;
	bool own_paths;
	char index[PATH_MAX + 300]; /* as messages name it */
	char qdir[PATH_MAX + 16]; /* <state dir>/quarantine, absolute */
	int ifd; /* the index, read */
	struct stat ist; /* the index, as first opened */
};

static inline long long ns_of(struct statx_timestamp t)
{
	return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static inline long long st_ns(struct timespec t)
{
	return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

/*
 * say.c: a line said to the asker (ask->say; its newline, if any, taken
 * off): what was done (rst_say), or why it is refused (rst_problem).
 */
void rst_say(const struct restore *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void rst_problem(const struct restore *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* walk.c: paths opened a component at a time, never through a
 * symlink (openat2 RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS). */

/* name opened beneath dfd: a descriptor or -errno. */
int rst_open2(int dfd, const char *name, int flags, mode_t mode);
/* A walk's -errno in words. */
const char *rst_why_of(int err);
/* lg_undo_path_normal (undo.h): absolute and normal. */
/* rel opened from at (folders made when make): O_PATH fd or -errno. */
int rst_walk(int at, const char *rel, bool make);
/* An absolute path walked from / as rst_walk does. */
int rst_walk_abs(const char *abs, bool make);

/* index.c: the index and its quarantine, trusted or refused. */

/* Phases of lg_undo_run, in this order; each GO_ON or an exit status. */
int rst_name_index(const struct restore *r, struct request *q);
int rst_open_index(struct restore *r, struct request *q);
int rst_open_quarantine(struct restore *r, const struct request *q);
int rst_load_as_owner(struct restore *r, const struct request *q);
/* r->start_ns and r->end_ns, from the state dir (qdir's parent). */
void rst_times_from_state_dir(struct restore *r, const char *qdir);
/* fd a directory the quarantine may use (st filled): see its definition. */
bool rst_trusted(const struct restore *r, int fd, bool strict, struct stat *st);
/* e's kept file's folder, checked and cached; NULL with err when refused. */
struct folder *rst_folder_of(struct restore *r, const struct lgq_entry *e,
			     struct lg_error *err);
/* A set-aside's line appended to the index: 0 or -errno. */
int rst_index_set_aside(struct restore *r, long long n, const char *path,
			const char *kept, const struct statx *before,
			const struct statx *after);

/* put.c: one entry put back. */

void rst_put_file(struct restore *r, struct lgq_entry *e);
void rst_put_dir(struct restore *r, struct lgq_entry *e);
void rst_put_moved(struct restore *r, struct lgq_entry *e);
void rst_put_made(struct restore *r, struct lgq_entry *e);
void rst_put_note(struct restore *r, struct lgq_entry *e);
/* st is what this restore moved back to its name (its change time ours) */
bool rst_moved_back(const struct restore *r, const struct statx *st);
/*
 * This restore put what st is at path: moved back, a kept file put back,
 * a folder made again (its "made").
 */
bool rst_put_here(const struct restore *r, const char *path,
		  const struct statx *st);
/* A directory rst_put_dir made: its recorded metadata (after its files). */
void rst_set_dir_meta(const struct restore *r, const struct lgq_entry *e);

#endif
