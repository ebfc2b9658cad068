// SPDX-License-Identifier: MIT
#include <limits.h>
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
 * A pattern is matched as a set of positions in it, advanced one character
 * of the path at a time (a Thompson NFA): time in path length times pattern
 * length, whatever the pattern. Backtracking took exponential time on
 * patterns with many "**" (fuzz_path: 30 "**" against a path of 600
 * components, in the notify thread) even with wildmatch's early aborts.
 */
#define MAX_TOKENS 1024

/*
 * "**" + "/" is T_ZERO, T_STAR2, T_LIT '/': T_ZERO goes on either after
 * the '/' (no directory at all) or to the "**" (any text, then the '/').
 */
enum { T_LIT, T_ANY, T_CLASS, T_STAR, T_STAR2, T_ZERO };

struct tok {
	unsigned char kind;
	char c; /* T_LIT */
	const char *cls; /* T_CLASS: after its '[' */
};

/* The pattern's tokens: their count, or -1 when there are too many. */
static int compile(const char *p, struct tok *t, int max)
{
	int n = 0;

	while (*p) {
		struct tok *k = &t[n];
		const char *end;
		bool hit;

		if (n == max)
			return -1;
		memset(k, 0, sizeof(*k));
		n++;
		switch (*p) {
		case '*':
			if (p[1] == '*' && p[2] == '/') {
				if (n == max)
					return -1;
				k->kind = T_ZERO;
				memset(&t[n], 0, sizeof(t[n]));
				t[n++].kind = T_STAR2;
				p += 2; /* the '/' comes next */
			} else if (p[1] == '*') {
				k->kind = T_STAR2;
				p += 2;
			} else {
				k->kind = T_STAR;
				p++;
			}
			break;
		case '?':
			k->kind = T_ANY;
			p++;
			break;
		case '[':
			end = class_match(p + 1, 'x', &hit);
			if (end) {
				k->kind = T_CLASS;
				k->cls = p + 1;
				p = end;
				break;
			}
			/* no closing ']': a literal '[' */
			k->kind = T_LIT;
			k->c = *p++;
			break;
		case '\\':
			if (p[1])
				p++;
			/* fall through */
		default:
			k->kind = T_LIT;
			k->c = *p++;
		}
	}
	return n;
}

/* Positions in the pattern, each once (mark == gen), in a list. */
struct set {
	unsigned gen, n;
	unsigned mark[MAX_TOKENS + 1];
	int list[MAX_TOKENS + 1];
};

/* Position i and those it reaches by matching nothing (a star, zero dirs). */
static void add(struct set *st, const struct tok *t, int m, int i)
{
	while (i <= m && st->mark[i] != st->gen) {
		st->mark[i] = st->gen;
		st->list[st->n++] = i;
		if (i == m)
			return;
		if (t[i].kind == T_ZERO)
			add(st, t, m, i + 3);
		else if (t[i].kind != T_STAR && t[i].kind != T_STAR2)
			return;
		i++;
	}
}

/* cur's positions after the character c, into nxt. */
static void step(const struct set *cur, struct set *nxt, const struct tok *t,
		 int m, char c)
{
	nxt->gen++;
	nxt->n = 0;
	for (unsigned k = 0; k < cur->n; k++) {
		int i = cur->list[k];
		bool hit = false;

		if (i == m)
			continue;
		switch (t[i].kind) {
		case T_LIT:
			if (c == t[i].c)
				add(nxt, t, m, i + 1);
			break;
		case T_ANY:
			if (c != '/')
				add(nxt, t, m, i + 1);
			break;
		case T_CLASS:
			if (c != '/' && class_match(t[i].cls, c, &hit) && hit)
				add(nxt, t, m, i + 1);
			break;
		case T_STAR:
			if (c != '/')
				add(nxt, t, m, i);
			break;
		case T_STAR2:
			add(nxt, t, m, i);
			break;
		default: /* T_ZERO: matches no character itself */
			break;
		}
	}
}

/*
 * The text a match is tried on, [s, stop). With prefix the match may also
 * end at any later '/' (a pattern covers what is below what it matches),
 * with dir_only only there (a directory with something in it), and it is
 * not empty. With floating it may start at any component, else at s.
 */
struct gm {
	const char *s, *stop;
	bool prefix, dir_only, floating;
};

static bool nfa_match(const struct tok *t, int m, const struct gm *g)
{
	/* marks of earlier calls are older generations: no clearing */
	static __thread struct set a, b;
	struct set *cur = &a, *nxt = &b, *tmp;

	if (a.gen > UINT_MAX - 2 * 8192 || b.gen > UINT_MAX - 2 * 8192) {
		memset(&a, 0, sizeof(a));
		memset(&b, 0, sizeof(b));
	}
	a.gen++;
	a.n = b.n = 0;
	for (const char *p = g->s;; p++) {
		/* a match ending here; one starting here comes after (empty) */
		if (cur->n && cur->mark[m] == cur->gen &&
		    (!g->prefix	  ? p == g->stop :
		     p == g->stop ? !g->dir_only :
				    *p == '/'))
			return true;
		if (p == g->stop)
			return false;
		if (p == g->s ? !g->floating || *p != '/' :
				g->floating && p[-1] == '/' && *p != '/')
			add(cur, t, m, 0);
		if (!cur->n && !g->floating)
			return false;
		step(cur, nxt, t, m, *p);
		tmp = cur;
		cur = nxt;
		nxt = tmp;
	}
}

