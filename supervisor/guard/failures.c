// SPDX-License-Identifier: MIT
/*
 * Failures: an agent that keeps failing to write, delete, rename or
 * truncate the same path is patching blind. Each failed attempt on a path
 * adds one, each success takes one off (floor 0): a path that failed three
 * times and then worked once is still a suspect. The attempt that makes
 * the count reach max trips, and that path starts over.
 *
 * The model is told to rewrite the whole file (seed 004) at the path's
 * steer level: with action warn, when it trips; with deny or kill, one
 * failure before (a note, write_failures_near), so it hears that before the
 * action (issue 28's ladder); at steer_at when that is set.
 *
 * Not failures: ENOENT from unlink or rmdir (the target is already gone,
 * which is what the op wanted; that is a loop for same_target to see, not
 * a write that fails) and EINTR (the op did not run). They leave the count
 * as it is. Nor is anything inside a repository's .git/: git probes and
 * rewrites its own refs and logs there (ENOENT on .git/logs/ORIG_HEAD is
 * routine), which is no agent patching a file. Nor are devices and the
 * kernel's files (/dev, /proc, /sys), which the shim does not report
 * either: a shell without a terminal fails to open /dev/tty (ENXIO) at
 * each command Codex runs, seen by the eBPF observer, and a note telling
 * the model to write /dev/tty again in one go would be nonsense.
 *
 * Only paths with a count above 0 are kept, at most LG_FAILURES_MAX_PATHS
 * of them; past that the one touched least recently is dropped. A path
 * that is the least recent of that many failing paths is not failing
 * again and again.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/text.h"
#include "detectors.h"

#define NBUCKETS (2 * LG_FAILURES_MAX_PATHS) /* a power of 2 */

struct fl_node {
	struct fl_node *next; /* bucket chain */
	struct fl_node *newer, *older; /* recency list */
	unsigned count;
	char path[];
};

struct lg_failures {
	struct lg_failures_cfg cfg;
	struct fl_node *buckets[NBUCKETS];
	struct fl_node *newest, *oldest;
	size_t nodes;
};

struct lg_failures *lg_failures_new(const struct lg_failures_cfg *cfg)
{
	struct lg_failures *d = calloc(1, sizeof(*d));

	if (!d)
		return NULL;
	d->cfg = *cfg;
	return d;
}

void lg_failures_free(struct lg_failures *d)
{
	struct fl_node *n, *older;

	if (!d)
		return;
	for (n = d->newest; n; n = older) {
		older = n->older;
		free(n);
	}
	free(d);
}

size_t lg_failures_tracked(const struct lg_failures *d)
{
	return d->nodes;
}

static size_t bucket(const char *path)
{
	return lg_digest(path, strlen(path)) & (NBUCKETS - 1);
}

static struct fl_node **find(struct lg_failures *d, const char *path)
{
	struct fl_node **pp = &d->buckets[bucket(path)];

	while (*pp && strcmp((*pp)->path, path) != 0)
		pp = &(*pp)->next;
	return pp;
}

unsigned lg_failures_count(const struct lg_failures *d, const char *path)
{
	const struct fl_node *n = d->buckets[bucket(path)];

	while (n && strcmp(n->path, path) != 0)
		n = n->next;
	return n ? n->count : 0;
}

static void unlink_recency(struct lg_failures *d, struct fl_node *n)
{
	if (n->newer)
		n->newer->older = n->older;
	else
		d->newest = n->older;
	if (n->older)
		n->older->newer = n->newer;
	else
		d->oldest = n->newer;
	n->newer = n->older = NULL;
}

static void push_newest(struct lg_failures *d, struct fl_node *n)
{
	n->older = d->newest;
	n->newer = NULL;
	if (d->newest)
		d->newest->newer = n;
	else
		d->oldest = n;
	d->newest = n;
}

/* pp points at n's link in its bucket chain. */
static void drop(struct lg_failures *d, struct fl_node **pp)
{
	struct fl_node *n = *pp;

	*pp = n->next;
	unlink_recency(d, n);
	free(n);
	d->nodes--;
}

static void evict_oldest(struct lg_failures *d)
{
	drop(d, find(d, d->oldest->path));
}

/* Whether this result counts as a failure, a success, or neither. */
enum outcome { NEUTRAL, FAILED, SUCCEEDED };

static bool in_git_dir(const char *p)
{
	return p && (strstr(p, "/.git/") || strncmp(p, ".git/", 5) == 0);
}

