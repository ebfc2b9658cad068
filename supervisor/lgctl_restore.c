// SPDX-License-Identifier: MIT
/*
 * lgctl restore: what a session's quarantine holds, put back at its
 * paths, never over anything that is there again.
 */
#include <errno.h>
#include <fcntl.h>
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
struct restore {
	struct lgq_index x;
	const char *to;
	bool dry, newest;
	unsigned restored, conflicts, missing, failed, earlier;
};
/* Directories first, parents before children; then files, oldest first. */
static int order(const void *a, const void *b)
{
	const struct lgq_entry *x = a, *y = b;

	if (x->dir != y->dir)
		return x->dir ? -1 : 1;
	if (x->dir)
		return strcmp(x->path, y->path);
	return x->n < y->n ? -1 : x->n > y->n;
}

/*
 * Of several entries for one path, the oldest is put back: the path as it
 * was before the session (a later one holds what the session itself wrote
 * there, then replaced or removed). With --newest, the newest: the path as
 * it was just before its last removal. The others are named.
 */
static bool superseded(const struct restore *r, size_t i)
{
	for (size_t k = 0; k < r->x.n; k++)
		if (k != i && r->x.e[k].dir == r->x.e[i].dir &&
		    (r->newest ? r->x.e[k].n > r->x.e[i].n :
				 r->x.e[k].n < r->x.e[i].n) &&
		    strcmp(r->x.e[k].path, r->x.e[i].path) == 0)
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

static void set_meta(const struct lgq_entry *e)
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
static int copy_file(const struct lgq_entry *e)
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

static void put_file(struct restore *r, struct lgq_entry *e)
{
	struct stat st;
	int err = 0;

	if (lstat(e->kept, &st) < 0) {
		/* moved back by an earlier restore: the same inode is there */
		if (e->ino && lstat(e->dest, &st) == 0 &&
		    st.st_ino == (ino_t)e->ino && !S_ISDIR(st.st_mode)) {
			printf("earlier   %s (restored by an earlier lgctl restore)\n",
			       lgq_show(e->dest));
			r->earlier++;
			return;
		}
		printf("missing   %s (no longer in the quarantine: restored or collected)\n",
		       lgq_show(e->path));
		r->missing++;
		return;
	}
	if (lstat(e->dest, &st) == 0) {
		printf("conflict  %s exists: left as it is (restore it elsewhere with --to DIR)\n",
		       lgq_show(e->dest));
		r->conflicts++;
		return;
	}
	if (r->dry) {
		printf("would restore %s (%lld bytes)\n", lgq_show(e->dest),
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
			       lgq_show(e->dest));
			r->conflicts++;
			return;
		}
	}
	if (err) {
		printf("failed    %s: %s\n", lgq_show(e->dest), strerror(-err));
		r->failed++;
		return;
	}
	set_meta(e);
	printf("restored  %s (%lld bytes)\n", lgq_show(e->dest), e->size);
	r->restored++;
}

static void put_dir(struct restore *r, struct lgq_entry *e)
{
	struct stat st;

	if (lstat(e->dest, &st) == 0) {
		if (!S_ISDIR(st.st_mode)) {
			printf("conflict  %s exists and is not a directory\n",
			       lgq_show(e->dest));
			r->conflicts++;
		}
		return; /* there again: its files go into it */
	}
	if (r->dry) {
		printf("would make %s/\n", lgq_show(e->dest));
		return;
	}
	if (mkdirs(e->dest, false) < 0 || mkdir(e->dest, 0700) < 0) {
		printf("failed    %s/: %s\n", lgq_show(e->dest),
		       strerror(errno));
		r->failed++;
		return;
	}
	e->made = true;
}

