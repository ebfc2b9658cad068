// SPDX-License-Identifier: MIT
#include <string.h>

#include "glob.h"

/* Matches a character class at p (after '['); returns the end or NULL. */
static const char *class_match(const char *p, char c, bool *hit)
{
	bool neg = false, found = false;

	if (*p == '!' || *p == '^') {
		neg = true;
		p++;
	}
	if (*p == ']') { /* a leading ']' is literal */
		found = c == ']';
		p++;
	}
	for (; *p && *p != ']'; p++) {
		if (p[1] == '-' && p[2] && p[2] != ']') {
			if (c >= p[0] && c <= p[2])
				found = true;
			p += 2;
		} else if (*p == c) {
			found = true;
		}
	}
	if (*p != ']')
		return NULL;
	*hit = found != neg;
	return p + 1;
}

/*
 * Matches s against p (struct gm below says where s ends). Besides a
 * match or not, the two answers of rsync's and git's wildmatch that keep
 * it polynomial: ABORT_ALL when s ran out (no later start of an earlier
 * star can do better), ABORT_TO_STARSTAR when a '*' met a '/' (only a
 * "**" further back can cross it). Without them "*a*a*a*a*b" against a
 * long run of a's took exponential time, in the notify thread.
 */
enum { NOMATCH, MATCH, ABORT_ALL, ABORT_TO_STARSTAR };

/*
 * The text a match is tried on: it ends at stop; with prefix, the match
 * may also end at any later '/' (a pattern covers what is below what it
 * matches), with dir_only only there (a directory with something in it),
 * and it is not empty. One call covers every end: trying each '/' as the
 * end made a "**" pattern O(n^3) on a deep path (0.7 s for 1000 levels,
 * per pattern, in the notify thread).
 */
struct gm {
	const char *start, *stop;
	bool prefix, dir_only;
};

static int gmatch(const char *p, const char *s, const struct gm *g)
{
	const char *stop = g->stop;

	while (*p) {
		switch (*p) {
		case '*':
			if (p[1] == '*') {
				const char *rest = p + 2;

				/* "**" + "/" also matches zero directories. */
				if (*rest == '/' &&
				    gmatch(rest + 1, s, g) == MATCH)
					return MATCH;
				for (const char *t = s;; t++) {
					int r = gmatch(rest, t, g);

					if (r == MATCH || r == ABORT_ALL)
						return r;
					if (t == stop)
						return ABORT_ALL;
				}
			}
			for (const char *t = s;; t++) {
				int r = gmatch(p + 1, t, g);

				if (r != NOMATCH)
					return r;
				if (t == stop)
					return ABORT_ALL;
				if (*t == '/')
					return ABORT_TO_STARSTAR;
			}
		case '?':
			if (s == stop)
				return ABORT_ALL;
			if (*s == '/')
				return NOMATCH;
			p++;
			s++;
			break;
		case '[': {
			bool hit = false;
			const char *end;

			if (s == stop)
				return ABORT_ALL;
			if (*s == '/')
				return NOMATCH;
			end = class_match(p + 1, *s, &hit);
			if (!end) { /* no closing ']': a literal '[' */
				if (*s != '[')
					return NOMATCH;
				p++;
				s++;
				break;
			}
			if (!hit)
				return NOMATCH;
			p = end;
			s++;
			break;
		}
		case '\\':
			if (p[1])
				p++;
			/* fall through */
		default:
			if (s == stop)
				return ABORT_ALL;
			if (*s != *p)
				return NOMATCH;
			p++;
			s++;
		}
	}
	if (!g->prefix)
		return s == stop ? MATCH : NOMATCH;
	if (s == g->start)
		return NOMATCH;
	if (s == stop)
		return g->dir_only ? NOMATCH : MATCH;
	return *s == '/' ? MATCH : NOMATCH;
}

/*
 * Does p match s up to the end or up to some later '/' boundary? With
 * dir_only the match must end before a '/' (a directory with something in it).
 */
static bool match_prefix(const char *p, const char *s, bool dir_only)
{
	struct gm g = { s, s + strlen(s), true, dir_only };

	return gmatch(p, s, &g) == MATCH;
}

bool lg_glob_match_path(const char *pattern, const char *path)
{
	char pat[1024];
	size_t n = strlen(pattern);
	bool dir_only = false;

	if (!n || n >= sizeof(pat))
		return false;
	memcpy(pat, pattern, n + 1);
	/* "name/" matches directories only: what is below them, not a file. */
	while (n > 1 && pat[n - 1] == '/') {
		pat[--n] = '\0';
		dir_only = true;
	}
	if (!strchr(pat, '/')) {
		for (const char *c = path; *c;) {
			const char *e;

			while (*c == '/')
				c++;
			if (!*c)
				break;
			e = strchr(c, '/');
			if (!e)
				e = c + strlen(c);
			/* "name" is a file's own name; "name/" any directory on the way. */
			if ((dir_only ? *e == '/' : *e == '\0') &&
			    gmatch(pat, c,
				   &(struct gm){ c, e, false, false }) == MATCH)
				return true;
			c = e;
		}
		return false;
	}
	if (pat[0] == '/')
		return match_prefix(pat + 1, path[0] == '/' ? path + 1 : path,
				    dir_only);
	/* "**" + "/" from the first directory covers every later one */
	if (pat[0] == '*' && pat[1] == '*' && pat[2] == '/') {
		while (*path == '/')
			path++;
		return *path && match_prefix(pat, path, dir_only);
	}
	for (const char *c = path; *c; c++) {
		if (*c == '/')
			continue;
		if ((c == path || c[-1] == '/') &&
		    match_prefix(pat, c, dir_only))
			return true;
	}
	return false;
}

void lg_glob_literal(const char *pattern, char *out, size_t size)
{
	size_t n = strlen(pattern), best = 0, best_at = 0;

	while (n > 1 && pattern[n - 1] == '/')
		n--;
	for (size_t i = 0; i < n;) {
		size_t start = i;

		if (pattern[i] ==
		    '[') { /* a class stands for one unknown char */
			i++;
			if (i < n && (pattern[i] == '!' || pattern[i] == '^'))
				i++;
			if (i < n && pattern[i] == ']') /* a literal member */
				i++;
			while (i < n && pattern[i] != ']')
				i++;
			i++;
			continue;
		}
		while (i < n && !strchr("*?[\\", pattern[i]))
			i++;
		if (i - start > best) {
			best = i - start;
			best_at = start;
		}
		if (i == start)
			i++;
	}
	if (best < 2 || best >= size)
		best = 0;
	memcpy(out, pattern + best_at, best);
	out[best] = '\0';
}
