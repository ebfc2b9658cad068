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
	       lg_ignored_by_program_rule(rules, n, op, path);
}

bool lg_classify_lost_by_git(enum lg_op op, enum lg_class cls, const char *path,
			     const char *exe)
{
	return cls == LG_CLASS_DESTROY && op == LG_OP_UNLINK && is_git(exe) &&
	       !lg_path_in_git_dir(path);
}

/*
 * The compressors that replace a file by its transformed form, and the
 * suffixes they write (or, decompressing, read). By the program's name:
 * the content test is the magic of what is written (a stub with no
 * header is no transform, whoever writes it).
 */
static const struct {
	const char *exe;
	const char *suffixes[3];
} compressors[] = {
	{ "gzip", { ".gz" } },	      { "gunzip", { ".gz" } },
	{ "pigz", { ".gz" } },	      { "unpigz", { ".gz" } },
	{ "xz", { ".xz", ".lzma" } }, { "unxz", { ".xz", ".lzma" } },
	{ "lzma", { ".lzma" } },      { "unlzma", { ".lzma" } },
	{ "bzip2", { ".bz2" } },      { "bunzip2", { ".bz2" } },
	{ "pbzip2", { ".bz2" } },     { "lbzip2", { ".bz2" } },
	{ "zstd", { ".zst" } },	      { "unzstd", { ".zst" } },
	{ "zstdmt", { ".zst" } },     { "pzstd", { ".zst" } },
	{ "lz4", { ".lz4" } },	      { "unlz4", { ".lz4" } },
	{ "lzip", { ".lz" } },	      { "plzip", { ".lz" } },
	{ "lunzip", { ".lz" } },      { "brotli", { ".br" } },
	{ "compress", { ".Z" } },     { "uncompress", { ".Z" } },
	{ "ncompress", { ".Z" } },    { "lzop", { ".lzo" } },
};

const char *lg_transform_suffix(const char *exe, size_t i)
{
	if (!exe || i >= 3)
		return NULL;
	/*
	 * Debian installs lzip as an alternative: /usr/bin/lzip leads to
	 * lzip.lzip, lzip.plzip, lzip.clzip..., the name the program runs as.
	 */
	if (strncmp(exe, "lzip.", 5) == 0 && exe[5])
		exe = "lzip";
	for (size_t k = 0; k < sizeof(compressors) / sizeof(compressors[0]);
	     k++)
		if (strcmp(compressors[k].exe, exe) == 0)
			return compressors[k].suffixes[i];
	return NULL;
}

bool lg_transform_magic(const char *suffix, const unsigned char *head, size_t n)
{
	static const struct {
		const char *suffix;
		unsigned char magic[6];
		size_t n;
	} magics[] = {
		{ ".gz", { 0x1f, 0x8b }, 2 },
		{ ".xz", { 0xfd, '7', 'z', 'X', 'Z', 0x00 }, 6 },
		{ ".lzma", { 0x5d, 0x00, 0x00 }, 3 },
		{ ".bz2", { 'B', 'Z', 'h' }, 3 },
		{ ".zst", { 0x28, 0xb5, 0x2f, 0xfd }, 4 },
		{ ".lz4", { 0x04, 0x22, 0x4d, 0x18 }, 4 },
		{ ".lz", { 'L', 'Z', 'I', 'P' }, 4 },
		{ ".Z", { 0x1f, 0x9d }, 2 },
		{ ".lzo", { 0x89, 'L', 'Z', 'O' }, 4 },
	};

	if (!suffix || !head)
		return false;
	if (strcmp(suffix, ".br") == 0)
		return n > 0;
	for (size_t k = 0; k < sizeof(magics) / sizeof(magics[0]); k++)
		if (strcmp(magics[k].suffix, suffix) == 0)
			return n >= magics[k].n &&
			       memcmp(head, magics[k].magic, magics[k].n) == 0;
	return false;
}

bool lg_transform_sibling_fresh(const struct lg_facts *sib,
				int64_t session_start_ns, int64_t now_ns)
{
	return sib->exists && sib->is_reg && sib->size > 0 &&
	       !lg_facts_preexisting(sib, session_start_ns) &&
	       sib->ctime_ns >= now_ns - LG_TRANSFORM_FRESH_NS;
}

static const char *const archivers[] = { "tar", "gtar", "bsdtar", "zip",
					 "7z",	"7za",	"7zz",	  "7zr" };

bool lg_archiver(const char *exe)
{
	if (!exe)
		return false;
	for (size_t k = 0; k < sizeof(archivers) / sizeof(archivers[0]); k++)
		if (strcmp(archivers[k], exe) == 0)
			return true;
	return false;
}

bool lg_archiver_by_name(const char *exe)
{
	return lg_archiver(exe) && (exe[0] == 'z' || exe[0] == '7');
}

