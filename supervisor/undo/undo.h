/* SPDX-License-Identifier: MIT */
/*
 * The undo engine: what a session's quarantine holds put back at its
 * paths (a restore), or the tree as it was when the agent's turn K began
 * (a rewind, issue 40). Its command line is lgctl restore and lgctl rewind
 * (lgctl/restore.c): the options read, the undo asked for with them, what
 * it says printed, its tally summed up. The engine prints nothing itself:
 * each line it has to say goes to the asker's say(), as raw text (paths
 * as the index holds them: the asker makes them safe for a terminal).
 */
#ifndef LG_UNDO_H
#define LG_UNDO_H

#include <stdbool.h>
#include <stddef.h>

/* What to undo, and how. */
struct lg_undo_ask {
	const char *state_dir, *id; /* id: a valid session id */
	bool rewind; /* lgctl rewind: turns turn and later (turn >= 1) */
	long long turn;
	bool dry; /* --dry-run: what would be done, said; nothing done */
	bool newest; /* of several versions of a path, the newest */
	bool force; /* a kept file changed since it was kept, put back too */
	bool keep_new; /* what the session made stays */
	bool trust_unsigned; /* an index lgrun did not seal, believed */
	unsigned run; /* a session id's run N (0: the last that kept) */
	long long since_ns; /* only what was kept since (0: all) */
	const char *to; /* under this directory instead (lg_undo_path_normal) */
	/*
	 * only these paths and what is under them: absolute, "." and ".."
	 * folded; none: everything (a rewind: the folder the session
	 * started in, its recording says)
	 */
	char *const *paths;
	size_t npaths;
	const char *by; /* who undoes, for the audit record */
	/*
	 * Each line the undo says, without its newline: what it did to one
	 * path, a note (problem false, lgctl's standard output), or why it
	 * refuses or fails (problem true, its standard error).
	 */
	void (*say)(void *ctx, bool problem, const char *line);
	void *ctx;
};

/* What the undo did, path by path counted. */
struct lg_undo_tally {
	unsigned restored, conflicts, missing, failed, earlier, refused,
		changed, set_aside, moved, made_gone, noted;
	unsigned unmatched; /* paths asked for that nothing kept is at or under */
};

/*
 * Undoes what ask says, as the index's owner (root drops to it), its
 * audit record written when anything was undone. 0 when it went through
 * every entry (t says how each went; anything but restored is a reason to
 * look), else lgctl's exit status, the reason said: 1 nothing undone (no
 * index, a running session, an unsealed index, no turns, no such run), 2
 * an error.
 */
int lg_undo_run(const struct lg_undo_ask *ask, struct lg_undo_tally *t);

/* Absolute, no empty, "." or ".." component, no trailing '/' (ask->to). */
bool lg_undo_path_normal(const char *p);

#endif