/*
 * A name pattern of plain characters and at most one '*' ("*.o", ".#*",
 * "node_modules"): most of the shipped ones, matched by comparing its
 * two ends with the name's, without the machine above.
 */
static bool plain_name(const char *pat, size_t n, size_t *star)
{
	*star = n;
	for (size_t i = 0; i < n; i++) {
		if (pat[i] == '*') {
			if (*star != n)
				return false;
			*star = i;
		} else if (pat[i] == '?' || pat[i] == '[' || pat[i] == '\\') {
			return false;
		}
	}
	return true;
}

static bool plain_match(const char *pat, size_t n, size_t star, const char *c,
			const char *e)
{
	size_t len = (size_t)(e - c), tail;

	if (star == n)
		return len == n && !memcmp(pat, c, n);
	tail = n - star - 1;
	return len >= n - 1 && !memcmp(pat, c, star) &&
	       !memcmp(pat + star + 1, e - tail, tail);
}

bool lg_glob_match_path(const char *pattern, const char *path)
{
	static __thread struct tok t[MAX_TOKENS];
	char pat[1024];
	size_t n = strlen(pattern);
	bool dir_only = false;
	int m;

	if (!n || n >= sizeof(pat))
		return false;
	memcpy(pat, pattern, n + 1);
	/* "name/" matches directories only: what is below them, not a file. */
	while (n > 1 && pat[n - 1] == '/') {
		pat[--n] = '\0';
		dir_only = true;
	}
	if (!strchr(pat, '/')) {
		size_t star;
		bool plain = plain_name(pat, n, &star);

		if (!plain && (m = compile(pat, t, MAX_TOKENS)) < 0)
			return false;
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
			    (plain ? plain_match(pat, n, star, c, e) :
				     nfa_match(t, m,
					       &(struct gm){ c, e, false, false,
							     false })))
				return true;
			c = e;
		}
		return false;
	}
	m = compile(pat[0] == '/' ? pat + 1 : pat, t, MAX_TOKENS);
	if (m < 0)
		return false;
	if (pat[0] == '/') {
		path += path[0] == '/';
		return nfa_match(t, m,
				 &(struct gm){ path, path + strlen(path), true,
					       dir_only, false });
	}
	/* "**" + "/" from the first directory covers every later one */
	if (pat[0] == '*' && pat[1] == '*' && pat[2] == '/') {
		while (*path == '/')
			path++;
		return *path &&
		       nfa_match(t, m,
				 &(struct gm){ path, path + strlen(path), true,
					       dir_only, false });
	}
	return nfa_match(t, m,
			 &(struct gm){ path, path + strlen(path), true,
				       dir_only, true });
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
		if (pattern[i] == '\\') { /* an escaped char ends a run */
			i += 2;
			continue;
		}
		/*
		 * The '/' of "**" + "/" may match nothing: not required, but
		 * where a '/' or the path's start comes before the stars:
		 * "a/", two stars, "/b" matches "a/b", which has "/b".
		 */
		if (pattern[i] == '/' && i >= 3 && pattern[i - 1] == '*' &&
		    pattern[i - 2] == '*' && pattern[i - 3] != '/') {
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

static unsigned byte_bit(unsigned char b)
{
	if (b >= 'a' && b <= 'z')
		return b - 'a';
	if (b >= 'A' && b <= 'Z')
		return b - 'A';
	if (b >= '0' && b <= '9')
		return 26 + (b - '0');
	switch (b) {
	case '.':
		return 36;
	case '-':
		return 37;
	case '_':
		return 38;
	case '~':
		return 39;
	case '#':
		return 40;
	}
	return 41 + b % 23;
}

uint64_t lg_glob_bytes(const char *pattern)
{
	uint64_t set = 0;

	for (const unsigned char *p = (const unsigned char *)pattern; *p;) {
		if (*p == '[') { /* a class: one byte, not known which */
			p++;
			if (*p == '!' || *p == '^')
				p++;
			if (*p == ']')
				p++;
			while (*p && *p != ']')
				p++;
			if (*p)
				p++;
			continue;
		}
		if (*p == '\\' && p[1]) /* an escaped byte is itself */
			p++;
		else if (*p == '*' || *p == '?' || *p == '/') {
			p++; /* a '/' after "**" may match nothing */
			continue;
		}
		set |= 1ULL << byte_bit(*p);
		p++;
	}
	return set;
}

uint64_t lg_glob_path_bytes(const char *path)
{
	uint64_t set = 0;

	for (const unsigned char *p = (const unsigned char *)path; *p; p++)
		set |= 1ULL << byte_bit(*p);
	return set;
}
