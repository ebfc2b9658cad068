// SPDX-License-Identifier: MIT
/*
 * git's object database, read-only and only as far as "is this blob
 * there?" needs: loose objects (objects/xx/yyyy...), version 2 pack
 * indexes (a 256-entry fanout table, then the sorted ids), alternates.
 * Packed objects are never inflated and no object is parsed: the id is
 * computed from the work tree file and looked up.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gitodb.h"
#include "pathres.h"

#define NREPOS 16 /* repositories remembered, least recently used evicted */
#define NSLOTS 256 /* directory -> repository, direct-mapped */
#define MAX_ODIRS 8 /* a repository's objects directory and its alternates */
#define ALT_DEPTH 5 /* alternates of alternates, as deep as git goes */
#define MAX_PACKS 1024 /* per objects directory */
#define SMALL_FILE 65536 /* .git files, commondir, config, alternates */

/*
 * SHA-1 and SHA-256, streaming; only what blob ids need. Not libcrypto's:
 * linking it into lgrun costs every session about 2.7 ms of start-up
 * (`lgrun -- true`, 19.5 -> 22.3 ms, measured), paid for the rare session
 * whose git removes a file. The SHA instructions below are what make
 * libcrypto fast (64 MiB: 62 ms instead of 338 ms for SHA-1).
 */

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

static uint32_t rol(uint32_t x, int n)
{
	return x << n | x >> (32 - n);
}

static uint32_t ror(uint32_t x, int n)
{
	return x >> n | x << (32 - n);
}

struct hasher {
	bool sha256;
	uint32_t h[8];
	uint64_t len;
	uint8_t buf[64];
	size_t n;
};

