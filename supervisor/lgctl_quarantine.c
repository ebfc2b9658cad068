// SPDX-License-Identifier: MIT
/*
 * lgctl's side of the quarantine (quarantine.h): the index reader, and
 * `lgctl quarantine list|gc` (what each session holds; what is old goes).
 * lgctl_restore.c puts entries back.
 */
#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <getopt.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "audit.h"
#include "cleanup.h"
#include "clock.h"
#include "config.h"
#include "lgctl.h"
#include "state.h"
#include "termtext.h"
#include "text.h"
const char *lgq_show(const char *s)
{
	static char buf[4][PATH_MAX * 2];
	static int k;

	k = (k + 1) % 4;
	lg_term_escape(buf[k], sizeof(buf[k]), s, strlen(s));
	return buf[k];
}

static bool under(const char *path, const char *top)
{
	size_t n = strlen(top);

	while (n > 1 && top[n - 1] == '/')
		n--;
	return strncmp(path, top, n) == 0 &&
	       (path[n] == '/' || path[n] == '\0' || n == 1);
}

/* The index's entries wanted: by path (or all), since a time. */
int lgq_load(struct lgq_index *r, const char *file, char **paths, size_t npaths,
	     long long since_ns)
{
	LG_AUTOFCLOSE FILE *f = fopen(file, "re");
	char line[3 * PATH_MAX];

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		json_t *o = json_loads(line, 0, NULL);
		const char *kind, *path, *kept;
		struct lgq_entry *e;
		bool want = npaths == 0;

		if (!o)
			continue; /* a line cut by a crash: skipped */
		kind = json_string_value(json_object_get(o, "kind"));
		path = json_string_value(json_object_get(o, "path"));
		kept = json_string_value(json_object_get(o, "kept"));
		for (size_t i = 0; i < npaths && !want; i++)
			want = under(path ? path : "", paths[i]);
		if (!kind || !path || path[0] != '/' ||
		    (strcmp(kind, "dir") && !kept) || !want ||
		    json_integer_value(json_object_get(o, "time_ns")) <
			    since_ns) {
			json_decref(o);
			continue;
		}
		e = realloc(r->e, (r->n + 1) * sizeof(*e));
		if (!e) {
			json_decref(o);
			return -ENOMEM;
		}
		r->e = e;
		e = &r->e[r->n++];
		memset(e, 0, sizeof(*e));
		e->n = json_integer_value(json_object_get(o, "n"));
		e->time_ns = json_integer_value(json_object_get(o, "time_ns"));
		e->atime_ns =
			json_integer_value(json_object_get(o, "atime_ns"));
		e->mtime_ns =
			json_integer_value(json_object_get(o, "mtime_ns"));
		e->size = json_integer_value(json_object_get(o, "size"));
		e->mode = (unsigned)json_integer_value(
			json_object_get(o, "mode"));
		e->uid =
			(unsigned)json_integer_value(json_object_get(o, "uid"));
		e->gid =
			(unsigned)json_integer_value(json_object_get(o, "gid"));
		e->dir = strcmp(kind, "dir") == 0;
		e->path = strdup(path);
		e->kept = kept ? strdup(kept) : NULL;
		e->xattrs = json_incref(json_object_get(o, "xattrs"));
		json_decref(o);
		if (!e->path || (kept && !e->kept))
			return -ENOMEM;
	}
	return 0;
}

void lgq_free(struct lgq_index *x)
{
	for (size_t i = 0; i < x->n; i++) {
		free(x->e[i].path);
		free(x->e[i].kept);
		free(x->e[i].dest);
		json_decref(x->e[i].xattrs);
	}
	free(x->e);
	x->e = NULL;
	x->n = 0;
}

/* What one session's index says it holds. */
struct held {
	char id[200];
	unsigned files, dirs;
	uint64_t bytes;
	long long newest_ns, oldest_ns;
	bool blocked;
};

