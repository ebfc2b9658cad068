// SPDX-License-Identifier: MIT
/*
 * What an archive holds (issue 41): an index of its members read from its
 * bytes, by base name, with each member's size and the CRC-32 of its data.
 * A tar's stream is decompressed here (zlib, liblzma, libbz2, libzstd) and
 * every member's data checksummed as it goes by; a zip's central directory
 * says its members' CRC-32 itself (its data is not decompressed: the
 * directory is believed). Reads only the descriptor it is given.
 */
#include <bzlib.h>
#include <errno.h>
#include <lzma.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include "provenance/archive.h"

struct member {
	uint32_t path; /* offsets in the pool */
	uint32_t base;
	int64_t size;
	uint32_t crc;
	bool is_dir;
};

struct lg_archive_index {
	enum lg_archive_format format;
	struct member *m;
	size_t n, cap;
	char *pool;
	size_t pool_n, pool_cap;
	uint32_t *slots; /* member index + 1, by base name's hash */
	size_t nslots;
};

/* What the names of an archive may take, all together. */
#define POOL_MAX (16u << 20)

static const char *const suffixes[] = {
	".tar",	   ".tgz",     ".tar.gz",   ".taz",	".txz",
	".tar.xz", ".tlz",     ".tar.lzma", ".tbz",	".tbz2",
	".tb2",	   ".tar.bz2", ".tzst",	    ".tar.zst", ".zip",
};

bool lg_archive_suffix(const char *name)
{
	size_t n = name ? strlen(name) : 0;

	for (size_t k = 0; k < sizeof(suffixes) / sizeof(suffixes[0]); k++) {
		size_t sl = strlen(suffixes[k]);

		if (n > sl && strcmp(name + n - sl, suffixes[k]) == 0 &&
		    name[n - sl - 1] != '/')
			return true;
	}
	return false;
}

static uint64_t octal(const unsigned char *p, size_t n, bool *ok)
{
	uint64_t v = 0;
	size_t i = 0;

	/* GNU's base-256 for what octal cannot hold */
	if (n && (p[0] & 0x80)) {
		if (p[0] & 0x40) {
			*ok = false; /* negative */
			return 0;
		}
		v = p[0] & 0x3f;
		for (i = 1; i < n; i++) {
			if (v >> 55) {
				*ok = false;
				return 0;
			}
			v = v << 8 | p[i];
		}
		return v;
	}
	while (i < n && (p[i] == ' ' || p[i] == '\0'))
		i++;
	for (; i < n && p[i] >= '0' && p[i] <= '7'; i++)
		v = v << 3 | (uint64_t)(p[i] - '0');
	for (; i < n; i++)
		if (p[i] != ' ' && p[i] != '\0')
			*ok = false;
	return v;
}

/* A tar header's checksum holds (the field counted as spaces). */
static bool tar_header_ok(const unsigned char *h)
{
	uint64_t sum = 0, want;
	bool ok = true;

	for (size_t i = 0; i < 512; i++)
		sum += (i >= 148 && i < 156) ? ' ' : h[i];
	want = octal(h + 148, 8, &ok);
	return ok && sum == want;
}

enum lg_archive_format lg_archive_format_of(const unsigned char *h, size_t n)
{
	if (n >= 4 && memcmp(h, "PK\x03\x04", 4) == 0)
		return LG_ARCHIVE_ZIP;
	if (n >= 4 && memcmp(h, "PK\x05\x06", 4) == 0)
		return LG_ARCHIVE_ZIP; /* empty */
	if (n >= 2 && h[0] == 0x1f && h[1] == 0x8b)
		return LG_ARCHIVE_TAR_GZ;
	if (n >= 6 && memcmp(h,
			     "\xfd"
			     "7zXZ\0",
			     6) == 0)
		return LG_ARCHIVE_TAR_XZ;
	if (n >= 3 && h[0] == 0x5d && h[1] == 0 && h[2] == 0)
		return LG_ARCHIVE_TAR_XZ; /* lzma alone */
	if (n >= 3 && memcmp(h, "BZh", 3) == 0)
		return LG_ARCHIVE_TAR_BZ2;
	if (n >= 4 && memcmp(h, "\x28\xb5\x2f\xfd", 4) == 0)
		return LG_ARCHIVE_TAR_ZST;
	if (n >= 512 && tar_header_ok(h))
		return LG_ARCHIVE_TAR;
	return LG_ARCHIVE_UNKNOWN;
}

