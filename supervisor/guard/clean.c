// SPDX-License-Identifier: MIT
/*
 * Regenerable outputs (issue 41), pure: the clean verbs of
 * guard/clean.def, a build output's own evidence, tools' output
 * directories, git's index.
 */
#include <fnmatch.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "clean.h"
#include "lib/bytes.h"

struct clean_line {
	const char *program;
	enum lg_runs runs;
	const char *sub, *need, *except, *value_opts;
};

static const struct clean_line lines[] = {
#define LG_CLEAN(P, R, S, N, X, V) { P, R, S, N, X, V },
#include "clean.def"
#undef LG_CLEAN
};
#define N_LINES (sizeof(lines) / sizeof(lines[0]))

static const struct {
	const char *cls, *program;
} java_mains[] = {
#define LG_CLEAN(P, R, S, N, X, V)
#define LG_CLEAN_JAVA(C, P) { C, P },
#include "clean.def"
#undef LG_CLEAN
};

const char *lg_clean_program(size_t i)
{
	for (size_t k = 0; k < N_LINES; k++)
		if (lines[k].runs == LG_RUNS_BIN && i-- == 0)
			return lines[k].program;
	return NULL;
}

/* Is s (len bytes) one of the '|'-separated alternatives of list? */
static bool in_list(const char *list, const char *s, size_t len)
{
	for (const char *p = list; *p;) {
		size_t n = strcspn(p, "|");

		if (n == len && memcmp(p, s, n) == 0)
			return true;
		p += n;
		p += *p == '|';
	}
	return false;
}

/* The arguments of a command line, split once: at most ARGS of them. */
#define ARGS 256
struct args {
	const char *v[ARGS];
	size_t n;
	bool pos[ARGS]; /* a positional argument */
};

static void positional(struct args *a, const char *value_opts)
{
	bool rest = false;

	memset(a->pos, 0, sizeof(a->pos));
	for (size_t i = 0; i < a->n; i++) {
		const char *s = a->v[i];

		if (rest) {
			a->pos[i] = true;
		} else if (strcmp(s, "--") == 0) {
			rest = true;
		} else if (s[0] == '-' && s[1]) {
			if (in_list(value_opts, s, strlen(s)))
				i++; /* its value */
		} else if (s[0] != '+') {
			a->pos[i] = true;
		}
	}
}

/* One alternative (len bytes of alt) among a's arguments from 'from' on. */
static bool alt_matches(const struct args *a, size_t from, const char *alt,
			size_t len)
{
	char buf[128];
	const char *sp;

	if (!len || len >= sizeof(buf))
		return false;
	memcpy(buf, alt, len);
	buf[len] = '\0';
	if (buf[0] == '~') { /* a letter in a cluster of short options */
		for (size_t i = from; i < a->n; i++)
			if (a->v[i][0] == '-' && a->v[i][1] != '-' && buf[1] &&
			    strchr(a->v[i] + 1, buf[1]))
				return true;
		return false;
	}
	sp = strchr(buf, ' ');
	if (buf[0] == '-' && sp) { /* an option and its value */
		size_t ol = (size_t)(sp - buf);
		const char *val = sp + 1;

		for (size_t i = from; i < a->n; i++) {
			const char *s = a->v[i];

			if (strncmp(s, buf, ol) != 0)
				continue;
			if (!s[ol] && i + 1 < a->n &&
			    strcmp(a->v[i + 1], val) == 0)
				return true;
			if (s[ol] == '=' && buf[1] == '-' &&
			    strcmp(s + ol + 1, val) == 0)
				return true;
			if (buf[1] != '-' && strcmp(s + ol, val) == 0)
				return true;
		}
		return false;
	}
	for (size_t i = from; i < a->n; i++) {
		if (buf[0] == '-') {
			if (strcmp(a->v[i], buf) == 0)
				return true;
		} else if (a->pos[i] && fnmatch(buf, a->v[i], 0) == 0) {
			return true;
		}
	}
	return false;
}

/* One of the alternatives of group (len bytes) is there. */
static bool group_matches(const struct args *a, size_t from, const char *group,
			  size_t len)
{
	for (size_t k = 0; k < len;) {
		size_t n = strcspn(group + k, "|,");

		if (n > len - k)
			n = len - k;
		if (alt_matches(a, from, group + k, n))
			return true;
		k += n + 1;
	}
	return false;
}

/* Every ','-separated group of need matches ("" always). */
static bool need_matches(const struct args *a, size_t from, const char *need)
{
	for (const char *p = need; *p;) {
		size_t n = strcspn(p, ",");

		if (!group_matches(a, from, p, n))
			return false;
		p += n;
		p += *p == ',';
	}
	return true;
}

