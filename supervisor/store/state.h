/* SPDX-License-Identifier: MIT */
/*
 * The state directory: killed-session markers, the last record of each
 * session, the audit log and the metrics file.
 *   <dir>/audit.jsonl
 *   <dir>/lgrun.prom
 *   <dir>/sessions/<id>.json     states of the session, one JSON line each
 *                                (the last is current)
 *   <dir>/sessions/<id>.killed   present while the session is blocked
 *   <dir>/sessions/<id>.lost     its lgrun died without ending it (who noticed)
 */
#ifndef LG_STATE_H
#define LG_STATE_H

#include <stdbool.h>
#include <stddef.h>

struct lg_config;
struct lg_error;

/*
 * --state-dir, else $LGRUN_STATE_DIR, else the config, else /var/lib/lgrun
 * (root), $XDG_STATE_HOME/lgrun or ~/.local/state/lgrun. 0, or 1 when none
 * of these can hold it (no home, or one this user may not write: a
 * container's user with HOME=/): then the fallback, /tmp/lgrun-UID
 * (lg_state_dir_fallback), which lg_state_prepare_private makes. -errno
 * with err's message: an empty --state-dir (cli "", not NULL), or a
 * relative one, refused (a relative $XDG_STATE_HOME is ignored, as its
 * specification says).
 */
int lg_state_dir_resolve(const char *cli, const struct lg_config *cfg,
			 char *out, size_t size, struct lg_error *err);
int lg_state_dir_fallback(char *out, size_t size);
/*
 * The state dir checked as ssh's StrictModes checks a home (store/strict.c):
 * absolute; it and every folder above it root's or this user's, writable by
 * no one else (an ancestor may be when it is root's and sticky, as /tmp);
 * no symlink on the way but an ancestor's of root or this user, never the
 * dir itself. Missing folders made (0750) when create. A descriptor of the
 * dir, or -errno with err's message saying what to fix (-ENOENT: it does
 * not exist and !create).
 */
int lg_state_open(const char *dir, bool create, struct lg_error *err);
/*
 * What lgrun opens in the checked dir dfd (shown as dir): sessions,
 * quarantine, run, bpf, audit.jsonl, lgrun.prom, and, with id, the
 * session's own files in sessions/ and quarantine/: each absent, or root's
 * or this user's, writable by no one else, of its kind, and no symlink.
 * 0, or -errno with err's message saying what to fix.
 */
int lg_state_check_entries(int dfd, const char *dir, const char *id,
			   struct lg_error *err);
/* A file lgrun writes outside the state dir (audit_log, metrics_file): the
 * same check. */
int lg_state_check_file(const char *path, struct lg_error *err);
/*
 * The fallback made, or taken only if it is this user's own folder, open
 * to no one else, and not a symlink (anyone may make a name in /tmp first):
 * 0, -EPERM (another user's, or open to others), -ENOTDIR, or -errno.
 */
int lg_state_prepare_private(const char *dir);

/* A session id is [A-Za-z0-9._:@+-], 1..128 chars, not starting with '.'. */
bool lg_session_id_valid(const char *id);

/* 1 and the marker's text in buf if the session is killed, 0 if not. */
int lg_state_killed(const char *dir, const char *id, char *buf, size_t size);
int lg_state_mark_killed(const char *dir, const char *id, const char *json);
/* 0, or -ENOENT when the session was not killed. */
int lg_state_reset(const char *dir, const char *id);
/* Records the session's state: a JSON line appended to <id>.json (the last
 * line is the current state). */
int lg_state_write_session(const char *dir, const char *id, const char *json);

/* The session's current state: the last line of <id>.json ("" if none). */
int lg_state_last(const char *dir, const char *id, char *buf, size_t size);
/* A state line that says running while its lgrun pid is gone. */
bool lg_state_orphaned(const char *line);
/*
 * The session runs: its current state says running and its lgrun is
 * alive (what lgctl status shows as running). A session whose lgrun is
 * gone (lg_state_orphaned) does not: it keeps nothing more.
 */
bool lg_state_running(const char *dir, const char *id);
/*
 * Claims the writing of a lost session's end (<id>.lost, made exclusively):
 * 1 for the first caller, 0 when someone already did, or -errno.
 */
int lg_state_claim_lost(const char *dir, const char *id, const char *by);

#endif
