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

#include "lib/atomic.h"
#include "lib/cleanup.h"
#include "lib/clock.h"
#include "lib/json.h"
#include "lib/text.h"
#include "index.h"
#include "seal.h"
#include "store/state.h"

static bool under(const char *path, const char *top)
{
	size_t n = strlen(top);

	while (n > 1 && top[n - 1] == '/')
		n--;
	return strncmp(path, top, n) == 0 &&
	       (path[n] == '/' || path[n] == '\0' || n == 1);
}

/* Standard base64 (RFC 4648) decoded into a new string; NULL if invalid. */
static char *unb64(const char *s)
{
	size_t n = strlen(s), o = 0;
	char *out = malloc(n / 4 * 3 + 1);
	unsigned v = 0;
	int bits = 0;

	if (!out)
		return NULL;
	for (size_t i = 0; i < n && s[i] != '='; i++) {
		const char *a = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
				"abcdefghijklmnopqrstuvwxyz0123456789+/";
		const char *p = s[i] ? strchr(a, s[i]) : NULL;

		if (!p) {
			free(out);
			return NULL;
		}
		v = (v << 6) | (unsigned)(p - a);
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			out[o++] = (char)((v >> bits) & 0xff);
		}
	}
	out[o] = '\0';
	if (strlen(out) != o) { /* a NUL inside: no path has one */
		free(out);
		return NULL;
	}
	return out;
}

/* key's string, its exact bytes from key_b64 when the writer added one. */
static char *str_of(json_t *o, const char *key)
{
	char k64[64];
	const char *b = NULL, *v = json_string_value(json_object_get(o, key));

	snprintf(k64, sizeof(k64), "%s_b64", key);
	b = json_string_value(json_object_get(o, k64));
	if (b)
		return unb64(b);
	return v ? strdup(v) : NULL;
}

static long long int_of(json_t *o, const char *key, unsigned *have,
			unsigned bit)
{
	json_t *v = json_object_get(o, key);

	if (json_is_integer(v))
		*have |= bit;
	return json_integer_value(v);
}

/* The run that started at start (made when new): NULL out of memory. */
static struct lgq_run *run_of(struct lgq_index *r, long long start)
{
	struct lgq_run *v;

	for (size_t i = 0; i < r->nruns; i++)
		if (r->runs[i].start_ns == start)
			return &r->runs[i];
	v = realloc(r->runs, (r->nruns + 1) * sizeof(*v));
	if (!v)
		return NULL;
	r->runs = v;
	v[r->nruns] = (struct lgq_run){ start, 0 };
	return &v[r->nruns++];
}