static int audit_restore(const char *dir, const char *id,
			 const struct restore *r)
{
	struct lg_json j = { 0 };
	char audit[PATH_MAX + 16], sum[256];
	int e;

	snprintf(
		sum, sizeof(sum),
		"restore by operator: %u restored, %u conflicts, %u missing, %u failed",
		r->restored, r->conflicts, r->missing, r->failed);
	lg_audit_begin(&j, lg_real_ns(), id, NULL, NULL, 0);
	lg_json_str(&j, "event", "restore");
	lg_json_str(&j, "by", lgctl_operator());
	if (r->to)
		lg_json_str(&j, "to", r->to);
	lg_json_int(&j, "restored", r->restored);
	lg_json_int(&j, "conflicts", r->conflicts);
	lg_json_int(&j, "missing", r->missing);
	lg_json_int(&j, "failed", r->failed);
	lg_json_str(&j, "summary", sum);
	lg_audit_falco(&j, id, NULL, "restore",
		       &(struct lg_falco){ .priority = "Notice",
					   .output = sum });
	snprintf(audit, sizeof(audit), "%s/audit.jsonl", dir);
	e = lg_audit_append(audit, lg_json_end(&j), true);
	lg_json_free(&j);
	return e;
}

static void restore_usage(FILE *f)
{
	fprintf(f,
		"Usage: lgctl restore SESSION [--dry-run] [--since DUR] [--to DIR] [--newest] [PATH...]\n"
		"Puts back what the session removed of pre-existing data (its quarantine):\n"
		"only PATHs (and what is under them) when given, only what was removed in the\n"
		"last DUR with --since, under DIR instead of in place with --to. Nothing that\n"
		"exists is ever overwritten: such a path is reported as a conflict.\n"
		"Of several versions of one path, the oldest (as it was before the session)\n"
		"is put back; with --newest, the last one (as it was just before its last\n"
		"removal). The others stay in the quarantine and are named.\n");
}

int lgctl_restore(const char *dir, int argc, char **argv)
{
	static const struct option lo[] = {
		{ "dry-run", no_argument, NULL, 'n' },
		{ "since", required_argument, NULL, 's' },
		{ "to", required_argument, NULL, 't' },
		{ "newest", no_argument, NULL, 'N' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct restore r = { 0 };
	char index[PATH_MAX + 300];
	long long since_ns = 0;
	const char *id;
	int c, e;

	optind = 0; /* getopt starts again (lgctl's own options were read) */
	while ((c = getopt_long(argc, argv, "ns:t:Nh", lo, NULL)) != -1) {
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
		case 'N':
			r.newest = true;
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
	e = lgq_load(&r.x, index, argv + optind, (size_t)(argc - optind),
		     since_ns);
	if (e == -ENOENT) {
		fprintf(stderr,
			"lgctl: session '%s' has nothing in the quarantine (no %s)\n",
			id, lgq_show(index));
		return 1;
	}
	if (e < 0) {
		fprintf(stderr, "lgctl: cannot read %s: %s\n", lgq_show(index),
			strerror(-e));
		return 2;
	}
	qsort(r.x.e, r.x.n, sizeof(*r.x.e), order);
	for (size_t i = 0; i < r.x.n; i++) {
		struct lgq_entry *en = &r.x.e[i];

		if (asprintf(&en->dest, "%s%s", r.to ? r.to : "", en->path) < 0)
			return 2;
	}
	for (size_t i = 0; i < r.x.n; i++) {
		if (superseded(&r, i)) {
			printf("%s %s: %s version stays in the quarantine (%s); the %s is restored\n",
			       r.newest ? "earlier  " : "later    ",
			       lgq_show(r.x.e[i].path),
			       r.newest ? "an earlier" : "a later",
			       lgq_show(r.x.e[i].kept ? r.x.e[i].kept :
							"metadata"),
			       r.newest ? "newest" : "oldest");
			continue;
		}
		if (r.x.e[i].dir)
			put_dir(&r, &r.x.e[i]);
		else
			put_file(&r, &r.x.e[i]);
	}
	/* the directories' own metadata last, deepest first */
	for (size_t i = r.x.n; i-- > 0;)
		if (r.x.e[i].made)
			set_meta(&r.x.e[i]);
	printf("%s%u file(s) %srestored, %u conflict(s), %u missing, %u failed",
	       r.dry ? "dry run: " : "", r.restored, r.dry ? "would be " : "",
	       r.conflicts, r.missing, r.failed);
	if (r.earlier)
		printf("; %u restored earlier", r.earlier);
	printf("\n");
	if (!r.dry && r.x.n)
		audit_restore(dir, id, &r);
	lgq_free(&r.x);
	return r.conflicts || r.missing || r.failed ? 1 : 0;
}