static bool line_matches(const struct clean_line *l, struct args *a)
{
	size_t from = 0;

	positional(a, l->value_opts);
	if (l->sub[0]) {
		while (from < a->n && !a->pos[from])
			from++;
		if (from == a->n || strcmp(a->v[from], l->sub) != 0)
			return false;
		from++;
	}
	if (!need_matches(a, from, l->need))
		return false;
	return !l->except[0] ||
	       !group_matches(a, from, l->except, strlen(l->except));
}

static const char *base(const char *p)
{
	const char *s = strrchr(p, '/');

	return s ? s + 1 : p;
}

static bool interpreter(const char *exe)
{
	static const char *const names[] = { "sh",   "bash",   "dash",
					     "zsh",  "ksh",    "perl",
					     "ruby", "python", "python3",
					     "env" };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(exe, names[i]) == 0)
			return true;
	return strncmp(exe, "python3.", 8) == 0 ||
	       strncmp(exe, "perl5", 5) == 0;
}

const char *lg_clean_verb(const char *exe, const char *argv, size_t n,
			  bool *bin)
{
	struct args a = { .n = 0 };
	const char *prog = NULL;
	enum lg_runs runs = LG_RUNS_BIN;
	size_t first = 1;

	*bin = false;
	for (size_t o = 0; o < n && a.n < ARGS;) {
		const char *s = argv + o;
		size_t len = strnlen(s, n - o);

		if (o + len == n)
			break; /* not NUL-terminated: cut */
		a.v[a.n++] = s;
		o += len + 1;
	}
	if (!a.n)
		return NULL;
	if (strcmp(exe, "java") == 0) {
		for (size_t i = 1; i < a.n && !prog; i++)
			for (size_t k = 0;
			     k < sizeof(java_mains) / sizeof(java_mains[0]);
			     k++)
				if (strcmp(a.v[i], java_mains[k].cls) == 0) {
					prog = java_mains[k].program;
					first = i + 1;
					break;
				}
		runs = LG_RUNS_JAVA;
	} else if (interpreter(exe)) {
		/* the script: the first argument that is no option */
		for (size_t i = 1; i < a.n && !prog; i++)
			if (a.v[i][0] != '-') {
				if (strcmp(base(a.v[i]), "-c") == 0)
					break;
				prog = base(a.v[i]);
				first = i + 1;
			} else if (strcmp(a.v[i], "-c") == 0 ||
				   strcmp(a.v[i], "-e") == 0) {
				break; /* a command string, no script */
			}
		runs = LG_RUNS_SCRIPT;
	} else {
		prog = exe;
	}
	if (!prog)
		return NULL;
	for (size_t k = 0; k < N_LINES; k++) {
		struct args rest;

		if (lines[k].runs != runs ||
		    strcmp(lines[k].program, prog) != 0)
			continue;
		rest.n = a.n - first;
		memcpy(rest.v, a.v + first, rest.n * sizeof(rest.v[0]));
		if (line_matches(&lines[k], &rest)) {
			*bin = runs == LG_RUNS_BIN;
			return lines[k].program;
		}
	}
	return NULL;
}

/* Case-insensitive: is needle in the n bytes of hay? */
static bool has_text(const unsigned char *hay, size_t n, const char *needle)
{
	size_t l = strlen(needle);

	for (size_t i = 0; i + l <= n; i++)
		if (strncasecmp((const char *)hay + i, needle, l) == 0)
			return true;
	return false;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n > m && strcmp(s + n - m, suffix) == 0;
}

static uint32_t le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

const char *lg_build_output_head(const char *name, const unsigned char *head,
				 size_t n)
{
	static const char *const marks[] = {
		/* config.status: "Generated by configure."; config.h:
		 * "Generated from config.h.in by configure." */
		"by configure.",
		"running configure", /* config.log */
		"generated by config.status",
		"generated automatically by config.status",
		"generated by automake",
		"generated by libtool",
		"libtool object file",
		"libtool library file",
		"generated by cmake",
		"cmake generated file",
		"made by gnu bison",
		"generated by flex",
	};

	if (n >= 4 && memcmp(head,
			     "\x7f"
			     "ELF",
			     4) == 0)
		return "an ELF file";
	if (n >= 8 && (memcmp(head, "!<arch>\n", 8) == 0 ||
		       memcmp(head, "!<thin>\n", 8) == 0))
		return "an archive of objects";
	if (n >= 0x40 && head[0] == 'M' && head[1] == 'Z') {
		uint32_t pe = le32(head + 0x3c);

		if (pe + 4 <= n && memcmp(head + pe, "PE\0\0", 4) == 0)
			return "a PE executable";
	}
	if (n >= 4) {
		uint32_t m = le32(head);

		if (m == 0xfeedface || m == 0xfeedfacf || m == 0xcefaedfe ||
		    m == 0xcffaedfe)
			return "a Mach-O file";
		if (memcmp(head, "\xca\xfe\xba\xbe", 4) == 0)
			return "a Java class or a Mach-O fat file";
		if (memcmp(head, "\0asm", 4) == 0)
			return "a WebAssembly module";
		if (memcmp(head, "BC\xc0\xde", 4) == 0)
			return "LLVM bitcode";
		if (head[2] == '\r' && head[3] == '\n' &&
		    (ends_with(name, ".pyc") || ends_with(name, ".pyo")))
			return "Python bytecode";
	}
	if (memchr(head, '\0', n))
		return NULL; /* binary, of no kind above */
	for (size_t i = 0; i < sizeof(marks) / sizeof(marks[0]); i++)
		if (has_text(head, n, marks[i]))
			return "a generated file";
	return NULL;
}