/* A device or a kernel file, as the shim's own filter has them. */
static bool kernel_file(const char *p)
{
	return p &&
	       (strncmp(p, "/dev/", 5) == 0 || strncmp(p, "/proc/", 6) == 0 ||
		strncmp(p, "/sys/", 5) == 0);
}

static enum outcome outcome_of(const struct lg_event *ev)
{
	/* errno, or -errno as syscalls spell it */
	int e = ev->result < 0 ? -ev->result : ev->result;

	if (in_git_dir(ev->target))
		return NEUTRAL; /* git's own bookkeeping */
	if (kernel_file(ev->target))
		return NEUTRAL; /* a terminal, a device, /proc: no file patched */

	switch (ev->op) {
	case LG_OP_UNLINK:
	case LG_OP_RMDIR:
		if (e == ENOENT)
			return NEUTRAL;
		break;
	case LG_OP_TRUNCATE:
	case LG_OP_SHRINK:
	case LG_OP_OPEN_TRUNC:
	case LG_OP_WRITE:
	case LG_OP_RENAME:
		break;
	default:
		return NEUTRAL; /* not an op on a path */
	}
	if (e == 0)
		return SUCCEEDED;
	return e == EINTR ? NEUTRAL : FAILED;
}

static const char *errno_name(int e, char *buf, size_t size)
{
	const char *name = strerrorname_np(e);

	if (name)
		return name;
	snprintf(buf, size, "errno %d", e);
	return buf;
}

/* What lgrun does at the rule's action, for a summary. */
static const char *deed(enum lg_verdict v)
{
	/* the failed write has happened: a deny refuses nothing more */
	return v == LG_DENY ? "records a refusal (the write failed already)" :
			      lg_verdict_deed(v);
}

/*
 * The failure at the steer level (failures_near) or at max
 * (write_failures); either is the note when the level is max.
 */
static void report(const struct lg_failures *d, const struct fl_node *n,
		   int result, unsigned level, struct lg_findings *out)
{
	char shown[320], ebuf[32];
	const char *e = errno_name(result, ebuf, sizeof(ebuf));
	struct lg_finding *f;

	/* Bounded, so a long path cannot push the errno out of the summary. */
	lg_preview(n->path, shown, sizeof(shown), 0);
	if (n->count < d->cfg.max) {
		f = lg_findings_note(
			out, "failures", "write_failures_near",
			"%u failed writes on %s in a row (last: %s); at %u, lgrun %s",
			n->count, shown, e, d->cfg.max, deed(d->cfg.action));
		if (f) {
			f->then = d->cfg.action;
			f->left = d->cfg.max - n->count;
		}
		return;
	}
	f = lg_findings_add(
		out, d->cfg.action, "failures", "write_failures",
		"write_failures, %u failed writes on %s in a row (last: %s)",
		n->count, shown, e);
	if (f) {
		f->note = level ==
			  d->cfg.max; /* seed 004: told when it fires */
		f->then = d->cfg.action;
	}
}

enum lg_verdict lg_failures_feed(struct lg_failures *d,
				 const struct lg_event *ev,
				 const struct lg_guard_env *env,
				 struct lg_findings *out)
{
	const char *path = ev->target ? ev->target : "";
	enum outcome oc;
	struct fl_node **pp, *n;
	unsigned level;
	size_t len;

	(void)env;
	if (!d->cfg.max || ev->kind != LG_EV_OP_RESULT)
		return LG_ALLOW;
	oc = outcome_of(ev);
	if (oc == NEUTRAL)
		return LG_ALLOW;
	pp = find(d, path);
	n = *pp;
	if (oc == SUCCEEDED) {
		if (n && --n->count == 0)
			drop(d, pp);
		return LG_ALLOW;
	}
	if (n) {
		unlink_recency(d, n);
		push_newest(d, n);
	} else {
		if (d->nodes >= LG_FAILURES_MAX_PATHS) {
			evict_oldest(d);
			pp = find(d, path); /* the chain may have changed */
		}
		len = strlen(path);
		n = malloc(sizeof(*n) + len + 1);
		if (!n)
			return LG_ALLOW;
		memcpy(n->path, path, len + 1);
		n->count = 0;
		n->next = NULL;
		*pp = n;
		push_newest(d, n);
		d->nodes++;
	}
	level = lg_failures_steer_level(&d->cfg);
	if (++n->count < d->cfg.max) {
		if (n->count == level)
			report(d, n, ev->result < 0 ? -ev->result : ev->result,
			       level, out);
		return LG_ALLOW;
	}
	report(d, n, ev->result < 0 ? -ev->result : ev->result, level, out);
	drop(d, pp); /* the path starts over */
	return d->cfg.action;
}

LG_DETECTOR_DEFINE(failures);
