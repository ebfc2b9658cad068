// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "programs.h"

#define MAX_NAMES 32
#define MAX_FOUND 4 /* installs of one name on PATH */

struct install {
	uint64_t dev, ino;
	uint64_t size;
	int64_t mtime_ns;
	uint32_t uid;
	char *path; /* where it was found (ours) */
};

/*
 * A copy's verdict, by the copy's identity (its change time moves with any
 * write or touch, so a file made to look like the program is asked again).
 */
struct verdict {
	uint64_t dev, ino, size;
	int64_t ctime_ns;
	bool same;
};
#define VERDICTS 8

struct program {
	char *name;
	struct install found[MAX_FOUND];
	size_t n;
	/*
	 * An npm install: PATH holds a launcher (codex -> .../node_modules/
	 * @openai/codex/bin/codex.js) that runs the package's own binary of
	 * that name, installed beside it (.../node_modules/@openai/
	 * codex-linux-x64/vendor/.../codex). The node_modules tree it leads
	 * into (ours), NULL when none.
	 */
	char *npm_root;
	/*
	 * A rustup install: PATH holds rustup's proxy (cargo -> rustup),
	 * which execs the toolchain's binary of that name
	 * (RUSTUP_HOME/toolchains/TOOLCHAIN/bin/cargo). RUSTUP_HOME's
	 * toolchains/ (ours, with its '/'), NULL when none.
	 */
	char *rustup_root;
	/*
	 * Looked up at its first question (lg_programs_later), on the PATH
	 * of the start, finding only files born before the session.
	 */
	bool later;
};

struct lg_programs {
	struct program prog[MAX_NAMES];
	size_t n;
	int64_t start_ns;
	char *path_env; /* PATH at the start, for the names asked later */
	/* copies compared byte for byte, remembered (lg_programs_is) */
	struct verdict verdicts[VERDICTS];
	unsigned next_verdict;
};

static int64_t ns(const struct statx_timestamp *t)
{
	return (int64_t)t->tv_sec * 1000000000LL + t->tv_nsec;
}

static void install_of(const struct statx *st, struct install *in)
{
	in->dev = ((uint64_t)st->stx_dev_major << 32) | st->stx_dev_minor;
	in->ino = st->stx_ino;
	in->size = st->stx_size;
	in->mtime_ns = ns(&st->stx_mtime);
	in->uid = st->stx_uid;
}

static const unsigned MASK = STATX_TYPE | STATX_MODE | STATX_INO | STATX_SIZE |
			     STATX_MTIME | STATX_UID | STATX_BTIME |
			     STATX_CTIME;

/* The node_modules tree a PATH entry's launcher lives in, if it does. */
static void npm_root_of(struct program *pg, const char *file)
{
	char real[PATH_MAX];
	const char *nm;

	if (!realpath(file, real))
		return;
	nm = strstr(real, "/node_modules/");
	if (!nm)
		return;
	pg->npm_root =
		strndup(real, (size_t)(nm - real) + strlen("/node_modules/"));
}

/*
 * A rustup proxy on PATH (a link to rustup, or rustup's own bytes under
 * another name: the same inode as the rustup beside it): the toolchains of
 * RUSTUP_HOME as it was at the start, else ~/.rustup beside ~/.cargo.
 */
static void rustup_root_of(struct program *pg, const char *file)
{
	char real[PATH_MAX], home[PATH_MAX], sib[PATH_MAX];
	const char *env = getenv("RUSTUP_HOME"), *slash;
	struct stat a, b;

	if (!realpath(file, real))
		return;
	slash = strrchr(real, '/');
	if (!slash)
		return;
	if (strcmp(slash + 1, "rustup") != 0) {
		if (snprintf(sib, sizeof(sib), "%.*s/rustup",
			     (int)(slash - real), real) >= (int)sizeof(sib) ||
		    stat(real, &a) < 0 || stat(sib, &b) < 0 ||
		    a.st_ino != b.st_ino || a.st_dev != b.st_dev)
			return;
	}
	if (env && env[0] == '/') {
		snprintf(home, sizeof(home), "%s", env);
	} else {
		/* ~/.cargo/bin/rustup: ~/.rustup */
		size_t n = (size_t)(slash - real);

		while (n && real[n - 1] != '/')
			n--; /* bin */
		if (n)
			n--;
		while (n && real[n - 1] != '/')
			n--; /* .cargo */
		if (!n)
			return;
		snprintf(home, sizeof(home), "%.*s.rustup", (int)n, real);
	}
	if (!realpath(home, real))
		return;
	if (asprintf(&pg->rustup_root, "%s/toolchains/", real) < 0)
		pg->rustup_root = NULL;
}

/*
 * pid runs the binary named after the program in one of rustup's
 * toolchains (TOOLCHAIN/bin/NAME), there before the session.
 */