const char *lg_archive_format_name(enum lg_archive_format f)
{
	switch (f) {
	case LG_ARCHIVE_TAR:
		return "tar";
	case LG_ARCHIVE_TAR_GZ:
		return "tar.gz";
	case LG_ARCHIVE_TAR_XZ:
		return "tar.xz";
	case LG_ARCHIVE_TAR_BZ2:
		return "tar.bz2";
	case LG_ARCHIVE_TAR_ZST:
		return "tar.zst";
	case LG_ARCHIVE_ZIP:
		return "zip";
	default:
		return "unknown";
	}
}

static uint64_t now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000 + (uint64_t)t.tv_nsec / 1000000;
}

static uint32_t hash_of(const char *s)
{
	uint32_t h = 2166136261u;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

static int add(struct lg_archive_index *ix, const char *path, size_t len,
	       int64_t size, uint32_t crc, bool is_dir)
{
	size_t end, start;

	len = strnlen(path, len); /* a zip's name may hold a NUL */
	end = len;
	while (end > 0 && path[end - 1] == '/')
		end--;
	start = end;
	while (start > 0 && path[start - 1] != '/')
		start--;
	if (end == start || (end - start == 1 && path[start] == '.') ||
	    (end - start == 2 && path[start] == '.' && path[start + 1] == '.'))
		return 0; /* "./", "..": nothing to match */
	if (ix->n >= LG_ARCHIVE_MEMBERS_MAX ||
	    ix->pool_n + len + (end - start) + 2 > POOL_MAX)
		return -EFBIG;
	if (ix->n == ix->cap) {
		size_t cap = ix->cap ? ix->cap * 2 : 64;
		struct member *m = realloc(ix->m, cap * sizeof(*m));

		if (!m)
			return -ENOMEM;
		ix->m = m;
		ix->cap = cap;
	}
	while (ix->pool_n + len + (end - start) + 2 > ix->pool_cap) {
		size_t cap = ix->pool_cap ? ix->pool_cap * 2 : 4096;
		char *p = realloc(ix->pool, cap);

		if (!p)
			return -ENOMEM;
		ix->pool = p;
		ix->pool_cap = cap;
	}
	struct member *m = &ix->m[ix->n++];

	m->path = (uint32_t)ix->pool_n;
	memcpy(ix->pool + ix->pool_n, path, len);
	ix->pool[ix->pool_n + len] = '\0';
	ix->pool_n += len + 1;
	m->base = (uint32_t)ix->pool_n;
	memcpy(ix->pool + ix->pool_n, path + start, end - start);
	ix->pool[ix->pool_n + end - start] = '\0';
	ix->pool_n += end - start + 1;
	m->size = size;
	m->crc = crc;
	m->is_dir = is_dir;
	return 0;
}

static int build_slots(struct lg_archive_index *ix)
{
	size_t ns = 16;

	while (ns < ix->n * 2)
		ns *= 2;
	ix->slots = calloc(ns, sizeof(*ix->slots));
	if (!ix->slots)
		return -ENOMEM;
	ix->nslots = ns;
	for (size_t i = 0; i < ix->n; i++) {
		size_t k = hash_of(ix->pool + ix->m[i].base) & (ns - 1);

		while (ix->slots[k])
			k = (k + 1) & (ns - 1);
		ix->slots[k] = (uint32_t)i + 1;
	}
	return 0;
}

/* ---- the decompressed stream of a tar ---- */

struct src {
	int fd;
	enum lg_archive_format format;
	int64_t size, off; /* the file's, and how far it was read */
	unsigned char in[1 << 16];
	size_t in_n, in_pos;
	bool in_eof, done;
	int64_t out_total, max_bytes;
	uint64_t deadline;
	z_stream z;
	lzma_stream x;
	bz_stream b;
	ZSTD_DStream *zs;
	size_t zs_last; /* ZSTD_decompressStream's last hint: 0 at a frame end */
	bool inited;
};

static int refill(struct src *s)
{
	ssize_t r;

	if (s->in_pos < s->in_n || s->in_eof)
		return 0;
	if (now_ms() > s->deadline)
		return -ETIME;
	r = pread(s->fd, s->in, sizeof(s->in), s->off);
	if (r < 0)
		return errno == EINTR ? 0 : -EIO;
	s->in_n = (size_t)r;
	s->in_pos = 0;
	s->off += r;
	if (r == 0 || s->off >= s->size)
		s->in_eof = r == 0 || s->off >= s->size;
	return 0;
}

static int src_init(struct src *s)
{
	switch (s->format) {
	case LG_ARCHIVE_TAR:
		break;
	case LG_ARCHIVE_TAR_GZ:
		if (inflateInit2(&s->z, 16 + MAX_WBITS) != Z_OK)
			return -ENOMEM;
		break;
	case LG_ARCHIVE_TAR_XZ:
		s->x = (lzma_stream)LZMA_STREAM_INIT;
		if (lzma_auto_decoder(&s->x, 128u << 20, LZMA_CONCATENATED) !=
		    LZMA_OK)
			return -ENOMEM;
		break;
	case LG_ARCHIVE_TAR_BZ2:
		if (BZ2_bzDecompressInit(&s->b, 0, 0) != BZ_OK)
			return -ENOMEM;
		break;
	case LG_ARCHIVE_TAR_ZST:
		s->zs = ZSTD_createDStream();
		if (!s->zs)
			return -ENOMEM;
		ZSTD_DCtx_setParameter(s->zs, ZSTD_d_windowLogMax, 27);
		s->zs_last = 1;
		break;
	default:
		return -EINVAL;
	}
	s->inited = true;
	return 0;
}

static void src_end(struct src *s)
{
	if (!s->inited)
		return;
	switch (s->format) {
	case LG_ARCHIVE_TAR_GZ:
		inflateEnd(&s->z);
		break;
	case LG_ARCHIVE_TAR_XZ:
		lzma_end(&s->x);
		break;
	case LG_ARCHIVE_TAR_BZ2:
		BZ2_bzDecompressEnd(&s->b);
		break;
	case LG_ARCHIVE_TAR_ZST:
		ZSTD_freeDStream(s->zs);
		break;
	default:
		break;
	}
	s->inited = false;
}

/* Another member follows the one that ended (gzip -c a b >x, pbzip2)? */
static bool another_member(struct src *s, const unsigned char *magic, size_t n)
{
	if (s->in_pos == s->in_n && refill(s) < 0)
		return false;
	return s->in_n - s->in_pos >= n &&
	       memcmp(s->in + s->in_pos, magic, n) == 0;
}

/* Up to n bytes of the stream: how many (0 at its end), or -errno. */
static ssize_t src_read(struct src *s, unsigned char *buf, size_t n)
{
	size_t got = 0;
	int r;

	if (s->done)
		return 0;
	while (got == 0) {
		if ((r = refill(s)) < 0)
			return r;
		size_t avail = s->in_n - s->in_pos;
		unsigned char *in = s->in + s->in_pos;

		switch (s->format) {
		case LG_ARCHIVE_TAR: {
			size_t k = avail < n ? avail : n;

			if (!k && s->in_eof) {
				s->done = true;
				return 0;
			}
			memcpy(buf, in, k);
			s->in_pos += k;
			got = k;
			break;
		}
		case LG_ARCHIVE_TAR_GZ: {
			s->z.next_in = in;
			s->z.avail_in = (uInt)avail;
			s->z.next_out = buf;
			s->z.avail_out = (uInt)n;
			r = inflate(&s->z, Z_NO_FLUSH);
			s->in_pos += avail - s->z.avail_in;
			got = n - s->z.avail_out;
			if (r == Z_STREAM_END) {
				if (another_member(
					    s,
					    (const unsigned char *)"\x1f\x8b",
					    2))
					inflateReset(&s->z);
				else
					s->done = true;
				if (!got && s->done)
					return 0;
			} else if (r == Z_BUF_ERROR && !got) {
				if (s->in_eof && s->in_pos == s->in_n)
					return -EINVAL; /* truncated */
			} else if (r != Z_OK) {
				return -EINVAL;
			}
			break;
		}
		case LG_ARCHIVE_TAR_XZ: {
			lzma_ret lr;

			s->x.next_in = in;
			s->x.avail_in = avail;
			s->x.next_out = buf;
			s->x.avail_out = n;
			lr = lzma_code(&s->x,
				       s->in_eof ? LZMA_FINISH : LZMA_RUN);
			s->in_pos += avail - s->x.avail_in;
			got = n - s->x.avail_out;
			if (lr == LZMA_STREAM_END) {
				s->done = true;
				if (!got)
					return 0;
			} else if (lr == LZMA_BUF_ERROR && !got) {
				if (s->in_eof)
					return -EINVAL;
			} else if (lr != LZMA_OK) {
				return -EINVAL;
			}
			break;
		}
		case LG_ARCHIVE_TAR_BZ2: {
			s->b.next_in = (char *)in;
			s->b.avail_in = (unsigned)avail;
			s->b.next_out = (char *)buf;
			s->b.avail_out = (unsigned)n;
			r = BZ2_bzDecompress(&s->b);
			s->in_pos += avail - s->b.avail_in;
			got = n - s->b.avail_out;
			if (r == BZ_STREAM_END) {
				BZ2_bzDecompressEnd(&s->b);
				s->inited = false;
				if (another_member(s,
						   (const unsigned char *)"BZh",
						   3)) {
					memset(&s->b, 0, sizeof(s->b));
					if (BZ2_bzDecompressInit(&s->b, 0, 0) !=
					    BZ_OK)
						return -ENOMEM;
					s->inited = true;
				} else {
					s->done = true;
				}
				if (!got && s->done)
					return 0;
			} else if (r != BZ_OK) {
				return -EINVAL;
			} else if (!got && s->in_eof && s->in_pos == s->in_n) {
				return -EINVAL; /* truncated */
			}
			break;
		}
		case LG_ARCHIVE_TAR_ZST: {
			ZSTD_inBuffer zi = { in, avail, 0 };
			ZSTD_outBuffer zo = { buf, n, 0 };
			size_t zr;

			if (!avail && s->in_eof && s->zs_last == 0) {
				s->done = true;
				return 0;
			}
			zr = ZSTD_decompressStream(s->zs, &zo, &zi);
			if (ZSTD_isError(zr))
				return -EINVAL;
			s->zs_last = zr;
			s->in_pos += zi.pos;
			got = zo.pos;
			if (!got && !zi.pos && s->in_eof) {
				if (zr != 0)
					return -EINVAL; /* a frame cut short */
				s->done = true;
				return 0;
			}
			break;
		}
		default:
			return -EINVAL;
		}
	}
	s->out_total += (int64_t)got;
	if (s->out_total > s->max_bytes)
		return -EFBIG;
	return (ssize_t)got;
}

/* Exactly n bytes (crc: their CRC-32 added), or -EINVAL when cut short. */
static int src_full(struct src *s, unsigned char *buf, size_t n)
{
	size_t got = 0;

	while (got < n) {
		ssize_t r = src_read(s, buf + got, n - got);

		if (r < 0)
			return (int)r;
		if (r == 0)
			return -EINVAL;
		got += (size_t)r;
	}
	return 0;
}

/* Past n bytes of data, their CRC-32 into crc. */
static int src_skip(struct src *s, uint64_t n, uint32_t *crc)
{
	static __thread unsigned char buf[1 << 16];
	uint32_t c = (uint32_t)crc32(0L, Z_NULL, 0);

	while (n) {
		size_t k = n < sizeof(buf) ? (size_t)n : sizeof(buf);
		int r = src_full(s, buf, k);

		if (r < 0)
			return r;
		if (crc)
			c = (uint32_t)crc32(c, buf, (uInt)k);
		n -= k;
	}
	if (crc)
		*crc = c;
	return 0;
}

/* Reads a pax extended header's records: path= and size=. */
static void pax_records(const char *p, size_t n, char **path, int64_t *size,
			bool *sparse)
{
	size_t off = 0;

	while (off < n) {
		char *end;
		unsigned long long len = strtoull(p + off, &end, 10);
		const char *rec = p + off, *kv, *eq;

		if (end == p + off || *end != ' ' || len == 0 || len > n - off)
			return;
		kv = end + 1;
		eq = memchr(kv, '=', (size_t)(rec + len - kv));
		if (!eq || rec[len - 1] != '\n')
			return;
		size_t klen = (size_t)(eq - kv),
		       vlen = (size_t)(rec + len - 1 - eq - 1);

		if (klen == 4 && memcmp(kv, "path", 4) == 0) {
			free(*path);
			*path = strndup(eq + 1, vlen);
		} else if (klen == 4 && memcmp(kv, "size", 4) == 0) {
			*size = strtoll(eq + 1, NULL, 10);
		} else if (klen > 11 && memcmp(kv, "GNU.sparse.", 11) == 0) {
			*sparse = true;
		}
		off += (size_t)len;
	}
}

/* The longest name (L) or pax header (x) read. */
#define TAR_META_MAX (1u << 20)

static int read_tar(struct src *s, struct lg_archive_index *ix)
{
	unsigned char h[512];
	char *long_name = NULL, *pax_path = NULL;
	int64_t pax_size = -1;
	bool pax_sparse = false;
	int r = 0;

	for (;;) {
		bool ok = true, zero = true;
		uint64_t size;
		char type, name[257];
		const char *path;
		uint32_t crc = 0;

		r = src_full(s, h, sizeof(h));
		if (r < 0)
			break;
		for (size_t i = 0; i < sizeof(h) && zero; i++)
			zero = h[i] == 0;
		if (zero) {
			/*
			 * The end of the archive: the rest read through, so
			 * that a compressor's own check (gzip's CRC, xz's)
			 * says whether what was read is what was written
			 */
			while ((r = (int)src_read(s, h, sizeof(h))) > 0)
				;
			break;
		}
		if (!tar_header_ok(h)) {
			r = -EINVAL;
			break;
		}
		size = octal(h + 124, 12, &ok);
		if (!ok || size > (uint64_t)INT64_MAX) {
			r = -EINVAL;
			break;
		}
		type = (char)h[156];
		if (type == 'L' || type == 'x') {
			char *buf;

			if (size > TAR_META_MAX) {
				r = -EFBIG;
				break;
			}
			buf = malloc((size_t)size + 1);
			if (!buf) {
				r = -ENOMEM;
				break;
			}
			r = src_full(s, (unsigned char *)buf, (size_t)size);
			if (r == 0)
				r = src_skip(s, (512 - size % 512) % 512, NULL);
			if (r < 0) {
				free(buf);
				break;
			}
			buf[size] = '\0';
			if (type == 'L') {
				free(long_name);
				long_name = buf;
			} else {
				pax_records(buf, (size_t)size, &pax_path,
					    &pax_size, &pax_sparse);
				free(buf);
			}
			continue;
		}
		if (pax_size >= 0 &&
		    (type == '0' || type == '\0' || type == '7'))
			size = (uint64_t)pax_size;
		if (pax_path)
			path = pax_path;
		else if (long_name)
			path = long_name;
		else {
			size_t pl = strnlen((const char *)h + 345, 155);

			if (memcmp(h + 257, "ustar\0", 6) == 0 && pl) {
				memcpy(name, h + 345, pl);
				name[pl] = '/';
				memcpy(name + pl + 1, h,
				       strnlen((char *)h, 100));
				name[pl + 1 + strnlen((char *)h, 100)] = '\0';
			} else {
				memcpy(name, h, strnlen((char *)h, 100));
				name[strnlen((char *)h, 100)] = '\0';
			}
			path = name;
		}
		bool regular = (type == '0' || type == '\0' || type == '7') &&
			       !pax_sparse;

		r = src_skip(s, size, regular ? &crc : NULL);
		if (r == 0)
			r = src_skip(s, (512 - size % 512) % 512, NULL);
		if (r < 0)
			break;
		if (regular)
			r = add(ix, path, strlen(path), (int64_t)size, crc,
				false);
		else if (type == '5')
			r = add(ix, path, strlen(path), 0, 0, true);
		if (r < 0)
			break;
		free(long_name);
		free(pax_path);
		long_name = pax_path = NULL;
		pax_size = -1;
		pax_sparse = false;
	}
	free(long_name);
	free(pax_path);
	return r;
}

/* ---- zip: the central directory ---- */

static uint16_t le16(const unsigned char *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}
static uint32_t le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}
static uint64_t le64(const unsigned char *p)
{
	return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
}