static void sha1_block(uint32_t *h, const uint8_t *p)
{
	uint32_t w[80], a = h[0], b = h[1], c = h[2], d = h[3], e = h[4];

	for (int i = 0; i < 16; i++)
		w[i] = be32(p + 4 * i);
	for (int i = 16; i < 80; i++)
		w[i] = rol(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
	for (int i = 0; i < 80; i++) {
		uint32_t f, k, t;

		if (i < 20) {
			f = (b & c) | (~b & d);
			k = 0x5a827999;
		} else if (i < 40) {
			f = b ^ c ^ d;
			k = 0x6ed9eba1;
		} else if (i < 60) {
			f = (b & c) | (b & d) | (c & d);
			k = 0x8f1bbcdc;
		} else {
			f = b ^ c ^ d;
			k = 0xca62c1d6;
		}
		t = rol(a, 5) + f + e + k + w[i];
		e = d;
		d = c;
		c = rol(b, 30);
		b = a;
		a = t;
	}
	h[0] += a;
	h[1] += b;
	h[2] += c;
	h[3] += d;
	h[4] += e;
}

static const uint32_t K256[64] = {
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1,
	0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3,
	0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
	0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
	0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
	0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
	0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
	0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
	0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
	0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
	0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static void sha256_block(uint32_t *h, const uint8_t *p)
{
	uint32_t w[64], s[8];

	for (int i = 0; i < 16; i++)
		w[i] = be32(p + 4 * i);
	for (int i = 16; i < 64; i++) {
		uint32_t s0 = ror(w[i - 15], 7) ^ ror(w[i - 15], 18) ^
			      (w[i - 15] >> 3);
		uint32_t s1 = ror(w[i - 2], 17) ^ ror(w[i - 2], 19) ^
			      (w[i - 2] >> 10);

		w[i] = w[i - 16] + s0 + w[i - 7] + s1;
	}
	memcpy(s, h, sizeof(s));
	for (int i = 0; i < 64; i++) {
		uint32_t S1 = ror(s[4], 6) ^ ror(s[4], 11) ^ ror(s[4], 25);
		uint32_t ch = (s[4] & s[5]) ^ (~s[4] & s[6]);
		uint32_t t1 = s[7] + S1 + ch + K256[i] + w[i];
		uint32_t S0 = ror(s[0], 2) ^ ror(s[0], 13) ^ ror(s[0], 22);
		uint32_t maj = (s[0] & s[1]) ^ (s[0] & s[2]) ^ (s[1] & s[2]);

		memmove(s + 1, s, 7 * sizeof(s[0]));
		s[4] += t1;
		s[0] = t1 + S0 + maj;
	}
	for (int i = 0; i < 8; i++)
		h[i] += s[i];
}

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>

/*
 * The SHA extensions (SHA-NI): an order of magnitude faster than the code
 * above, which matters for the large files a git removal may make us read.
 * The round structure is Intel's (as in Jeffrey Walton's public-domain
 * sha1-x86.c and sha256-x86.c), written as one step per four rounds.
 */
#define NI __attribute__((target("sha,sse4.1,ssse3")))

/* Four SHA-1 rounds g (0..19) with message words m[g % 4]. */
#define SHA1_4(g)                                                          \
	do {                                                               \
		__m128i cur;                                               \
		if ((g) < 4)                                               \
			m[(g) % 4] = _mm_shuffle_epi8(                     \
				_mm_loadu_si128(                           \
					(const __m128i *)(p + 16 * (g))),  \
				mask);                                     \
		cur = m[(g) % 4];                                          \
		if ((g) == 0)                                              \
			e[0] = _mm_add_epi32(e[0], cur);                   \
		else                                                       \
			e[(g) % 2] = _mm_sha1nexte_epu32(e[(g) % 2], cur); \
		e[((g) + 1) % 2] = abcd;                                   \
		if ((g) >= 3 && (g) <= 18)                                 \
			m[((g) + 1) % 4] =                                 \
				_mm_sha1msg2_epu32(m[((g) + 1) % 4], cur); \
		abcd = _mm_sha1rnds4_epu32(abcd, e[(g) % 2], (g) / 5);     \
		if ((g) >= 1 && (g) <= 16)                                 \
			m[((g) + 3) % 4] =                                 \
				_mm_sha1msg1_epu32(m[((g) + 3) % 4], cur); \
		if ((g) >= 2 && (g) <= 17)                                 \
			m[((g) + 2) % 4] =                                 \
				_mm_xor_si128(m[((g) + 2) % 4], cur);      \
	} while (0)

NI static void sha1_ni(uint32_t *h, const uint8_t *p, size_t blocks)
{
	const __m128i mask =
		_mm_set_epi64x(0x0001020304050607ULL, 0x08090a0b0c0d0e0fULL);
	__m128i abcd, e[2], m[4];

	abcd = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)h), 0x1b);
	e[0] = _mm_set_epi32((int)h[4], 0, 0, 0);
	for (; blocks--; p += 64) {
		__m128i abcd0 = abcd, e0 = e[0];

		SHA1_4(0);
		SHA1_4(1);
		SHA1_4(2);
		SHA1_4(3);
		SHA1_4(4);
		SHA1_4(5);
		SHA1_4(6);
		SHA1_4(7);
		SHA1_4(8);
		SHA1_4(9);
		SHA1_4(10);
		SHA1_4(11);
		SHA1_4(12);
		SHA1_4(13);
		SHA1_4(14);
		SHA1_4(15);
		SHA1_4(16);
		SHA1_4(17);
		SHA1_4(18);
		SHA1_4(19);
		e[0] = _mm_sha1nexte_epu32(e[0], e0);
		abcd = _mm_add_epi32(abcd, abcd0);
	}
	_mm_storeu_si128((__m128i *)h, _mm_shuffle_epi32(abcd, 0x1b));
	h[4] = (uint32_t)_mm_extract_epi32(e[0], 3);
}

/* Four SHA-256 rounds g (0..15) with message words m[g % 4]. */
#define SHA256_4(g)                                                          \
	do {                                                                 \
		__m128i cur, w;                                              \
		if ((g) < 4)                                                 \
			m[(g) % 4] = _mm_shuffle_epi8(                       \
				_mm_loadu_si128(                             \
					(const __m128i *)(p + 16 * (g))),    \
				mask);                                       \
		cur = m[(g) % 4];                                            \
		w = _mm_add_epi32(                                           \
			cur,                                                 \
			_mm_loadu_si128((const __m128i *)&K256[4 * (g)]));   \
		s1 = _mm_sha256rnds2_epu32(s1, s0, w);                       \
		if ((g) >= 3 && (g) <= 14) {                                 \
			__m128i tt =                                         \
				_mm_alignr_epi8(cur, m[((g) + 3) % 4], 4);   \
			m[((g) + 1) % 4] =                                   \
				_mm_add_epi32(m[((g) + 1) % 4], tt);         \
			m[((g) + 1) % 4] =                                   \
				_mm_sha256msg2_epu32(m[((g) + 1) % 4], cur); \
		}                                                            \
		w = _mm_shuffle_epi32(w, 0x0e);                              \
		s0 = _mm_sha256rnds2_epu32(s0, s1, w);                       \
		if ((g) >= 1 && (g) <= 12)                                   \
			m[((g) + 3) % 4] =                                   \
				_mm_sha256msg1_epu32(m[((g) + 3) % 4], cur); \
	} while (0)