/* One line into r (when wanted); 1 when it was not wanted or not valid. */
static int add_line(struct lgq_index *r, json_t *o, char **paths, size_t npaths,
		    long long since_ns)
{
	const char *kind = json_string_value(json_object_get(o, "kind"));
	const char *op = json_string_value(json_object_get(o, "op"));
	long long n = json_integer_value(json_object_get(o, "n"));
	long long t = json_integer_value(json_object_get(o, "time_ns"));
	long long start = json_integer_value(json_object_get(o, "start_ns"));
	char *path, *kept;
	struct lgq_entry *e;
	bool want = npaths == 0;

	if (n > r->max_n)
		r->max_n = n;
	if (t > r->newest_ns)
		r->newest_ns = t;
	if (start > 0 && !r->start_ns)
		r->start_ns = start;
	if (start > 0) {
		struct lgq_run *run = run_of(r, start);

		if (!run)
			return -ENOMEM;
	}
	path = str_of(o, "path");
	kept = str_of(o, "kept");
	for (size_t i = 0; i < npaths && !want; i++)
		want = under(path ? path : "", paths[i]);
	if (!kind || !path || path[0] != '/' ||
	    (strcmp(kind, "dir") && strcmp(kind, "moved") &&
	     strcmp(kind, "made") && strcmp(kind, "appended") &&
	     strcmp(kind, "mode") && !kept) ||
	    !want || t < since_ns) {
		free(path);
		free(kept);
		return 1;
	}
	e = realloc(r->e, (r->n + 1) * sizeof(*e));
	if (!e) {
		free(path);
		free(kept);
		return -ENOMEM;
	}
	r->e = e;
	e = &r->e[r->n++];
	memset(e, 0, sizeof(*e));
	e->n = n;
	e->time_ns = t;
	e->start_ns = start;
	e->turn = json_integer_value(json_object_get(o, "turn"));
	e->own = json_is_true(json_object_get(o, "own"));
	if (e->turn > r->max_turn)
		r->max_turn = e->turn;
	e->folder_dev = json_integer_value(json_object_get(o, "folder_dev"));
	e->folder_ino = json_integer_value(json_object_get(o, "folder_ino"));
	e->atime_ns = json_integer_value(json_object_get(o, "atime_ns"));
	e->mtime_ns = json_integer_value(json_object_get(o, "mtime_ns"));
	e->size = json_integer_value(json_object_get(o, "size"));
	e->ino = json_integer_value(json_object_get(o, "ino"));
	e->ctime_ns = int_of(o, "ctime_ns", &e->have, LGQ_HAVE_CTIME);
	e->dev = int_of(o, "dev", &e->have, LGQ_HAVE_DEV);
	{
		unsigned k = 0;

		e->kept_ino = int_of(o, "kept_ino", &k, 1);
		e->kept_size = int_of(o, "kept_size", &k, 2);
		e->kept_ctime_ns = int_of(o, "kept_ctime_ns", &k, 4);
		if (k == 7)
			e->have |= LGQ_HAVE_KEPT;
	}
	e->copied = int_of(o, "copied", &e->have, LGQ_HAVE_COPIED);
	e->mode = (unsigned)json_integer_value(json_object_get(o, "mode"));
	e->uid = (unsigned)json_integer_value(json_object_get(o, "uid"));
	e->gid = (unsigned)json_integer_value(json_object_get(o, "gid"));
	snprintf(e->op, sizeof(e->op), "%s", op ? op : "");
	e->moved = strcmp(kind, "moved") == 0;
	e->made_new = strcmp(kind, "made") == 0;
	e->appended = strcmp(kind, "appended") == 0;
	e->mode_only = strcmp(kind, "mode") == 0;
	e->dir = strcmp(kind, "dir") == 0;
	/* its name when it changed, where that was not its path (issue 40) */
	e->at_path = str_of(o, "removed_as");
	if (!e->at_path)
		e->at_path = str_of(o, "at_path");
	if (e->moved) {
		e->moved_to = str_of(o, "moved_to");
		e->moved_from = str_of(o, "moved_from");
	}
	e->path = path;
	e->kept = kept;
	e->xattrs = json_incref(json_object_get(o, "xattrs"));
	return 0;
}

/*
 * The lines read so far, by digest: a line written twice (lgrun died
 * between writing its index's waiting lines and its record of that, and
 * its watchdog wrote them again: lib/spill.h) is read once. Every line
 * holds its own time to the nanosecond: two entries never read the same.
 */
struct seen {
	uint64_t *v;
	size_t cap, n;
};

static bool seen_before(struct seen *s, uint64_t h)
{
	size_t i;

	h |= 1; /* 0 marks a free slot */
	if (2 * (s->n + 1) > s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 1024;
		uint64_t *v = calloc(cap, sizeof(*v));

		if (!v)
			return false; /* out of memory: read it again */
		for (size_t k = 0; k < s->cap; k++)
			if (s->v[k]) {
				for (i = s->v[k] & (cap - 1); v[i];
				     i = (i + 1) & (cap - 1))
					;
				v[i] = s->v[k];
			}
		free(s->v);
		s->v = v;
		s->cap = cap;
	}
	for (i = h & (s->cap - 1); s->v[i]; i = (i + 1) & (s->cap - 1))
		if (s->v[i] == h)
			return true;
	s->v[i] = h;
	s->n++;
	return false;
}