#define ZIP_CD_MAX (64u << 20)

static int read_zip(int fd, int64_t size, struct lg_archive_index *ix)
{
	unsigned char *tail, *cd, *e = NULL;
	size_t n = size < 22 + 65535 ? (size_t)size : 22 + 65535;
	uint64_t entries, cd_size, cd_off;
	int r = -EINVAL;

	if (size < 22)
		return -EINVAL;
	tail = malloc(n);
	if (!tail)
		return -ENOMEM;
	if (pread(fd, tail, n, size - (int64_t)n) != (ssize_t)n) {
		free(tail);
		return -EIO;
	}
	for (size_t i = n - 22 + 1; i-- > 0;)
		if (memcmp(tail + i, "PK\x05\x06", 4) == 0 &&
		    i + 22 + le16(tail + i + 20) <= n) {
			e = tail + i;
			break;
		}
	if (!e) {
		free(tail);
		return -EINVAL;
	}
	entries = le16(e + 10);
	cd_size = le32(e + 12);
	cd_off = le32(e + 16);
	if (entries == 0xffff || cd_size == 0xffffffff ||
	    cd_off == 0xffffffff) {
		/* zip64: its locator just before, then its own record */
		unsigned char z[56];
		int64_t at = (int64_t)(e - tail) + size - (int64_t)n - 20;

		if (at < 0 || pread(fd, z, 20, at) != 20 ||
		    memcmp(z, "PK\x06\x07", 4) != 0) {
			free(tail);
			return -EINVAL;
		}
		at = (int64_t)le64(z + 8);
		if (at < 0 || at > size - 56 || pread(fd, z, 56, at) != 56 ||
		    memcmp(z, "PK\x06\x06", 4) != 0) {
			free(tail);
			return -EINVAL;
		}
		entries = le64(z + 32);
		cd_size = le64(z + 40);
		cd_off = le64(z + 48);
	}
	free(tail);
	if (cd_size > ZIP_CD_MAX)
		return -EFBIG;
	if (cd_off > (uint64_t)size || cd_size > (uint64_t)size - cd_off)
		return -EINVAL;
	cd = malloc(cd_size ? (size_t)cd_size : 1);
	if (!cd)
		return -ENOMEM;
	if (pread(fd, cd, (size_t)cd_size, (off_t)cd_off) != (ssize_t)cd_size) {
		free(cd);
		return -EIO;
	}
	size_t off = 0;
	uint64_t seen = 0;

	r = 0;
	while (off + 46 <= cd_size && memcmp(cd + off, "PK\x01\x02", 4) == 0) {
		const unsigned char *c = cd + off;
		size_t nl = le16(c + 28), xl = le16(c + 30), cl = le16(c + 32);
		uint64_t usize = le32(c + 24);
		uint32_t attr = le32(c + 38);
		bool unix_made = c[5] == 3;

		if (off + 46 + nl + xl + cl > cd_size) {
			r = -EINVAL;
			break;
		}
		if (usize == 0xffffffff) {
			/* zip64's extra field: the sizes, in this order */
			const unsigned char *x = c + 46 + nl, *xe = x + xl;

			while (x + 4 <= xe) {
				size_t fl = le16(x + 2);

				if (x + 4 + fl > xe)
					break;
				if (le16(x) == 0x0001 && fl >= 8) {
					usize = le64(x + 4);
					break;
				}
				x += 4 + fl;
			}
			if (usize == 0xffffffff || usize > INT64_MAX) {
				r = -EINVAL;
				break;
			}
		}
		bool is_dir = nl && c[46 + nl - 1] == '/';
		bool link = unix_made && ((attr >> 16) & 0170000) == 0120000;

		if (!link && nl) {
			r = add(ix, (const char *)c + 46, nl, (int64_t)usize,
				le32(c + 16), is_dir);
			if (r < 0)
				break;
		}
		seen++;
		off += 46 + nl + xl + cl;
	}
	free(cd);
	if (r == 0 && seen != entries)
		r = -EINVAL;
	return r;
}

