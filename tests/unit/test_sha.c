// SPDX-License-Identifier: MIT
/* lib/sha.c: SHA-256 and HMAC-SHA256 against published vectors (FIPS 180,
 * RFC 4231), with and without the CPU's SHA instructions. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "lib/sha.h"

static void hex_of(const uint8_t *d, size_t n, char *out)
{
	lg_hex(d, n, out);
}

static void test_sha256(void **state)
{
	struct lg_sha x;
	uint8_t d[32];
	char h[65];

	(void)state;
	for (int accel = 0; accel < 2; accel++) {
		lg_sha_accel(accel);
		lg_sha_init(&x, true);
		lg_sha_update(&x, "abc", 3);
		assert_int_equal(lg_sha_final(&x, d), 32);
		hex_of(d, 32, h);
		assert_string_equal(
			h,
			"ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	}
	lg_sha_accel(true);
}

static void test_hmac(void **state)
{
	uint8_t key[20], out[32];
	char h[65];

	(void)state;
	/* RFC 4231, test case 1 */
	memset(key, 0x0b, sizeof(key));
	lg_hmac_sha256(key, sizeof(key), "Hi There", 8, out);
	hex_of(out, 32, h);
	assert_string_equal(
		h,
		"b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
	/* test case 2: a key shorter than a block */
	lg_hmac_sha256("Jefe", 4, "what do ya want for nothing?", 28, out);
	hex_of(out, 32, h);
	assert_string_equal(
		h,
		"5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
	/* test case 6: a key longer than a block is hashed first */
	{
		uint8_t big[131];

		memset(big, 0xaa, sizeof(big));
		lg_hmac_sha256(
			big, sizeof(big),
			"Test Using Larger Than Block-Size Key - Hash Key First",
			54, out);
		hex_of(out, 32, h);
		assert_string_equal(
			h,
			"60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sha256),
		cmocka_unit_test(test_hmac),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
