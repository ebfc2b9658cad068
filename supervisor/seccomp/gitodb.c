// SPDX-License-Identifier: MIT
/*
 * git's object database, read-only and only as far as "is this blob
 * there?" needs: loose objects (objects/xx/yyyy...), version 2 pack
 * indexes (a 256-entry fanout table, then the sorted ids), alternates.
 * Packed objects are never inflated and no object is parsed: the id is
 * computed from the work tree file and looked up.
 */
#include "gitodb_int.h"
#include "lib/bytes.h"
#include "lib/cleanup.h"

/* Reads a small file into buf, NUL-terminated; length or -errno. */
static ssize_t read_small(int dfd, const char *path, char *buf, size_t size)
{
	size_t got = 0;
	int fd =
		openat(dfd, path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	while (got + 1 < size) {
		ssize_t r = read(fd, buf + got, size - 1 - got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	close(fd);
	buf[got] = '\0';
	return (ssize_t)got;
}

static char *trim(char *s)
{
	size_t n;

	while (*s == ' ' || *s == '\t')
		s++;
	n = strlen(s);
	while (n && (s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == ' ' ||
		     s[n - 1] == '\t'))
		s[--n] = '\0';
	return s;
}

/* One pack index, mapped. */
struct pack {
	const uint8_t *map;
	size_t size;
};

/* One objects directory: a repository's own, or an alternate. */
struct odir {
	int fd; /* O_PATH */
	char *path;
	bool scanned;
	struct timespec mtime; /* of objects/pack when it was listed */
	ino_t ino;
	struct pack *packs;
	size_t npacks;
};

struct repo {
	uint64_t serial, used;
	char *top; /* the directory holding .git */
	int lfs_fd; /* lfs/objects of the common directory (Git LFS), or -1 */
	unsigned idlen; /* 20 (SHA-1) or 32 (SHA-256) */
	struct odir odirs[MAX_ODIRS];
	size_t nodirs;
};

struct slot {
	char *dir;
	uint64_t serial;
};

struct lg_gitodb {
	int64_t max_bytes;
	struct repo *repos[NREPOS];
	struct slot slots[NSLOTS];
	uint64_t tick, serial;
	unsigned long scans;
	/* the last directory read: git removes a directory's files in a row */
	char last_dir[PATH_MAX];
	int last_dfd;
	uint8_t *buf; /* BUF_SIZE, for hashing; made at the first use */
};

#define BUF_SIZE 65536

struct lg_gitodb *lg_gitodb_new(int64_t max_bytes)
{
	struct lg_gitodb *db = calloc(1, sizeof(*db));

	if (!db)
		return NULL;
	db->max_bytes = max_bytes > 0 ? max_bytes : LG_GITODB_MAX_BYTES;
	db->last_dfd = -1;
	return db;
}

static void unmap_packs(struct odir *o)
{
	for (size_t i = 0; i < o->npacks; i++)
		munmap((void *)o->packs[i].map, o->packs[i].size);
	free(o->packs);
	o->packs = NULL;
	o->npacks = 0;
}

static void repo_free(struct repo *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->nodirs; i++) {
		unmap_packs(&r->odirs[i]);
		close(r->odirs[i].fd);
		free(r->odirs[i].path);
	}
	if (r->lfs_fd >= 0)
		close(r->lfs_fd);
	free(r->top);
	free(r);
}

void lg_gitodb_free(struct lg_gitodb *db)
{
	if (!db)
		return;
	for (size_t i = 0; i < NREPOS; i++)
		repo_free(db->repos[i]);
	for (size_t i = 0; i < NSLOTS; i++)
		free(db->slots[i].dir);
	if (db->last_dfd >= 0)
		close(db->last_dfd);
	free(db->buf);
	free(db);
}

unsigned long lg_gitodb_pack_scans(const struct lg_gitodb *db)
{
	return db->scans;
}

/* Is the mapped .idx m a sane version 2 index for ids of idlen bytes? */
static bool idx_sane(const uint8_t *m, size_t size, unsigned idlen)
{
	static const uint8_t magic[8] = { 0xff, 't', 'O', 'c', 0, 0, 0, 2 };
	uint32_t prev = 0;

	if (memcmp(m, magic, sizeof(magic)) != 0)
		return false;
	/* The fanout must rise, or the search below could leave the table. */
	for (int i = 0; i < 256; i++) {
		uint32_t v = lg_be32(m + 8 + 4 * i);

		if (v < prev)
			return false;
		prev = v;
	}
	return (uint64_t)size >=
	       8 + 1024 + (uint64_t)prev * (idlen + 8) + 2 * idlen;
}

/* Maps one .idx if it is a sane version 2 index for ids of idlen bytes. */
static int map_idx(int dfd, const char *name, unsigned idlen, struct pack *p)
{
	const uint8_t *m;
	struct stat st;
	int fd;

	fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    st.st_size < 8 + 1024 + 2 * (off_t)idlen) {
		close(fd);
		return -EINVAL;
	}
	m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return -errno;
	p->map = m;
	p->size = (size_t)st.st_size;
	if (!idx_sane(m, p->size, idlen)) {
		munmap((void *)m, p->size);
		return -EINVAL;
	}
	return 0;
}

static bool pack_has(const struct pack *p, const uint8_t *id, unsigned idlen)
{
	const uint8_t *fan = p->map + 8, *ids = p->map + 8 + 1024;
	uint32_t lo = id[0] ? lg_be32(fan + 4 * (id[0] - 1)) : 0;
	uint32_t hi = lg_be32(fan + 4 * id[0]);

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		int c = memcmp(ids + (size_t)mid * idlen, id, idlen);

		if (!c)
			return true;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

/* Lists objects/pack again: the .idx files whose .pack is there. */
static void scan_packs(struct lg_gitodb *db, struct odir *o, unsigned idlen,
		       const struct stat *st)
{
	struct dirent *e;
	DIR *d;
	int dfd;

	unmap_packs(o);
	o->scanned = true;
	o->mtime = st->st_mtim;
	o->ino = st->st_ino;
	db->scans++;
	dfd = openat(o->fd, "pack", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return;
	d = fdopendir(dfd);
	if (!d) {
		close(dfd);
		return;
	}
	while ((e = readdir(d)) && o->npacks < MAX_PACKS) {
		size_t n = strlen(e->d_name);
		char packname[NAME_MAX + 2];
		struct stat ps;
		struct pack p, *grown;

		if (n <= 4 || strcmp(e->d_name + n - 4, ".idx") != 0)
			continue;
		snprintf(packname, sizeof(packname), "%.*s.pack", (int)(n - 4),
			 e->d_name);
		if (fstatat(dirfd(d), packname, &ps, 0) < 0)
			continue; /* an index whose pack is gone */
		if (map_idx(dirfd(d), e->d_name, idlen, &p) < 0)
			continue;
		grown = realloc(o->packs, (o->npacks + 1) * sizeof(*o->packs));
		if (!grown) {
			munmap((void *)p.map, p.size);
			break;
		}
		o->packs = grown;
		o->packs[o->npacks++] = p;
	}
	closedir(d);
}

static bool odir_has(struct lg_gitodb *db, struct odir *o, unsigned idlen,
		     const uint8_t *id, const char *hex)
{
	char loose[80];
	struct stat st;

	if (fstatat(o->fd, "pack", &st, 0) == 0) {
		if (!o->scanned || st.st_ino != o->ino ||
		    st.st_mtim.tv_sec != o->mtime.tv_sec ||
		    st.st_mtim.tv_nsec != o->mtime.tv_nsec)
			scan_packs(db, o, idlen, &st);
		for (size_t i = 0; i < o->npacks; i++)
			if (pack_has(&o->packs[i], id, idlen))
				return true;
	} else if (o->npacks) {
		unmap_packs(o);
		o->scanned = false;
	}
	snprintf(loose, sizeof(loose), "%.2s/%s", hex, hex + 2);
	return fstatat(o->fd, loose, &st, 0) == 0 && S_ISREG(st.st_mode) &&
	       st.st_size > 0;
}

static void add_odir(struct repo *r, const char *path, int depth);

/* objects/info/alternates: one directory a line, relative to objects. */
static void add_alternates(struct repo *r, struct odir *o, int depth)
{
	char *buf = malloc(SMALL_FILE), *line, *save = NULL;

	if (!buf)
		return;
	if (read_small(o->fd, "info/alternates", buf, SMALL_FILE) <= 0) {
		free(buf);
		return;
	}
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char path[PATH_MAX];
		char *l = trim(line);

		/* Quoted (C-style) paths are rare: skipped, not guessed. */
		if (!*l || *l == '#' || *l == '"')
			continue;
		if (lg_path_resolve(o->path, l, path, sizeof(path)) > 0)
			add_odir(r, path, depth + 1);
	}
	free(buf);
}

static void add_odir(struct repo *r, const char *path, int depth)
{
	struct odir *o;
	int fd;

	if (depth > ALT_DEPTH || r->nodirs == MAX_ODIRS)
		return;
	for (size_t i = 0; i < r->nodirs; i++)
		if (strcmp(r->odirs[i].path, path) == 0)
			return;
	fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return;
	o = &r->odirs[r->nodirs];
	memset(o, 0, sizeof(*o));
	o->fd = fd;
	o->path = strdup(path);
	if (!o->path) {
		close(fd);
		return;
	}
	r->nodirs++;
	add_alternates(r, o, depth);
}

/*
 * extensions.objectFormat from the repository's config: 20 for SHA-1 (the
 * default), 32 for SHA-256, 0 for a format this does not know.
 */
static unsigned config_idlen(int cfd)
{
	char *buf = malloc(SMALL_FILE), *line, *save = NULL;
	bool in_ext = false;
	unsigned idlen = 20;

	if (!buf)
		return 0;
	if (read_small(cfd, "config", buf, SMALL_FILE) < 0) {
		free(buf);
		return 20;
	}
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *l = trim(line), *eq, *v;

		if (*l == '[') {
			size_t n = strcspn(l + 1, "] \t\"");

			in_ext = n == 10 &&
				 !strncasecmp(l + 1, "extensions", 10);
			continue;
		}
		if (!in_ext || strncasecmp(l, "objectformat", 12) != 0)
			continue;
		eq = strchr(l + 12, '=');
		if (!eq || *trim(l + 12) != '=')
			continue;
		v = trim(eq + 1);
		v[strcspn(v, " \t#;")] = '\0';
		if (*v == '"')
			v++;
		v[strcspn(v, "\"")] = '\0';
		if (!strcasecmp(v, "sha256"))
			idlen = 32;
		else if (!strcasecmp(v, "sha1"))
			idlen = 20;
		else
			idlen = 0;
	}
	free(buf);
	return idlen;
}

/*
 * A repository from the directory top and its git directory: a linked
 * worktree's keeps its objects in the common directory.
 */
static struct repo *open_repo(const char *top, const char *gitdir)
{
	char buf[PATH_MAX + 16], common[PATH_MAX], objects[PATH_MAX];
	struct repo *r;
	int gfd, cfd;

	gfd = open(gitdir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (gfd < 0)
		return NULL;
	snprintf(common, sizeof(common), "%s", gitdir);
	if (read_small(gfd, "commondir", buf, sizeof(buf)) > 0 &&
	    lg_path_resolve(gitdir, trim(buf), common, sizeof(common)) < 0) {
		close(gfd);
		return NULL;
	}
	close(gfd);
	cfd = open(common, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (cfd < 0)
		return NULL;
	r = calloc(1, sizeof(*r));
	if (!r) {
		close(cfd);
		return NULL;
	}
	r->lfs_fd = -1;
	r->idlen = config_idlen(cfd);
	/* Git LFS keeps the content of its files there, by SHA-256. */
	r->lfs_fd =
		openat(cfd, "lfs/objects", O_PATH | O_DIRECTORY | O_CLOEXEC);
	close(cfd);
	r->top = strdup(top);
	if (r->idlen && r->top &&
	    lg_path_resolve(common, "objects", objects, sizeof(objects)) > 0)
		add_odir(r, objects, 0);
	if (!r->nodirs) {
		repo_free(r);
		return NULL;
	}
	return r;
}

/* .git as a file: "gitdir: PATH", relative to the directory holding it. */
static int read_gitfile(const char *top, char *gitdir, size_t size)
{
	char buf[PATH_MAX + 16], *l;
	int tfd = open(top, O_PATH | O_DIRECTORY | O_CLOEXEC);
	ssize_t n;

	if (tfd < 0)
		return -errno;
	n = read_small(tfd, ".git", buf, sizeof(buf));
	close(tfd);
	if (n < 0)
		return (int)n;
	l = trim(buf);
	if (strncmp(l, "gitdir:", 7) != 0)
		return -EINVAL;
	l = trim(l + 7);
	return lg_path_resolve(top, l, gitdir, size) > 0 ? 0 : -EINVAL;
}

static struct repo *by_serial(struct lg_gitodb *db, uint64_t serial)
{
	for (size_t i = 0; i < NREPOS; i++)
		if (db->repos[i] && db->repos[i]->serial == serial)
			return db->repos[i];
	return NULL;
}

static struct repo *remember_repo(struct lg_gitodb *db, struct repo *r)
{
	size_t victim = 0;

	for (size_t i = 0; i < NREPOS; i++) {
		if (!db->repos[i]) {
			victim = i;
			break;
		}
		if (db->repos[i]->used < db->repos[victim]->used)
			victim = i;
	}
	repo_free(db->repos[victim]);
	r->serial = ++db->serial;
	db->repos[victim] = r;
	return r;
}

/* Walks up from dir to the first directory holding a usable .git. */
static struct repo *discover(struct lg_gitodb *db, const char *dir)
{
	char cur[PATH_MAX], dotgit[PATH_MAX + 8], gitdir[PATH_MAX];

	if (snprintf(cur, sizeof(cur), "%s", dir) >= (int)sizeof(cur))
		return NULL;
	for (;;) {
		struct stat st;
		char *slash;

		snprintf(dotgit, sizeof(dotgit), "%s%s.git", cur,
			 strcmp(cur, "/") ? "/" : "");
		if (stat(dotgit, &st) == 0) {
			bool ok = false;

			if (S_ISDIR(st.st_mode)) {
				snprintf(gitdir, sizeof(gitdir), "%s", dotgit);
				ok = true;
			} else if (S_ISREG(st.st_mode)) {
				ok = read_gitfile(cur, gitdir,
						  sizeof(gitdir)) == 0;
			}
			if (ok) {
				struct repo *r;

				for (size_t i = 0; i < NREPOS; i++)
					if (db->repos[i] &&
					    !strcmp(db->repos[i]->top, cur))
						return db->repos[i];
				r = open_repo(cur, gitdir);
				if (r)
					return remember_repo(db, r);
			}
		}
		if (!strcmp(cur, "/"))
			return NULL;
		slash = strrchr(cur, '/');
		if (slash == cur)
			slash[1] = '\0';
		else if (slash)
			*slash = '\0';
		else
			return NULL;
	}
}

static uint64_t fnv(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 1099511628211ULL;
	return h;
}

/* The repository whose work tree holds dir; cached by directory. */
static struct repo *find_repo(struct lg_gitodb *db, const char *dir)
{
	struct slot *sl = &db->slots[fnv(dir) % NSLOTS];
	struct repo *r = NULL;

	if (sl->dir && !strcmp(sl->dir, dir))
		r = by_serial(db, sl->serial);
	if (!r) {
		char *copy;

		r = discover(db, dir); /* "no repository" is not cached */
		if (!r)
			return NULL;
		copy = strdup(dir);
		if (copy) {
			free(sl->dir);
			sl->dir = copy;
			sl->serial = r->serial;
		}
	}
	r->used = ++db->tick;
	return r;
}

/* Splits path into its directory and final component. */
static int split(const char *path, char *dir, size_t size, const char **name)
{
	const char *slash = strrchr(path, '/');
	size_t n;

	if (path[0] != '/' || !slash || !slash[1])
		return -EINVAL;
	n = slash == path ? 1 : (size_t)(slash - path);
	if (n >= size)
		return -ENAMETOOLONG;
	memcpy(dir, path, n);
	dir[n] = '\0';
	*name = slash + 1;
	return 0;
}

/* Opens dir, or reuses the descriptor of the last one. */
static int dir_fd(struct lg_gitodb *db, const char *dir, bool fresh)
{
	if (!fresh && db->last_dfd >= 0 && !strcmp(db->last_dir, dir))
		return db->last_dfd;
	if (db->last_dfd >= 0)
		close(db->last_dfd);
	db->last_dir[0] = '\0';
	db->last_dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (db->last_dfd < 0)
		return -errno;
	snprintf(db->last_dir, sizeof(db->last_dir), "%s", dir);
	return db->last_dfd;
}

static int hash_in(struct lg_gitodb *db, const char *dir, const char *name,
		   bool sha256, bool lfs, struct digest *d)
{
	bool reused = db->last_dfd >= 0 && !strcmp(db->last_dir, dir);
	int dfd, err;

	/* a session git never removes in: its start faults no 64 KiB in */
	if (!db->buf && !(db->buf = malloc(BUF_SIZE)))
		return -ENOMEM;
	dfd = dir_fd(db, dir, false);
	if (dfd < 0)
		return dfd;
	err = gitodb_hash_at(dfd, name, sha256, lfs, db->max_bytes, db->buf,
			     BUF_SIZE, d);
	if (err == -ENOENT && reused) {
		/* the directory may have been replaced since: look again */
		dfd = dir_fd(db, dir, true);
		if (dfd < 0)
			return dfd;
		err = gitodb_hash_at(dfd, name, sha256, lfs, db->max_bytes,
				     db->buf, BUF_SIZE, d);
	}
	return err;
}

/* lfs/objects/xx/yy/ID of the file's size: Git LFS has its content. */
static bool lfs_has(const struct repo *r, const struct digest *d)
{
	char hex[65], rel[80];
	struct stat st;

	if (r->lfs_fd < 0 || !d->has_lfs)
		return false;
	to_hex(d->lfs, 32, hex);
	snprintf(rel, sizeof(rel), "%.2s/%.2s/%s", hex, hex + 2, hex);
	return fstatat(r->lfs_fd, rel, &st, 0) == 0 && S_ISREG(st.st_mode) &&
	       st.st_size == d->size;
}

int lg_gitodb_stored(struct lg_gitodb *db, const char *path)
{
	char dir[PATH_MAX], hex[65];
	struct digest d;
	struct repo *r;
	const char *name;
	int err;

	err = split(path, dir, sizeof(dir), &name);
	if (err)
		return err;
	r = find_repo(db, dir);
	if (!r)
		return -ENOENT;
	err = hash_in(db, dir, name, r->idlen == 32, r->lfs_fd >= 0, &d);
	if (err)
		return err;
	to_hex(d.id, r->idlen, hex);
	for (size_t i = 0; i < r->nodirs; i++)
		if (odir_has(db, &r->odirs[i], r->idlen, d.id, hex))
			return 1;
	return lfs_has(r, &d);
}

int lg_gitodb_in_worktree(struct lg_gitodb *db, const char *path)
{
	char dir[PATH_MAX];
	const char *name;

	if (split(path, dir, sizeof(dir), &name) < 0)
		return 0;
	return find_repo(db, dir) != NULL;
}

int lg_gitodb_blob_id(const char *path, int sha256, int64_t max_bytes,
		      char *hex, size_t size)
{
	char dir[PATH_MAX];
	const char *name;
	struct digest d;
	size_t idlen = sha256 ? 32 : 20;
	LG_AUTOFREE uint8_t *buf = NULL;
	LG_AUTOCLOSE int dfd = -1;
	int err;

	if (size < 2 * idlen + 1)
		return -ENOSPC;
	err = split(path, dir, sizeof(dir), &name);
	if (err)
		return err;
	buf = malloc(65536);
	if (!buf)
		return -ENOMEM;
	dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	err = gitodb_hash_at(dfd, name, sha256, false,
			     max_bytes > 0 ? max_bytes : LG_GITODB_MAX_BYTES,
			     buf, 65536, &d);
	if (err)
		return err;
	to_hex(d.id, idlen, hex);
	return (int)(2 * idlen);
}