/* The compressed formats a tar may write (brotli, with no magic, is none). */
static bool compressed_head(const unsigned char *head, size_t n)
{
	static const char *const suffixes[] = { ".gz",	".xz",	".lzma",
						".bz2", ".zst", ".lz4",
						".lz",	".Z",	".lzo" };

	for (size_t k = 0; k < sizeof(suffixes) / sizeof(suffixes[0]); k++)
		if (lg_transform_magic(suffixes[k], head, n))
			return true;
	return false;
}

bool lg_archive_holds(const char *exe, const struct lg_archive *a,
		      int64_t file_size, int64_t session_start_ns,
		      int64_t now_ns)
{
	static const unsigned char zip[] = { 'P', 'K', 0x03, 0x04 };
	static const unsigned char sz[] = { '7', 'z', 0xbc, 0xaf, 0x27, 0x1c };
	const unsigned char *h = a->head;
	size_t n = h ? a->n : 0;
	bool tar, bsd;

	if (!lg_archiver(exe) || !a->f.exists || !a->f.is_reg ||
	    a->f.nlink == 0 || lg_facts_preexisting(&a->f, session_start_ns) ||
	    a->f.ctime_ns < now_ns - LG_TRANSFORM_FRESH_NS ||
	    (a->since_ns && a->f.ctime_ns < a->since_ns))
		return false;
	bsd = strcmp(exe, "bsdtar") == 0;
	tar = bsd || strcmp(exe, "tar") == 0 || strcmp(exe, "gtar") == 0;
	/* tar -z: the compressor writes what it has, when its buffer fills */
	if (a->piped)
		return tar && (a->f.size == 0 || compressed_head(h, n));
	if (a->f.size <= 0 || n == 0)
		return false;
	if (n >= 262 && memcmp(h + 257, "ustar", 5) == 0)
		return (tar || exe[0] == '7') && a->f.size >= file_size;
	if (compressed_head(h, n))
		return tar || exe[0] == '7';
	if (n >= sizeof(zip) && memcmp(h, zip, sizeof(zip)) == 0)
		return bsd || exe[0] == 'z' || exe[0] == '7';
	if (n >= sizeof(sz) && memcmp(h, sz, sizeof(sz)) == 0)
		return bsd || exe[0] == '7';
	return false;
}

bool lg_zip_lists(const unsigned char *cd, size_t n, const char *path)
{
	size_t plen = path ? strlen(path) : 0, off = 0;

	while (cd && off + 46 <= n && memcmp(cd + off, "PK\x01\x02", 4) == 0) {
		const unsigned char *r = cd + off;
		size_t nl = (size_t)r[28] | (size_t)r[29] << 8;
		size_t xl = (size_t)r[30] | (size_t)r[31] << 8;
		size_t cl = (size_t)r[32] | (size_t)r[33] << 8;
		const char *name = (const char *)r + 46;

		if (off + 46 + nl > n)
			break;
		if (nl && name[nl - 1] == '/')
			nl--;
		if (nl && nl <= plen &&
		    memcmp(path + plen - nl, name, nl) == 0 &&
		    (nl == plen || path[plen - nl - 1] == '/'))
			return true;
		off += 46 + (size_t)(r[28] | r[29] << 8) + xl + cl;
	}
	return false;
}

/* tar's short names of a compressed tar, by the compressor's suffix */
static const struct {
	const char *suffix, *tar[4];
} tar_suffixes[] = {
	{ ".gz", { ".tgz", ".taz" } },
	{ ".bz2", { ".tbz", ".tbz2", ".tb2", ".tz2" } },
	{ ".xz", { ".txz" } },
	{ ".lzma", { ".tlz" } },
	{ ".lz", { ".tlz" } },
	{ ".zst", { ".tzst" } },
	{ ".Z", { ".taZ" } },
};

static bool ends_with(const char *s, size_t n, const char *suffix)
{
	size_t k = strlen(suffix);

	return n > k && memcmp(s + n - k, suffix, k) == 0;
}

static bool named_as(const char *suffix, const char *name, size_t n)
{
	if (ends_with(name, n, suffix))
		return true;
	for (size_t k = 0; k < sizeof(tar_suffixes) / sizeof(tar_suffixes[0]);
	     k++) {
		if (strcmp(tar_suffixes[k].suffix, suffix) != 0)
			continue;
		for (size_t i = 0; i < 4 && tar_suffixes[k].tar[i]; i++)
			if (ends_with(name, n, tar_suffixes[k].tar[i]))
				return true;
	}
	return false;
}

bool lg_archive_named_for(const char *compressor, const char *path)
{
	static const char *const any[] = { "gzip", "bzip2", "xz",
					   "lzma", "lzip",  "zstd",
					   "lz4",  "lzop",  "compress" };
	const char *name, *suffix;
	size_t n;

	if (!compressor || !path)
		return false;
	name = strrchr(path, '/');
	name = name ? name + 1 : path;
	n = strlen(name);
	if (strcmp(compressor, "*") == 0) {
		for (size_t k = 0; k < sizeof(any) / sizeof(any[0]); k++)
			if (lg_archive_named_for(any[k], name))
				return true;
		return false;
	}
	for (size_t i = 0; (suffix = lg_transform_suffix(compressor, i)); i++)
		if (strcmp(suffix, ".br") != 0 && named_as(suffix, name, n))
			return true;
	return false;
}

