// SPDX-License-Identifier: MIT
/*
 * Transforms, pure: the compressors and their suffixes and magic
 * (lg_transform_suffix, lg_transform_magic, lg_transform_sibling_fresh),
 * the archivers and what makes an archive hold a removed file
 * (lg_archiver, lg_archive_holds, lg_zip_lists, lg_archive_named_for,
 * lg_archive_compressor). What the session reads of the files and the
 * processes is session/removal.c's and provenance/archiver.c's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "classify.h"

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