NI static void sha256_ni(uint32_t *h, const uint8_t *p, size_t blocks)
{
	const __m128i mask =
		_mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
	__m128i s0, s1, t, m[4];

	t = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)h), 0xb1);
	s1 = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)(h + 4)), 0x1b);
	s0 = _mm_alignr_epi8(t, s1, 8); /* ABEF */
	s1 = _mm_blend_epi16(s1, t, 0xf0); /* CDGH */
	for (; blocks--; p += 64) {
		__m128i s0_0 = s0, s1_0 = s1;

		SHA256_4(0);
		SHA256_4(1);
		SHA256_4(2);
		SHA256_4(3);
		SHA256_4(4);
		SHA256_4(5);
		SHA256_4(6);
		SHA256_4(7);
		SHA256_4(8);
		SHA256_4(9);
		SHA256_4(10);
		SHA256_4(11);
		SHA256_4(12);
		SHA256_4(13);
		SHA256_4(14);
		SHA256_4(15);
		s0 = _mm_add_epi32(s0, s0_0);
		s1 = _mm_add_epi32(s1, s1_0);
	}
	t = _mm_shuffle_epi32(s0, 0x1b); /* FEBA */
	s1 = _mm_shuffle_epi32(s1, 0xb1); /* DCHG */
	s0 = _mm_blend_epi16(t, s1, 0xf0); /* DCBA */
	s1 = _mm_alignr_epi8(s1, t, 8); /* HGFE */
	_mm_storeu_si128((__m128i *)h, s0);
	_mm_storeu_si128((__m128i *)(h + 4), s1);
}

static bool have_ni(void)
{
	static int have = -1; /* one notify thread: no race worth a lock */
	unsigned a, b, c, d;

	if (have < 0)
		have = __get_cpuid_count(7, 0, &a, &b, &c, &d) &&
		       (b & (1u << 29)) && __get_cpuid(1, &a, &b, &c, &d) &&
		       (c & (1u << 19)) && (c & (1u << 9));
	return have > 0;
}
#else
static bool have_ni(void)
{
	return false;
}
#endif

static bool use_ni = true;

void lg_gitodb_hash_accel(bool on)
{
	use_ni = on;
}

static void hasher_blocks(struct hasher *x, const uint8_t *p, size_t n)
{
#if defined(__x86_64__)
	if (use_ni && have_ni()) {
		if (x->sha256)
			sha256_ni(x->h, p, n);
		else
			sha1_ni(x->h, p, n);
		return;
	}
#endif
	for (; n--; p += 64) {
		if (x->sha256)
			sha256_block(x->h, p);
		else
			sha1_block(x->h, p);
	}
}

static void hasher_init(struct hasher *x, bool sha256)
{
	static const uint32_t h1[5] = { 0x67452301, 0xefcdab89, 0x98badcfe,
					0x10325476, 0xc3d2e1f0 };
	static const uint32_t h256[8] = { 0x6a09e667, 0xbb67ae85, 0x3c6ef372,
					  0xa54ff53a, 0x510e527f, 0x9b05688c,
					  0x1f83d9ab, 0x5be0cd19 };

	memset(x, 0, sizeof(*x));
	x->sha256 = sha256;
	if (sha256)
		memcpy(x->h, h256, sizeof(h256));
	else
		memcpy(x->h, h1, sizeof(h1));
}

static void hasher_update(struct hasher *x, const void *data, size_t len)
{
	const uint8_t *p = data;

	x->len += len;
	if (x->n) {
		size_t take = 64 - x->n < len ? 64 - x->n : len;

		memcpy(x->buf + x->n, p, take);
		x->n += take;
		p += take;
		len -= take;
		if (x->n < 64)
			return;
		hasher_blocks(x, x->buf, 1);
		x->n = 0;
	}
	hasher_blocks(x, p, len / 64);
	p += len / 64 * 64;
	len %= 64;
	memcpy(x->buf, p, len);
	x->n = len;
}

/* Writes 20 or 32 bytes; returns how many. */
static size_t hasher_final(struct hasher *x, uint8_t *out)
{
	uint64_t bits = x->len * 8;
	size_t words = x->sha256 ? 8 : 5;

	x->buf[x->n++] = 0x80;
	if (x->n > 56) {
		memset(x->buf + x->n, 0, 64 - x->n);
		hasher_blocks(x, x->buf, 1);
		x->n = 0;
	}
	memset(x->buf + x->n, 0, 56 - x->n);
	for (int i = 0; i < 8; i++)
		x->buf[56 + i] = (uint8_t)(bits >> (56 - 8 * i));
	hasher_blocks(x, x->buf, 1);
	for (size_t i = 0; i < words; i++) {
		out[4 * i] = (uint8_t)(x->h[i] >> 24);
		out[4 * i + 1] = (uint8_t)(x->h[i] >> 16);
		out[4 * i + 2] = (uint8_t)(x->h[i] >> 8);
		out[4 * i + 3] = (uint8_t)x->h[i];
	}
	return words * 4;
}

