/* SPDX-License-Identifier: MIT */
/*
 * Lines on their way to a file, in a mapping shared with a child forked
 * after it: written in batches (when the mapping fills, and when its
 * owner says), not one write per line. The quarantine's index goes
 * through one (its lines wait at most 250 ms, and are written before a
 * trip is on record and at the end), so a kept file costs the tree no
 * write while it waits for its answer.
 *
 * The watchdog is that child: when lgrun dies with lines not yet written,
 * it writes them (lg_spill_salvage). One writer at a time (the caller's
 * lock); the child reads only once the writer is gone. A line written
 * twice (the writer died between its write and its record of it) is read
 * once (quarantine/index.c).
 */
#ifndef LG_SPILL_H
#define LG_SPILL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct lg_spill;

/* A mapping of cap bytes shared with the children forked after; NULL. */
struct lg_spill *lg_spill_new(size_t cap);
void lg_spill_free(struct lg_spill *sp);

/*
 * Appends one line (with its newline) for the file at path, open as fd
 * (O_APPEND): written at once when it does not fit. 0 or -errno (the
 * write's).
 */
int lg_spill_add(struct lg_spill *sp, int fd, const char *path,
		 const char *line, size_t len);
/* Writes what waits to fd. 0 or -errno. */
int lg_spill_flush(struct lg_spill *sp, int fd);
/* Since when lines wait (lg_mono_ms), 0: none. */
uint64_t lg_spill_since(const struct lg_spill *sp);
/*
 * The watchdog, once lgrun is gone: appends what waited to the file it
 * was for. How many bytes, or -errno.
 */
long lg_spill_salvage(struct lg_spill *sp);

#endif