/* The compressor a tar option names: -z, --gzip, --zstd... */
static const char *tar_short(char c)
{
	switch (c) {
	case 'z':
		return "gzip";
	case 'j':
		return "bzip2";
	case 'J':
		return "xz";
	case 'Z':
		return "compress";
	case 'a':
		return "*";
	}
	return NULL;
}

static const char *tar_long(const char *opt)
{
	static const struct {
		const char *opt, *compressor;
	} longs[] = {
		{ "gzip", "gzip" },
		{ "gunzip", "gzip" },
		{ "ungzip", "gzip" },
		{ "bzip2", "bzip2" },
		{ "xz", "xz" },
		{ "lzma", "lzma" },
		{ "lzip", "lzip" },
		{ "lzop", "lzop" },
		{ "zstd", "zstd" },
		{ "compress", "compress" },
		{ "uncompress", "compress" },
		{ "auto-compress", "*" },
	};

	for (size_t k = 0; k < sizeof(longs) / sizeof(longs[0]); k++)
		if (strcmp(longs[k].opt, opt) == 0)
			return longs[k].compressor;
	return NULL;
}

/* A command's program: its first word's basename, into out. */
static bool program_of(const char *cmd, char *out, size_t size)
{
	const char *start, *end, *slash;

	while (*cmd == ' ' || *cmd == '\t')
		cmd++;
	for (end = cmd; *end && *end != ' ' && *end != '\t'; end++)
		;
	start = cmd;
	for (slash = cmd; slash < end; slash++)
		if (*slash == '/')
			start = slash + 1;
	if (start == end || (size_t)(end - start) >= size)
		return false;
	memcpy(out, start, (size_t)(end - start));
	out[end - start] = '\0';
	return true;
}

/* tar's options: the last compressor option wins, as in tar. */
static bool tar_compressor(const char *argv, size_t n, char *out, size_t size)
{
	const char *found = NULL, *prog = NULL;
	size_t off = strnlen(argv, n) + 1;

	for (int i = 1; off < n; off += strnlen(argv + off, n - off) + 1, i++) {
		const char *a = argv + off;
		bool old = i == 1 && a[0] != '-';

		if (strnlen(a, n - off) == n - off)
			break; /* not NUL-terminated */
		if (strcmp(a, "--") == 0)
			break;
		if (strncmp(a, "--", 2) == 0) {
			const char *c = tar_long(a + 2);

			if (c) {
				found = c;
				prog = NULL;
			} else if (strncmp(a + 2, "use-compress-program", 20) ==
					   0 &&
				   a[22] == '=') {
				prog = a + 23;
			} else if (strcmp(a + 2, "use-compress-program") == 0 &&
				   off + strlen(a) + 1 < n) {
				prog = a + strlen(a) + 1;
			}
			continue;
		}
		if (!old && a[0] != '-')
			continue;
		/* a cluster: -czf, or the old style's first word, czf */
		for (const char *c = a + (old ? 0 : 1); *c; c++) {
			if (tar_short(*c)) {
				found = tar_short(*c);
				prog = NULL;
			} else if (*c == 'I') {
				prog = c[1] ? c + 1 :
				       off + strlen(a) + 1 < n ?
					      a + strlen(a) + 1 :
					      NULL;
				break;
			} else if (!old && strchr("bCfFgHKLNTVX", *c)) {
				break; /* the rest is this option's argument */
			}
		}
	}
	if (prog)
		return program_of(prog, out, size);
	if (!found || strlen(found) >= size)
		return false;
	strcpy(out, found);
	return true;
}

bool lg_archive_compressor(const char *exe, const char *argv, size_t n,
			   char *out, size_t size)
{
	size_t first;

	if (!exe || !argv || !out || size == 0 || n == 0)
		return false;
	if (lg_transform_suffix(exe, 0))
		return program_of(exe, out, size);
	if (strcmp(exe, "tar") == 0 || strcmp(exe, "gtar") == 0)
		return tar_compressor(argv, n, out, size);
	if (strcmp(exe, "sh") && strcmp(exe, "dash") && strcmp(exe, "bash"))
		return false;
	/* sh -c 'gzip -9': the shell that runs tar's compressor */
	first = strnlen(argv, n) + 1;
	if (first + 3 > n || strcmp(argv + first, "-c") != 0)
		return false;
	first += 3;
	if (strnlen(argv + first, n - first) == n - first)
		return false;
	return program_of(argv + first, out, size) &&
	       lg_transform_suffix(out, 0);
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
