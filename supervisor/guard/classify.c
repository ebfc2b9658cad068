// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "classify.h"
#include "lib/glob.h"

bool lg_facts_preexisting(const struct lg_facts *f, int64_t session_start_ns)
{
	/*
	 * Without birth times, a file whose inode changed during the session
	 * is taken as the session's own. That misses pre-existing files the
	 * agent modified before deleting them; it never blames a build for
	 * removing what it just wrote.
	 */
	if (f->rewritten)
		return false;
	if (f->inherited)
		return true;
	if (f->has_btime)
		return f->btime_ns < session_start_ns;
	return f->ctime_ns < session_start_ns;
}

int lg_ignore_rule_init(struct lg_ignore_rule *r, const char *program,
			const char *glob)
{
	r->program = program ? strdup(program) : NULL;
	r->glob = strdup(glob);
	if ((program && !r->program) || !r->glob) {
		lg_ignore_rule_free(r);
		return -ENOMEM;
	}
	lg_glob_literal(glob, r->lit, sizeof(r->lit));
	r->bytes = lg_glob_bytes(glob);
	return 0;
}

/*
 * The ignore rules' prefilter, cheapest first: the bytes of the rule's
 * glob must all be in the path (one AND against the path's byte set, made
 * once per path), then its literal (strstr), then the glob itself. With
 * the 54 shipped rules, a strstr each cost about 450 ns per path, on every
 * file operation.
 */
struct path_bytes {
	const char *path;
	bool made;
	uint64_t set;
};

static bool may_hold(struct path_bytes *pb, const struct lg_ignore_rule *r)
{
	if (!pb->made) {
		pb->set = lg_glob_path_bytes(pb->path);
		pb->made = true;
	}
	if (r->bytes & ~pb->set)
		return false;
	return !r->lit[0] || strstr(pb->path, r->lit) != NULL;
}

void lg_ignore_rule_free(struct lg_ignore_rule *r)
{
	free(r->program);
	free(r->glob);
	r->program = r->glob = NULL;
}

bool lg_facts_content_preexisting(const struct lg_facts *f,
				  int64_t session_start_ns)
{
	return lg_facts_preexisting(f, session_start_ns);
}

const struct lg_ignore_rule *lg_ignored(const struct lg_ignore_rule *rules,
					size_t n, const char *path,
					const char *exe)
{
	struct path_bytes pb = { .path = path };

	for (size_t i = 0; i < n; i++) {
		if (rules[i].program &&
		    (!exe || strcmp(rules[i].program, exe) != 0))
			continue;
		if (!may_hold(&pb, &rules[i]))
			continue;
		if (lg_glob_match_path(rules[i].glob, path))
			return &rules[i];
	}
	return NULL;
}

/*
 * A directory's own removal is covered by "name/" rules too: the rmdir
 * that ends `rm -rf node_modules` is as routine as what came before it.
 */
static const char *as_dir(enum lg_op op, const char *path, char *buf,
			  size_t size)
{
	size_t n = strlen(path);

	if (op != LG_OP_RMDIR || n + 2 > size)
		return path;
	memcpy(buf, path, n);
	buf[n] = '/';
	buf[n + 1] = '\0';
	return buf;
}

static bool ignored_op(const struct lg_ignore_rule *rules, size_t n,
		       enum lg_op op, const char *path, const char *exe)
{
	char buf[4200];

	return lg_ignored(rules, n, as_dir(op, path, buf, sizeof(buf)), exe);
}

bool lg_ignored_by_program_rule(const struct lg_ignore_rule *rules, size_t n,
				enum lg_op op, const char *path)
{
	char buf[4200];

	struct path_bytes pb = { .path = as_dir(op, path, buf, sizeof(buf)) };

	path = pb.path;
	for (size_t i = 0; i < n; i++) {
		if (!rules[i].program)
			continue;
		if (!may_hold(&pb, &rules[i]))
			continue;
		if (lg_glob_match_path(rules[i].glob, path))
			return true;
	}
	return false;
}

bool lg_path_in_git_dir(const char *path)
{
	for (const char *p = path; (p = strstr(p, ".git")); p += 4)
		if ((p == path || p[-1] == '/') && (p[4] == '/' || !p[4]))
			return true;
	return false;
}

static bool is_git(const char *exe)
{
	return exe && strcmp(exe, "git") == 0;
}

/* Only git's removals, and never of git's own data. */
static bool git_candidate(enum lg_op op, const struct lg_facts *f,
			  const char *path)
{
	return f->git_recoverable &&
	       (op == LG_OP_UNLINK || op == LG_OP_RMDIR) &&
	       !lg_path_in_git_dir(path);
}