int lg_archive_index_read(int fd, int64_t size,
			  const struct lg_archive_limits *lim,
			  struct lg_archive_index **out)
{
	unsigned char head[512];
	ssize_t n;
	struct lg_archive_index *ix;
	int r;

	*out = NULL;
	if (size <= 0)
		return -EINVAL;
	n = pread(fd, head, sizeof(head), 0);
	if (n < 0)
		return -EIO;
	ix = calloc(1, sizeof(*ix));
	if (!ix)
		return -ENOMEM;
	ix->format = lg_archive_format_of(head, (size_t)n);
	if (ix->format == LG_ARCHIVE_ZIP) {
		r = read_zip(fd, size, ix);
	} else if (ix->format != LG_ARCHIVE_UNKNOWN) {
		struct src *s = calloc(1, sizeof(*s));

		if (!s) {
			lg_archive_index_free(ix);
			return -ENOMEM;
		}
		s->fd = fd;
		s->size = size;
		s->format = ix->format;
		s->max_bytes = lim && lim->max_bytes ? lim->max_bytes :
						       LG_ARCHIVE_INDEX_MAX;
		s->deadline = now_ms() + (lim && lim->max_ms ?
						  lim->max_ms :
						  LG_ARCHIVE_INDEX_MS);
		r = src_init(s);
		if (r == 0)
			r = read_tar(s, ix);
		src_end(s);
		free(s);
	} else {
		r = -EINVAL;
	}
	if (r == 0)
		r = build_slots(ix);
	if (r < 0) {
		lg_archive_index_free(ix);
		return r;
	}
	*out = ix;
	return 0;
}

