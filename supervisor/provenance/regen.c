// SPDX-License-Identifier: MIT
/*
 * Regenerable outputs (issue 41): a removal that would count, run under a
 * build tool's clean verb (the removing process or one of its ancestors:
 * guard/clean.def, the installed program for a binary), of a file the
 * project's git does not track, that is a build output by its own
 * evidence (its head, its source beside it, a tool's output directory),
 * or of a directory such removals emptied. lg_prov_clean_output, asked by
 * the session's removal facts (session/removal.c) only.
 */
#include <dirent.h>
#include <fnmatch.h>
#include <sys/mman.h>

#include "guard/clean.h"
#include "lib/cleanup.h"
#include "programs.h"
#include "prov_int.h"

/*
 * A process's stat line: its parent, its start and its name (which an
 * exec changes: a bash that execs make is asked again).
 */
static bool proc_stat(pid_t pid, pid_t *ppid, unsigned long long *start,
		      char *comm, size_t size)
{
	char path[64], buf[1024];
	const char *open_, *close_;
	LG_AUTOCLOSE int fd = -1;
	ssize_t n;
	int pp;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	open_ = strchr(buf, '(');
	close_ = strrchr(buf, ')');
	if (!open_ || !close_ || close_ < open_)
		return false;
	snprintf(comm, size, "%.*s", (int)(close_ - open_ - 1), open_ + 1);
	/* after ") ": state ppid ... starttime is the 20th field */
	if (sscanf(close_ + 2,
		   "%*c %d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d "
		   "%*d %*d %*d %*d %*d %llu",
		   &pp, start) != 2)
		return false;
	*ppid = pp;
	return true;
}

/* Does pid run a clean verb (the installed program, for a binary)? */
static bool runs_clean(const struct lg_programs *programs, pid_t pid)
{
	char path[64], exe[PATH_MAX],
		argv[32768]; /* java: a class path first */
	LG_AUTOCLOSE int fd = -1;
	const char *prog, *b;
	bool bin = false;
	ssize_t n, e;

	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	e = readlink(path, exe, sizeof(exe) - 1);
	if (e <= 0)
		return false;
	exe[e] = '\0';
	if (e > 10 && strcmp(exe + e - 10, " (deleted)") == 0)
		return false;
	b = strrchr(exe, '/');
	b = b ? b + 1 : exe;
	snprintf(path, sizeof(path), "/proc/%d/cmdline", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, argv, sizeof(argv));
	if (n <= 0)
		return false;
	prog = lg_clean_verb(b, argv, (size_t)n, &bin);
	if (!prog)
		return false;
	if (bin && !lg_programs_is(programs, prog, pid)) {
		lg_dbg("%s[%d] runs %s's clean verb but is not the installed %s",
		       b, pid, prog, prog);
		return false;
	}
	return true;
}

/*
 * The removing process or an ancestor runs a clean verb: walked up by
 * /proc/PID/stat to lgrun itself, each process's answer cached by its
 * pid, start and name.
 */
#define CLEAN_DEPTH 32
/*
 * The remover's answer is asked again only after CLEAN_FRESH_MS, as the
 * session's sess_exe_of: rm -r removing 10,000 files walks /proc some 10
 * times, not 10,000 at ~10 us each.
 */
#define CLEAN_FRESH_MS 100
static bool walk_clean(struct lg_prov *s, const struct lg_programs *programs,
		       pid_t pid);
static bool under_clean(struct lg_prov *s, const struct lg_programs *programs,
			pid_t pid)
{
	uint64_t now = lg_mono_ms();

	if (s->clean_last_pid == pid && now - s->clean_last_ms < CLEAN_FRESH_MS)
		return s->clean_last;
	s->clean_last = walk_clean(s, programs, pid);
	s->clean_last_pid = pid;
	s->clean_last_ms = now;
	return s->clean_last;
}
static bool walk_clean(struct lg_prov *s, const struct lg_programs *programs,
		       pid_t pid)
{
	pid_t self = getpid();

	for (int d = 0; d < CLEAN_DEPTH && pid > 1 && pid != self; d++) {
		struct prov_clean_pid *c = NULL;
		unsigned long long start = 0;
		char comm[sizeof(c->comm)];
		pid_t ppid = 0;

		if (!proc_stat(pid, &ppid, &start, comm, sizeof(comm)))
			return false;
		for (size_t k = 0; k < CLEAN_PIDS && !c; k++)
			if (s->clean_pids[k].pid == pid &&
			    s->clean_pids[k].start == start &&
			    strcmp(s->clean_pids[k].comm, comm) == 0)
				c = &s->clean_pids[k];
		if (!c) {
			c = &s->clean_pids[s->clean_pids_next++ % CLEAN_PIDS];
			c->pid = pid;
			c->start = start;
			memcpy(c->comm, comm, sizeof(c->comm));
			c->clean = runs_clean(programs, pid);
		}
		if (c->clean)
			return true;
		pid = ppid;
	}
	return false;
}

