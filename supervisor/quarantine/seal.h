/* SPDX-License-Identifier: MIT */
/*
 * The quarantine index sealed (quarantine/seal.c): each line lgrun writes
 * signed with a key of the run kept only in memory; at the run's end the
 * digests of the lines that verify are written to SESSION.runs, which is
 * what lgctl restore believes.
 */
#ifndef LG_SEAL_H
#define LG_SEAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Before the watchdog's fork (it seals after a crash): the run's key, and
 * SESSION.runs as it is now (the earlier runs' seals). 0 or -errno.
 */
int lg_seal_init(const char *state_dir, const char *session);
/* The run's start (SESSION.runs says it): lgrun's, after the fork. */
void lg_seal_start(int64_t start_ns);
/* A key was made: lines are signed. */
bool lg_seal_on(void);
/*
 * A line's mac: the hex HMAC, with the run's key, of the SHA-256 of its
 * first n bytes (its digest, which this process remembers for the seal).
 */
void lg_seal_mac(const char *line, size_t n, char hex[65]);
/* A line's digest as SESSION.runs holds it: 32 hex digits. */
void lg_seal_digest(const char *line, size_t n, char hex[33]);
/* Where a signed line's ,"mac" field starts, or 0 when it has none. */
size_t lg_seal_signed_part(const char *line, size_t n);
/*
 * The tree gone: SESSION.runs rewritten with this run's sealed lines
 * (once; nothing when the run kept nothing). 0 or -errno.
 */
int lg_seal_write(int64_t end_ns);

#endif
