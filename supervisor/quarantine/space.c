// SPDX-License-Identifier: MIT
/*
 * What keeping may take of a disk (quarantine.h, lg_quarantine_limits):
 * the free-space floor per filesystem, all sessions' total, and older
 * sessions dropped to stay above the floor.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>

#include "lib/clock.h"
#include "lib/log.h"
#include "index.h"
#include "quarantine_int.h"
#include "store/state.h"

#define SPACE_MS 100 /* a filesystem's free space is read this often */
#define EVICT_EVERY_MS 10000 /* older sessions are looked at this often */
#define EVICT_MIN_AGE_NS (600LL * 1000000000LL) /* surely ended by then */

/* r's filesystem read again: free space and the floor. */
static int read_space(struct lg_quarantine *q, struct lg_qroot *r, uint64_t now)
{
	struct statvfs v;
	uint64_t total, floor;

	if (statvfs(r->path, &v) < 0)
		return -errno;
	total = (uint64_t)v.f_blocks * v.f_frsize;
	floor = (uint64_t)((double)total * q->lim.min_free_fraction);
	if (q->lim.min_free < floor)
		floor = q->lim.min_free;
	r->avail = (uint64_t)v.f_bavail * v.f_frsize;
	r->floor = floor;
	r->since = 0;
	r->read_ms = now;
	return 0;
}

/*
 * What the other sessions of the state dir took by copies (max_total's
 * measure: their links hold blocks that were used already), read once.
 */
static uint64_t others(struct lg_quarantine *q)
{
	struct lgq_held *h = NULL;
	size_t n;
	uint64_t sum = 0;

	if (q->others >= 0)
		return (uint64_t)q->others;
	n = lgq_sessions(q->state_dir, &h);
	for (size_t i = 0; i < n; i++)
		if (strcmp(h[i].id, q->session) != 0)
			sum += h[i].copied;
	free(h);
	q->others = (int64_t)sum;
	return sum;
}

/*
 * Older sessions' entries dropped to make room, oldest first: never a
 * blocked session's (its trip is what an operator restores), never one
 * that runs (its state says so, or an entry in the last EVICT_MIN_AGE_NS),
 * never this one's. At most every EVICT_EVERY_MS. True when something
 * went.
 */
static bool evict(struct lg_quarantine *q, uint64_t now)
{
	struct lgq_held *h = NULL;
	int64_t cut = lg_real_ns() - EVICT_MIN_AGE_NS;
	bool any = false;
	size_t n;

	if (q->evicted_ms && now - q->evicted_ms < EVICT_EVERY_MS)
		return false;
	q->evicted_ms = now;
	n = lgq_sessions(q->state_dir, &h);
	for (size_t i = 0; i < n; i++) {
		uint64_t freed = 0;

		if (h[i].blocked || h[i].newest_ns > cut ||
		    strcmp(h[i].id, q->session) == 0 ||
		    lg_state_running(q->state_dir, h[i].id))
			continue;
		if (lgq_drop(q->state_dir, h[i].id, &freed) == 0) {
			lg_warn("quarantine: dropped what session %s kept (%llu bytes) to stay above the free-space floor",
				h[i].id, (unsigned long long)freed);
			any = true;
		}
	}
	free(h);
	if (any)
		q->others = -1;
	return any;
}

/*
 * Is there room on r's filesystem for size more bytes (a link or a
 * reflink: space the removal or the truncation would have freed; a copy:
 * new space, which max_total counts too)? 0, or -EDQUOT below the floor,
 * -EOVERFLOW past max_total, once older sessions' entries are dropped.
 */
int lg_quarantine_room(struct lg_quarantine *q, struct lg_qroot *r,
		       uint64_t size, bool copy)
{
	uint64_t now = lg_mono_ms();

	for (int pass = 0; pass < 2; pass++) {
		bool floor_ok, total_ok;

		if ((!r->read_ms || now - r->read_ms >= SPACE_MS || pass) &&
		    read_space(q, r, now) < 0)
			return 0; /* not known: kept, as before */
		floor_ok = r->avail >= r->since &&
			   r->avail - r->since >= r->floor &&
			   r->avail - r->since - r->floor >= r->linked + size;
		total_ok = !q->lim.max_total ||
			   others(q) + q->copied + (copy ? size : 0) <=
				   q->lim.max_total;
		if (floor_ok && total_ok)
			return 0;
		if (pass || !evict(q, now))
			return floor_ok ? -EOVERFLOW : -EDQUOT;
	}
	return -EDQUOT;
}

/*
 * What an entry of size bytes takes of its root's filesystem: a link (or
 * a reflink) holds blocks, a copy took them since the free space was read.
 */
void lg_quarantine_account(struct lg_quarantine *q, uint64_t size, bool link)
{
	struct lg_qroot *r = q->last_root;

	if (!r)
		return;
	if (link)
		r->linked += size;
	else
		r->since += size;
}