static int held_of(const char *dir, const char *id, struct held *h)
{
	struct lgq_index r = { 0 };
	char index[PATH_MAX + 300], buf[64];
	int e;

	memset(h, 0, sizeof(*h));
	snprintf(h->id, sizeof(h->id), "%s", id);
	snprintf(index, sizeof(index), "%s/quarantine/%s.jsonl", dir, id);
	e = lgq_load(&r, index, NULL, 0, 0);
	for (size_t i = 0; i < r.n; i++) {
		struct stat st;

		if (r.e[i].dir) {
			h->dirs++;
		} else if (lstat(r.e[i].kept, &st) == 0) {
			h->files++;
			h->bytes += (uint64_t)st.st_size;
		}
		if (!h->oldest_ns || r.e[i].time_ns < h->oldest_ns)
			h->oldest_ns = r.e[i].time_ns;
		if (r.e[i].time_ns > h->newest_ns)
			h->newest_ns = r.e[i].time_ns;
	}
	h->blocked = lg_state_killed(dir, id, buf, sizeof(buf)) == 1;
	lgq_free(&r);
	return e;
}

/* The sessions with an index, oldest newest entry first. */
static size_t sessions(const char *dir, struct held **out)
{
	char qdir[PATH_MAX + 16];
	struct held *h = NULL;
	size_t n = 0;
	struct dirent *d;
	DIR *dd;

	snprintf(qdir, sizeof(qdir), "%s/quarantine", dir);
	dd = opendir(qdir);
	while (dd && (d = readdir(dd))) {
		size_t len = strlen(d->d_name);
		char id[200];
		struct held *m;

		if (len <= 6 || len - 6 >= sizeof(id) ||
		    strcmp(d->d_name + len - 6, ".jsonl"))
			continue;
		memcpy(id, d->d_name, len - 6);
		id[len - 6] = '\0';
		if (!lg_session_id_valid(id))
			continue;
		m = realloc(h, (n + 1) * sizeof(*h));
		if (!m)
			break;
		h = m;
		held_of(dir, id, &h[n++]);
	}
	if (dd)
		closedir(dd);
	for (size_t i = 1; i < n; i++) /* by age of the newest entry */
		for (size_t k = i; k > 0 && h[k].newest_ns < h[k - 1].newest_ns;
		     k--) {
			struct held t = h[k];

			h[k] = h[k - 1];
			h[k - 1] = t;
		}
	*out = h;
	return n;
}

static void age(long long ns, char *out, size_t size)
{
	long long s = (lg_real_ns() - ns) / 1000000000LL;

	if (s < 120)
		snprintf(out, size, "%llds", s);
	else if (s < 7200)
		snprintf(out, size, "%lldm", s / 60);
	else if (s < 2 * 86400)
		snprintf(out, size, "%lldh", s / 3600);
	else
		snprintf(out, size, "%lldd", s / 86400);
}

static int list(const char *dir)
{
	struct held *h;
	size_t n = sessions(dir, &h);
	uint64_t total = 0;

	if (!n) {
		printf("the quarantine is empty (%s/quarantine)\n",
		       lgq_show(dir));
		free(h);
		return 0;
	}
	printf("%-32s %6s %5s %10s %8s %8s %s\n", "SESSION", "FILES", "DIRS",
	       "SIZE", "OLDEST", "NEWEST", "STATE");
	for (size_t i = 0; i < n; i++) {
		char size[32], a[16], b[16];

		lg_human_bytes(h[i].bytes, size, sizeof(size));
		age(h[i].oldest_ns, a, sizeof(a));
		age(h[i].newest_ns, b, sizeof(b));
		printf("%-32s %6u %5u %10s %8s %8s %s\n", lgq_show(h[i].id),
		       h[i].files, h[i].dirs, size, a, b,
		       h[i].blocked ? "blocked" : "-");
		total += h[i].bytes;
	}
	{
		char size[32];

		lg_human_bytes(total, size, sizeof(size));
		printf("%zu session(s), %s held\n", n, size);
	}
	free(h);
	return 0;
}