static void to_hex(const uint8_t *id, size_t len, char *hex)
{
	static const char digits[] = "0123456789abcdef";

	for (size_t i = 0; i < len; i++) {
		hex[2 * i] = digits[id[i] >> 4];
		hex[2 * i + 1] = digits[id[i] & 15];
	}
	hex[2 * len] = '\0';
}

struct digest {
	uint8_t id[32]; /* the blob id */
	uint8_t lfs[32]; /* SHA-256 of the bytes alone, when asked for */
	int64_t size;
	bool has_lfs;
};

/*
 * The blob id of dir/name, read through dfd (the directory as already
 * resolved): a symlink's blob is its target, a regular file's its bytes,
 * read once (with lfs, their SHA-256 too, in the same pass). A file that
 * changes size while it is read has no id.
 */
static int hash_at(int dfd, const char *name, bool sha256, bool lfs,
		   int64_t max, uint8_t *buf, size_t bufsize, struct digest *d)
{
	struct hasher h, l;
	struct stat st;
	char hdr[32];
	int64_t left;
	int fd, n, r = 0;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	hasher_init(&h, sha256);
	if (S_ISLNK(st.st_mode)) {
		char target[PATH_MAX];
		ssize_t len = readlinkat(dfd, name, target, sizeof(target));

		if (len < 0)
			return -errno;
		if ((size_t)len == sizeof(target))
			return -ENAMETOOLONG;
		n = snprintf(hdr, sizeof(hdr), "blob %zd", len);
		hasher_update(&h, hdr, (size_t)n + 1);
		hasher_update(&h, target, (size_t)len);
		hasher_final(&h, d->id);
		d->size = len;
		d->has_lfs = false;
		return 0;
	}
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	if (st.st_size > max)
		return -EFBIG;
	/* O_NONBLOCK: a FIFO swapped in since the stat must not block us. */
	fd = openat(dfd, name,
		    O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/*
	 * No second stat: a file replaced since is read as it is now, and
	 * one that changed size is caught by the read below.
	 */
	n = snprintf(hdr, sizeof(hdr), "blob %lld", (long long)st.st_size);
	hasher_update(&h, hdr, (size_t)n + 1);
	if (lfs)
		hasher_init(&l, true);
	/* Ask for one byte more than is left: a short read is the end. */
	for (left = st.st_size;;) {
		size_t want = (uint64_t)left + 1 < bufsize ? (size_t)left + 1 :
							     bufsize;
		ssize_t got = read(fd, buf, want);

		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			r = -errno;
			goto out;
		}
		if (got > left || (got == 0 && left)) {
			r = -EAGAIN; /* it grew or shrank under us */
			goto out;
		}
		if (got == 0)
			break;
		hasher_update(&h, buf, (size_t)got);
		if (lfs)
			hasher_update(&l, buf, (size_t)got);
		left -= got;
		if (!left && (size_t)got < want)
			break; /* the byte asked for beyond the size: none */
	}
	hasher_final(&h, d->id);
	if (lfs)
		hasher_final(&l, d->lfs);
	d->has_lfs = lfs;
	d->size = st.st_size;
out:
	close(fd);
	return r;
}

