/* SPDX-License-Identifier: MIT */
/*
 * Inside where.h: where.c resolves, dirpath.c names the directory it
 * resolved to (the display path and its per-thread cache).
 */
#ifndef LG_WHERE_INT_H
#define LG_WHERE_INT_H

#include <sys/stat.h>
#include <sys/types.h>

#include "where.h"

/* What says which directory an fd is: its type, inode, mount and birth. */
#define DIR_ID_MASK (STATX_TYPE | STATX_INO | STATX_MNT_ID | STATX_BTIME)

/*
 * w->dirfd's path into w->path, from the cache or the fd; st: the
 * directory's statx when known (stx_mask 0: read here). Its length, or -1.
 */
ssize_t where_dir_path(struct lg_where *w, struct statx *st);

#endif
