// SPDX-License-Identifier: MIT
/*
 * The files the session wrote, and what a file the tree emptied left
 * behind (issues 27 and 41). A file made, opened for writing or renamed
 * to is remembered (lg_prov_wrote, a ring of LG_PROV_WROTE): where an
 * emptied file's body may live on. The session's emptied files
 * (session/emptied.c) are judged with what is here: a sample of the
 * body's lines taken before (lg_prov_sample), what the path holds now
 * (lg_prov_left_at), whether a process holds it open for writing
 * (lg_prov_writers), and whether its distinctive lines are in a file the
 * session wrote (lg_prov_lives_on: code moved to another module, logs
 * gathered into one).
 */
#include <dirent.h>

#include "lib/cleanup.h"
#include "prov_int.h"

#define SAMPLE_READ (256 << 10) /* of the body, for its lines */
#define WROTE_MAX_AGE_MS (30 * 60 * 1000)
#define LIVES_ON_READ (4 << 20) /* of a file it may live on in */

/* Up to max bytes of what path (or at_dirfd/at_name) holds, malloc'd. */
static char *read_head(int dirfd, const char *name, size_t max, size_t *n)
{
	LG_AUTOCLOSE int fd = openat(dirfd, name,
				     O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
					     O_NOCTTY | O_CLOEXEC);
	struct stat st;
	char *buf;
	ssize_t r;

	*n = 0;
	if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
		return NULL;
	if ((size_t)st.st_size < max)
		max = (size_t)st.st_size;
	buf = malloc(max ? max : 1);
	if (!buf)
		return NULL;
	while (*n < max && (r = read(fd, buf + *n, max - *n)) > 0)
		*n += (size_t)r;
	return buf;
}

void lg_prov_sample(const struct lg_event *ev, const char *path,
		    struct lg_lines_sample *out)
{
	bool at = ev && ev->at && ev->at_name && ev->at_name[0] &&
		  ev->at_dirfd >= 0;
	size_t n;
	LG_AUTOFREE char *buf = read_head(at ? ev->at_dirfd : AT_FDCWD,
					  at ? ev->at_name : path, SAMPLE_READ,
					  &n);

	out->n = 0;
	if (buf)
		lg_lines_sample(buf, n, out);
}

void lg_prov_wrote(struct lg_prov *s, const char *path)
{
	size_t n = strlen(path);
	uint64_t h = lg_digest(path, n);
	struct prov_wrote *w;

	if (path[0] != '/' || n >= sizeof(w->path))
		return;
	for (unsigned i = 0; i < LG_PROV_WROTE; i++)
		if (s->wrote[i].hash == h && s->wrote[i].at_ms &&
		    strcmp(s->wrote[i].path, path) == 0) {
			s->wrote[i].at_ms = lg_mono_ms();
			return;
		}
	w = &s->wrote[s->wrote_next++ % LG_PROV_WROTE];
	memcpy(w->path, path, n + 1);
	w->hash = h;
	w->at_ms = lg_mono_ms();
}

bool lg_prov_lives_on(const struct lg_prov *s,
		      const struct lg_lines_sample *sample, const char *path,
		      const char *before, uint64_t dev, uint64_t ino,
		      uint64_t now)
{
	if (sample->n < 4)
		return false;
	for (unsigned i = 0; i < LG_PROV_WROTE; i++) {
		const struct prov_wrote *w = &s->wrote[i];
		LG_AUTOFREE char *buf = NULL;
		struct stat st;
		size_t n;

		if (!w->at_ms || now - w->at_ms > WROTE_MAX_AGE_MS ||
		    strcmp(w->path, path) == 0 ||
		    (before && strcmp(w->path, before) == 0) ||
		    stat(w->path, &st) != 0 ||
		    (st.st_ino == ino && st.st_dev == dev))
			continue;
		buf = read_head(AT_FDCWD, w->path, LIVES_ON_READ, &n);
		if (buf &&
		    lg_lines_live_on(sample, lg_lines_found(sample, buf, n))) {
			lg_dbg("%s: its body lives on in %s", path, w->path);
			return true;
		}
	}
	return false;
}

enum lg_prov_left lg_prov_left_at(const char *path, const struct lg_facts *id,
				  int64_t before)
{
	struct statx st;

	if (statx(AT_FDCWD, path, AT_SYMLINK_NOFOLLOW,
		  STATX_TYPE | STATX_INO | STATX_SIZE | STATX_BTIME,
		  &st) != 0 ||
	    !S_ISREG(st.stx_mode) || st.stx_ino != id->ino ||
	    makedev(st.stx_dev_major, st.stx_dev_minor) != id->dev ||
	    (id->has_btime && (st.stx_mask & STATX_BTIME) &&
	     prov_ns(st.stx_btime) != id->btime_ns))
		return LG_LEFT_GONE;
	if (st.stx_size == 0)
		return LG_LEFT_EMPTY;
	return lg_stub_of(before, (int64_t)st.stx_size) ? LG_LEFT_STUB :
							  LG_LEFT_CONTENT;
}

/*
 * Every process of the machine is looked at, the safe side: a writer
 * outside the tree defers too (a slow `cmd > f` writes later).
 */
void lg_prov_writers(const uint64_t *dev, const uint64_t *ino, size_t n,
		     bool *held)
{
	LG_AUTOCLOSEDIR DIR *proc = opendir("/proc");
	struct dirent *p;
	pid_t self = getpid();

	while (proc && (p = readdir(proc))) {
		LG_AUTOCLOSEDIR DIR *fds = NULL;
		char dir[64], link[96];
		struct dirent *d;
		pid_t pid = atoi(p->d_name);

		if (pid <= 0 || pid == self)
			continue;
		snprintf(dir, sizeof(dir), "/proc/%d/fd", pid);
		fds = opendir(dir);
		while (fds && (d = readdir(fds))) {
			struct stat ls, st;

			if (d->d_name[0] == '.')
				continue;
			snprintf(link, sizeof(link), "%s/%s", dir, d->d_name);
			/* the link's mode says how it was opened */
			if (lstat(link, &ls) != 0 || !(ls.st_mode & S_IWUSR) ||
			    stat(link, &st) != 0 || !S_ISREG(st.st_mode))
				continue;
			for (size_t i = 0; i < n; i++)
				if (ino[i] == st.st_ino && dev[i] == st.st_dev)
					held[i] = true;
		}
	}
}