/* The index's entries wanted: by path (or all), since a time. */
int lgq_load_fd(struct lgq_index *r, int fd, char **paths, size_t npaths,
		long long since_ns)
{
	int dfd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	LG_AUTOFCLOSE FILE *f = NULL;
	char line[3 * PATH_MAX];
	struct seen seen = { 0 };
	int err = 0;

	if (dfd < 0)
		return -errno;
	f = fdopen(dfd, "re");
	if (!f) {
		close(dfd);
		return -errno;
	}
	while (fgets(line, sizeof(line), f)) {
		size_t len = strlen(line), before = r->n;
		bool sealed = true;
		json_t *o;
		int e;

		if (seen_before(&seen, lg_digest(line, len)))
			continue;
		o = json_loads(line, 0, NULL);
		if (!o)
			continue; /* a line cut by a crash: skipped */
		if (len && line[len - 1] == '\n')
			line[--len] = '\0';
		r->macs += lg_seal_signed_part(line, len) != 0;
		if (r->sealed && r->sealed->any) {
			char d[33];

			lg_seal_digest(line, len, d);
			sealed = lgq_sealed_has(r->sealed, d);
		}
		e = add_line(r, o, paths, npaths, since_ns);
		json_decref(o);
		if (!sealed && r->n > before) {
			r->e[r->n - 1].forged = true;
			r->forged++;
		}
		if (e < 0) {
			err = e;
			break;
		}
	}
	free(seen.v);
	return err;
}

