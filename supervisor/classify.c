// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "classify.h"
#include "glob.h"

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
	return 0;
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
	for (size_t i = 0; i < n; i++) {
		if (rules[i].program &&
		    (!exe || strcmp(rules[i].program, exe) != 0))
			continue;
		if (rules[i].lit[0] && !strstr(path, rules[i].lit))
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

	path = as_dir(op, path, buf, sizeof(buf));
	for (size_t i = 0; i < n; i++) {
		if (!rules[i].program)
			continue;
		if (rules[i].lit[0] && !strstr(path, rules[i].lit))
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
	       lg_ignored_by_program_rule(rules, n, op, path);
}

bool lg_classify_lost_by_git(enum lg_op op, enum lg_class cls, const char *path,
			     const char *exe)
{
	return cls == LG_CLASS_DESTROY && op == LG_OP_UNLINK && is_git(exe) &&
	       !lg_path_in_git_dir(path);
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
	if (op == LG_OP_UNLINK && f->is_dir)
		return LG_CLASS_HARMLESS; /* EISDIR: it fails */
	/* Cheapest first: most of what a build removes is its own output. */
	if (!lg_facts_preexisting(f, session_start_ns))
		return LG_CLASS_SESSION;
	if ((op == LG_OP_TRUNCATE || op == LG_OP_OPEN_TRUNC) &&
	    !lg_facts_content_preexisting(f, session_start_ns))
		return LG_CLASS_SESSION;
	if (ignored_op(rules, nrules, op, path, exe))
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
	 * What git removes while changing branches is still in its object
	 * database: asked last, since it reads the file.
	 */
	if (is_git(exe) && git_candidate(op, f, path) &&
	    f->git_recoverable(f->git_ctx, op, path) > 0)
		return LG_CLASS_RECOVERABLE;
	return LG_CLASS_DESTROY;
}