static bool rustup_binary(const struct program *pg, const char *exe)
{
	size_t root = pg->rustup_root ? strlen(pg->rustup_root) : 0;
	const char *tail, *bin;

	if (!root)
		return false;
	if (strncmp(exe, pg->rustup_root, root) != 0)
		return false;
	tail = exe + root; /* TOOLCHAIN/bin/NAME */
	bin = strchr(tail, '/');
	return bin && bin > tail && strncmp(bin, "/bin/", 5) == 0 &&
	       strcmp(bin + 5, pg->name) == 0;
}

/*
 * pid runs the binary named after the program inside its npm install's
 * node_modules tree, there before the session (not planted during it).
 */
static bool npm_binary(const struct program *pg, const char *exe)
{
	size_t root = pg->npm_root ? strlen(pg->npm_root) : 0;
	const char *base;

	if (!root)
		return false;
	base = strrchr(exe, '/');
	return strncmp(exe, pg->npm_root, root) == 0 && base &&
	       strcmp(base + 1, pg->name) == 0;
}

/*
 * Run by its path, not from PATH (npx, a project's node_modules/.bin, an
 * install in a cache folder): pid runs a binary named after the program
 * inside a node_modules tree that installs the program's command
 * (node_modules/.bin/NAME), both there before the session, and changed
 * since by nothing (its change time).
 */
static bool npm_local(const struct program *pg, const char *exe,
		      const struct statx *st, int64_t start_ns)
{
	char bin[PATH_MAX];
	const char *base, *nm;
	struct statx b;

	if (ns(&st->stx_ctime) >= start_ns)
		return false;
	base = strrchr(exe, '/');
	nm = strstr(exe, "/node_modules/");
	if (!base || !nm || strcmp(base + 1, pg->name) != 0 ||
	    snprintf(bin, sizeof(bin), "%.*s/node_modules/.bin/%s",
		     (int)(nm - exe), exe, pg->name) >= (int)sizeof(bin))
		return false;
	return statx(AT_FDCWD, bin, 0, STATX_TYPE | STATX_BTIME | STATX_CTIME,
		     &b) == 0 &&
	       S_ISREG(b.stx_mode) &&
	       ((b.stx_mask & STATX_BTIME) ? ns(&b.stx_btime) :
					     ns(&b.stx_ctime)) < start_ns;
}

/* The entry [p, p + len) of path_env is also one before it. */
static bool seen_before(const char *path_env, const char *p, size_t len)
{
	for (const char *q = path_env; q < p;) {
		const char *e = strchr(q, ':');
		size_t n = e ? (size_t)(e - q) : strlen(q);

		if (n == len && memcmp(q, p, len) == 0)
			return true;
		q = e ? e + 1 : p;
	}
	return false;
}

static void look_up(struct program *pg, const char *path_env,
		    int64_t born_before)
{
	const char *p = path_env;

	while (p && *p && pg->n < MAX_FOUND) {
		const char *e = strchr(p, ':');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		char file[PATH_MAX];
		struct statx st;

		/*
		 * An empty entry or a relative one is the cwd: not trusted.
		 * One PATH names twice finds nothing new the second time.
		 */
		if (len && p[0] == '/' && !seen_before(path_env, p, len) &&
		    snprintf(file, sizeof(file), "%.*s/%s", (int)len, p,
			     pg->name) < (int)sizeof(file) &&
		    statx(AT_FDCWD, file, 0, MASK, &st) == 0 &&
		    S_ISREG(st.stx_mode) && (st.stx_mode & 0111) &&
		    (!born_before || ns((st.stx_mask & STATX_BTIME) ?
						&st.stx_btime :
						&st.stx_ctime) < born_before)) {
			struct install in;
			bool dup = false;

			install_of(&st, &in);
			if (!pg->npm_root)
				npm_root_of(pg, file);
			if (!pg->rustup_root)
				rustup_root_of(pg, file);
			for (size_t i = 0; i < pg->n; i++)
				dup |= pg->found[i].dev == in.dev &&
				       pg->found[i].ino == in.ino;
			/* no memory: not recognised, the safe side */
			if (!dup && (in.path = strdup(file)))
				pg->found[pg->n++] = in;
		}
		p = e ? e + 1 : NULL;
	}
}

struct lg_programs *lg_programs_new(const char *const *names, size_t n,
				    const char *path_env, int64_t start_ns)
{
	struct lg_programs *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->start_ns = start_ns;
	for (size_t i = 0; i < n && p->n < MAX_NAMES; i++) {
		struct program *pg = &p->prog[p->n];
		bool seen = false;

		if (!names[i] || !names[i][0])
			continue;
		for (size_t j = 0; j < p->n; j++)
			seen |= strcmp(p->prog[j].name, names[i]) == 0;
		if (seen)
			continue;
		pg->name = strdup(names[i]);
		if (!pg->name) {
			lg_programs_free(p);
			return NULL;
		}
		look_up(pg, path_env, 0);
		p->n++;
	}
	p->path_env = strdup(path_env ? path_env : "");
	if (!p->path_env) {
		lg_programs_free(p);
		return NULL;
	}
	return p;
}

