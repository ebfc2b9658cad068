/* SPDX-License-Identifier: MIT */
/*
 * What changes between two runs of the same tool call that made no
 * progress: process ids, clock readings, durations, request ids, temp-file
 * names. The repeat detector compares results with these masked, so a
 * shell tool that prints its process group id still repeats. Pure, bounded,
 * no allocation (the shim uses it too).
 *
 * Masked, each replaced by a placeholder:
 *  - date-times: 2026-11-23T21:52:01.5Z, 2026-11-23 21:52:01+01:00 (a date
 *    needs a time after it); clock times 21:52:01(.123);
 *  - UUIDs (8-4-4-4-12 hex digits); addresses 0x7ffd1234 (6+ hex digits);
 *  - the value after a key that names a process, a clock or a request
 *    (pid, pids, pgid, ppid, tid, process group, wall time, wall_time,
 *    elapsed, duration, took, latency, timestamp, request id, request_id,
 *    requestid, trace_id, traceid, chunk id, session id), with ':' or '='
 *    (or a space for "took" and "session id"), quotes allowed: numbers (a list of them too, "PIDs: 1, 2"),
 *    with a unit, or an id of letters, digits, '-' and '_' for the id keys;
 *  - durations: a number followed by ms, us, µs, ns, s, sec, secs, second,
 *    seconds, millisecond(s) after a space or '(' ("done in 0.53s");
 *  - temp names: a name right under /tmp/ or /var/tmp/ that ends in 6 or
 *    more letters and digits after '.', '-' or '_' (or after "tmp") with a
 *    digit or a capital among them (mktemp, Python's tempfile).
 * Nothing else: "ls a" and "ls b" give different results, and so do two
 * outputs whose real content differs.
 */
#ifndef LG_VOLATILE_H
#define LG_VOLATILE_H

#include <stddef.h>

/*
 * Calls emit with the input's bytes in order, each masked run replaced by
 * its placeholder ("<time>", "<n>", "<id>", "<tmp>", "<addr>", "<uuid>").
 */
void lg_volatile_scan(const char *p, size_t n,
		      void (*emit)(void *ctx, const char *s, size_t k),
		      void *ctx);

/* The masked text into out (cut to size, NUL-terminated); its length. */
size_t lg_volatile_mask(const char *p, size_t n, char *out, size_t size);

#endif
