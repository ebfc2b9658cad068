// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "clock.h"
#include "quarantine_index.h"
#include "state.h"

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
		e->ino = json_integer_value(json_object_get(o, "ino"));
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

static int held_of(const char *dir, const char *id, struct lgq_held *h)
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

size_t lgq_sessions(const char *dir, struct lgq_held **out)
{
	char qdir[PATH_MAX + 16];
	struct lgq_held *h = NULL;
	size_t n = 0;
	struct dirent *d;
	DIR *dd;

	snprintf(qdir, sizeof(qdir), "%s/quarantine", dir);
	dd = opendir(qdir);
	while (dd && (d = readdir(dd))) {
		size_t len = strlen(d->d_name);
		char id[200];
		struct lgq_held *m;

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
			struct lgq_held t = h[k];

			h[k] = h[k - 1];
			h[k - 1] = t;
		}
	*out = h;
	return n;
}

int lgq_drop(const char *dir, const char *id, uint64_t *freed)
{
	struct lgq_index r = { 0 };
	char index[PATH_MAX + 300];
	int e;

	snprintf(index, sizeof(index), "%s/quarantine/%s.jsonl", dir, id);
	e = lgq_load(&r, index, NULL, 0, 0);
	for (size_t i = 0; i < r.n; i++) {
		char folder[PATH_MAX];
		struct stat st;
		char *slash;

		if (!r.e[i].kept)
			continue;
		if (freed && lstat(r.e[i].kept, &st) == 0 && st.st_nlink == 1)
			*freed += (uint64_t)st.st_size;
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

#define EXPIRE_EVERY_NS (3600LL * 1000000000LL)

static long long mtime_ns(const struct stat *st)
{
	return (long long)st->st_mtim.tv_sec * 1000000000LL +
	       st->st_mtim.tv_nsec;
}

int lgq_expire(const char *dir, uint64_t max_age_ms, const char *except,
	       unsigned *sessions, uint64_t *bytes)
{
	char qdir[PATH_MAX + 16], path[PATH_MAX + 300], buf[64];
	long long now = lg_real_ns();
	struct dirent *d;
	struct stat st;
	DIR *dd;

	*sessions = 0;
	*bytes = 0;
	snprintf(path, sizeof(path), "%s/quarantine/.expired", dir);
	if (!max_age_ms ||
	    (stat(path, &st) == 0 && now - mtime_ns(&st) < EXPIRE_EVERY_NS))
		return 1;
	{
		LG_AUTOCLOSE int fd =
			open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);

		if (fd < 0)
			return -errno; /* no quarantine here yet */
		futimens(fd, NULL);
	}
	snprintf(qdir, sizeof(qdir), "%s/quarantine", dir);
	dd = opendir(qdir);
	while (dd && (d = readdir(dd))) {
		size_t len = strlen(d->d_name);
		char id[200];

		if (len <= 6 || len - 6 >= sizeof(id) ||
		    strcmp(d->d_name + len - 6, ".jsonl"))
			continue;
		memcpy(id, d->d_name, len - 6);
		id[len - 6] = '\0';
		snprintf(path, sizeof(path), "%s/%s", qdir, d->d_name);
		/* the index is appended at every entry: its mtime, the newest */
		if (!lg_session_id_valid(id) || strcmp(id, except) == 0 ||
		    stat(path, &st) < 0 ||
		    now - mtime_ns(&st) <= (long long)max_age_ms * 1000000LL ||
		    lg_state_killed(dir, id, buf, sizeof(buf)) == 1)
			continue;
		if (lgq_drop(dir, id, bytes) == 0)
			(*sessions)++;
	}
	if (dd)
		closedir(dd);
	return 0;
}