bool lg_latex_aux(const char *name, char *tex, size_t size)
{
	static const char *const aux[] = {
		".aux",	       ".log", ".toc",	       ".lof", ".lot",
		".out",	       ".fls", ".fdb_latexmk", ".bbl", ".blg",
		".synctex.gz", ".nav", ".snm",	       ".bcf", ".run.xml",
		".xdv",	       ".dvi", ".pdf",	       ".ps",
	};
	size_t n = strlen(name);

	for (size_t i = 0; i < sizeof(aux) / sizeof(aux[0]); i++) {
		size_t m = strlen(aux[i]);

		if (n > m && strcmp(name + n - m, aux[i]) == 0 &&
		    n - m + 5 <= size) {
			memcpy(tex, name, n - m);
			memcpy(tex + n - m, ".tex", 5);
			return true;
		}
	}
	return false;
}

static const struct {
	const char *name; /* a glob */
	const char *markers;
} output_dirs[] = {
	{ "target", "Cargo.toml|pom.xml" },
	{ "build", "build.gradle|build.gradle.kts|settings.gradle|"
		   "settings.gradle.kts|pyproject.toml|setup.py|setup.cfg" },
	{ "dist", "pyproject.toml|setup.py|setup.cfg" },
	{ "*.egg-info", "pyproject.toml|setup.py|setup.cfg" },
	{ "bin", "*.csproj|*.fsproj|*.vbproj" },
	{ "obj", "*.csproj|*.fsproj|*.vbproj" },
	{ "CMakeFiles", "CMakeCache.txt" },
	{ "autom4te.cache", "configure.ac|configure.in" },
	{ ".deps", "Makefile.in" },
};

int lg_output_dir(const char *path, bool is_dir, size_t i, char *parent,
		  size_t size, const char **markers)
{
	size_t len = strlen(path), found = 0;

	if (path[0] != '/')
		return 0;
	for (size_t p = len; p-- > 0;) {
		char comp[256];
		const char *c;
		size_t n;

		if (path[p] != '/')
			continue;
		c = path + p + 1;
		n = strcspn(c, "/");
		if (!c[n] && !is_dir)
			continue; /* the file's own name */
		if (!n || n >= sizeof(comp) || p == 0)
			continue;
		memcpy(comp, c, n);
		comp[n] = '\0';
		for (size_t k = 0;
		     k < sizeof(output_dirs) / sizeof(output_dirs[0]); k++) {
			if (fnmatch(output_dirs[k].name, comp, 0) != 0)
				continue;
			if (found++ != i)
				break;
			if (p + 1 > size)
				return 0;
			memcpy(parent, path, p);
			parent[p] = '\0';
			*markers = output_dirs[k].markers;
			return 1;
		}
	}
	return 0;
}

/* git's index: the names, sorted as git sorts them (bytes). */
struct lg_git_index {
	char **names;
	size_t n;
	char *blob;
};

void lg_git_index_free(struct lg_git_index *x)
{
	if (!x)
		return;
	free(x->names);
	free(x->blob);
	free(x);
}

size_t lg_git_index_count(const struct lg_git_index *x)
{
	return x ? x->n : 0;
}

/* A varint of index v4 (git's offset encoding). */
static bool varint(const unsigned char **p, const unsigned char *end,
		   size_t *out)
{
	size_t v;
	unsigned char c;

	if (*p >= end)
		return false;
	c = *(*p)++;
	v = c & 0x7f;
	while (c & 0x80) {
		if (*p >= end || v > (SIZE_MAX >> 8))
			return false;
		c = *(*p)++;
		v = ((v + 1) << 7) | (c & 0x7f);
	}
	*out = v;
	return true;
}

