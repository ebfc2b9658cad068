// SPDX-License-Identifier: MIT
/*
 * Unit tests for provenance/archive.c: archives made with the real tar
 * and zip commands in a temporary directory (plain, gzip, xz, bzip2,
 * zstd; a long name, pax), their index checked against the files (names,
 * sizes, CRC-32), and archives written byte by byte: truncated, corrupt,
 * a member that says it is huge, zip64 sizes. A format whose command is
 * missing is skipped.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <cmocka.h>

#include "provenance/archive.h"

static char T[64];

static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Runs a shell command in T; 0 when it succeeded. */
static int sh(const char *fmt, ...)
{
	char cmd[8192];
	va_list ap;
	int n;

	n = snprintf(cmd, sizeof(cmd), "cd '%s' && { ", T);
	va_start(ap, fmt);
	vsnprintf(cmd + n, sizeof(cmd) - (size_t)n, fmt, ap);
	va_end(ap);
	strncat(cmd, "; } >/dev/null 2>&1", sizeof(cmd) - strlen(cmd) - 1);
	return system(cmd);
}

static const char *at(const char *rel)
{
	static char buf[4][512];
	static int i;

	i = (i + 1) % 4;
	snprintf(buf[i], sizeof(buf[i]), "%s/%s", T, rel);
	return buf[i];
}

static int read_index(const char *rel, const struct lg_archive_limits *lim,
		      struct lg_archive_index **ix)
{
	struct stat st;
	int fd = open(at(rel), O_RDONLY | O_CLOEXEC), r;

	if (fd < 0)
		return -errno;
	fstat(fd, &st);
	r = lg_archive_index_read(fd, st.st_size, lim, ix);
	close(fd);
	return r;
}

/* A file's size and CRC-32, as the session computes them. */
static void file_crc(const char *rel, int64_t *size, uint32_t *crc)
{
	unsigned char buf[4096];
	int fd = open(at(rel), O_RDONLY | O_CLOEXEC);
	uLong c = crc32(0L, Z_NULL, 0);
	ssize_t n;

	assert_true(fd >= 0);
	*size = 0;
	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		c = crc32(c, buf, (uInt)n);
		*size += n;
	}
	close(fd);
	*crc = (uint32_t)c;
}

static const char *const files[] = {
	"data/a.txt",
	"data/b.csv",
	"data/sub/c.log",
	"data/sub/a-name-that-is-rather-long-so-that-tar-needs-its-long-name-records-to-store-it-whole-0123456789.txt",
};

static int setup(void **state)
{
	(void)state;
	snprintf(T, sizeof(T), "/tmp/lgtest-archive.XXXXXX");
	assert_non_null(mkdtemp(T));
	assert_int_equal(sh("mkdir -p data/sub && seq 1 5000 >data/a.txt && "
			    "seq 7 3000 >data/b.csv && "
			    "head -c 70000 /dev/urandom >data/sub/c.log && "
			    "echo short >'%s'",
			    files[3]),
			 0);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	sh("rm -rf '%s'", T);
	return 0;
}

static bool have(const char *cmd)
{
	return sh("command -v %s", cmd) == 0;
}

/* Every file of data/ is held, whole; a changed byte is not. */
static void check_holds(const char *archive, enum lg_archive_format want)
{
	struct lg_archive_index *ix = NULL;
	int r = read_index(archive, NULL, &ix);

	assert_int_equal(r, 0);
	assert_int_equal(lg_archive_index_format(ix), want);
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		const char *base = strrchr(files[i], '/') + 1;
		int64_t size;
		uint32_t crc;

		file_crc(files[i], &size, &crc);
		assert_true(lg_archive_index_sized(ix, base, size));
		assert_true(lg_archive_index_holds(ix, base, size, crc));
		assert_false(lg_archive_index_holds(ix, base, size, crc ^ 1));
		assert_false(lg_archive_index_sized(ix, base, size + 1));
	}
	assert_true(lg_archive_index_dir(ix, "sub"));
	assert_true(lg_archive_index_dir(ix, "data"));
	assert_false(lg_archive_index_dir(ix, "a.txt"));
	assert_false(lg_archive_index_sized(ix, "sub", 0));
	/* a path as stored, for a look */
	const char *path;
	int64_t size;
	uint32_t crc;
	bool is_dir, found = false;

	for (size_t i = 0;
	     lg_archive_index_member(ix, i, &path, &size, &crc, &is_dir); i++)
		found |= strcmp(path, "data/sub/c.log") == 0 && !is_dir &&
			 size == 70000;
	assert_true(found);
	lg_archive_index_free(ix);
}