/* Removes what session id kept, its folders and its index. */
static int drop(const char *dir, const char *id)
{
	struct lgq_index r = { 0 };
	char index[PATH_MAX + 300];
	int e;

	snprintf(index, sizeof(index), "%s/quarantine/%s.jsonl", dir, id);
	e = lgq_load(&r, index, NULL, 0, 0);
	for (size_t i = 0; i < r.n; i++) {
		char folder[PATH_MAX];
		char *slash;

		if (!r.e[i].kept)
			continue;
		unlink(r.e[i].kept);
		/* <root>/<session>/<bucket>/<n>: the bucket, then the session's */
		snprintf(folder, sizeof(folder), "%s", r.e[i].kept);
		for (int up = 0; up < 2 && (slash = strrchr(folder, '/'));
		     up++) {
			*slash = '\0';
			rmdir(folder); /* not empty yet: another entry's */
		}
	}
	lgq_free(&r);
	if (e == 0 && unlink(index) < 0)
		e = -errno;
	return e;
}

static int gc(const char *dir, const struct lg_config *cfg, int argc,
	      char **argv)
{
	static const struct option lo[] = {
		{ "max-age", required_argument, NULL, 'a' },
		{ "max-bytes", required_argument, NULL, 'b' },
		{ "force", no_argument, NULL, 'f' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t max_age = cfg->quarantine_max_age_ms, max_bytes = 0, total = 0;
	unsigned long ms;
	bool force = false;
	struct held *h;
	size_t n, dropped = 0, kept_blocked = 0;
	int c;

	optind = 0;
	while ((c = getopt_long(argc, argv, "a:b:f", lo, NULL)) != -1) {
		switch (c) {
		case 'a':
			if (lg_parse_duration_ms(optarg, &ms) < 0) {
				fprintf(stderr,
					"lgctl quarantine gc: --max-age '%s' is not a duration (e.g. 12h, 7d)\n",
					optarg);
				return 2;
			}
			max_age = ms;
			break;
		case 'b':
			if (lg_parse_bytes(optarg, &max_bytes) < 0) {
				fprintf(stderr,
					"lgctl quarantine gc: --max-bytes '%s' is not a size (e.g. 500M, 2G)\n",
					optarg);
				return 2;
			}
			break;
		case 'f':
			force = true;
			break;
		default:
			return 2;
		}
	}
	n = sessions(dir, &h);
	for (size_t i = 0; i < n; i++)
		total += h[i].bytes;
	for (size_t i = 0; i < n; i++) { /* oldest first */
		bool named = optind >= argc, old, over;

		for (int k = optind; k < argc && !named; k++)
			named = strcmp(argv[k], h[i].id) == 0;
		old = max_age && lg_real_ns() - h[i].newest_ns >
					 (long long)max_age * 1000000LL;
		over = max_bytes && total > max_bytes;
		if (!named || (!old && !over && optind >= argc))
			continue;
		if (h[i].blocked && !force) {
			printf("kept      %s: the session is blocked (lgctl reset it first, or --force)\n",
			       lgq_show(h[i].id));
			kept_blocked++;
			continue;
		}
		if (drop(dir, h[i].id) == 0) {
			char size[32];

			lg_human_bytes(h[i].bytes, size, sizeof(size));
			printf("removed   %s: %u file(s), %s\n",
			       lgq_show(h[i].id), h[i].files, size);
			total -= h[i].bytes;
			dropped++;
		}
	}
	printf("%zu session(s) removed from the quarantine, %zu blocked kept\n",
	       dropped, kept_blocked);
	free(h);
	return 0;
}

int lgctl_quarantine(const char *dir, const struct lg_config *cfg, int argc,
		     char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "list") == 0 && argc == 2)
		return list(dir);
	if (argc >= 2 && strcmp(argv[1], "gc") == 0)
		return gc(dir, cfg, argc - 1, argv + 1);
	fprintf(stderr,
		"Usage: lgctl quarantine list\n"
		"       lgctl quarantine gc [--max-age DUR] [--max-bytes SIZE] [--force] [SESSION...]\n"
		"gc removes the sessions whose newest entry is older than max-age\n"
		"([quarantine] max_age, 7d), then the oldest while all together hold more\n"
		"than max-bytes; named SESSIONs are removed whatever their age; a blocked\n"
		"session only with --force.\n");
	return 2;
}
