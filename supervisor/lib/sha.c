// SPDX-License-Identifier: MIT
/*
 * SHA-1 and SHA-256, streaming, and HMAC-SHA256. Not libcrypto's: linking
 * it into lgrun costs every session about 2.7 ms of start-up (`lgrun --
 * true`, 19.5 -> 22.3 ms, measured). The SHA instructions below are what
 * make libcrypto fast (64 MiB: 62 ms instead of 338 ms for SHA-1). Used by
 * git's blob ids (seccomp/gitodb_hash.c) and the quarantine index's
 * signatures (quarantine/entry.c, lgctl's restore).
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "bytes.h"
#include "sha.h"

static uint32_t rol(uint32_t x, int n)
{
	return x << n | x >> (32 - n);
}

static uint32_t ror(uint32_t x, int n)
{
	return x >> n | x << (32 - n);
}

static void sha1_block(uint32_t *h, const uint8_t *p)
{
	uint32_t w[80], a = h[0], b = h[1], c = h[2], d = h[3], e = h[4];

	for (int i = 0; i < 16; i++)
		w[i] = lg_be32(p + 4 * i);
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
		w[i] = lg_be32(p + 4 * i);
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

void lg_sha_accel(bool on)
{
	use_ni = on;
}

static void sha_blocks(struct lg_sha *x, const uint8_t *p, size_t n)
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

void lg_sha_init(struct lg_sha *x, bool sha256)
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

void lg_sha_update(struct lg_sha *x, const void *data, size_t len)
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
		sha_blocks(x, x->buf, 1);
		x->n = 0;
	}
	sha_blocks(x, p, len / 64);
	p += len / 64 * 64;
	len %= 64;
	memcpy(x->buf, p, len);
	x->n = len;
}

size_t lg_sha_final(struct lg_sha *x, uint8_t *out)
{
	uint64_t bits = x->len * 8;
	size_t words = x->sha256 ? 8 : 5;

	x->buf[x->n++] = 0x80;
	if (x->n > 56) {
		memset(x->buf + x->n, 0, 64 - x->n);
		sha_blocks(x, x->buf, 1);
		x->n = 0;
	}
	memset(x->buf + x->n, 0, 56 - x->n);
	for (int i = 0; i < 8; i++)
		x->buf[56 + i] = (uint8_t)(bits >> (56 - 8 * i));
	sha_blocks(x, x->buf, 1);
	for (size_t i = 0; i < words; i++) {
		out[4 * i] = (uint8_t)(x->h[i] >> 24);
		out[4 * i + 1] = (uint8_t)(x->h[i] >> 16);
		out[4 * i + 2] = (uint8_t)(x->h[i] >> 8);
		out[4 * i + 3] = (uint8_t)x->h[i];
	}
	return words * 4;
}

void lg_hex(const uint8_t *id, size_t len, char *hex)
{
	static const char digits[] = "0123456789abcdef";

	for (size_t i = 0; i < len; i++) {
		hex[2 * i] = digits[id[i] >> 4];
		hex[2 * i + 1] = digits[id[i] & 15];
	}
	hex[2 * len] = '\0';
}

void lg_hmac_sha256(const void *key, size_t klen, const void *msg, size_t n,
		    uint8_t out[32])
{
	uint8_t k[64] = { 0 }, pad[64], inner[32];
	struct lg_sha x;

	if (klen > 64) {
		lg_sha_init(&x, true);
		lg_sha_update(&x, key, klen);
		lg_sha_final(&x, k);
	} else {
		memcpy(k, key, klen);
	}
	for (int i = 0; i < 64; i++)
		pad[i] = k[i] ^ 0x36;
	lg_sha_init(&x, true);
	lg_sha_update(&x, pad, 64);
	lg_sha_update(&x, msg, n);
	lg_sha_final(&x, inner);
	for (int i = 0; i < 64; i++)
		pad[i] = k[i] ^ 0x5c;
	lg_sha_init(&x, true);
	lg_sha_update(&x, pad, 64);
	lg_sha_update(&x, inner, 32);
	lg_sha_final(&x, out);
}