static void test_tar_formats(void **state)
{
	(void)state;
	assert_int_equal(sh("tar cf p.tar data"), 0);
	check_holds("p.tar", LG_ARCHIVE_TAR);
	assert_int_equal(sh("tar --format=posix -cf x.tar data"), 0);
	check_holds("x.tar", LG_ARCHIVE_TAR);
	assert_int_equal(sh("tar czf g.tgz data"), 0);
	check_holds("g.tgz", LG_ARCHIVE_TAR_GZ);
	if (have("xz")) {
		assert_int_equal(sh("tar cJf j.txz data"), 0);
		check_holds("j.txz", LG_ARCHIVE_TAR_XZ);
		assert_int_equal(sh("tar --lzma -cf l.tar.lzma data"), 0);
		check_holds("l.tar.lzma", LG_ARCHIVE_TAR_XZ);
	}
	if (have("bzip2")) {
		assert_int_equal(sh("tar cjf b.tar.bz2 data"), 0);
		check_holds("b.tar.bz2", LG_ARCHIVE_TAR_BZ2);
	}
	if (have("zstd")) {
		assert_int_equal(sh("tar --zstd -cf z.tar.zst data"), 0);
		check_holds("z.tar.zst", LG_ARCHIVE_TAR_ZST);
	}
	/* gzip -c of two tars, concatenated: two members, read through */
	assert_int_equal(sh("tar cf - data/a.txt | gzip -c >two.tgz && "
			    "gzip -c </dev/null >>two.tgz"),
			 0);
	struct lg_archive_index *ix = NULL;

	assert_int_equal(read_index("two.tgz", NULL, &ix), 0);
	assert_int_equal(lg_archive_index_count(ix), 1);
	lg_archive_index_free(ix);
}

static void test_zip(void **state)
{
	(void)state;
	if (!have("zip")) {
		skip();
		return;
	}
	assert_int_equal(sh("zip -qr d.zip data"), 0);
	check_holds("d.zip", LG_ARCHIVE_ZIP);
	assert_int_equal(sh("zip -qr -0 s.zip data"), 0);
	check_holds("s.zip", LG_ARCHIVE_ZIP);
}

static void test_suffix(void **state)
{
	(void)state;
	assert_true(lg_archive_suffix("/w/reports.tgz"));
	assert_true(lg_archive_suffix("a.tar.gz"));
	assert_true(lg_archive_suffix("a.tar.zst"));
	assert_true(lg_archive_suffix("x.zip"));
	assert_true(lg_archive_suffix("d.tar"));
	assert_false(lg_archive_suffix("/w/.tar"));
	assert_false(lg_archive_suffix("notes.txt"));
	assert_false(lg_archive_suffix("f.gz"));
	assert_false(lg_archive_suffix("zip"));
	assert_false(lg_archive_suffix(NULL));
}