int lgq_load(struct lgq_index *r, const char *file, char **paths, size_t npaths,
	     long long since_ns)
{
	LG_AUTOCLOSE int fd = open(file, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	return lgq_load_fd(r, fd, paths, npaths, since_ns);
}

size_t lgq_runs_with_entries(const struct lgq_index *x, size_t *last)
{
	size_t n = 0;

	for (size_t k = 0; k < x->nruns; k++)
		for (size_t i = 0; i < x->n; i++)
			if (x->e[i].start_ns == x->runs[k].start_ns) {
				n++;
				*last = k;
				break;
			}
	return n;
}

void lgq_keep_run(struct lgq_index *x, long long start_ns)
{
	size_t k = 0;

	for (size_t i = 0; i < x->n; i++) {
		if (x->e[i].start_ns && x->e[i].start_ns != start_ns) {
			lgq_entry_free(&x->e[i]);
			continue;
		}
		x->e[k++] = x->e[i];
	}
	x->n = k;
}

static int cmp_digest(const void *a, const void *b)
{
	return memcmp(a, b, 32);
}

int lgq_sealed_read(struct lgq_sealed *s, int fd)
{
	LG_AUTOFCLOSE FILE *f = NULL;
	char *line = NULL;
	size_t cap = 0;
	int dfd = fcntl(fd, F_DUPFD_CLOEXEC, 3);

	memset(s, 0, sizeof(*s));
	if (dfd < 0 || !(f = fdopen(dfd, "re"))) {
		if (dfd >= 0)
			close(dfd);
		return -errno;
	}
	while (getline(&line, &cap, f) > 0) {
		json_t *o = json_loads(line, 0, NULL);
		json_t *v = json_object_get(o, "lines"), *d;
		size_t i;

		if (json_is_array(v))
			s->any = true;
		json_array_foreach(v, i, d)
		{
			const char *h = json_string_value(d);
			char(*nd)[33];

			if (!h || strlen(h) != 32)
				continue;
			nd = realloc(s->d, (s->n + 1) * sizeof(*nd));
			if (!nd)
				break;
			s->d = nd;
			memcpy(s->d[s->n++], h, 33);
		}
		json_decref(o);
	}
	free(line);
	if (s->n)
		qsort(s->d, s->n, sizeof(*s->d), cmp_digest);
	return 0;
}

bool lgq_sealed_has(const struct lgq_sealed *s, const char *digest)
{
	return s->n && bsearch(digest, s->d, s->n, sizeof(*s->d), cmp_digest);
}

void lgq_sealed_free(struct lgq_sealed *s)
{
	free(s->d);
	memset(s, 0, sizeof(*s));
}

void lgq_free(struct lgq_index *x)
{
	for (size_t i = 0; i < x->n; i++)
		lgq_entry_free(&x->e[i]);
	free(x->e);
	free(x->runs);
	memset(x, 0, sizeof(*x));
}

/*
 * A session's totals, written by lgrun when the session ends
 * (<id>.held), so that every later session's first keep reads one small
 * file per session, not every line of every index and a stat of each
 * kept file (50 ms per 5,000 entries: lgq_sessions is asked at a
 * session's first keep). They hold while the index has the size they
 * were made at: a restore appends to it, the watchdog's salvage too.
 */
static void held_path(const char *dir, const char *id, char *out, size_t size)
{
	snprintf(out, size, "%s/quarantine/%s.held", dir, id);
}

int lgq_held_write(const char *dir, const struct lgq_held *h, int index_fd)
{
	char path[PATH_MAX + 300];
	struct lg_json j = { 0 };
	const char *line;
	struct stat st;
	int e;

	if (fstat(index_fd, &st) < 0)
		return -errno;
	held_path(dir, h->id, path, sizeof(path));
	lg_json_begin(&j);
	lg_json_int(&j, "index_size", (long long)st.st_size);
	lg_json_int(&j, "files", h->files);
	lg_json_int(&j, "dirs", h->dirs);
	lg_json_int(&j, "bytes", (long long)h->bytes);
	lg_json_int(&j, "disk", (long long)h->disk);
	lg_json_int(&j, "copied", (long long)h->copied);
	lg_json_int(&j, "oldest_ns", h->oldest_ns);
	lg_json_int(&j, "newest_ns", h->newest_ns);
	line = lg_json_end(&j);
	e = line ? lg_write_atomic_bytes(path, 0600, false, line, strlen(line),
					 true) :
		   -ENOMEM;
	lg_json_free(&j);
	return e;
}

static long long field_ll(const char *line, const char *key, bool *ok)
{
	char v[32], *end;
	long long n;

	lg_json_field(line, key, v, sizeof(v));
	errno = 0;
	n = strtoll(v, &end, 10);
	if (!v[0] || *end || errno || n < 0)
		*ok = false;
	return n;
}

/* The totals written at the session's end, if they still hold. */
static bool held_read(const char *dir, const char *index, struct lgq_held *h)
{
	char path[PATH_MAX + 300], line[512];
	struct stat st;
	bool ok = true;
	ssize_t n;

	held_path(dir, h->id, path, sizeof(path));
	{
		LG_AUTOCLOSE int fd =
			open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);

		if (fd < 0)
			return false;
		n = read(fd, line, sizeof(line) - 1);
	}
	if (n <= 0 || stat(index, &st) < 0)
		return false;
	line[n] = '\0';
	if (field_ll(line, "index_size", &ok) != (long long)st.st_size || !ok)
		return false;
	h->files = (unsigned)field_ll(line, "files", &ok);
	h->dirs = (unsigned)field_ll(line, "dirs", &ok);
	h->bytes = (uint64_t)field_ll(line, "bytes", &ok);
	/* an older lgrun's totals lack these: the index says them */
	h->disk = (uint64_t)field_ll(line, "disk", &ok);
	h->copied = (uint64_t)field_ll(line, "copied", &ok);
	h->oldest_ns = field_ll(line, "oldest_ns", &ok);
	h->newest_ns = field_ll(line, "newest_ns", &ok);
	return ok;
}