void lg_archive_index_free(struct lg_archive_index *ix)
{
	if (!ix)
		return;
	free(ix->m);
	free(ix->pool);
	free(ix->slots);
	free(ix);
}

size_t lg_archive_index_count(const struct lg_archive_index *ix)
{
	return ix ? ix->n : 0;
}

enum lg_archive_format
lg_archive_index_format(const struct lg_archive_index *ix)
{
	return ix ? ix->format : LG_ARCHIVE_UNKNOWN;
}

/* Calls match on each member named base until it says yes. */
static bool any(const struct lg_archive_index *ix, const char *base,
		bool (*match)(const struct member *, int64_t, uint32_t),
		int64_t size, uint32_t crc)
{
	size_t k;

	if (!ix || !ix->nslots || !base)
		return false;
	k = hash_of(base) & (ix->nslots - 1);
	for (; ix->slots[k]; k = (k + 1) & (ix->nslots - 1)) {
		const struct member *m = &ix->m[ix->slots[k] - 1];

		if (strcmp(ix->pool + m->base, base) == 0 &&
		    match(m, size, crc))
			return true;
	}
	return false;
}
static bool sized(const struct member *m, int64_t size, uint32_t crc)
{
	(void)crc;
	return !m->is_dir && m->size == size;
}
static bool same(const struct member *m, int64_t size, uint32_t crc)
{
	return !m->is_dir && m->size == size && m->crc == crc;
}
static bool dir(const struct member *m, int64_t size, uint32_t crc)
{
	(void)size;
	(void)crc;
	return m->is_dir;
}

bool lg_archive_index_sized(const struct lg_archive_index *ix, const char *base,
			    int64_t size)
{
	return any(ix, base, sized, size, 0);
}

bool lg_archive_index_holds(const struct lg_archive_index *ix, const char *base,
			    int64_t size, uint32_t crc)
{
	return any(ix, base, same, size, crc);
}

bool lg_archive_index_dir(const struct lg_archive_index *ix, const char *base)
{
	return any(ix, base, dir, 0, 0);
}

bool lg_archive_index_member(const struct lg_archive_index *ix, size_t i,
			     const char **path, int64_t *size, uint32_t *crc,
			     bool *is_dir)
{
	if (!ix || i >= ix->n)
		return false;
	*path = ix->pool + ix->m[i].path;
	*size = ix->m[i].size;
	*crc = ix->m[i].crc;
	*is_dir = ix->m[i].is_dir;
	return true;
}