/* Cut short, a byte changed, not an archive at all: not indexed. */
static void test_corrupt(void **state)
{
	struct lg_archive_index *ix = NULL;
	struct stat st;

	(void)state;
	assert_int_equal(sh("tar czf c.tgz data && tar cf c.tar data && "
			    "cp c.tgz cut.tgz && cp c.tar cut.tar"),
			 0);
	assert_int_equal(stat(at("cut.tgz"), &st), 0);
	assert_int_equal(truncate(at("cut.tgz"), st.st_size / 2), 0);
	assert_int_equal(read_index("cut.tgz", NULL, &ix), -EINVAL);
	assert_null(ix);
	/* a tar cut at a member's data, and one without its end blocks */
	assert_int_equal(truncate(at("cut.tar"), 512 * 3 + 100), 0);
	assert_int_equal(read_index("cut.tar", NULL, &ix), -EINVAL);
	assert_int_equal(sh("head -c 1536 c.tar >noend.tar"), 0);
	assert_int_equal(read_index("noend.tar", NULL, &ix), -EINVAL);
	/* a header's byte changed: its checksum fails */
	assert_int_equal(sh("cp c.tar bad.tar && printf 'X' | "
			    "dd of=bad.tar bs=1 seek=600 conv=notrunc"),
			 0);
	assert_int_equal(read_index("bad.tar", NULL, &ix), -EINVAL);
	/* gzip's bytes changed mid-stream: its CRC fails */
	assert_int_equal(sh("cp c.tgz bad.tgz && printf 'XXXXXXXX' | "
			    "dd of=bad.tgz bs=1 seek=200 conv=notrunc"),
			 0);
	assert_int_not_equal(read_index("bad.tgz", NULL, &ix), 0);
	/* a gzip of something else than a tar */
	assert_int_equal(sh("gzip -c data/a.txt >notar.tgz"), 0);
	assert_int_equal(read_index("notar.tgz", NULL, &ix), -EINVAL);
	assert_int_equal(sh("cp data/a.txt text.tar"), 0);
	assert_int_equal(read_index("text.tar", NULL, &ix), -EINVAL);
	/* a zip without its central directory */
	if (have("zip")) {
		assert_int_equal(
			sh("zip -qr z.zip data && head -c 2000 z.zip >cut.zip"),
			0);
		assert_int_equal(read_index("cut.zip", NULL, &ix), -EINVAL);
	}
}

/* A ustar header of name, size and type, its checksum set. */
static void tar_header(unsigned char *h, const char *name, const char *size,
		       char type)
{
	unsigned sum = 0;

	memset(h, 0, 512);
	strcpy((char *)h, name);
	strcpy((char *)h + 100, "0000644");
	strcpy((char *)h + 108, "0000000");
	strcpy((char *)h + 116, "0000000");
	memcpy(h + 124, size, strlen(size));
	strcpy((char *)h + 136, "00000000000");
	h[156] = (unsigned char)type;
	memcpy(h + 257,
	       "ustar\0"
	       "00",
	       8);
	memset(h + 148, ' ', 8);
	for (int i = 0; i < 512; i++)
		sum += h[i];
	snprintf((char *)h + 148, 8, "%06o", sum);
}

static void write_file(const char *rel, const void *p, size_t n)
{
	int fd = open(at(rel), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, p, n), (ssize_t)n);
	close(fd);
}

/*
 * A member that says it is huge: a tar's data is read, so the limit (or
 * the end of the file) stops it; a zip's size is only believed.
 */