static int held_of(const char *dir, const char *id, struct lgq_held *h)
{
	struct lgq_index r = { 0 };
	char index[PATH_MAX + 300], buf[64];
	int e;

	memset(h, 0, sizeof(*h));
	snprintf(h->id, sizeof(h->id), "%s", id);
	snprintf(index, sizeof(index), "%s/quarantine/%s.jsonl", dir, id);
	h->blocked = lg_state_killed(dir, id, buf, sizeof(buf)) == 1;
	if (held_read(dir, index, h))
		return 0;
	h->files = h->dirs = 0;
	h->bytes = h->disk = h->copied = 0;
	h->oldest_ns = h->newest_ns = 0;
	e = lgq_load(&r, index, NULL, 0, 0);
	for (size_t i = 0; i < r.n; i++) {
		const struct lgq_entry *x = &r.e[i];
		struct stat st;

		if (x->moved || x->made_new || x->appended || x->mode_only) {
			/* a name, no data */
		} else if (x->dir) {
			h->dirs++;
		} else if (lstat(x->kept, &st) == 0) {
			h->files++;
			h->bytes += (uint64_t)st.st_size;
			h->disk += (uint64_t)st.st_blocks * 512;
			/*
			 * a copy's new bytes, as its line says; an older
			 * line's copy (another inode) took its blocks
			 */
			if (x->have & LGQ_HAVE_COPIED)
				h->copied += (uint64_t)x->copied;
			else if ((x->have & LGQ_HAVE_KEPT) &&
				 x->kept_ino != x->ino)
				h->copied += (uint64_t)st.st_blocks * 512;
		}
		if (!h->oldest_ns || x->time_ns < h->oldest_ns)
			h->oldest_ns = x->time_ns;
		if (x->time_ns > h->newest_ns)
			h->newest_ns = x->time_ns;
	}
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

/*
 * kept is <top>/<id>/<bucket>/<n>, no "." or ".." anywhere: what lgrun
 * makes. A line the session's user forged can name any file; gc, often run
 * as root, removes only names of this shape.
 */
static bool own_kept(const char *kept, const char *id)
{
	const char *p[3], *e = kept + strlen(kept);
	size_t len = strlen(id);

	if (kept[0] != '/' || strstr(kept, "/./") || strstr(kept, "/../") ||
	    strstr(kept, "//") || (e - kept >= 2 && strcmp(e - 2, "/.") == 0) ||
	    (e - kept >= 3 && strcmp(e - 3, "/..") == 0))
		return false;
	for (int k = 0; k < 3; k++) {
		while (e > kept && e[-1] != '/')
			e--;
		if (e <= kept)
			return false;
		p[k] = e;
		e--;
	}
	if ((size_t)(p[1] - p[2] - 1) != len || memcmp(p[2], id, len))
		return false;
	for (const char *c = p[1]; c < p[0] - 1; c++)
		if (*c < '0' || *c > '9')
			return false;
	for (const char *c = p[0]; *c; c++)
		if (*c < '0' || *c > '9')
			return false;
	return p[0][0] && p[1] < p[0] - 1;
}

int lgq_drop(const char *dir, const char *id, uint64_t *freed)
{
	struct lgq_index r = { 0 };
	char index[PATH_MAX + 300], folder0[PATH_MAX + 300];
	int e;

	/* a running session keeps on: its folders and index stay */
	if (lg_state_running(dir, id))
		return -EBUSY;
	snprintf(index, sizeof(index), "%s/quarantine/%s.jsonl", dir, id);
	held_path(dir, id, folder0, sizeof(folder0));
	unlink(folder0); /* its totals: gone with it */
	snprintf(folder0, sizeof(folder0), "%s/quarantine/%s.runs", dir, id);
	unlink(folder0); /* and its runs' ends */
	e = lgq_load(&r, index, NULL, 0, 0);
	for (size_t i = 0; i < r.n; i++) {
		char folder[PATH_MAX];
		struct stat st;
		char *slash;

		if (!r.e[i].kept || !own_kept(r.e[i].kept, id))
			continue; /* not this session's: a forged line */
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
		    lg_state_killed(dir, id, buf, sizeof(buf)) == 1 ||
		    lg_state_running(dir, id))
			continue; /* lgq_drop would refuse a running one too */
		if (lgq_drop(dir, id, bytes) == 0)
			(*sessions)++;
	}
	if (dd)
		closedir(dd);
	return 0;
}