bool lg_classify_needs_program(const struct lg_ignore_rule *rules, size_t n,
			       enum lg_op op, const struct lg_facts *f,
			       const char *path)
{
	return git_candidate(op, f, path) ||
	       lg_ignored_by_program_rule(
		       rules, n, op, f->name_before ? f->name_before : path);
}

bool lg_classify_lost_by_git(enum lg_op op, enum lg_class cls, const char *path,
			     const char *exe)
{
	return cls == LG_CLASS_DESTROY && op == LG_OP_UNLINK && is_git(exe) &&
	       !lg_path_in_git_dir(path);
}

/* A venv's own top-level names: what python3 -m venv and virtualenv make. */
static bool venv_layout(const char *c, size_t n, bool last)
{
	static const char *const dirs[] = { "bin",     "lib",	 "lib64",
					    "include", "share",	 "Scripts",
					    "Lib",     "Include" };

	if (last && ((n == 10 && memcmp(c, "pyvenv.cfg", 10) == 0) ||
		     (n == 10 && memcmp(c, ".gitignore", 10) == 0)))
		return true;
	for (size_t k = 0; k < sizeof(dirs) / sizeof(dirs[0]); k++)
		if (strlen(dirs[k]) == n && memcmp(c, dirs[k], n) == 0)
			return true;
	return false;
}

int lg_venv_root(enum lg_op op, const char *path, size_t i, char *root,
		 size_t size)
{
	size_t len = strlen(path), found = 0;

	if (path[0] != '/')
		return 0;
	if (op == LG_OP_RMDIR && i == found++) {
		if (len + 1 > size)
			return 0;
		memcpy(root, path, len + 1);
		return 1;
	}
	/* from the nearest: each '/' that starts a layout name */
	for (size_t p = len; p-- > 0;) {
		const char *c;
		size_t n;

		if (path[p] != '/')
			continue;
		c = path + p + 1;
		n = strcspn(c, "/");
		if (!venv_layout(c, n, c[n] == '\0') || i != found++)
			continue;
		if (p == 0)
			return 0; /* the root directory is no venv */
		if (p + 1 > size)
			return 0;
		memcpy(root, path, p);
		root[p] = '\0';
		return 1;
	}
	return 0;
}

