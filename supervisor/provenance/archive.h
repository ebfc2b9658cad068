/* SPDX-License-Identifier: MIT */
/*
 * What an archive holds, read from its bytes (issue 41): a tar (ustar,
 * GNU, pax; plain or compressed with gzip, xz/lzma, bzip2 or zstd) or a
 * zip (its central directory, zip64 sizes too), made into an index of its
 * members by base name: each member's size and the CRC-32 of its data
 * (zip's own; a tar's computed while it is read). Bounded: an archive
 * whose data is bigger than LG_ARCHIVE_INDEX_MAX uncompressed, or that
 * takes longer than LG_ARCHIVE_INDEX_MS to read, or holds more than
 * LG_ARCHIVE_MEMBERS_MAX members or 16 MiB of names, is not indexed; an
 * xz decoder may take 128 MiB, a zstd window 128 MiB, a zip's central
 * directory 64 MiB.
 */
#ifndef LG_PROVENANCE_ARCHIVE_H
#define LG_PROVENANCE_ARCHIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What an index may read: the tar stream (uncompressed), a zip's size. */
#define LG_ARCHIVE_INDEX_MAX (256LL << 20)
#define LG_ARCHIVE_INDEX_MS 2000
/* members at most (an archive of more is not indexed) */
#define LG_ARCHIVE_MEMBERS_MAX 200000

enum lg_archive_format {
	LG_ARCHIVE_UNKNOWN,
	LG_ARCHIVE_TAR,
	LG_ARCHIVE_TAR_GZ,
	LG_ARCHIVE_TAR_XZ, /* xz or lzma alone */
	LG_ARCHIVE_TAR_BZ2,
	LG_ARCHIVE_TAR_ZST,
	LG_ARCHIVE_ZIP,
};

struct lg_archive_index;

struct lg_archive_limits {
	int64_t max_bytes; /* 0: LG_ARCHIVE_INDEX_MAX */
	uint64_t max_ms; /* 0: LG_ARCHIVE_INDEX_MS */
};

/*
 * Does name end with an archive's suffix (.tar .tgz .tar.gz .taz .txz
 * .tar.xz .tlz .tar.lzma .tbz .tbz2 .tb2 .tar.bz2 .tzst .tar.zst .zip)?
 */
bool lg_archive_suffix(const char *name);
/* The format the first bytes of a file say (a tar's only by its header). */
enum lg_archive_format lg_archive_format_of(const unsigned char *head,
					    size_t n);
const char *lg_archive_format_name(enum lg_archive_format f);
/*
 * Reads the archive open at fd (size bytes, from offset 0) into an index.
 * 0, or -errno: -EINVAL not an archive of a known format, or a corrupt
 * or truncated one; -EFBIG over the limits; -ETIME over the time; -EIO.
 */
int lg_archive_index_read(int fd, int64_t size,
			  const struct lg_archive_limits *lim,
			  struct lg_archive_index **out);
void lg_archive_index_free(struct lg_archive_index *ix);
size_t lg_archive_index_count(const struct lg_archive_index *ix);
enum lg_archive_format
lg_archive_index_format(const struct lg_archive_index *ix);
/* Is there a regular member named base (a base name) of size bytes? */
bool lg_archive_index_sized(const struct lg_archive_index *ix, const char *base,
			    int64_t size);
/* ...whose data's CRC-32 is crc? */
bool lg_archive_index_holds(const struct lg_archive_index *ix, const char *base,
			    int64_t size, uint32_t crc);
/* Is there a directory member named base? */
bool lg_archive_index_dir(const struct lg_archive_index *ix, const char *base);
/* The i-th member (for tests): its path as stored, size, crc, kind. */
bool lg_archive_index_member(const struct lg_archive_index *ix, size_t i,
			     const char **path, int64_t *size, uint32_t *crc,
			     bool *is_dir);

#endif