static void test_huge(void **state)
{
	static unsigned char buf[512 * 8];
	struct lg_archive_limits small = { .max_bytes = 1 << 20 };
	struct lg_archive_index *ix = NULL;

	(void)state;
	/* 8 GiB said, a block there: cut short */
	tar_header(buf, "huge.bin", "77777777777", '0');
	write_file("huge.tar", buf, 512 * 3);
	assert_int_equal(read_index("huge.tar", NULL, &ix), -EINVAL);
	/* over the limit: not indexed, whatever it holds */
	assert_int_equal(
		sh("head -c 3000000 /dev/zero >big && tar czf big.tgz big"), 0);
	assert_int_equal(read_index("big.tgz", &small, &ix), -EFBIG);
	assert_null(ix);
	assert_int_equal(read_index("big.tgz", NULL, &ix), 0);
	assert_true(lg_archive_index_sized(ix, "big", 3000000));
	lg_archive_index_free(ix);

	/* a zip64 member of 10 GiB: an entry, its zip64 extra, the records */
	unsigned char z[512], *p = z;
	const char name[] = "huge.bin";
	uint64_t big = 10ULL << 30;
	size_t cd_off, cd_len, z64;

#define PUT16(v) (*p++ = (unsigned char)(v), *p++ = (unsigned char)((v) >> 8))
#define PUT32(v) (PUT16((v)&0xffff), PUT16(((uint32_t)(v)) >> 16))
#define PUT64(v) (PUT32((uint64_t)(v)&0xffffffff), PUT32((uint64_t)(v) >> 32))
	memcpy(p, "PK\x03\x04", 4), p += 4;
	PUT16(45), PUT16(0), PUT16(0), PUT16(0), PUT16(0);
	PUT32(0x12345678), PUT32(0xffffffff), PUT32(0xffffffff);
	PUT16(sizeof(name) - 1), PUT16(0);
	memcpy(p, name, sizeof(name) - 1), p += sizeof(name) - 1;
	cd_off = (size_t)(p - z);
	memcpy(p, "PK\x01\x02", 4), p += 4;
	PUT16(0x031e), PUT16(45), PUT16(0), PUT16(0), PUT16(0), PUT16(0);
	PUT32(0x12345678), PUT32(0xffffffff), PUT32(0xffffffff);
	PUT16(sizeof(name) - 1), PUT16(20), PUT16(0), PUT16(0), PUT16(0);
	PUT32(0100644u << 16), PUT32(0);
	memcpy(p, name, sizeof(name) - 1), p += sizeof(name) - 1;
	PUT16(1), PUT16(16), PUT64(big), PUT64(big / 2);
	cd_len = (size_t)(p - z) - cd_off;
	z64 = (size_t)(p - z);
	memcpy(p, "PK\x06\x06", 4), p += 4;
	PUT64(44), PUT16(45), PUT16(45), PUT32(0), PUT32(0);
	PUT64(1), PUT64(1), PUT64(cd_len), PUT64(cd_off);
	memcpy(p, "PK\x06\x07", 4), p += 4;
	PUT32(0), PUT64(z64), PUT32(1);
	memcpy(p, "PK\x05\x06", 4), p += 4;
	PUT16(0), PUT16(0), PUT16(0xffff), PUT16(0xffff);
	PUT32(0xffffffff), PUT32(0xffffffff), PUT16(0);
	write_file("huge.zip", z, (size_t)(p - z));
	assert_int_equal(read_index("huge.zip", NULL, &ix), 0);
	assert_true(lg_archive_index_sized(ix, "huge.bin", (int64_t)big));
	assert_true(lg_archive_index_holds(ix, "huge.bin", (int64_t)big,
					   0x12345678));
	assert_false(lg_archive_index_sized(ix, "huge.bin", 0xffffffff));
	lg_archive_index_free(ix);
	/* the same entry counted twice by its end record: corrupt */
	z[z64 + 32] = 2;
	write_file("twice.zip", z, (size_t)(p - z));
	assert_int_not_equal(read_index("twice.zip", NULL, &ix), 0);
}

/* A gzip of many tar members: the time budget stops it. */
static void test_time(void **state)
{
	struct lg_archive_limits quick = { .max_ms = 1 };
	struct lg_archive_index *ix = NULL;
	int r;

	(void)state;
	assert_int_equal(
		sh("head -c 60000000 /dev/urandom >rnd && tar cf rnd.tar rnd"),
		0);
	r = read_index("rnd.tar", &quick, &ix);
	/* a fast machine may read it in the millisecond */
	assert_true(r == -ETIME || r == 0);
	lg_archive_index_free(ix);
	sh("rm -f rnd rnd.tar");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_suffix),
		cmocka_unit_test(test_tar_formats),
		cmocka_unit_test(test_zip),
		cmocka_unit_test(test_corrupt),
		cmocka_unit_test(test_huge),
		cmocka_unit_test(test_time),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
