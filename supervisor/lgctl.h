/* SPDX-License-Identifier: MIT */
/* lgctl's commands that live in files of their own. */
#ifndef LG_LGCTL_H
#define LG_LGCTL_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* One line of a session's quarantine index (quarantine.h). */
struct lgq_entry {
	long long n, time_ns, atime_ns, mtime_ns, size;
	bool dir;
	unsigned mode, uid, gid;
	char *path, *kept, *dest;
	json_t *xattrs; /* a directory's {"name":"hex value"}, or NULL */
	bool made; /* a directory this restore created */
};
struct lgq_index {
	struct lgq_entry *e;
	size_t n;
};

/*
 * The entries of index file wanted: under one of paths (all when none),
 * kept since since_ns. 0, or -errno (ENOENT: no index).
 */
int lgq_load(struct lgq_index *x, const char *file, char **paths, size_t npaths,
	     long long since_ns);
void lgq_free(struct lgq_index *x);
/* s made safe for the terminal (one of 4 rotating buffers). */
const char *lgq_show(const char *s);

/* lgctl restore SESSION [OPTIONS] [PATH...]; argv[0] is "restore". */
int lgctl_restore(const char *dir, int argc, char **argv);

struct lg_config;
/* lgctl quarantine list|gc ...; argv[0] is "quarantine". */
int lgctl_quarantine(const char *dir, const struct lg_config *cfg, int argc,
		     char **argv);

#endif