/* git's index of the repository whose work tree holds path. */
struct prov_git_repo {
	char top[PATH_MAX]; /* the work tree's top */
	char index[PATH_MAX + 8];
	uint64_t dev, ino, size;
	int64_t mtime_ns;
	bool present; /* the index file is there */
	struct lg_git_index *x; /* NULL and present: not readable */
};

void prov_regen_free(struct lg_prov *s)
{
	for (size_t i = 0; i < GIT_REPOS; i++) {
		if (!s->git_repos[i])
			continue;
		lg_git_index_free(s->git_repos[i]->x);
		free(s->git_repos[i]);
		s->git_repos[i] = NULL;
	}
}

/* gitdir of the work tree top (its .git: a directory, or "gitdir: X"). */
static bool git_dir_of(const char *top, char *gitdir, size_t size)
{
	char dotgit[PATH_MAX + 8], buf[PATH_MAX + 16];
	LG_AUTOCLOSE int fd = -1;
	struct stat st;
	ssize_t n;
	char *p;

	snprintf(dotgit, sizeof(dotgit), "%s/.git", top);
	if (lstat(dotgit, &st) < 0)
		return false;
	if (S_ISDIR(st.st_mode))
		return snprintf(gitdir, size, "%s", dotgit) < (int)size;
	if (!S_ISREG(st.st_mode))
		return false;
	fd = open(dotgit, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	if (n <= 8 || strncmp(buf, "gitdir: ", 8) != 0)
		return false;
	buf[n] = '\0';
	p = buf + 8;
	p[strcspn(p, "\r\n")] = '\0';
	if (p[0] == '/')
		return snprintf(gitdir, size, "%s", p) < (int)size;
	return snprintf(gitdir, size, "%s/%s", top, p) < (int)size;
}

/* The index read again when it changed (another git add in the session). */
static void load_index(struct prov_git_repo *r)
{
	struct statx st;
	LG_AUTOCLOSE int fd = -1;
	void *m;

	if (statx(AT_FDCWD, r->index, 0,
		  STATX_TYPE | STATX_INO | STATX_SIZE | STATX_MTIME, &st) < 0) {
		lg_git_index_free(r->x);
		r->x = NULL;
		r->present = false; /* no index: nothing tracked */
		return;
	}
	if (r->present && r->ino == st.stx_ino && r->size == st.stx_size &&
	    r->mtime_ns == prov_ns(st.stx_mtime) &&
	    r->dev == makedev(st.stx_dev_major, st.stx_dev_minor))
		return;
	lg_git_index_free(r->x);
	r->x = NULL;
	r->present = true;
	r->dev = makedev(st.stx_dev_major, st.stx_dev_minor);
	r->ino = st.stx_ino;
	r->size = st.stx_size;
	r->mtime_ns = prov_ns(st.stx_mtime);
	if (!S_ISREG(st.stx_mode) || !st.stx_size ||
	    st.stx_size > 512u * 1024 * 1024)
		return;
	fd = open(r->index, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	m = mmap(NULL, st.stx_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (m == MAP_FAILED)
		return;
	r->x = lg_git_index_parse(m, st.stx_size);
	munmap(m, st.stx_size);
	lg_dbg("git index %s: %s", r->index,
	       r->x ? "read" : "not readable (taken as tracking all)");
}

/*
 * Does the project's git track path (or, a directory, a file under it)?
 * Outside any work tree: no. Unknown (an index lgrun cannot read, a path
 * it cannot place): yes, the safe side.
 */
static bool git_tracks(struct lg_prov *s, const char *path, bool is_dir)
{
	char top[PATH_MAX], gitdir[PATH_MAX];
	struct prov_git_repo *r = NULL;
	size_t l = strlen(path);

	if (path[0] != '/' || l >= sizeof(top) || lg_path_in_git_dir(path))
		return true;
	memcpy(top, path, l + 1);
	for (;;) {
		char *slash = strrchr(top, '/');

		if (!slash)
			return false;
		*slash = '\0';
		if (git_dir_of(top[0] ? top : "/", gitdir, sizeof(gitdir)))
			break;
		if (!top[0])
			return false; /* no repository above it */
	}
	for (size_t i = 0; i < GIT_REPOS && !r; i++)
		if (s->git_repos[i] && strcmp(s->git_repos[i]->top, top) == 0)
			r = s->git_repos[i];
	if (!r) {
		size_t slot = s->git_repos_next++ % GIT_REPOS;

		if (!s->git_repos[slot])
			s->git_repos[slot] = calloc(1, sizeof(*r));
		r = s->git_repos[slot];
		if (!r)
			return true;
		lg_git_index_free(r->x);
		memset(r, 0, sizeof(*r));
		snprintf(r->top, sizeof(r->top), "%s", top);
		snprintf(r->index, sizeof(r->index), "%s/index", gitdir);
	}
	load_index(r);
	if (!r->present)
		return false;
	if (!r->x)
		return true;
	return lg_git_index_tracks(r->x, path + strlen(top) + 1, is_dir);
}

/* Is one of markers ('|'-separated, globs) in dir? */
static bool marker_in(const char *dir, const char *markers)
{
	for (const char *p = markers; *p;) {
		size_t n = strcspn(p, "|");
		char name[256], file[PATH_MAX + 256];
		struct stat st;

		if (n < sizeof(name)) {
			memcpy(name, p, n);
			name[n] = '\0';
			if (strchr(name, '*')) {
				DIR *d = opendir(dir);
				struct dirent *e;
				bool found = false;

				while (d && !found && (e = readdir(d)))
					found = fnmatch(name, e->d_name, 0) ==
						0;
				if (d)
					closedir(d);
				if (found)
					return true;
			} else if (snprintf(file, sizeof(file), "%s/%s", dir,
					    name) < (int)sizeof(file) &&
				   lstat(file, &st) == 0 &&
				   S_ISREG(st.st_mode)) {
				return true;
			}
		}
		p += n;
		p += *p == '|';
	}
	return false;
}

static bool in_output_dir(const char *path, bool is_dir)
{
	char parent[PATH_MAX];
	const char *markers;

	for (size_t i = 0;
	     lg_output_dir(path, is_dir, i, parent, sizeof(parent), &markers);
	     i++)
		if (marker_in(parent[0] ? parent : "/", markers))
			return true;
	return false;
}

/* A regular file's name in dirfd, beside the removed one. */
static bool beside(int dirfd, const char *name)
{
	struct statx st;

	return statx(dirfd, name, AT_SYMLINK_NOFOLLOW, STATX_TYPE, &st) == 0 &&
	       S_ISREG(st.stx_mode);
}

/* The directories the clean emptied: a removal's own, remembered. */
static void emptied(struct lg_prov *s, const char *path)
{
	const char *slash = strrchr(path, '/');
	char dir[PATH_MAX];
	uint64_t h;

	if (!slash || (size_t)(slash - path) >= sizeof(dir))
		return;
	memcpy(dir, path, (size_t)(slash - path));
	dir[slash - path] = '\0';
	h = prov_hash(dir);
	if (s->regen_dirs[(s->regen_dirs_next + REGEN_DIRS - 1) % REGEN_DIRS] ==
	    h)
		return;
	s->regen_dirs[s->regen_dirs_next++ % REGEN_DIRS] = h;
}

void lg_prov_regen_emptied(struct lg_prov *s, const char *path)
{
	emptied(s, path);
}

/* The evidence of a file: its head, its source beside it, its folder. */
static bool output_file(const struct lg_event *ev, const struct lg_facts *f)
{
	char sib[NAME_MAX + 16];
	unsigned char head[LG_BUILD_HEAD];
	LG_AUTOCLOSE int own = -1, fd = -1;
	const char *name, *what;
	struct stat st;
	int dirfd;
	ssize_t n;

	if (!f->is_reg)
		return false;
	dirfd = lg_prov_target_dir(ev, &own, &name);
	if (dirfd < 0)
		return false;
	/* LaTeX's auxiliaries beside their source, configure's outputs
	 * beside their template (Makefile, Makefile.in) */
	if (lg_latex_aux(name, sib, sizeof(sib)) && beside(dirfd, sib))
		return true;
	if (snprintf(sib, sizeof(sib), "%s.in", name) < (int)sizeof(sib) &&
	    beside(dirfd, sib))
		return true;
	if (in_output_dir(ev->target, false))
		return true;
	fd = openat(dirfd, name,
		    O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		return false;
	n = read(fd, head, sizeof(head));
	if (n <= 0)
		return false;
	what = lg_build_output_head(name, head, (size_t)n);
	if (what)
		lg_dbg("%s: %s", ev->target, what);
	return what != NULL;
}

bool lg_prov_clean_output(struct lg_prov *s, const struct lg_programs *programs,
			  const struct lg_event *ev, const struct lg_facts *f)
{
	bool dir = ev->op == LG_OP_RMDIR;

	if ((ev->op != LG_OP_UNLINK || !f->is_reg) && (!dir || !f->is_dir))
		return false;
	if (!under_clean(s, programs, ev->pid))
		return false;
	if (dir) {
		uint64_t h = prov_hash(ev->target);
		bool seen = false;

		for (size_t k = 0; k < REGEN_DIRS && !seen; k++)
			seen = s->regen_dirs[k] == h;
		if (!seen && !in_output_dir(ev->target, true))
			return false;
	} else if (!output_file(ev, f)) {
		return false;
	}
	if (git_tracks(s, ev->target, dir))
		return false;
	emptied(s, ev->target);
	lg_dbg("%s: a build output its tool's clean verb removes", ev->target);
	return true;
}
