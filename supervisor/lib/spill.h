/* SPDX-License-Identifier: MIT */
/*
 * Lines on their way to a file, in a mapping shared with a child forked
 * after it: written in batches (when the mapping fills, and when its
 * owner says), not one write per line. The quarantine's index goes
 * through one, so a kept file costs the tree no write while it waits for
 * its answer, nor the making of its line:
 *  - before the answer, the entry is held as a record (lg_spill_hold: a
 *    copy into the mapping);
 *  - after it, the record is made into its line (lg_spill_settle);
 *  - the lines are written within 250 ms, before a trip is on record,
 *    and at the end (lg_spill_flush).
 *
 * The watchdog is that child: when lgrun dies with lines not yet written,
 * or records not yet made into lines, it writes them (lg_spill_salvage),
 * making the lines with the same function. The writer's threads share it
 * (its own locks); the child reads only once the writer is gone. A line
 * written twice (the writer died between its write and its record of it)
 * is read once (quarantine/index.c).
 */
#ifndef LG_SPILL_H
#define LG_SPILL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct lg_spill;

/*
 * A held record's line (with its newline), allocated; NULL to drop it.
 * It runs in the child too: it may use only what the record holds.
 */
typedef char *(*lg_spill_line_fn)(const void *rec, size_t len, size_t *n);

/*
 * A mapping for cap bytes of lines and as many of records, shared with
 * the children forked after; line makes a record's line. NULL.
 */
struct lg_spill *lg_spill_new(size_t cap, lg_spill_line_fn line);
void lg_spill_free(struct lg_spill *sp);

/*
 * Appends one line (with its newline) for the file at path, open as fd
 * (O_APPEND): written at once when it does not fit. 0 or -errno (the
 * write's).
 */
int lg_spill_add(struct lg_spill *sp, int fd, const char *path,
		 const char *line, size_t len);
/*
 * Holds a record (copied) for the file at path: 0; 1 when the records
 * held just went past half their room (a settle is wanted: the caller
 * asks its owner for one); -ENOSPC when they fill it (settle them, then
 * hold it again).
 */
int lg_spill_hold(struct lg_spill *sp, const char *path, const void *rec,
		  size_t len);
/*
 * The records held, made into lines and appended. 0 or -errno. One
 * settle at a time; it makes the lines without blocking lg_spill_hold,
 * so a thread other than the holder's may settle while it holds on.
 */
int lg_spill_settle(struct lg_spill *sp, int fd);
/* The records held settled, and every line written to fd. 0 or -errno. */
int lg_spill_flush(struct lg_spill *sp, int fd);
/* A settle was asked for (lg_spill_hold returned 1), not yet done. */
bool lg_spill_wanted(struct lg_spill *sp);
/* Since when lines or records wait (lg_mono_ms), 0: none. */
uint64_t lg_spill_since(struct lg_spill *sp);
/*
 * The child, once the writer is gone: appends what waited to the file it
 * was for, the records made into lines. How many bytes, or -errno.
 */
long lg_spill_salvage(struct lg_spill *sp);

#endif