int lg_programs_later(struct lg_programs *p, const char *name)
{
	struct program *pg;

	for (size_t j = 0; j < p->n; j++)
		if (strcmp(p->prog[j].name, name) == 0)
			return 0;
	if (p->n == MAX_NAMES)
		return -ENOSPC;
	pg = &p->prog[p->n];
	pg->name = strdup(name);
	if (!pg->name)
		return -ENOMEM;
	pg->later = true;
	p->n++;
	return 0;
}

void lg_programs_free(struct lg_programs *p)
{
	if (!p)
		return;
	free(p->path_env);
	for (size_t i = 0; i < p->n; i++) {
		free(p->prog[i].name);
		free(p->prog[i].npm_root);
		free(p->prog[i].rustup_root);
		for (size_t f = 0; f < p->prog[i].n; f++)
			free(p->prog[i].found[f].path);
	}
	free(p);
}

/* Do the files a and b hold the same bytes (size already equal)? */
static bool same_bytes(const char *a, const char *b)
{
	int fa = open(a, O_RDONLY | O_CLOEXEC), fb = -1;
	static char ba[65536], bb[65536];
	bool same = fa >= 0;

	if (same)
		fb = open(b, O_RDONLY | O_CLOEXEC);
	same = same && fb >= 0;
	while (same) {
		ssize_t na = read(fa, ba, sizeof(ba)), nb;

		if (na <= 0) {
			same = na == 0 && read(fb, bb, 1) == 0;
			break;
		}
		nb = read(fb, bb, (size_t)na);
		same = nb == na && memcmp(ba, bb, (size_t)na) == 0;
	}
	if (fa >= 0)
		close(fa);
	if (fb >= 0)
		close(fb);
	return same;
}

/*
 * A copy of the installed program (git's exec-path): the same bytes, made
 * before the session. Size, times and owner are the cheap first test; the
 * bytes decide (a copy whose size and mtime were made to match, touch -r,
 * is not the program), once per copy as it is now.
 */
static bool same_program(struct lg_programs *p, const struct install *f,
			 const char *exe, const struct statx *st)
{
	int64_t ct = ns(&st->stx_ctime);
	uint64_t dev = ((uint64_t)st->stx_dev_major << 32) | st->stx_dev_minor;
	struct verdict *v;

	for (unsigned i = 0; i < VERDICTS; i++) {
		v = &p->verdicts[i];
		if (v->ino == st->stx_ino && v->dev == dev &&
		    v->ctime_ns == ct && v->size == st->stx_size)
			return v->same;
	}
	v = &p->verdicts[p->next_verdict++ % VERDICTS];
	*v = (struct verdict){ dev, st->stx_ino, st->stx_size, ct,
			       same_bytes(exe, f->path) };
	return v->same;
}

bool lg_programs_is(const struct lg_programs *cp, const char *name, pid_t pid)
{
	struct lg_programs *p = (struct lg_programs *)cp; /* its verdicts */
	struct program *pg = NULL;
	char exe[64], path[PATH_MAX];
	struct statx st;
	struct install in;
	int64_t born;
	ssize_t n;

	if (!p)
		return false;
	for (size_t i = 0; i < p->n && !pg; i++)
		if (strcmp(p->prog[i].name, name) == 0)
			pg = &p->prog[i];
	if (pg && pg->later) {
		pg->later = false;
		look_up(pg, p->path_env, p->start_ns);
	}
	if (!pg)
		return false;
	snprintf(exe, sizeof(exe), "/proc/%d/exe", pid);
	if (statx(AT_FDCWD, exe, 0, MASK, &st) < 0)
		return false;
	install_of(&st, &in);
	born = (st.stx_mask & STATX_BTIME) ? ns(&st.stx_btime) :
					     ns(&st.stx_ctime);
	for (size_t i = 0; i < pg->n; i++) {
		const struct install *f = &pg->found[i];

		if (f->dev == in.dev && f->ino == in.ino)
			return true;
		/* a copy the package installed (git's exec-path) */
		if (f->size == in.size && f->mtime_ns == in.mtime_ns &&
		    f->uid == in.uid && born < p->start_ns &&
		    same_program(p, f, exe, &st))
			return true;
	}
	/*
	 * Beside an install: a binary of the program's name in its tree,
	 * there before the session (never one planted during it)
	 */
	if (born >= p->start_ns)
		return false;
	n = readlink(exe, path, sizeof(path) - 1);
	if (n <= 0)
		return false;
	path[n] = '\0';
	return npm_binary(pg, path) || npm_local(pg, path, &st, p->start_ns) ||
	       rustup_binary(pg, path);
}