/* Reads a small file into buf, NUL-terminated; length or -errno. */
static ssize_t read_small(int dfd, const char *path, char *buf, size_t size)
{
	size_t got = 0;
	int fd =
		openat(dfd, path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	while (got + 1 < size) {
		ssize_t r = read(fd, buf + got, size - 1 - got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	close(fd);
	buf[got] = '\0';
	return (ssize_t)got;
}

static char *trim(char *s)
{
	size_t n;

	while (*s == ' ' || *s == '\t')
		s++;
	n = strlen(s);
	while (n && (s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == ' ' ||
		     s[n - 1] == '\t'))
		s[--n] = '\0';
	return s;
}

/* One pack index, mapped. */
struct pack {
	const uint8_t *map;
	size_t size;
};

/* One objects directory: a repository's own, or an alternate. */
struct odir {
	int fd; /* O_PATH */
	char *path;
	bool scanned;
	struct timespec mtime; /* of objects/pack when it was listed */
	ino_t ino;
	struct pack *packs;
	size_t npacks;
};

struct repo {
	uint64_t serial, used;
	char *top; /* the directory holding .git */
	int lfs_fd; /* lfs/objects of the common directory (Git LFS), or -1 */
	unsigned idlen; /* 20 (SHA-1) or 32 (SHA-256) */
	struct odir odirs[MAX_ODIRS];
	size_t nodirs;
};

struct slot {
	char *dir;
	uint64_t serial;
};

struct lg_gitodb {
	int64_t max_bytes;
	struct repo *repos[NREPOS];
	struct slot slots[NSLOTS];
	uint64_t tick, serial;
	unsigned long scans;
	/* the last directory read: git removes a directory's files in a row */
	char last_dir[PATH_MAX];
	int last_dfd;
	uint8_t buf[65536];
};

struct lg_gitodb *lg_gitodb_new(int64_t max_bytes)
{
	struct lg_gitodb *db = calloc(1, sizeof(*db));

	if (!db)
		return NULL;
	db->max_bytes = max_bytes > 0 ? max_bytes : LG_GITODB_MAX_BYTES;
	db->last_dfd = -1;
	return db;
}

static void unmap_packs(struct odir *o)
{
	for (size_t i = 0; i < o->npacks; i++)
		munmap((void *)o->packs[i].map, o->packs[i].size);
	free(o->packs);
	o->packs = NULL;
	o->npacks = 0;
}

static void repo_free(struct repo *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->nodirs; i++) {
		unmap_packs(&r->odirs[i]);
		close(r->odirs[i].fd);
		free(r->odirs[i].path);
	}
	if (r->lfs_fd >= 0)
		close(r->lfs_fd);
	free(r->top);
	free(r);
}

void lg_gitodb_free(struct lg_gitodb *db)
{
	if (!db)
		return;
	for (size_t i = 0; i < NREPOS; i++)
		repo_free(db->repos[i]);
	for (size_t i = 0; i < NSLOTS; i++)
		free(db->slots[i].dir);
	if (db->last_dfd >= 0)
		close(db->last_dfd);
	free(db);
}

unsigned long lg_gitodb_pack_scans(const struct lg_gitodb *db)
{
	return db->scans;
}

/* Maps one .idx if it is a sane version 2 index for ids of idlen bytes. */
static int map_idx(int dfd, const char *name, unsigned idlen, struct pack *p)
{
	static const uint8_t magic[8] = { 0xff, 't', 'O', 'c', 0, 0, 0, 2 };
	const uint8_t *m;
	struct stat st;
	uint32_t prev = 0, n;
	int fd;

	fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    st.st_size < 8 + 1024 + 2 * (off_t)idlen) {
		close(fd);
		return -EINVAL;
	}
	m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return -errno;
	p->map = m;
	p->size = (size_t)st.st_size;
	if (memcmp(m, magic, sizeof(magic)) != 0)
		goto bad;
	/* The fanout must rise, or the search below could leave the table. */
	for (int i = 0; i < 256; i++) {
		uint32_t v = be32(m + 8 + 4 * i);

		if (v < prev)
			goto bad;
		prev = v;
	}
	n = prev;
	if ((uint64_t)p->size <
	    8 + 1024 + (uint64_t)n * (idlen + 8) + 2 * idlen)
		goto bad;
	return 0;
bad:
	munmap((void *)m, p->size);
	return -EINVAL;
}

static bool pack_has(const struct pack *p, const uint8_t *id, unsigned idlen)
{
	const uint8_t *fan = p->map + 8, *ids = p->map + 8 + 1024;
	uint32_t lo = id[0] ? be32(fan + 4 * (id[0] - 1)) : 0;
	uint32_t hi = be32(fan + 4 * id[0]);

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		int c = memcmp(ids + (size_t)mid * idlen, id, idlen);

		if (!c)
			return true;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

/* Lists objects/pack again: the .idx files whose .pack is there. */
static void scan_packs(struct lg_gitodb *db, struct odir *o, unsigned idlen,
		       const struct stat *st)
{
	struct dirent *e;
	DIR *d;
	int dfd;

	unmap_packs(o);
	o->scanned = true;
	o->mtime = st->st_mtim;
	o->ino = st->st_ino;
	db->scans++;
	dfd = openat(o->fd, "pack", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return;
	d = fdopendir(dfd);
	if (!d) {
		close(dfd);
		return;
	}
	while ((e = readdir(d)) && o->npacks < MAX_PACKS) {
		size_t n = strlen(e->d_name);
		char packname[NAME_MAX + 2];
		struct stat ps;
		struct pack p, *grown;

		if (n <= 4 || strcmp(e->d_name + n - 4, ".idx") != 0)
			continue;
		snprintf(packname, sizeof(packname), "%.*s.pack", (int)(n - 4),
			 e->d_name);
		if (fstatat(dirfd(d), packname, &ps, 0) < 0)
			continue; /* an index whose pack is gone */
		if (map_idx(dirfd(d), e->d_name, idlen, &p) < 0)
			continue;
		grown = realloc(o->packs, (o->npacks + 1) * sizeof(*o->packs));
		if (!grown) {
			munmap((void *)p.map, p.size);
			break;
		}
		o->packs = grown;
		o->packs[o->npacks++] = p;
	}
	closedir(d);
}

static bool odir_has(struct lg_gitodb *db, struct odir *o, unsigned idlen,
		     const uint8_t *id, const char *hex)
{
	char loose[80];
	struct stat st;

	if (fstatat(o->fd, "pack", &st, 0) == 0) {
		if (!o->scanned || st.st_ino != o->ino ||
		    st.st_mtim.tv_sec != o->mtime.tv_sec ||
		    st.st_mtim.tv_nsec != o->mtime.tv_nsec)
			scan_packs(db, o, idlen, &st);
		for (size_t i = 0; i < o->npacks; i++)
			if (pack_has(&o->packs[i], id, idlen))
				return true;
	} else if (o->npacks) {
		unmap_packs(o);
		o->scanned = false;
	}
	snprintf(loose, sizeof(loose), "%.2s/%s", hex, hex + 2);
	return fstatat(o->fd, loose, &st, 0) == 0 && S_ISREG(st.st_mode) &&
	       st.st_size > 0;
}

static void add_odir(struct repo *r, const char *path, int depth);

/* objects/info/alternates: one directory a line, relative to objects. */
static void add_alternates(struct repo *r, struct odir *o, int depth)
{
	char *buf = malloc(SMALL_FILE), *line, *save = NULL;

	if (!buf)
		return;
	if (read_small(o->fd, "info/alternates", buf, SMALL_FILE) <= 0) {
		free(buf);
		return;
	}
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char path[PATH_MAX];
		char *l = trim(line);

		/* Quoted (C-style) paths are rare: skipped, not guessed. */
		if (!*l || *l == '#' || *l == '"')
			continue;
		if (lg_path_resolve(o->path, l, path, sizeof(path)) > 0)
			add_odir(r, path, depth + 1);
	}
	free(buf);
}

static void add_odir(struct repo *r, const char *path, int depth)
{
	struct odir *o;
	int fd;

	if (depth > ALT_DEPTH || r->nodirs == MAX_ODIRS)
		return;
	for (size_t i = 0; i < r->nodirs; i++)
		if (strcmp(r->odirs[i].path, path) == 0)
			return;
	fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return;
	o = &r->odirs[r->nodirs];
	memset(o, 0, sizeof(*o));
	o->fd = fd;
	o->path = strdup(path);
	if (!o->path) {
		close(fd);
		return;
	}
	r->nodirs++;
	add_alternates(r, o, depth);
}

/*
 * extensions.objectFormat from the repository's config: 20 for SHA-1 (the
 * default), 32 for SHA-256, 0 for a format this does not know.
 */
static unsigned config_idlen(int cfd)
{
	char *buf = malloc(SMALL_FILE), *line, *save = NULL;
	bool in_ext = false;
	unsigned idlen = 20;

	if (!buf)
		return 0;
	if (read_small(cfd, "config", buf, SMALL_FILE) < 0) {
		free(buf);
		return 20;
	}
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *l = trim(line), *eq, *v;

		if (*l == '[') {
			size_t n = strcspn(l + 1, "] \t\"");

			in_ext = n == 10 &&
				 !strncasecmp(l + 1, "extensions", 10);
			continue;
		}
		if (!in_ext || strncasecmp(l, "objectformat", 12) != 0)
			continue;
		eq = strchr(l + 12, '=');
		if (!eq || *trim(l + 12) != '=')
			continue;
		v = trim(eq + 1);
		v[strcspn(v, " \t#;")] = '\0';
		if (*v == '"')
			v++;
		v[strcspn(v, "\"")] = '\0';
		if (!strcasecmp(v, "sha256"))
			idlen = 32;
		else if (!strcasecmp(v, "sha1"))
			idlen = 20;
		else
			idlen = 0;
	}
	free(buf);
	return idlen;
}

/*
 * A repository from the directory top and its git directory: a linked
 * worktree's keeps its objects in the common directory.
 */
static struct repo *open_repo(const char *top, const char *gitdir)
{
	char buf[PATH_MAX + 16], common[PATH_MAX], objects[PATH_MAX];
	struct repo *r;
	int gfd, cfd;

	gfd = open(gitdir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (gfd < 0)
		return NULL;
	snprintf(common, sizeof(common), "%s", gitdir);
	if (read_small(gfd, "commondir", buf, sizeof(buf)) > 0 &&
	    lg_path_resolve(gitdir, trim(buf), common, sizeof(common)) < 0) {
		close(gfd);
		return NULL;
	}
	close(gfd);
	cfd = open(common, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (cfd < 0)
		return NULL;
	r = calloc(1, sizeof(*r));
	if (!r) {
		close(cfd);
		return NULL;
	}
	r->lfs_fd = -1;
	r->idlen = config_idlen(cfd);
	/* Git LFS keeps the content of its files there, by SHA-256. */
	r->lfs_fd =
		openat(cfd, "lfs/objects", O_PATH | O_DIRECTORY | O_CLOEXEC);
	close(cfd);
	r->top = strdup(top);
	if (r->idlen && r->top &&
	    lg_path_resolve(common, "objects", objects, sizeof(objects)) > 0)
		add_odir(r, objects, 0);
	if (!r->nodirs) {
		repo_free(r);
		return NULL;
	}
	return r;
}

/* .git as a file: "gitdir: PATH", relative to the directory holding it. */
static int read_gitfile(const char *top, char *gitdir, size_t size)
{
	char buf[PATH_MAX + 16], *l;
	int tfd = open(top, O_PATH | O_DIRECTORY | O_CLOEXEC);
	ssize_t n;

	if (tfd < 0)
		return -errno;
	n = read_small(tfd, ".git", buf, sizeof(buf));
	close(tfd);
	if (n < 0)
		return (int)n;
	l = trim(buf);
	if (strncmp(l, "gitdir:", 7) != 0)
		return -EINVAL;
	l = trim(l + 7);
	return lg_path_resolve(top, l, gitdir, size) > 0 ? 0 : -EINVAL;
}

static struct repo *by_serial(struct lg_gitodb *db, uint64_t serial)
{
	for (size_t i = 0; i < NREPOS; i++)
		if (db->repos[i] && db->repos[i]->serial == serial)
			return db->repos[i];
	return NULL;
}

static struct repo *remember_repo(struct lg_gitodb *db, struct repo *r)
{
	size_t victim = 0;

	for (size_t i = 0; i < NREPOS; i++) {
		if (!db->repos[i]) {
			victim = i;
			break;
		}
		if (db->repos[i]->used < db->repos[victim]->used)
			victim = i;
	}
	repo_free(db->repos[victim]);
	r->serial = ++db->serial;
	db->repos[victim] = r;
	return r;
}

/* Walks up from dir to the first directory holding a usable .git. */
static struct repo *discover(struct lg_gitodb *db, const char *dir)
{
	char cur[PATH_MAX], dotgit[PATH_MAX + 8], gitdir[PATH_MAX];

	if (snprintf(cur, sizeof(cur), "%s", dir) >= (int)sizeof(cur))
		return NULL;
	for (;;) {
		struct stat st;
		char *slash;

		snprintf(dotgit, sizeof(dotgit), "%s%s.git", cur,
			 strcmp(cur, "/") ? "/" : "");
		if (stat(dotgit, &st) == 0) {
			bool ok = false;

			if (S_ISDIR(st.st_mode)) {
				snprintf(gitdir, sizeof(gitdir), "%s", dotgit);
				ok = true;
			} else if (S_ISREG(st.st_mode)) {
				ok = read_gitfile(cur, gitdir,
						  sizeof(gitdir)) == 0;
			}
			if (ok) {
				struct repo *r;

				for (size_t i = 0; i < NREPOS; i++)
					if (db->repos[i] &&
					    !strcmp(db->repos[i]->top, cur))
						return db->repos[i];
				r = open_repo(cur, gitdir);
				if (r)
					return remember_repo(db, r);
			}
		}
		if (!strcmp(cur, "/"))
			return NULL;
		slash = strrchr(cur, '/');
		if (slash == cur)
			slash[1] = '\0';
		else if (slash)
			*slash = '\0';
		else
			return NULL;
	}
}

static uint64_t fnv(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 1099511628211ULL;
	return h;
}

/* The repository whose work tree holds dir; cached by directory. */
static struct repo *find_repo(struct lg_gitodb *db, const char *dir)
{
	struct slot *sl = &db->slots[fnv(dir) % NSLOTS];
	struct repo *r = NULL;

	if (sl->dir && !strcmp(sl->dir, dir))
		r = by_serial(db, sl->serial);
	if (!r) {
		char *copy;

		r = discover(db, dir); /* "no repository" is not cached */
		if (!r)
			return NULL;
		copy = strdup(dir);
		if (copy) {
			free(sl->dir);
			sl->dir = copy;
			sl->serial = r->serial;
		}
	}
	r->used = ++db->tick;
	return r;
}

/* Splits path into its directory and final component. */
static int split(const char *path, char *dir, size_t size, const char **name)
{
	const char *slash = strrchr(path, '/');
	size_t n;

	if (path[0] != '/' || !slash || !slash[1])
		return -EINVAL;
	n = slash == path ? 1 : (size_t)(slash - path);
	if (n >= size)
		return -ENAMETOOLONG;
	memcpy(dir, path, n);
	dir[n] = '\0';
	*name = slash + 1;
	return 0;
}

/* Opens dir, or reuses the descriptor of the last one. */
static int dir_fd(struct lg_gitodb *db, const char *dir, bool fresh)
{
	if (!fresh && db->last_dfd >= 0 && !strcmp(db->last_dir, dir))
		return db->last_dfd;
	if (db->last_dfd >= 0)
		close(db->last_dfd);
	db->last_dir[0] = '\0';
	db->last_dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (db->last_dfd < 0)
		return -errno;
	snprintf(db->last_dir, sizeof(db->last_dir), "%s", dir);
	return db->last_dfd;
}

static int hash_in(struct lg_gitodb *db, const char *dir, const char *name,
		   bool sha256, bool lfs, struct digest *d)
{
	bool reused = db->last_dfd >= 0 && !strcmp(db->last_dir, dir);
	int dfd = dir_fd(db, dir, false), err;

	if (dfd < 0)
		return dfd;
	err = hash_at(dfd, name, sha256, lfs, db->max_bytes, db->buf,
		      sizeof(db->buf), d);
	if (err == -ENOENT && reused) {
		/* the directory may have been replaced since: look again */
		dfd = dir_fd(db, dir, true);
		if (dfd < 0)
			return dfd;
		err = hash_at(dfd, name, sha256, lfs, db->max_bytes, db->buf,
			      sizeof(db->buf), d);
	}
	return err;
}

/* lfs/objects/xx/yy/ID of the file's size: Git LFS has its content. */
static bool lfs_has(const struct repo *r, const struct digest *d)
{
	char hex[65], rel[80];
	struct stat st;

	if (r->lfs_fd < 0 || !d->has_lfs)
		return false;
	to_hex(d->lfs, 32, hex);
	snprintf(rel, sizeof(rel), "%.2s/%.2s/%s", hex, hex + 2, hex);
	return fstatat(r->lfs_fd, rel, &st, 0) == 0 && S_ISREG(st.st_mode) &&
	       st.st_size == d->size;
}

int lg_gitodb_stored(struct lg_gitodb *db, const char *path)
{
	char dir[PATH_MAX], hex[65];
	struct digest d;
	struct repo *r;
	const char *name;
	int err;

	err = split(path, dir, sizeof(dir), &name);
	if (err)
		return err;
	r = find_repo(db, dir);
	if (!r)
		return -ENOENT;
	err = hash_in(db, dir, name, r->idlen == 32, r->lfs_fd >= 0, &d);
	if (err)
		return err;
	to_hex(d.id, r->idlen, hex);
	for (size_t i = 0; i < r->nodirs; i++)
		if (odir_has(db, &r->odirs[i], r->idlen, d.id, hex))
			return 1;
	return lfs_has(r, &d);
}

int lg_gitodb_in_worktree(struct lg_gitodb *db, const char *path)
{
	char dir[PATH_MAX];
	const char *name;

	if (split(path, dir, sizeof(dir), &name) < 0)
		return 0;
	return find_repo(db, dir) != NULL;
}

int lg_gitodb_blob_id(const char *path, int sha256, int64_t max_bytes,
		      char *hex, size_t size)
{
	char dir[PATH_MAX];
	const char *name;
	struct digest d;
	size_t idlen = sha256 ? 32 : 20;
	uint8_t *buf;
	int dfd, err;

	if (size < 2 * idlen + 1)
		return -ENOSPC;
	err = split(path, dir, sizeof(dir), &name);
	if (err)
		return err;
	buf = malloc(65536);
	if (!buf)
		return -ENOMEM;
	dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		err = -errno;
		goto out;
	}
	err = hash_at(dfd, name, sha256, false,
		      max_bytes > 0 ? max_bytes : LG_GITODB_MAX_BYTES, buf,
		      65536, &d);
	close(dfd);
	if (!err) {
		to_hex(d.id, idlen, hex);
		err = (int)(2 * idlen);
	}
out:
	free(buf);
	return err;
}
