// SPDX-License-Identifier: MIT
/*
 * lgctl's side of the quarantine (quarantine.h): restore puts what a
 * session kept back at its paths, never over anything that is there
 * again; list shows what each session holds; gc removes what is old.
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

struct entry {
	long long n, time_ns, atime_ns, mtime_ns, size;
	bool dir;
	unsigned mode, uid, gid;
	char *path, *kept, *dest;
	json_t *xattrs; /* a directory's {"name":"hex value"}, or NULL */
	bool made; /* a directory this restore created */
};

struct restore {
	struct entry *e;
	size_t n;
	const char *to;
	bool dry;
	unsigned restored, conflicts, missing, failed;
};

static const char *show(const char *s)
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
static int load(struct restore *r, const char *file, char **paths,
		size_t npaths, long long since_ns)
{
	LG_AUTOFCLOSE FILE *f = fopen(file, "re");
	char line[3 * PATH_MAX];

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		json_t *o = json_loads(line, 0, NULL);
		const char *kind, *path, *kept;
		struct entry *e;
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

/* Directories first, parents before children; then files, oldest first. */
static int order(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;

	if (x->dir != y->dir)
		return x->dir ? -1 : 1;
	if (x->dir)
		return strcmp(x->path, y->path);
	return x->n < y->n ? -1 : x->n > y->n;
}

/*
 * Of several entries for one path, the oldest is put back: the path as it
 * was before the session (a later one holds what the session itself wrote
 * there, then replaced or removed). The later ones are named.
 */
static bool superseded(const struct restore *r, size_t i)
{
	for (size_t k = 0; k < r->n; k++)
		if (k != i && r->e[k].dir == r->e[i].dir &&
		    r->e[k].n < r->e[i].n &&
		    strcmp(r->e[k].path, r->e[i].path) == 0)
			return true;
	return false;
}

static int mkdirs(char *path, bool dry)
{
	for (char *p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (!dry && mkdir(path, 0755) < 0 && errno != EEXIST) {
			*p = '/';
			return -errno;
		}
		*p = '/';
	}
	return 0;
}

static void set_meta(const struct entry *e)
{
	struct timespec ts[2] = {
		{ e->atime_ns / 1000000000LL, e->atime_ns % 1000000000LL },
		{ e->mtime_ns / 1000000000LL, e->mtime_ns % 1000000000LL }
	};

	if (geteuid() == 0 && fchownat(AT_FDCWD, e->dest, e->uid, e->gid,
				       AT_SYMLINK_NOFOLLOW) < 0) {
		/* the owner could not be given back: mode and times still are */
	}
	fchmodat(AT_FDCWD, e->dest, e->mode & 07777, 0);
	if (e->xattrs) { /* a directory's, as recorded */
		const char *name;
		json_t *v;

		json_object_foreach(e->xattrs, name, v)
		{
			const char *hex = json_string_value(v);
			size_t n = hex ? strlen(hex) / 2 : 0;
			unsigned char *b = malloc(n + 1);

			for (size_t k = 0; b && k < n; k++)
				sscanf(hex + 2 * k, "%2hhx", &b[k]);
			if (b && lsetxattr(e->dest, name, b, n, 0) < 0) {
				/* security.* without the right: the rest goes */
			}
			free(b);
		}
	}
	utimensat(AT_FDCWD, e->dest, ts, AT_SYMLINK_NOFOLLOW);
}

/* A copy of kept at dest (--to on another filesystem). */
static int copy_file(const struct entry *e)
{
	LG_AUTOCLOSE int in = open(e->kept, O_RDONLY | O_CLOEXEC);
	LG_AUTOCLOSE int out = -1;
	char buf[65536];
	ssize_t n;

	if (in < 0)
		return -errno;
	out = open(e->dest, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (out < 0)
		return -errno;
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n)
			return -EIO;
	if (n < 0)
		return -errno;
	{ /* the extended attributes go with the content */
		char names[65536];
		ssize_t ln = flistxattr(in, names, sizeof(names));

		for (ssize_t o = 0; ln > 0 && o < ln;
		     o += (ssize_t)strlen(names + o) + 1) {
			ssize_t v = fgetxattr(in, names + o, buf, sizeof(buf));

			if (v >= 0 &&
			    fsetxattr(out, names + o, buf, (size_t)v, 0) < 0) {
				/* not settable here: the rest goes */
			}
		}
	}
	return 0;
}

static void put_file(struct restore *r, struct entry *e)
{
	struct stat st;
	int err = 0;

	if (lstat(e->kept, &st) < 0) {
		printf("missing   %s (no longer in the quarantine: restored or collected)\n",
		       show(e->path));
		r->missing++;
		return;
	}
	if (lstat(e->dest, &st) == 0) {
		printf("conflict  %s exists: left as it is (restore it elsewhere with --to DIR)\n",
		       show(e->dest));
		r->conflicts++;
		return;
	}
	if (r->dry) {
		printf("would restore %s (%lld bytes)\n", show(e->dest),
		       e->size);
		r->restored++;
		return;
	}
	err = mkdirs(e->dest, false);
	/* moved back (never over anything), or copied to --to elsewhere */
	if (!err && renameat2(AT_FDCWD, e->kept, AT_FDCWD, e->dest,
			      RENAME_NOREPLACE) < 0) {
		err = -errno;
		if (err == -EXDEV)
			err = copy_file(e);
		else if (err == -EEXIST) {
			printf("conflict  %s exists: left as it is\n",
			       show(e->dest));
			r->conflicts++;
			return;
		}
	}
	if (err) {
		printf("failed    %s: %s\n", show(e->dest), strerror(-err));
		r->failed++;
		return;
	}
	set_meta(e);
	printf("restored  %s (%lld bytes)\n", show(e->dest), e->size);
	r->restored++;
}

static void put_dir(struct restore *r, struct entry *e)
{
	struct stat st;

	if (lstat(e->dest, &st) == 0) {
		if (!S_ISDIR(st.st_mode)) {
			printf("conflict  %s exists and is not a directory\n",
			       show(e->dest));
			r->conflicts++;
		}
		return; /* there again: its files go into it */
	}
	if (r->dry) {
		printf("would make %s/\n", show(e->dest));
		return;
	}
	if (mkdirs(e->dest, false) < 0 || mkdir(e->dest, 0700) < 0) {
		printf("failed    %s/: %s\n", show(e->dest), strerror(errno));
		r->failed++;
		return;
	}
	e->made = true;
}

static int audit_restore(const char *dir, const char *id,
			 const struct restore *r)
{
	struct lg_json j = { 0 };
	char audit[PATH_MAX + 16], t[40], sum[256];
	const char *user = getenv("SUDO_USER") ? getenv("SUDO_USER") :
						 getenv("USER");
	int e;

	lg_time_iso(lg_real_ns(), t, sizeof(t));
	snprintf(
		sum, sizeof(sum),
		"restore by operator: %u restored, %u conflicts, %u missing, %u failed",
		r->restored, r->conflicts, r->missing, r->failed);
	lg_json_begin(&j);
	lg_json_str(&j, "time", t);
	lg_json_str(&j, "session", id);
	lg_json_str(&j, "event", "restore");
	lg_json_str(&j, "by", user ? user : "?");
	if (r->to)
		lg_json_str(&j, "to", r->to);
	lg_json_int(&j, "restored", r->restored);
	lg_json_int(&j, "conflicts", r->conflicts);
	lg_json_int(&j, "missing", r->missing);
	lg_json_int(&j, "failed", r->failed);
	lg_json_str(&j, "summary", sum);
	snprintf(audit, sizeof(audit), "%s/audit.jsonl", dir);
	e = lg_audit_append(audit, lg_json_end(&j), true);
	lg_json_free(&j);
	return e;
}

static void restore_usage(FILE *f)
{
	fprintf(f,
		"Usage: lgctl restore SESSION [--dry-run] [--since DUR] [--to DIR] [PATH...]\n"
		"Puts back what the session removed of pre-existing data (its quarantine):\n"
		"only PATHs (and what is under them) when given, only what was removed in the\n"
		"last DUR with --since, under DIR instead of in place with --to. Nothing that\n"
		"exists is ever overwritten: such a path is reported as a conflict.\n");
}

int lgctl_restore(const char *dir, int argc, char **argv)
{
	static const struct option lo[] = {
		{ "dry-run", no_argument, NULL, 'n' },
		{ "since", required_argument, NULL, 's' },
		{ "to", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct restore r = { 0 };
	char index[PATH_MAX + 300];
	long long since_ns = 0;
	const char *id;
	int c, e;

	optind = 0; /* getopt starts again (lgctl's own options were read) */
	while ((c = getopt_long(argc, argv, "ns:t:h", lo, NULL)) != -1) {
		unsigned long ms;

		switch (c) {
		case 'n':
			r.dry = true;
			break;
		case 's':
			if (lg_parse_duration_ms(optarg, &ms) < 0) {
				fprintf(stderr,
					"lgctl restore: --since '%s' is not a duration (e.g. 10m, 2h)\n",
					optarg);
				return 2;
			}
			since_ns = lg_real_ns() - (long long)ms * 1000000LL;
			break;
		case 't':
			r.to = optarg;
			break;
		case 'h':
			restore_usage(stdout);
			return 0;
		default:
			restore_usage(stderr);
			return 2;
		}
	}
	if (optind >= argc) {
		restore_usage(stderr);
		return 2;
	}
	id = argv[optind++];
	if (!lg_session_id_valid(id)) {
		fprintf(stderr, "lgctl: '%s' is not a valid session id\n", id);
		return 2;
	}
	if (r.to && r.to[0] != '/') {
		fprintf(stderr,
			"lgctl restore: --to needs an absolute directory\n");
		return 2;
	}
	snprintf(index, sizeof(index), "%s/quarantine/%s.jsonl", dir, id);
	e = load(&r, index, argv + optind, (size_t)(argc - optind), since_ns);
	if (e == -ENOENT) {
		fprintf(stderr,
			"lgctl: session '%s' has nothing in the quarantine (no %s)\n",
			id, show(index));
		return 1;
	}
	if (e < 0) {
		fprintf(stderr, "lgctl: cannot read %s: %s\n", show(index),
			strerror(-e));
		return 2;
	}
	qsort(r.e, r.n, sizeof(*r.e), order);
	for (size_t i = 0; i < r.n; i++) {
		struct entry *en = &r.e[i];

		if (asprintf(&en->dest, "%s%s", r.to ? r.to : "", en->path) < 0)
			return 2;
	}
	for (size_t i = 0; i < r.n; i++) {
		if (superseded(&r, i)) {
			printf("later     %s: a later version stays in the quarantine (%s); the oldest is restored\n",
			       show(r.e[i].path),
			       show(r.e[i].kept ? r.e[i].kept : "metadata"));
			continue;
		}
		if (r.e[i].dir)
			put_dir(&r, &r.e[i]);
		else
			put_file(&r, &r.e[i]);
	}
	/* the directories' own metadata last, deepest first */
	for (size_t i = r.n; i-- > 0;)
		if (r.e[i].made)
			set_meta(&r.e[i]);
	printf("%s%u file(s) %srestored, %u conflict(s), %u missing, %u failed\n",
	       r.dry ? "dry run: " : "", r.restored, r.dry ? "would be " : "",
	       r.conflicts, r.missing, r.failed);
	if (!r.dry && r.n)
		audit_restore(dir, id, &r);
	for (size_t i = 0; i < r.n; i++) {
		free(r.e[i].path);
		free(r.e[i].kept);
		free(r.e[i].dest);
		json_decref(r.e[i].xattrs);
	}
	free(r.e);
	return r.conflicts || r.missing || r.failed ? 1 : 0;
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
	struct restore r = { 0 };
	char index[PATH_MAX + 300], buf[64];
	int e;

	memset(h, 0, sizeof(*h));
	snprintf(h->id, sizeof(h->id), "%s", id);
	snprintf(index, sizeof(index), "%s/quarantine/%s.jsonl", dir, id);
	e = load(&r, index, NULL, 0, 0);
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
	for (size_t i = 0; i < r.n; i++) {
		free(r.e[i].path);
		free(r.e[i].kept);
		json_decref(r.e[i].xattrs);
	}
	free(r.e);
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
		printf("the quarantine is empty (%s/quarantine)\n", show(dir));
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
		printf("%-32s %6u %5u %10s %8s %8s %s\n", show(h[i].id),
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
	struct restore r = { 0 };
	char index[PATH_MAX + 300];
	int e;

	snprintf(index, sizeof(index), "%s/quarantine/%s.jsonl", dir, id);
	e = load(&r, index, NULL, 0, 0);
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
	for (size_t i = 0; i < r.n; i++) {
		free(r.e[i].path);
		free(r.e[i].kept);
		json_decref(r.e[i].xattrs);
	}
	free(r.e);
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
			       show(h[i].id));
			kept_blocked++;
			continue;
		}
		if (drop(dir, h[i].id) == 0) {
			char size[32];

			lg_human_bytes(h[i].bytes, size, sizeof(size));
			printf("removed   %s: %u file(s), %s\n", show(h[i].id),
			       h[i].files, size);
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
