// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for the archives' index (provenance/archive.c): any
 * bytes as a file the session wrote under an archive's name (a tar plain
 * or compressed, a zip) are indexed within the bounds or refused, and the
 * index answers without a crash.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "provenance/archive.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1;
	struct lg_archive_limits lim = { .max_bytes = 4 << 20, .max_ms = 1000 };
	struct lg_archive_index *ix = NULL;
	const char *path;
	int64_t msize;
	uint32_t crc;
	bool is_dir;

	if (fd < 0)
		fd = memfd_create("fuzz-archive", MFD_CLOEXEC);
	if (fd < 0 || ftruncate(fd, 0) != 0 ||
	    pwrite(fd, data, size, 0) != (ssize_t)size)
		return 0;
	if (lg_archive_index_read(fd, (int64_t)size, &lim, &ix) != 0) {
		if (ix)
			__builtin_trap();
		return 0;
	}
	for (size_t i = 0;
	     lg_archive_index_member(ix, i, &path, &msize, &crc, &is_dir);
	     i++) {
		const char *base = strrchr(path, '/');

		if (is_dir || (base && !base[1]))
			continue; /* a folder's name is stored with its slash */
		base = base ? base + 1 : path;
		if (!is_dir && !lg_archive_index_sized(ix, base, msize))
			__builtin_trap(); /* a member its own lookup misses */
		(void)lg_archive_index_holds(ix, base, msize, crc);
		(void)lg_archive_index_dir(ix, base);
	}
	lg_archive_index_free(ix);
	return 0;
}