bool lg_tool_value_names(const char *value, const char *path)
{
	char v[4096];
	size_t vn = 0, pn = strlen(path);

	if (strncmp(value, "file://", 7) == 0)
		value += 7;
	/* normalise: no empty or "." components, no "..", no trailing '/' */
	for (const char *c = value; *c;) {
		size_t n = strcspn(c, "/");

		if (n == 2 && c[0] == '.' && c[1] == '.')
			return false;
		if (n && !(n == 1 && c[0] == '.')) {
			if (vn + n + 2 > sizeof(v))
				return false;
			if (vn || value[0] == '/')
				v[vn++] = '/';
			memcpy(v + vn, c, n);
			vn += n;
		}
		c += n;
		c += *c == '/';
	}
	v[vn] = '\0';
	if (!vn)
		return false;
	if (value[0] == '/')
		return strcmp(v, path) == 0;
	return pn > vn && path[pn - vn - 1] == '/' &&
	       strcmp(path + pn - vn, v) == 0;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int lg_url_last_segment(const char *url, char *out, size_t size)
{
	size_t n = strcspn(url, "?#"), b, o = 0;

	while (n && url[n - 1] == '/')
		n--;
	for (b = n; b && url[b - 1] != '/';)
		b--;
	if (b == n || !size)
		return -EINVAL;
	for (size_t k = b; k < n; k++) {
		int c = (unsigned char)url[k];

		if (c == '%' && k + 2 < n && hexval(url[k + 1]) >= 0 &&
		    hexval(url[k + 2]) >= 0) {
			c = hexval(url[k + 1]) * 16 + hexval(url[k + 2]);
			k += 2;
		}
		if (c == '/' || c == '\0' || o + 1 >= size)
			return -EINVAL;
		out[o++] = (char)c;
	}
	out[o] = '\0';
	if (strcmp(out, ".") == 0 || strcmp(out, "..") == 0)
		return -EINVAL;
	return 0;
}

enum lg_class lg_classify(enum lg_op op, const struct lg_facts *f,
			  const char *path, const char *exe,
			  const struct lg_ignore_rule *rules, size_t nrules,
			  int64_t session_start_ns)
{
	if (op == LG_OP_TOOL_DELETE)
		return LG_CLASS_DESTROY; /* tool-level deletes always count */
	if (!f->exists)
		return LG_CLASS_MISSING;
	/*
	 * A block device written over: its data is what it holds, whenever
	 * its node was made (losetup makes /dev/loopN as it attaches a file
	 * full of data). Empty, it loses nothing of before.
	 */
	if (op == LG_OP_DEVICE_WRITE) {
		if (!f->blockdev_data)
			return LG_CLASS_NO_DATA;
		if (ignored_op(rules, nrules, op, path, exe))
			return LG_CLASS_IGNORED;
		return LG_CLASS_DESTROY;
	}
	if (op == LG_OP_UNLINK && f->is_dir)
		return LG_CLASS_HARMLESS; /* EISDIR: it fails */
	/* Cheapest first: most of what a build removes is its own output. */
	if (!lg_facts_preexisting(f, session_start_ns))
		return LG_CLASS_SESSION;
	if ((op == LG_OP_TRUNCATE || op == LG_OP_OPEN_TRUNC) &&
	    !lg_facts_content_preexisting(f, session_start_ns))
		return LG_CLASS_SESSION;
	if ((exe || !f->unignored) &&
	    ignored_op(rules, nrules, op,
		       f->name_before ? f->name_before : path, exe))
		return LG_CLASS_IGNORED;
	/* a venv's own files: made again by python3 -m venv, as node_modules/ */
	if (f->regenerable && (op == LG_OP_UNLINK || op == LG_OP_RMDIR))
		return LG_CLASS_IGNORED;
	/*
	 * rmdir of a non-empty directory fails and destroys nothing; git,
	 * rmdir -p and package managers try it on every parent they touch.
	 */
	if (f->fd_deleted || op == LG_OP_SHRINK ||
	    (op == LG_OP_RMDIR && f->nonempty_dir))
		return LG_CLASS_HARMLESS;
	if ((op == LG_OP_TRUNCATE || op == LG_OP_OPEN_TRUNC) && f->size == 0)
		return LG_CLASS_HARMLESS;
	/*
	 * Another hard link still holds the data (a snapshot rotated away
	 * with cp -al, a store that links files in): a removal of one name
	 * loses nothing. The last name's removal counts.
	 */
	if (op == LG_OP_UNLINK && f->nlink > 1 && !f->is_dir)
		return LG_CLASS_LINKED;
	if (f->superseded && op == LG_OP_UNLINK)
		return LG_CLASS_SUPERSEDED;
	/*
	 * A name with no data behind it: a symlink (the file it points to is
	 * untouched), an empty file (a stale lock, a pid file). A tool
	 * clearing its stale runtime links loses nothing. (An empty directory
	 * still counts: a tree's layout can be what someone kept.)
	 */
	if (op == LG_OP_UNLINK &&
	    (f->is_symlink || (f->size == 0 && !f->emptied)))
		return LG_CLASS_NO_DATA;
	/* mv to another filesystem removes what it has just copied */
	if (f->moved && (op == LG_OP_UNLINK || op == LG_OP_RMDIR))
		return LG_CLASS_MOVED;
	/*
	 * One decision, several witnesses: the tool delete that named this
	 * path was counted; the server's removal of it is the same decision
	 * (kept all the same).
	 */
	if (f->tool_deleted && (op == LG_OP_UNLINK || op == LG_OP_RMDIR))
		return LG_CLASS_TOOL_DELETED;
	/*
	 * gzip f writes f.gz and then removes f: the content lives on,
	 * transformed (kept all the same). The session checked the remover
	 * is a known compressor and the sibling is fresh, non-empty and of
	 * the compressed format; or (tar --remove-files, zip -m) a known
	 * archiver writing a fresh archive that holds it (lg_archive_holds).
	 */
	/*
	 * make clean, cargo clean, git clean -X of a build's outputs from
	 * before the session: the next build makes them again (kept all the
	 * same). The session checked the clean verb, the output's evidence
	 * and that git does not track it (provenance/regen.c).
	 */
	if (f->cleaned && ((op == LG_OP_UNLINK && f->is_reg) ||
			   (op == LG_OP_RMDIR && f->is_dir)))
		return LG_CLASS_REGENERABLE;
	if (f->transformed && ((op == LG_OP_UNLINK && f->is_reg) ||
			       (op == LG_OP_RMDIR && f->is_dir)))
		return LG_CLASS_TRANSFORMED;
	/*
	 * What git removes while changing branches is still in its object
	 * database: asked last, since it reads the file.
	 */
	if (is_git(exe) && git_candidate(op, f, path) &&
	    f->git_recoverable(f->git_ctx, op, path) > 0)
		return LG_CLASS_RECOVERABLE;
	return LG_CLASS_DESTROY;
}

bool lg_stub_of(int64_t before, int64_t now)
{
	return before >= LG_STUB_FROM && now > 0 && now <= LG_STUB_MAX &&
	       now * LG_STUB_RATIO <= before;
}