/* The entries with hashes of hl bytes (20: SHA-1, 32: SHA-256). */
static struct lg_git_index *parse_entries(const unsigned char *buf, size_t n,
					  size_t hl)
{
	uint32_t version = lg_be32(buf + 4), count = lg_be32(buf + 8);
	const unsigned char *p = buf + 12, *end = buf + n - hl;
	struct lg_git_index *x = calloc(1, sizeof(*x));
	size_t used = 0, cap = 0, prev = 0;

	if (!x || count > n / 40)
		goto bad;
	x->names = calloc(count ? count : 1, sizeof(*x->names));
	/* offsets into blob first; pointers once it stops moving */
	if (!x->names)
		goto bad;
	for (uint32_t e = 0; e < count; e++) {
		const unsigned char *start = p;
		size_t fixed = 40 + hl + 2, len, strip = 0, keep;
		uint16_t flags;
		const unsigned char *nul;

		if ((size_t)(end - p) < fixed)
			goto bad;
		flags = (uint16_t)(p[40 + hl] << 8 | p[41 + hl]);
		p += fixed;
		if (flags & 0x4000) { /* extended flags (v3+) */
			if (version < 3 || end - p < 2)
				goto bad;
			p += 2;
		}
		if (version == 4 && !varint(&p, end, &strip))
			goto bad;
		nul = memchr(p, '\0', (size_t)(end - p));
		if (!nul)
			goto bad;
		len = (size_t)(nul - p);
		if ((flags & 0xfff) != 0xfff && version != 4 &&
		    (flags & 0xfff) != len)
			goto bad;
		if (strip > prev)
			goto bad;
		keep = version == 4 ? prev - strip :
				      0; /* v4: the name before's */
		if (cap - used < keep + len + 1) {
			char *nb;

			cap = (cap + keep + len + 1) * 2;
			nb = realloc(x->blob, cap);
			if (!nb)
				goto bad;
			x->blob = nb;
		}
		if (version == 4 && e)
			memmove(x->blob + used,
				x->blob + (size_t)x->names[e - 1], keep);
		memcpy(x->blob + used + keep, p, len);
		x->blob[used + keep + len] = '\0';
		x->names[e] = (char *)(uintptr_t)used;
		prev = keep + len;
		used += prev + 1;
		p = nul + 1;
		if (version != 4) { /* padded to 8 bytes with NULs */
			size_t ent = (size_t)(p - start);
			size_t pad = (8 - ent % 8) % 8;

			if ((size_t)(end - p) < pad)
				goto bad;
			for (size_t k = 0; k < pad; k++)
				if (p[k])
					goto bad;
			p += pad;
		}
	}
	/* the extensions: a split or sparse index is not read */
	while (end - p >= 8) {
		uint32_t sz = lg_be32(p + 4);

		if (memcmp(p, "link", 4) == 0 || memcmp(p, "sdir", 4) == 0)
			goto bad;
		if (sz > (size_t)(end - p) - 8)
			goto bad;
		p += 8 + sz;
	}
	if (p != end)
		goto bad;
	x->n = count;
	for (size_t e = 0; e < x->n; e++)
		x->names[e] = x->blob + (size_t)(uintptr_t)x->names[e];
	return x;
bad:
	if (x)
		x->n = 0;
	lg_git_index_free(x);
	return NULL;
}

struct lg_git_index *lg_git_index_parse(const unsigned char *buf, size_t n)
{
	struct lg_git_index *x;
	uint32_t version;

	if (n < 12 + 20 || memcmp(buf, "DIRC", 4) != 0)
		return NULL;
	version = lg_be32(buf + 4);
	if (version < 2 || version > 4)
		return NULL;
	x = parse_entries(buf, n, 20);
	if (!x && n >= 12 + 32)
		x = parse_entries(buf, n, 32);
	return x;
}

/* The first entry not before key (git sorts its names bytewise). */
static size_t lower(const struct lg_git_index *x, const char *key)
{
	size_t lo = 0, hi = x->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (strcmp(x->names[mid], key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

bool lg_git_index_tracks(const struct lg_git_index *x, const char *rel,
			 bool dir)
{
	size_t l = strlen(rel), i;
	char key[4200];

	if (!x || !l)
		return true;
	if (!dir) {
		i = lower(x, rel);
		return i < x->n && strcmp(x->names[i], rel) == 0;
	}
	if (l + 2 > sizeof(key))
		return true;
	memcpy(key, rel, l);
	key[l] = '/';
	key[l + 1] = '\0';
	i = lower(x, key);
	return i < x->n && strncmp(x->names[i], key, l + 1) == 0;
}
