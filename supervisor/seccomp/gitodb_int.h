/* SPDX-License-Identifier: MIT */
/* Inside gitodb: gitodb.c (repositories, packs) and gitodb_hash.c (blob ids). */
#ifndef LG_GITODB_INT_H
#define LG_GITODB_INT_H

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

struct digest {
	uint8_t id[32]; /* the blob id */
	uint8_t lfs[32]; /* SHA-256 of the bytes alone, when asked for */
	int64_t size;
	bool has_lfs;
};

void to_hex(const uint8_t *id, size_t len, char *hex);

int gitodb_hash_at(int dfd, const char *name, bool sha256, bool lfs,
		   int64_t max, uint8_t *buf, size_t bufsize, struct digest *d);

#endif
